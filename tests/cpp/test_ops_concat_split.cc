// Concat and Split: axis / order / add_axis, split from argument, input or equal parts, every dtype,
// zero sizes, errors naming blobs, split_info and the split input on CPU (device inference), shape
// inference, gradients (each the other's); [gpu] CPU-vs-GPU.
#include <catch2/catch.hpp>

#include <cstring>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
// Reference concat of [outer, s_i, after] blocks.
std::vector<float> RefConcat(const std::vector<std::vector<float>>& xs, int64_t outer, const std::vector<int64_t>& s,
                             int64_t after) {
  std::vector<float> y;
  for (int64_t o = 0; o < outer; ++o)
    for (size_t i = 0; i < xs.size(); ++i)
      y.insert(y.end(), xs[i].begin() + o * s[i] * after, xs[i].begin() + (o + 1) * s[i] * after);
  return y;
}
bool SameBytes(const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && a.dtype() == b.dtype() &&
         (a.nbytes() == 0 || std::memcmp(a.raw_data(), b.raw_data(), a.nbytes()) == 0);
}
}  // namespace

TEST_CASE("Concat along an axis, with split_info", "[ops][concat]") {
  Workspace ws;
  auto x0 = RandomVec(2 * 3 * 4, 1), x1 = RandomVec(2 * 1 * 4, 2);
  Feed<float>(ws, "X0", {2, 3, 4}, x0);
  Feed<float>(ws, "X1", {2, 1, 4}, x1);
  Feed<float>(ws, "X2", {2, 0, 4}, {});
  auto def = MakeOp("Concat", {"X0", "X1", "X2"}, {"Y", "info"});
  RunOp(ws, def);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 4, 4});
  CHECK(FetchVec<float>(ws, "Y") == RefConcat({x0, x1, {}}, 2, {3, 1, 0}, 4));
  CHECK(FetchVec<int32_t>(ws, "info") == std::vector<int32_t>{3, 1, 0});
  CheckShapeInference(ws, def);
}

TEST_CASE("Concat: axis 0, negative axis, order NHWC, add_axis", "[ops][concat]") {
  Workspace ws;
  auto a = RandomVec(2 * 3, 1), b = RandomVec(4 * 3, 2);
  Feed<float>(ws, "A", {2, 3}, a);
  Feed<float>(ws, "B", {4, 3}, b);
  RunOp(ws, MakeOp("Concat", {"A", "B"}, {"Y", "info"}, {ArgI("axis", 0)}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{6, 3});
  CHECK(FetchVec<float>(ws, "Y") == RefConcat({a, b}, 1, {2, 4}, 3));
  auto c = RandomVec(2 * 5, 3);
  Feed<float>(ws, "C", {2, 5}, c);
  RunOp(ws, MakeOp("Concat", {"A", "C"}, {"Y", "info"}, {ArgI("axis", -1)}));
  CHECK(FetchVec<float>(ws, "Y") == RefConcat({a, c}, 2, {3, 5}, 1));
  auto n0 = RandomVec(2 * 2 * 2 * 3, 4), n1 = RandomVec(2 * 2 * 2 * 1, 5);
  Feed<float>(ws, "N0", {2, 2, 2, 3}, n0);
  Feed<float>(ws, "N1", {2, 2, 2, 1}, n1);
  auto nhwc = MakeOp("Concat", {"N0", "N1"}, {"Y", "info"}, {ArgS("order", "NHWC")});
  RunOp(ws, nhwc);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 2, 2, 4});
  CHECK(FetchVec<float>(ws, "Y") == RefConcat({n0, n1}, 8, {3, 1}, 1));
  CheckShapeInference(ws, nhwc);
  Feed<float>(ws, "A2", {2, 3}, c.size() > 6 ? std::vector<float>(c.begin(), c.begin() + 6) : c);
  auto stack = MakeOp("Concat", {"A", "A2"}, {"Y", "info"}, {ArgI("axis", 1), ArgI("add_axis", 1)});
  RunOp(ws, stack);
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 2, 3});
  CHECK(FetchVec<int32_t>(ws, "info") == std::vector<int32_t>{1, 1});
  CHECK(FetchVec<float>(ws, "Y") == RefConcat({a, FetchVec<float>(ws, "A2")}, 2, {1, 1}, 3));
  CheckShapeInference(ws, stack);
  RunOp(ws, MakeOp("Concat", {"A", "A2"}, {"Y", "info"}, {ArgI("axis", 2), ArgI("add_axis", 1)}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{2, 3, 2});
}

