// Synchronized batch norm ops (issue 14): the Caffe2 combine_spatial_bn chain
// ChannelStats -> Sum -> SpatialBN(7 inputs) and ChannelBackpropStats -> Sum -> SpatialBNGradient(7,
// in place) over several "devices" equals one SpatialBN over the concatenated batch; unequal batches
// via the count input; float64 statistics at mean 1e4; the gradient maker's forms; errors; and [gpu]
// tests that the CUDNN engine hands the multi-batch and NHWC forms to the CUDA kernels.
#include <catch2/catch.hpp>

#include <cmath>

#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {
const std::vector<std::string> kBNOut{"Y", "rm", "rv", "sm", "si"};

void CheckNear(const std::vector<float>& got, const std::vector<float>& want, double tol) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    INFO("element " << i);
    CHECK(std::abs(double(got[i]) - want[i]) <= tol * std::max(1.0, std::abs(double(want[i]))));
  }
}

std::vector<float> Concat(const std::vector<std::vector<float>>& parts) {
  std::vector<float> out;
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

struct SyncResult {
  std::vector<float> y, dx, dscale, dbias, mean, rstd, rm, rv;
};

// Devices d = 0..n-1 with batches sizes[d] of [*, C, HW] (NCHW) as the data_parallel_model surgery
// builds them, on `dev`; count: also feed input 7 (the total element count per channel).
SyncResult RunSynced(const std::vector<std::vector<float>>& xs, const std::vector<std::vector<float>>& dys,
                     const std::vector<int64_t>& sizes, int64_t C, int64_t HW, bool count, const std::string& dtype,
                     Device dev = Device::CPU()) {
  Workspace ws;
  const int n = static_cast<int>(xs.size());
  Feed<float>(ws, "scale", {C}, RandomVec(C, 5, 0.5f, 1.5f), dev);
  Feed<float>(ws, "bias", {C}, RandomVec(C, 6), dev);
  std::vector<std::string> sums, sumsqs, gs, bs;
  int64_t total = 0;
  for (int d = 0; d < n; ++d) {
    const std::string p = "d" + std::to_string(d) + "/";
    Feed<float>(ws, p + "X", {sizes[d], C, HW}, xs[d], dev);
    Feed<float>(ws, p + "dY", {sizes[d], C, HW}, dys[d], dev);
    Feed<float>(ws, p + "rm", {C}, std::vector<float>(C, 0.5f), dev);
    Feed<float>(ws, p + "rv", {C}, std::vector<float>(C, 2.f), dev);
    RunOp(ws, MakeOp("ChannelStats", {p + "X"}, {p + "sum", p + "sumsq"}, {ArgS("dtype", dtype)}, dev));
    sums.push_back(p + "sum");
    sumsqs.push_back(p + "sumsq");
    total += sizes[d] * HW;
  }
  RunOp(ws, MakeOp("Sum", sums, {"sum_combined"}, {}, dev));
  RunOp(ws, MakeOp("Sum", sumsqs, {"sumsq_combined"}, {}, dev));
  Feed<int64_t>(ws, "count", {1}, {total}, dev);
  SyncResult r;
  for (int d = 0; d < n; ++d) {
    const std::string p = "d" + std::to_string(d) + "/";
    std::vector<std::string> in{p + "X", "scale", "bias", p + "rm", p + "rv", "sum_combined", "sumsq_combined"};
    if (count) in.push_back("count");
    RunOp(ws, MakeOp("SpatialBN", in, {p + "Y", p + "rm", p + "rv", p + "sm", p + "si"},
                     {ArgI("num_batches", n), ArgF("momentum", 0.75f)}, dev));
    RunOp(ws, MakeOp("ChannelBackpropStats", {p + "X", p + "sm", p + "si", p + "dY"}, {p + "g", p + "b"}, {}, dev));
    gs.push_back(p + "g");
    bs.push_back(p + "b");
    const auto y = FetchVec<float>(ws, p + "Y");
    r.y.insert(r.y.end(), y.begin(), y.end());
  }
  RunOp(ws, MakeOp("Sum", gs, {"g_combined"}, {}, dev));
  RunOp(ws, MakeOp("Sum", bs, {"b_combined"}, {}, dev));
  for (int d = 0; d < n; ++d) {  // each device's copies of the combined sums, updated in place
    const std::string p = "d" + std::to_string(d) + "/";
    RunOp(ws, MakeOp("Copy", {"g_combined"}, {p + "scale_grad"}, {}, dev));
    RunOp(ws, MakeOp("Copy", {"b_combined"}, {p + "bias_grad"}, {}, dev));
    std::vector<std::string> in{p + "X", "scale", p + "dY", p + "sm", p + "si", p + "scale_grad", p + "bias_grad"};
    if (count) in.push_back("count");
    RunOp(ws, MakeOp("SpatialBNGradient", in, {p + "dX", p + "scale_grad", p + "bias_grad"},
                     {ArgI("num_batches", n)}, dev));
    const auto dx = FetchVec<float>(ws, p + "dX");
    r.dx.insert(r.dx.end(), dx.begin(), dx.end());
  }
  r.dscale = FetchVec<float>(ws, "d0/scale_grad");
  r.dbias = FetchVec<float>(ws, "d0/bias_grad");
  r.mean = FetchVec<float>(ws, "d0/sm");
  r.rstd = FetchVec<float>(ws, "d0/si");
  r.rm = FetchVec<float>(ws, "d0/rm");
  r.rv = FetchVec<float>(ws, "d0/rv");
  return r;
}

// One SpatialBN (5 inputs) and its gradient over the concatenated batch.
SyncResult RunSingle(const std::vector<float>& x, const std::vector<float>& dy, int64_t N, int64_t C, int64_t HW,
                     Device dev = Device::CPU()) {
  Workspace ws;
  Feed<float>(ws, "scale", {C}, RandomVec(C, 5, 0.5f, 1.5f), dev);
  Feed<float>(ws, "bias", {C}, RandomVec(C, 6), dev);
  Feed<float>(ws, "X", {N, C, HW}, x, dev);
  Feed<float>(ws, "dY", {N, C, HW}, dy, dev);
  Feed<float>(ws, "rm", {C}, std::vector<float>(C, 0.5f), dev);
  Feed<float>(ws, "rv", {C}, std::vector<float>(C, 2.f), dev);
  RunOp(ws, MakeOp("SpatialBN", {"X", "scale", "bias", "rm", "rv"}, kBNOut, {ArgF("momentum", 0.75f)}, dev));
  RunOp(ws, MakeOp("SpatialBNGradient", {"X", "scale", "dY", "sm", "si"}, {"dX", "ds", "db"}, {}, dev));
  return SyncResult{FetchVec<float>(ws, "Y"), FetchVec<float>(ws, "dX"), FetchVec<float>(ws, "ds"),
                    FetchVec<float>(ws, "db"), FetchVec<float>(ws, "sm"), FetchVec<float>(ws, "si"),
                    FetchVec<float>(ws, "rm"), FetchVec<float>(ws, "rv")};
}

void CheckSyncedEqualsSingle(const std::vector<int64_t>& sizes, bool count, const std::string& dtype,
                             Device dev = Device::CPU()) {
  const int64_t C = 3, HW = 6;
  std::vector<std::vector<float>> xs, dys;
  int64_t N = 0;
  for (size_t d = 0; d < sizes.size(); ++d) {
    xs.push_back(RandomVec(sizes[d] * C * HW, 10 + d, -2.f + d, 2.f + 2 * d));
    dys.push_back(RandomVec(sizes[d] * C * HW, 20 + d));
    N += sizes[d];
  }
  const SyncResult s = RunSynced(xs, dys, sizes, C, HW, count, dtype, dev);
  const SyncResult one = RunSingle(Concat(xs), Concat(dys), N, C, HW, dev);
  CheckNear(s.y, one.y, 1e-4);
  CheckNear(s.mean, one.mean, 1e-5);
  CheckNear(s.rstd, one.rstd, 1e-5);
  CheckNear(s.rm, one.rm, 1e-5);
  CheckNear(s.rv, one.rv, 1e-5);
  CheckNear(s.dx, one.dx, 1e-4);
  // dscale = G / num_batches: a Sum over the devices' parameter gradients gives the single BN's.
  std::vector<float> ds(s.dscale), db(s.dbias);
  for (auto& v : ds) v *= sizes.size();
  for (auto& v : db) v *= sizes.size();
  CheckNear(ds, one.dscale, 1e-4);
  CheckNear(db, one.dbias, 1e-4);
}
}  // namespace

