// Transpose, Squeeze, ExpandDims, ChannelShuffle: references, every dtype, zero sizes, in place, errors
// naming blobs, shape inference, gradients; [gpu] CPU-vs-GPU.
#include <catch2/catch.hpp>

#include <cstring>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
// Reference transpose of float data.
std::vector<float> RefTranspose(const std::vector<float>& x, const std::vector<int64_t>& dims, const std::vector<int>& axes) {
  const int nd = static_cast<int>(dims.size());
  std::vector<int64_t> st(nd, 1), ydims(nd);
  for (int i = nd - 2; i >= 0; --i) st[i] = st[i + 1] * dims[i + 1];
  for (int i = 0; i < nd; ++i) ydims[i] = dims[axes[i]];
  std::vector<float> y(x.size());
  for (size_t i = 0; i < y.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), off = 0;
    for (int d = nd - 1; d >= 0; --d) {
      off += (rem % ydims[d]) * st[axes[d]];
      rem /= ydims[d];
    }
    y[i] = x[off];
  }
  return y;
}
std::vector<float> RefShuffle(const std::vector<float>& x, int64_t C, int64_t inner, int64_t G) {
  const int64_t K = C / G;
  std::vector<float> y(x.size());
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t outer = static_cast<int64_t>(i) / (C * inner), c = (static_cast<int64_t>(i) / inner) % C;
    const int64_t s = static_cast<int64_t>(i) % inner;
    const int64_t g = c % G, k = c / G;  // output channel k * G + g reads input channel g * K + k
    y[i] = x[(outer * C + g * K + k) * inner + s];
  }
  return y;
}
}  // namespace

TEST_CASE("Transpose: default reversal and explicit axes", "[ops][transpose]") {
  Workspace ws;
  auto x = RandomVec(2 * 3 * 4 * 5, 1);
  Feed<float>(ws, "X", {2, 3, 4, 5}, x);
  auto rev = MakeOp("Transpose", {"X"}, {"Y"});
  RunOp(ws, rev);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{5, 4, 3, 2});
  CHECK(FetchVec<float>(ws, "Y") == RefTranspose(x, {2, 3, 4, 5}, {3, 2, 1, 0}));
  CheckShapeInference(ws, rev);
  for (const auto& axes : std::vector<std::vector<int64_t>>{{0, 2, 3, 1}, {1, 0, 2, 3}, {0, 1, 2, 3}, {2, 0, 3, 1}}) {
    auto def = MakeOp("Transpose", {"X"}, {"Y"}, {ArgInts("axes", axes)});
    RunOp(ws, def);
    CHECK(FetchVec<float>(ws, "Y") == RefTranspose(x, {2, 3, 4, 5}, std::vector<int>(axes.begin(), axes.end())));
    CheckShapeInference(ws, def);
  }
  Feed<float>(ws, "Z", {3, 0, 2}, {});
  RunOp(ws, MakeOp("Transpose", {"Z"}, {"Y"}, {ArgInts("axes", {2, 0, 1})}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 3, 0});
  Feed<float>(ws, "S", {}, {3.5f});
  RunOp(ws, MakeOp("Transpose", {"S"}, {"Y"}));
  CHECK(FetchVec<float>(ws, "Y") == std::vector<float>{3.5f});
}

TEST_CASE("Transpose moves every dtype", "[ops][transpose]") {
  for (DataType dt : {DataType::Double, DataType::Float16, DataType::Int8, DataType::UInt8, DataType::Int16,
                      DataType::UInt16, DataType::Int32, DataType::Int64, DataType::Bool}) {
    Workspace ws;
    Tensor x({3, 5}, dt);
    auto* p = static_cast<unsigned char*>(x.raw_mutable_data(dt));
    const size_t item = x.itemsize();
    for (int64_t i = 0; i < 15; ++i)
      for (size_t b = 0; b < item; ++b) p[i * item + b] = dt == DataType::Bool ? (i % 2) : static_cast<unsigned char>(i * 11 + b);
    Feed(ws, "X", x);
    RunOp(ws, MakeOp("Transpose", {"X"}, {"Y"}));
    Tensor y = Fetch(ws, "Y");
    INFO(DataTypeName(dt));
    REQUIRE(y.dtype() == dt);
    REQUIRE(y.shape() == std::vector<int64_t>{5, 3});
    const auto* q = static_cast<const unsigned char*>(y.raw_data());
    for (int64_t r = 0; r < 5; ++r)
      for (int64_t c = 0; c < 3; ++c) CHECK(std::memcmp(q + (r * 3 + c) * item, p + (c * 5 + r) * item, item) == 0);
  }
}