TEST_CASE("Concat and Split copy every dtype", "[ops][concat][split]") {
  for (DataType dt : {DataType::Float, DataType::Double, DataType::Float16, DataType::Int8, DataType::UInt8,
                      DataType::Int16, DataType::UInt16, DataType::Int32, DataType::Int64, DataType::Bool}) {
    Workspace ws;
    Tensor a({3, 2}, dt), b({3, 5}, dt);
    auto* pa = static_cast<unsigned char*>(a.raw_mutable_data(dt));
    auto* pb = static_cast<unsigned char*>(b.raw_mutable_data(dt));
    for (size_t i = 0; i < a.nbytes(); ++i) pa[i] = dt == DataType::Bool ? (i % 2) : static_cast<unsigned char>(i * 7 + 1);
    for (size_t i = 0; i < b.nbytes(); ++i) pb[i] = dt == DataType::Bool ? (i % 3 == 0) : static_cast<unsigned char>(i * 5 + 3);
    Feed(ws, "A", a);
    Feed(ws, "B", b);
    RunOp(ws, MakeOp("Concat", {"A", "B"}, {"Y", "info"}));
    Tensor y = Fetch(ws, "Y");
    INFO(DataTypeName(dt));
    REQUIRE(y.dtype() == dt);
    REQUIRE(y.shape() == std::vector<int64_t>{3, 7});
    RunOp(ws, MakeOp("Split", {"Y", "info"}, {"A2", "B2"}));
    CHECK(SameBytes(Fetch(ws, "A2"), a));
    CHECK(SameBytes(Fetch(ws, "B2"), b));
  }
}

TEST_CASE("Concat errors name the blobs", "[ops][concat]") {
  Workspace ws;
  Feed<float>(ws, "A", {2, 3}, RandomVec(6, 1));
  Feed<float>(ws, "B", {3, 3}, RandomVec(9, 2));
  RequireThrowsWith(ws, MakeOp("Concat", {"A", "B"}, {"Y", "info"}), {"'B'", "[3, 3]", "'A'", "dim 1"});
  Feed<int32_t>(ws, "I", {2, 3}, std::vector<int32_t>(6, 1));
  RequireThrowsWith(ws, MakeOp("Concat", {"A", "I"}, {"Y", "info"}), {"'I'", "int32", "float32"});
  Feed<float>(ws, "C", {2, 3, 1}, RandomVec(6, 2));
  RequireThrowsWith(ws, MakeOp("Concat", {"A", "C"}, {"Y", "info"}), {"'C'", "[2, 3, 1]"});
  RequireThrowsWith(ws, MakeOp("Concat", {"A", "A"}, {"Y", "info"}, {ArgI("axis", 1), ArgS("order", "NHWC")}),
                    {"not both"});
  RequireThrowsWith(ws, MakeOp("Concat", {"A", "A"}, {"Y", "info"}, {ArgI("axis", 2)}), {"axis 2", "'A'"});
  Feed<float>(ws, "D", {2, 4}, RandomVec(8, 2));
  RequireThrowsWith(ws, MakeOp("Concat", {"A", "D"}, {"Y", "info"}, {ArgI("add_axis", 1)}), {"'D'", "add_axis"});
  CHECK_THROWS_AS(RunOp(ws, MakeOp("Concat", {"A", "A"}, {"Y"})), Error);  // two outputs
}