TEST_CASE("sync BN: ChannelStats, Sum, 7-input SpatialBN (and gradient) over devices equal one BN", "[ops][sync_bn]") {
  SECTION("equal batches, Caffe2's form (float sums)") { CheckSyncedEqualsSingle({2, 2, 2}, false, "float"); }
  SECTION("equal batches, float64 sums") { CheckSyncedEqualsSingle({3, 3}, false, "double"); }
  SECTION("unequal batches with the count input") { CheckSyncedEqualsSingle({1, 4, 2}, true, "double"); }
  SECTION("a device with an empty batch, count given") { CheckSyncedEqualsSingle({3, 0, 2}, true, "float"); }
}

TEST_CASE("sync BN: float64 statistics keep the variance at mean 1e4, std 1", "[ops][sync_bn]") {
  Workspace ws;
  const int64_t N = 8, C = 2, HW = 64;
  std::vector<float> x = RandomVec(N * C * HW, 3, -1.7320508f, 1.7320508f);  // variance 1
  for (auto& v : x) v += 1e4f;
  double mean[2] = {0, 0}, var[2] = {0, 0};
  for (int pass = 0; pass < 2; ++pass)
    for (int64_t i = 0; i < N * C * HW; ++i) {
      const int64_t c = (i / HW) % C;
      if (pass == 0) mean[c] += x[i] / double(N * HW);
      else var[c] += (x[i] - mean[c]) * (x[i] - mean[c]) / double(N * HW);
    }
  Feed<float>(ws, "X", {N, C, HW}, x);
  Feed<float>(ws, "s", {C}, {1.f, 1.f});
  Feed<float>(ws, "b", {C}, {0.f, 0.f});
  Feed<float>(ws, "rm", {C}, {0.f, 0.f});
  Feed<float>(ws, "rv", {C}, {0.f, 0.f});
  RunOp(ws, MakeOp("ChannelStats", {"X"}, {"S", "Q"}, {ArgS("dtype", "double")}));
  CHECK(Fetch(ws, "S").dtype() == DataType::Double);
  RunOp(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv", "S", "Q"}, kBNOut,
                   {ArgI("num_batches", 1), ArgF("momentum", 0.f)}));
  const auto rv = FetchVec<float>(ws, "rv");
  for (int c = 0; c < 2; ++c) {
    INFO("channel " << c << ": " << rv[c] << " vs " << var[c]);
    CHECK(var[c] > 0.5);
    CHECK(std::abs(rv[c] - var[c]) < 1e-3 * var[c]);
  }
  // The single-batch form (5 inputs) accumulates in float64 too.
  Feed<float>(ws, "rv", {C}, {0.f, 0.f});
  RunOp(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv"}, kBNOut, {ArgF("momentum", 0.f)}));
  const auto rv5 = FetchVec<float>(ws, "rv");
  for (int c = 0; c < 2; ++c) CHECK(std::abs(rv5[c] - var[c]) < 1e-3 * var[c]);
}