TEST_CASE("Transpose errors and gradient", "[ops][transpose]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 4}, RandomVec(24, 1));
  RequireThrowsWith(ws, MakeOp("Transpose", {"X"}, {"Y"}, {ArgInts("axes", {0, 1})}), {"'X'", "permutation"});
  RequireThrowsWith(ws, MakeOp("Transpose", {"X"}, {"Y"}, {ArgInts("axes", {0, 1, 1})}), {"'X'", "permutation"});
  RequireThrowsWith(ws, MakeOp("Transpose", {"X"}, {"Y"}, {ArgInts("axes", {0, 1, 3})}), {"'X'", "permutation"});
  auto def = MakeOp("Transpose", {"X"}, {"Y"}, {ArgInts("axes", {1, 2, 0})});
  CheckGradient(ws, def, {0});
  auto g = (*GradientRegistry::Find("Transpose"))(def, {"Y_grad"})->GetGradientDefs();
  REQUIRE(g.size() == 1);
  REQUIRE(g[0].arg_size() == 1);
  CHECK(std::vector<int64_t>(g[0].arg(0).ints().begin(), g[0].arg(0).ints().end()) == std::vector<int64_t>{2, 0, 1});
  CheckGradient(ws, MakeOp("Transpose", {"X"}, {"Y"}), {0});
}

TEST_CASE("Squeeze and ExpandDims", "[ops][squeeze]") {
  Workspace ws;
  auto x = RandomVec(3 * 4, 1);
  Feed<float>(ws, "X", {1, 3, 1, 4, 1}, x);
  auto sq = MakeOp("Squeeze", {"X"}, {"Y"}, {ArgInts("dims", {4, 0, 2, 0})});
  RunOp(ws, sq);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{3, 4});
  CHECK(FetchVec<float>(ws, "Y") == x);
  CheckShapeInference(ws, sq);
  auto ex = MakeOp("ExpandDims", {"Y"}, {"Z"}, {ArgInts("dims", {0, 3, 2})});
  RunOp(ws, ex);
  CHECK(Fetch(ws, "Z").shape() == std::vector<int64_t>{1, 3, 1, 1, 4});
  CheckShapeInference(ws, ex);
  RunOp(ws, MakeOp("ExpandDims", {"Y"}, {"Y"}, {ArgInts("dims", {2})}));  // in place
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{3, 4, 1});
  RunOp(ws, MakeOp("Squeeze", {"Y"}, {"Y"}, {ArgInts("dims", {2})}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{3, 4});
  CHECK(FetchVec<float>(ws, "Y") == x);
  Feed<int64_t>(ws, "I", {2, 1}, {5, 6});
  RunOp(ws, MakeOp("Squeeze", {"I"}, {"J"}, {ArgInts("dims", {1})}));
  CHECK(FetchVec<int64_t>(ws, "J") == std::vector<int64_t>{5, 6});
  Tensor s({1, 2}, DataType::String);
  s.mutable_data<std::string>()[0] = "a";
  s.mutable_data<std::string>()[1] = "b";
  Feed(ws, "Str", s);
  RunOp(ws, MakeOp("Squeeze", {"Str"}, {"Str2"}, {ArgInts("dims", {0})}));
  CHECK(Fetch(ws, "Str2").shape() == std::vector<int64_t>{2});
  CHECK(Fetch(ws, "Str2").data<std::string>()[1] == "b");
  Feed<float>(ws, "E", {0, 1}, {});
  RunOp(ws, MakeOp("Squeeze", {"E"}, {"E2"}, {ArgInts("dims", {1})}));
  CHECK(Fetch(ws, "E2").shape() == std::vector<int64_t>{0});
}

TEST_CASE("Squeeze and ExpandDims errors and gradients", "[ops][squeeze]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 3, 1}, RandomVec(3, 1));
  RequireThrowsWith(ws, MakeOp("Squeeze", {"X"}, {"Y"}, {ArgInts("dims", {1})}), {"'X'", "dim 1", "not 1"});
  RequireThrowsWith(ws, MakeOp("Squeeze", {"X"}, {"Y"}, {ArgInts("dims", {3})}), {"'X'", "out of range"});
  RequireThrowsWith(ws, MakeOp("Squeeze", {"X"}, {"Y"}), {"`dims` is required"});
  RequireThrowsWith(ws, MakeOp("Squeeze", {"X"}, {"Y"}, {ArgInts("dims", {-1})}), {"non-negative"});
  RequireThrowsWith(ws, MakeOp("ExpandDims", {"X"}, {"Y"}, {ArgInts("dims", {5})}), {"'X'", "too few dims"});
  CheckGradient(ws, MakeOp("Squeeze", {"X"}, {"Y"}, {ArgInts("dims", {0, 2})}), {0});
  CheckGradient(ws, MakeOp("ExpandDims", {"X"}, {"Y"}, {ArgInts("dims", {1, 4})}), {0});
  auto g = (*GradientRegistry::Find("Squeeze"))(MakeOp("Squeeze", {"X"}, {"Y"}, {ArgInts("dims", {0})}), {"Y_grad"})
               ->GetGradientDefs();
  CHECK(g[0].type() == "ExpandDims");
}