TEST_CASE("Split by argument, by input, equally, with add_axis", "[ops][split]") {
  Workspace ws;
  auto x = RandomVec(2 * 6 * 3, 1);
  Feed<float>(ws, "X", {2, 6, 3}, x);
  auto by_arg = MakeOp("Split", {"X"}, {"a", "b", "c"}, {ArgInts("split", {1, 0, 5})});
  RunOp(ws, by_arg);
  CHECK(Fetch(ws, "a").shape() == std::vector<int64_t>{2, 1, 3});
  CHECK(Fetch(ws, "b").shape() == std::vector<int64_t>{2, 0, 3});
  CHECK(Fetch(ws, "c").shape() == std::vector<int64_t>{2, 5, 3});
  CHECK(RefConcat({FetchVec<float>(ws, "a"), {}, FetchVec<float>(ws, "c")}, 2, {1, 0, 5}, 3) == x);
  CheckShapeInference(ws, by_arg);
  auto equal = MakeOp("Split", {"X"}, {"a", "b"});
  RunOp(ws, equal);
  CHECK(Fetch(ws, "a").shape() == std::vector<int64_t>{2, 3, 3});
  CHECK(RefConcat({FetchVec<float>(ws, "a"), FetchVec<float>(ws, "b")}, 2, {3, 3}, 3) == x);
  CheckShapeInference(ws, equal);
  Feed<int32_t>(ws, "S", {2}, {4, 2});
  auto by_input = MakeOp("Split", {"X", "S"}, {"a", "b"});
  RunOp(ws, by_input);
  CHECK(Fetch(ws, "a").shape() == std::vector<int64_t>{2, 4, 3});
  CheckShapeInference(ws, by_input);  // unknown: data-dependent
  RunOp(ws, MakeOp("Split", {"X"}, {"a", "b", "c"}, {ArgI("axis", -1)}));
  CHECK(Fetch(ws, "c").shape() == std::vector<int64_t>{2, 6, 1});
  auto unstack = MakeOp("Split", {"X"}, {"a", "b"}, {ArgI("axis", 0), ArgI("add_axis", 1)});
  RunOp(ws, unstack);
  CHECK(Fetch(ws, "a").shape() == std::vector<int64_t>{6, 3});
  CHECK(FetchVec<float>(ws, "b") == std::vector<float>(x.begin() + 18, x.end()));
  CheckShapeInference(ws, unstack);
}

TEST_CASE("Split errors name the blobs", "[ops][split]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 5}, RandomVec(10, 1));
  RequireThrowsWith(ws, MakeOp("Split", {"X"}, {"a", "b"}), {"'X'", "not divisible"});
  RequireThrowsWith(ws, MakeOp("Split", {"X"}, {"a", "b"}, {ArgInts("split", {2, 2})}), {"sum to 4", "'X'"});
  RequireThrowsWith(ws, MakeOp("Split", {"X"}, {"a", "b"}, {ArgInts("split", {5})}), {"1 split sizes", "2 outputs"});
  Feed<int32_t>(ws, "S", {2}, {2, 3});
  RequireThrowsWith(ws, MakeOp("Split", {"X", "S"}, {"a", "b"}, {ArgInts("split", {2, 3})}), {"'S'", "not both"});
  Feed<int64_t>(ws, "S64", {2}, {2, 3});
  RequireThrowsWith(ws, MakeOp("Split", {"X", "S64"}, {"a", "b"}), {"'S64'", "int64"});
  RequireThrowsWith(ws, MakeOp("Split", {"X"}, {"a", "b"}, {ArgI("add_axis", 1), ArgInts("split", {2, 3})}),
                    {"add_axis"});
}