TEST_CASE("sync BN: empty batch without count gives zero saved stats and keeps running stats", "[ops][sync_bn]") {
  Workspace ws;
  Feed<float>(ws, "X", {0, 2, 3}, {});
  Feed<float>(ws, "s", {2}, {1.f, 1.f});
  Feed<float>(ws, "b", {2}, {0.f, 0.f});
  Feed<float>(ws, "rm", {2}, {0.25f, 0.5f});
  Feed<float>(ws, "rv", {2}, {1.5f, 2.f});
  Feed<float>(ws, "S", {2}, {3.f, 4.f});
  Feed<float>(ws, "Q", {2}, {30.f, 40.f});
  RunOp(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv", "S", "Q"}, kBNOut, {ArgI("num_batches", 2)}));
  CHECK(FetchVec<float>(ws, "sm") == std::vector<float>{0.f, 0.f});
  CHECK(FetchVec<float>(ws, "si") == std::vector<float>{0.f, 0.f});
  CHECK(FetchVec<float>(ws, "rm") == std::vector<float>{0.25f, 0.5f});
  CHECK(FetchVec<float>(ws, "rv") == std::vector<float>{1.5f, 2.f});
  CHECK(Fetch(ws, "Y").shape() == std::vector<int64_t>{0, 2, 3});
}

TEST_CASE("sync BN: gradient maker forms and schema in-place rules", "[ops][sync_bn]") {
  auto grad = [](std::vector<std::string> in, std::vector<caffe2::Argument> args) {
    const caffe2::OperatorDef def = MakeOp("SpatialBN", in, kBNOut, args);  // the maker keeps a reference
    auto m = (*GradientRegistry::Find("SpatialBN"))(def, {"Y_grad"});
    auto defs = m->GetGradientDefs();
    REQUIRE(defs.size() == 1);
    return std::vector<std::string>(defs[0].input().begin(), defs[0].input().end());
  };
  const std::vector<std::string> five{"X", "s", "b", "rm", "rv"};
  std::vector<std::string> seven = five;
  seven.push_back("S");
  seven.push_back("Q");
  std::vector<std::string> eight = seven;
  eight.push_back("n");
  CHECK(grad(five, {}) == std::vector<std::string>{"X", "s", "Y_grad", "sm", "si"});
  CHECK(grad(seven, {ArgI("num_batches", 1)}) == std::vector<std::string>{"X", "s", "Y_grad", "sm", "si"});
  CHECK(grad(seven, {ArgI("num_batches", 2)}) ==
        std::vector<std::string>{"X", "s", "Y_grad", "sm", "si", "s_grad", "b_grad"});
  CHECK(grad(eight, {}) == std::vector<std::string>{"X", "s", "Y_grad", "sm", "si", "s_grad", "b_grad", "n"});
  CHECK(grad(seven, {ArgI("num_batches", 2), ArgI("is_test", 1)}) ==
        std::vector<std::string>{"X", "s", "Y_grad", "rm", "rv"});
  const OpSchema* g = OpSchemaRegistry::Find("SpatialBNGradient");
  REQUIRE(g);
  CHECK_NOTHROW(g->Verify(MakeOp("SpatialBNGradient", {"X", "s", "dY", "m", "r", "ds", "db"}, {"dX", "ds", "db"})));
  CHECK_THROWS(g->Verify(MakeOp("SpatialBNGradient", {"X", "s", "dY", "m", "r", "ds", "db"}, {"ds", "dX", "db"})));
  CHECK_THROWS(OpSchemaRegistry::Find("SpatialBN")->Verify(MakeOp("SpatialBN", eight, {"Y", "rm", "rv", "m", "r", "x"})));
}

TEST_CASE("sync BN: bad inputs are errors naming blobs", "[ops][sync_bn]") {
  Workspace ws;
  Feed<float>(ws, "X", {2, 3, 4}, RandomVec(24, 1));
  for (const char* p : {"s", "b", "rm", "rv", "S", "Q"}) Feed<float>(ws, p, {3}, {1.f, 1.f, 1.f});
  Feed<int32_t>(ws, "n32", {1}, {8});
  Feed<float>(ws, "S4", {4}, {1.f, 1.f, 1.f, 1.f});
  const std::vector<std::string> five{"X", "s", "b", "rm", "rv"};
  RequireThrowsWith(ws, MakeOp("SpatialBN", five, kBNOut, {ArgI("num_batches", 3)}), {"num_batches 3", "inputs 5 and 6"});
  RequireThrowsWith(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv", "S4", "Q"}, kBNOut, {ArgI("num_batches", 2)}),
                    {"'S4'", "[4]", "[3]"});
  RequireThrowsWith(ws, MakeOp("SpatialBN", {"X", "s", "b", "rm", "rv", "S", "Q", "n32"}, kBNOut),
                    {"input 7", "'n32'", "int32"});
  RequireThrowsWith(ws, MakeOp("SpatialBN", five, kBNOut, {ArgS("order", "HWCN")}), {"order must be NCHW or NHWC"});
  RequireThrowsWith(ws, MakeOp("ChannelBackpropStats", {"X", "S4", "Q", "X"}, {"g", "b"}), {"'S4'"});
  Feed<float>(ws, "X1", {3}, {1.f, 2.f, 3.f});
  RequireThrowsWith(ws, MakeOp("ChannelStats", {"X1"}, {"a", "c"}), {"'X1'", "at least 2 dims"});
  // NHWC: channels are the last dim, so [2, 3, 4] has 4 and the [3] scale is refused.
  RequireThrowsWith(ws, MakeOp("SpatialBN", five, kBNOut, {ArgS("order", "NHWC")}), {"'s'", "[4]"});
}

TEST_CASE("sync BN on CUDA: multi-batch and NHWC forms (CUDNN engine falls back) match CPU", "[gpu][sync_bn]") {
  if (SkipWithoutGpu()) return;
  const int64_t C = 3, HW = 6;
  const std::vector<int64_t> sizes{2, 3};
  std::vector<std::vector<float>> xs, dys;
  for (size_t d = 0; d < sizes.size(); ++d) {
    xs.push_back(RandomVec(sizes[d] * C * HW, 40 + d, -1.f, 3.f));
    dys.push_back(RandomVec(sizes[d] * C * HW, 50 + d));
  }
  for (bool count : {false, true}) {
    const std::vector<int64_t> sz = count ? sizes : std::vector<int64_t>{2, 2};
    std::vector<std::vector<float>> x2{xs[0], std::vector<float>(xs[1].begin(), xs[1].begin() + sz[1] * C * HW)};
    std::vector<std::vector<float>> d2{dys[0], std::vector<float>(dys[1].begin(), dys[1].begin() + sz[1] * C * HW)};
    const SyncResult cpu = RunSynced(x2, d2, sz, C, HW, count, "double");
    const SyncResult gpu = RunSynced(x2, d2, sz, C, HW, count, "double", Device::CUDA(0));
    CheckNear(gpu.y, cpu.y, 1e-4);
    CheckNear(gpu.dx, cpu.dx, 1e-4);
    CheckNear(gpu.dscale, cpu.dscale, 1e-4);
    CheckNear(gpu.rv, cpu.rv, 1e-5);
  }
  // NHWC on CUDA (default engine list tries CUDNN first) equals CPU.
  Workspace ws;
  std::vector<float> out[2];
  for (int i = 0; i < 2; ++i) {
    const Device dev = i ? Device::CUDA(0) : Device::CPU();
    const std::string p = i ? "g/" : "c/";
    Feed<float>(ws, p + "X", {2, 4, C}, RandomVec(24, 60, -1.f, 2.f), dev);
    Feed<float>(ws, p + "s", {C}, {1.f, 2.f, 0.5f}, dev);
    Feed<float>(ws, p + "b", {C}, {0.f, 1.f, -1.f}, dev);
    Feed<float>(ws, p + "rm", {C}, {0.f, 0.f, 0.f}, dev);
    Feed<float>(ws, p + "rv", {C}, {1.f, 1.f, 1.f}, dev);
    RunOp(ws, MakeOp("SpatialBN", {p + "X", p + "s", p + "b", p + "rm", p + "rv"},
                     {p + "Y", p + "rm", p + "rv", p + "m", p + "r"}, {ArgS("order", "NHWC")}, dev));
    out[i] = FetchVec<float>(ws, p + "Y");
  }
  CheckNear(out[1], out[0], 1e-4);
}