TEST_CASE("ChannelShuffle NCHW and NHWC; gradient is the inverse", "[ops][channel_shuffle]") {
  Workspace ws;
  auto x = RandomVec(2 * 6 * 3 * 2, 1);
  Feed<float>(ws, "X", {2, 6, 3, 2}, x);
  auto def = MakeOp("ChannelShuffle", {"X"}, {"Y"}, {ArgI("group", 2)});
  RunOp(ws, def);
  CHECK(FetchVec<float>(ws, "Y") == RefShuffle(x, 6, 6, 2));
  CheckShapeInference(ws, def);
  // Hand-checked: channels 0..5 with group 2 -> [0, 3, 1, 4, 2, 5].
  Feed<float>(ws, "C", {1, 6}, {0, 1, 2, 3, 4, 5});
  RunOp(ws, MakeOp("ChannelShuffle", {"C"}, {"D"}, {ArgI("group", 2)}));
  CHECK(FetchVec<float>(ws, "D") == std::vector<float>{0, 3, 1, 4, 2, 5});
  RunOp(ws, MakeOp("ChannelShuffle", {"C"}, {"D"}, {ArgI("group", 3)}));
  CHECK(FetchVec<float>(ws, "D") == std::vector<float>{0, 2, 4, 1, 3, 5});
  Feed<float>(ws, "H", {2, 3, 2, 6}, x);
  RunOp(ws, MakeOp("ChannelShuffle", {"H"}, {"Y"}, {ArgI("group", 3), ArgS("order", "NHWC")}));
  CHECK(FetchVec<float>(ws, "Y") == RefShuffle(x, 6, 1, 3));
  CheckGradient(ws, def, {0});
  CheckGradient(ws, MakeOp("ChannelShuffle", {"H"}, {"Y"}, {ArgI("group", 3), ArgS("order", "NHWC")}), {0});
  RequireThrowsWith(ws, MakeOp("ChannelShuffle", {"X"}, {"Y"}, {ArgI("group", 4)}), {"'X'", "group 4", "6 channels"});
  Feed<double>(ws, "Xd", {1, 2}, {1, 2});
  RequireThrowsWith(ws, MakeOp("ChannelShuffle", {"Xd"}, {"Y"}), {"'Xd'", "float64"});
}

TEST_CASE("Transpose, Squeeze, ChannelShuffle: GPU equals CPU", "[gpu][transpose][squeeze][channel_shuffle]") {
  if (SkipWithoutGpu()) return;
  Tensor x = HostTensor<float>({2, 6, 3, 5}, RandomVec(180, 1));
  CompareCpuGpu(MakeOp("Transpose", {"X"}, {"Y"}), {{"X", x}});
  CompareCpuGpu(MakeOp("Transpose", {"X"}, {"Y"}, {ArgInts("axes", {0, 2, 3, 1})}), {{"X", x}});
  CompareCpuGpu(MakeOp("ExpandDims", {"X"}, {"Y"}, {ArgInts("dims", {0, 5})}), {{"X", x}});
  CompareCpuGpu(MakeOp("ChannelShuffle", {"X"}, {"Y"}, {ArgI("group", 3)}), {{"X", x}});
  CompareCpuGpu(MakeOp("ChannelShuffleGradient", {"X"}, {"Y"}, {ArgI("group", 3)}), {{"X", x}});
  Tensor xi = HostTensor<int64_t>({3, 4}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Workspace ws;
  Feed(ws, "X", xi, Device::CUDA(0));
  RunOp(ws, MakeOp("Transpose", {"X"}, {"Y"}, {}, Device::CUDA(0)));
  CHECK(FetchVec<int64_t>(ws, "Y") == std::vector<int64_t>{1, 5, 9, 2, 6, 10, 3, 7, 11, 4, 8, 12});
}