TEST_CASE("Concat split_info and Split's split input live on CPU for a GPU op", "[ops][concat][split]") {
  auto c = OpSchemaRegistry::Find("Concat")->InferDevices(MakeOp("Concat", {"a", "b"}, {"y", "info"}), Device::CUDA(0));
  CHECK(c.first == std::vector<Device>{Device::CUDA(0), Device::CUDA(0)});
  CHECK(c.second == std::vector<Device>{Device::CUDA(0), Device::CPU()});
  auto s = OpSchemaRegistry::Find("Split")->InferDevices(MakeOp("Split", {"x", "s"}, {"a", "b"}), Device::CUDA(0));
  CHECK(s.first == std::vector<Device>{Device::CUDA(0), Device::CPU()});
  CHECK(s.second == std::vector<Device>{Device::CUDA(0), Device::CUDA(0)});
}

TEST_CASE("Concat and Split gradients are each other", "[ops][concat][split]") {
  Workspace ws;
  Feed<float>(ws, "A", {2, 3, 2}, RandomVec(12, 1));
  Feed<float>(ws, "B", {2, 1, 2}, RandomVec(4, 2));
  auto concat = MakeOp("Concat", {"A", "B"}, {"Y", "info"});
  CheckGradient(ws, concat, {0, 1});
  auto m = (*GradientRegistry::Find("Concat"))(concat, {"Y_grad", ""});
  auto g = m->GetGradientDefs();
  REQUIRE(g.size() == 1);
  CHECK(g[0].type() == "Split");
  CHECK(g[0].input(1) == "info");
  Feed<float>(ws, "X", {2, 6}, RandomVec(12, 3));
  auto split = MakeOp("Split", {"X"}, {"a", "b"}, {ArgInts("split", {4, 2})});
  CheckGradient(ws, split, {0}, 0);
  CheckGradient(ws, split, {0}, 1);
  auto stack = MakeOp("Concat", {"A", "A"}, {"S", "info"}, {ArgI("add_axis", 1), ArgI("axis", 0)});
  Feed<float>(ws, "A1", {2, 3, 2}, RandomVec(12, 4));
  CheckGradient(ws, MakeOp("Concat", {"A", "A1"}, {"S", "info"}, {ArgI("add_axis", 1), ArgI("axis", 0)}), {0, 1});
  (void)stack;
}

TEST_CASE("Concat and Split: GPU equals CPU", "[gpu][concat][split]") {
  if (SkipWithoutGpu()) return;
  Tensor a = HostTensor<float>({3, 4, 5}, RandomVec(60, 1));
  Tensor b = HostTensor<float>({3, 2, 5}, RandomVec(30, 2));
  CompareCpuGpu(MakeOp("Concat", {"A", "B"}, {"Y", "info"}), {{"A", a}, {"B", b}});
  CompareCpuGpu(MakeOp("Concat", {"A", "A"}, {"Y", "info"}, {ArgI("add_axis", 1), ArgI("axis", 3)}), {{"A", a}});
  CompareCpuGpu(MakeOp("Split", {"A"}, {"x", "y", "z"}, {ArgI("axis", 2), ArgInts("split", {1, 3, 1})}), {{"A", a}});
  // A GPU Split reading its sizes from a CPU blob, and a GPU Concat writing split_info on CPU.
  Workspace ws;
  Feed(ws, "A", a, Device::CUDA(0));
  Feed(ws, "B", b, Device::CUDA(0));
  RunOp(ws, MakeOp("Concat", {"A", "B"}, {"Y", "info"}, {}, Device::CUDA(0)));
  CHECK(ws.GetBlobOrThrow("info").GetTensor().device() == Device::CPU());
  CHECK(ws.GetBlobOrThrow("Y").GetTensor().device() == Device::CUDA(0));
  RunOp(ws, MakeOp("Split", {"Y", "info"}, {"A2", "B2"}, {}, Device::CUDA(0)));
  CHECK(FetchVec<float>(ws, "A2") == std::vector<float>(a.data<float>(), a.data<float>() + a.numel()));
  CHECK(FetchVec<float>(ws, "B2") == std::vector<float>(b.data<float>(), b.data<float>() + b.numel()));
}
