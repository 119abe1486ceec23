// ReduceSum and ReduceMean: float64 references over axis subsets (negative too), keepdims 0/1, dtypes,
// zero sizes, errors, shape inference, gradients; [gpu] CPU-vs-GPU.
#include <catch2/catch.hpp>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
void CheckClose(const std::vector<float>& got, const std::vector<double>& want, double tol = 1e-5) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(got[i] - want[i]) <= tol * std::max(1.0, std::abs(want[i])));
  }
}
// Sum over the axes set in `red` of x with dims d (row-major); output in kept-dims order.
std::vector<double> RefReduce(const std::vector<float>& x, const std::vector<int64_t>& d, const std::vector<bool>& red,
                              bool mean) {
  const int nd = static_cast<int>(d.size());
  int64_t ny = 1, cnt = 1;
  for (int i = 0; i < nd; ++i) (red[i] ? cnt : ny) *= d[i];
  std::vector<double> y(ny, 0.0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t rem = static_cast<int64_t>(i), o = 0, mul = 1;
    for (int k = nd - 1; k >= 0; --k) {
      const int64_t c = rem % d[k];
      rem /= d[k];
      if (!red[k]) {
        o += c * mul;
        mul *= d[k];
      }
    }
    y[o] += x[i];
  }
  if (mean)
    for (auto& v : y) v /= static_cast<double>(cnt);
  return y;
}
}  // namespace

TEST_CASE("ReduceSum and ReduceMean over axis subsets with keepdims", "[ops][reduce]") {
  const std::vector<int64_t> dims{3, 4, 5, 2};
  auto x = RandomVec(120, 1);
  for (const char* type : {"ReduceSum", "ReduceMean"})
    for (const auto& axes : std::vector<std::vector<int64_t>>{{}, {0}, {1, 3}, {-1}, {0, 1, 2, 3}, {2, 0}})
      for (int keep : {0, 1}) {
        Workspace ws;
        Feed<float>(ws, "X", dims, x);
        std::vector<caffe2::Argument> args{ArgI("keepdims", keep)};
        if (!axes.empty()) args.push_back(ArgInts("axes", axes));
        auto def = MakeOp(type, {"X"}, {"Y"}, args);
        RunOp(ws, def);
        std::vector<bool> red(4, axes.empty());
        for (auto a : axes) red[a < 0 ? a + 4 : a] = true;
        std::vector<int64_t> want_shape;
        for (int i = 0; i < 4; ++i)
          if (!red[i]) want_shape.push_back(dims[i]);
          else if (keep) want_shape.push_back(1);
        INFO(type << " axes " << ShapeToString(axes) << " keepdims " << keep);
        CHECK(Fetch(ws, "Y").shape() == want_shape);
        CheckClose(FetchVec<float>(ws, "Y"), RefReduce(x, dims, red, std::string(type) == "ReduceMean"));
        CheckShapeInference(ws, def);
        CheckGradient(ws, def, {0});
      }
}

TEST_CASE("Reduce dtypes, zero sizes, errors", "[ops][reduce]") {
  Workspace ws;
  Feed<int32_t>(ws, "I", {2, 3}, {1, 2, 3, 4, 5, 6});
  RunOp(ws, MakeOp("ReduceSum", {"I"}, {"Y"}, {ArgInts("axes", {1}), ArgI("keepdims", 0)}));
  CHECK(FetchVec<int32_t>(ws, "Y") == std::vector<int32_t>{6, 15});
  Feed<int64_t>(ws, "L", {2, 3}, {1, 2, 3, 4, 5, 6});
  RunOp(ws, MakeOp("ReduceSum", {"L"}, {"Y"}, {ArgInts("axes", {0})}));
  CHECK(FetchVec<int64_t>(ws, "Y") == std::vector<int64_t>{5, 7, 9});
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{1, 3});
  Feed<double>(ws, "D", {2, 2}, {1, 2, 3, 4});
  RunOp(ws, MakeOp("ReduceMean", {"D"}, {"Y"}, {ArgI("keepdims", 0)}));
  CHECK(Fetch(ws, "Y").shape().empty());
  CHECK(FetchVec<double>(ws, "Y") == std::vector<double>{2.5});
  RequireThrowsWith(ws, MakeOp("ReduceMean", {"I"}, {"Y"}), {"'I'", "int32"});
  Feed<float>(ws, "X", {2, 3}, RandomVec(6, 1));
  RequireThrowsWith(ws, MakeOp("ReduceSum", {"X"}, {"Y"}, {ArgInts("axes", {2})}), {"'X'", "axis 2"});
  Feed<float>(ws, "E", {2, 0}, {});
  RunOp(ws, MakeOp("ReduceSum", {"E"}, {"Y"}, {ArgInts("axes", {1})}));
  CHECK(FetchVec<float>(ws, "Y") == std::vector<float>{0.f, 0.f});
  RunOp(ws, MakeOp("ReduceMean", {"E"}, {"Y"}, {ArgInts("axes", {1})}));
  for (float v : FetchVec<float>(ws, "Y")) CHECK(std::isnan(v));
  RunOp(ws, MakeOp("ReduceSum", {"E"}, {"Y"}, {ArgInts("axes", {0})}));
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{1, 0});
}

TEST_CASE("ReduceSum and ReduceMean: GPU equals CPU", "[gpu][reduce]") {
  if (SkipWithoutGpu()) return;
  Tensor x = HostTensor<float>({3, 4, 5, 2}, RandomVec(120, 1));
  for (const char* type : {"ReduceSum", "ReduceMean"}) {
    CompareCpuGpu(MakeOp(type, {"X"}, {"Y"}), {{"X", x}}, 1e-4);
    CompareCpuGpu(MakeOp(type, {"X"}, {"Y"}, {ArgInts("axes", {1, 3}), ArgI("keepdims", 0)}), {{"X", x}}, 1e-4);
    Tensor dy = HostTensor<float>({3, 1, 5, 1}, RandomVec(15, 2));
    CompareCpuGpu(MakeOp(std::string(type) + "Gradient", {"dY", "X", "dY"}, {"dX"}, {ArgInts("axes", {1, 3})}),
                  {{"dY", dy}, {"X", x}});
  }
  CompareCpuGpu(MakeOp("ReduceSum", {"X"}, {"Y"}, {ArgInts("axes", {0})}),
                {{"X", HostTensor<int64_t>({2, 3}, {1, 2, 3, 4, 5, 6})}});
}
