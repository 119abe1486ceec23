// The PACKED engine of FC / FCTransposed (operators/fc_op_packed.cc) and its GEMM
// (device/cpu_packed_gemm.h): every tile shape, K blocking, column tails, bias/Relu, strides and
// threads against a float64 loop; the packed weight made once per weight version, shared by
// instances, remade after a write (also behind Tensor's back for external storage); the cases it
// hands to the next engine. The harness's FCEngines cases (harness_cases_dnnl.cc) cover its gradient.
#include <catch2/catch.hpp>

#include <cmath>

#include "core/net.h"
#include "core/operator.h"
#include "device/cpu_gemm_tiles.h"
#include "device/cpu_packed_gemm.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

#define SKIP_WITHOUT_TILES()                                                              \
  if (!cpu_gemm::Supported()) {                                                            \
    WARN("skipped: this CPU has neither AVX-512F nor AVX2+FMA, the PACKED engine hands every FC to DNNL"); \
    return;                                                                                \
  }

// Y = X W^T + b (W [N, K]) or X W + b (W [K, N]), then Relu; float64.
std::vector<double> Reference(int64_t M, int64_t K, int64_t N, const float* x, int64_t lda, const float* w,
                              bool transposed, const float* bias, bool relu) {
  std::vector<double> y(M * N);
  for (int64_t m = 0; m < M; ++m)
    for (int64_t n = 0; n < N; ++n) {
      double s = bias ? bias[n] : 0.0;
      for (int64_t k = 0; k < K; ++k) s += double(x[m * lda + k]) * (transposed ? w[k * N + n] : w[n * K + k]);
      y[m * N + n] = relu ? std::max(s, 0.0) : s;
    }
  return y;
}

void CheckGemm(int64_t M, int64_t K, int64_t N, bool transposed, bool with_bias, bool relu, int workers, int64_t pad) {
  const int64_t lda = K + pad, ldc = N + pad;
  const std::vector<float> x = RandomVec(M * lda, 1), w = RandomVec(K * N, 2), b = RandomVec(N, 3);
  const auto packed = transposed ? cpu_gemm::PackedMatrix::FromRowMajor(w.data(), K, N)
                                 : cpu_gemm::PackedMatrix::FromTransposed(w.data(), N, K);
  const auto want = Reference(M, K, N, x.data(), lda, w.data(), transposed, with_bias ? b.data() : nullptr, relu);
  INFO("M " << M << " K " << K << " N " << N << " transposed " << transposed << " bias " << with_bias << " relu "
            << relu << " workers " << workers << " pad " << pad);
  // GemmPacked (this CPU's widest tiles), then the AVX2 tiles on their own where the CPU has them
  // (on an AVX-512 host they are not GemmPacked's choice, and would otherwise go untested).
  for (int pass = 0; pass < 2; ++pass) {
    if (pass == 1 && !cpu_gemm::detail::Avx2Supported()) break;
    INFO((pass == 0 ? std::string("GemmPacked on ") + cpu_gemm::TileIsa() : std::string("AVX2 tiles")));
    std::vector<float> c(M * ldc, 7.0f);  // the padding columns must stay 7
    const float* bias = with_bias ? b.data() : nullptr;
    if (pass == 0)
      cpu_gemm::GemmPacked(M, x.data(), lda, *packed, bias, relu, c.data(), ldc, workers);
    else
      cpu_gemm::detail::GemmWithTiles(cpu_gemm::detail::Avx2Tiles(), M, x.data(), lda, *packed, bias, relu, c.data(),
                                      ldc, workers);
    std::vector<float> dense(M * N);
    bool padding_kept = true;
    for (int64_t m = 0; m < M; ++m) {
      std::copy(c.begin() + m * ldc, c.begin() + m * ldc + N, dense.begin() + m * N);
      for (int64_t n = N; n < ldc; ++n) padding_kept &= c[m * ldc + n] == 7.0f;
    }
    const WorstError worst = Worst(dense, want);
    INFO("worst at " << worst.index);
    REQUIRE(worst.error <= 1e-5 * std::max<double>(1.0, K));
    REQUIRE(padding_kept);
  }
}

caffe2::OperatorDef PackedFC(bool transposed, const std::string& out = "Y") {
  auto def = MakeOp(transposed ? "FCTransposed" : "FC", {"X", "W", "b"}, {out});
  def.set_engine("PACKED");
  return def;
}

void CheckFC(const Workspace& ws, const std::string& y = "Y") {
  const Tensor X = Fetch(ws, "X"), W = Fetch(ws, "W"), b = Fetch(ws, "b"), Y = Fetch(ws, y);
  const int64_t M = X.dim(0), K = X.dim(1), N = b.dim(0);
  const auto want = Reference(M, K, N, X.data<float>(), K, W.data<float>(), false, b.data<float>(), false);
  REQUIRE(Y.shape() == std::vector<int64_t>{M, N});
  REQUIRE(Worst(std::vector<float>(Y.data<float>(), Y.data<float>() + Y.numel()), want).error <= 1e-4);
}

int64_t Packings() { return cpu_gemm::PackedWeightCache().Preparations(); }

}  // namespace

TEST_CASE("Packed GEMM equals a float64 loop on every tile, tail and K block", "[fc][packed]") {
  SKIP_WITHOUT_TILES();
  for (int64_t M : {1, 2, 4, 7, 11, 12, 13, 16, 24, 25, 47, 48, 49, 64, 100})
    for (int64_t N : {1, 10, 16, 17, 32, 33, 70}) CheckGemm(M, 37, N, (M + N) % 2 == 1, true, false, 1, 0);
  for (int64_t K : {0, 1, 511, 832, 833, 1100, 2500}) CheckGemm(20, K, 45, false, true, true, 1, 0);
  CheckGemm(30, 1700, 50, true, false, true, 1, 3);  // no bias, Relu after the last block only, strides
  CheckGemm(97, 129, 130, false, true, false, 2, 5);
  CheckGemm(200, 64, 300, true, true, true, 4, 0);  // more workers than cores: same numbers
  // One row (the four-step kernel (two-step on AVX2) and its k tail), across K blocks, and split over threads once B
  // reaches 2^18 floats.
  for (int64_t K : {1, 3, 4, 5, 37, 833, 1100}) CheckGemm(1, K, 45, K % 2 == 1, true, K % 3 == 0, 1, 0);
  CheckGemm(1, 800, 500, false, true, true, 2, 0);
  CheckGemm(1, 1700, 200, true, false, false, 3, 7);
}

TEST_CASE("PACKED FC packs a weight once, shares it, and repacks after a write", "[fc][packed]") {
  SKIP_WITHOUT_TILES();
  Workspace ws;
  Feed<float>(ws, "X", {9, 40}, RandomVec(9 * 40, 1));
  Feed<float>(ws, "W", {20, 40}, RandomVec(20 * 40, 2));
  Feed<float>(ws, "b", {20}, RandomVec(20, 3));
  auto a = CreateOperator(PackedFC(false), &ws);
  auto b = CreateOperator(PackedFC(false, "Y2"), &ws);
  CHECK(a->engine() == "PACKED");
  const int64_t before = Packings();
  a->Run();
  b->Run();
  a->Run();
  CHECK(Packings() == before + 1);  // one packing for both operators and both runs
  CheckFC(ws);
  CheckFC(ws, "Y2");
  ws.GetMutableBlob("W")->GetMutableTensor(Device::CPU())->mutable_data<float>()[7] += 0.5f;  // in place
  a->Run();
  CheckFC(ws);
  CHECK(Packings() == before + 2);
  // Storage owned elsewhere, written behind Tensor's back: found by the content checksum.
  auto buf = std::make_shared<std::vector<float>>(RandomVec(20 * 40, 4));
  Tensor* w = ws.GetMutableBlob("W")->GetMutableTensor(Device::CPU());
  w->SetExternalData(std::shared_ptr<void>(buf, buf->data()), buf->size() * 4, DataType::Float, Device::CPU());
  a->Run();
  CheckFC(ws);
  (*buf)[33] -= 1.0f;
  a->Run();
  CheckFC(ws);
  CHECK(Packings() == before + 4);
}

TEST_CASE("PACKED FC runs single rows and hands other dtypes to the next engine", "[fc][packed]") {
  Workspace ws;
  Feed<float>(ws, "X", {1, 30}, RandomVec(30, 1));
  Feed<float>(ws, "W", {6, 30}, RandomVec(180, 2));
  Feed<float>(ws, "b", {6}, RandomVec(6, 3));
  auto op = CreateOperator(PackedFC(false), &ws);
  const int64_t before = Packings();
  op->Run();
  CheckFC(ws);
  CHECK(Packings() == before + (cpu_gemm::Supported() ? 1 : 0));  // M = 1: the packed matrix-vector kernel
  Feed<double>(ws, "X", {3, 30}, std::vector<double>(90, 1.0));
  REQUIRE_THROWS_WITH(op->Run(), Catch::Contains("FC") && Catch::Contains("X"));  // the next engine's message
  Feed<float>(ws, "X", {4, 29}, RandomVec(4 * 29, 5));  // K mismatch: FC's own check, naming both blobs
  REQUIRE_THROWS_WITH(op->Run(), Catch::Contains("'W'") && Catch::Contains("'X'"));
  Feed<float>(ws, "X", {4, 30}, RandomVec(120, 6));  // the operator stays usable
  op->Run();
  CheckFC(ws);
}

TEST_CASE("PACKED FC stops packing a weight that is rewritten before every run", "[fc][packed]") {
  SKIP_WITHOUT_TILES();
  Workspace ws;
  Feed<float>(ws, "X", {16, 24}, RandomVec(16 * 24, 1));
  Feed<float>(ws, "W", {10, 24}, RandomVec(240, 2));
  Feed<float>(ws, "b", {10}, RandomVec(10, 3));
  auto op = CreateOperator(PackedFC(false), &ws);
  op->Run();
  const int64_t before = Packings();
  for (int step = 0; step < 5; ++step) {  // an optimizer's in-place update between runs
    float* w = ws.GetMutableBlob("W")->GetMutableTensor(Device::CPU())->mutable_data<float>();
    for (int i = 0; i < 240; ++i) w[i] *= 0.9f;
    op->Run();
    CheckFC(ws);
  }
  CHECK(Packings() == before + 1);  // the first rewrite repacked; the next runs went to DNNL
  op->Run();  // unchanged weight: packed again, and kept
  op->Run();
  CheckFC(ws);
  CHECK(Packings() == before + 2);
}

TEST_CASE("Inference nets run FC on PACKED, training and workspace nets keep DNNL", "[fc][packed][fusion]") {
  caffe2::NetDef net;
  net.set_name("fc_net");
  *net.add_op() = MakeOp("FC", {"X", "W", "b"}, {"Y"});
  *net.add_op() = MakeOp("FC", {"Y", "W2", "b2"}, {"Z"});
  net.mutable_op(1)->set_engine("EIGEN");  // an engine the user named stays
  net.add_external_output("Z");
  Workspace ws;
  Feed<float>(ws, "X", {4, 6}, RandomVec(24, 1));
  Feed<float>(ws, "W", {5, 6}, RandomVec(30, 2));
  Feed<float>(ws, "b", {5}, RandomVec(5, 3));
  Feed<float>(ws, "W2", {3, 5}, RandomVec(15, 4));
  Feed<float>(ws, "b2", {3}, RandomVec(3, 5));
  const bool dnnl = ResolveEngine(net.op(0), Device::CPU()) == "DNNL";
  CHECK(ws.CreateNet(net)->def().op(0).engine() == "");  // a workspace net: as written
  auto* a = net.add_arg();
  a->set_name("hetnet_optimize");
  a->set_i(1);
  const caffe2::NetDef created = ws.CreateNet(net, /*overwrite=*/true)->def();
  CHECK(created.op(0).engine() == (dnnl ? "PACKED" : ""));
  CHECK(created.op(1).engine() == "EIGEN");
}

TEST_CASE("PACKED FC packs a constant weight when its net is created, not a weight the net writes",
          "[fc][packed][prepared]") {
  SKIP_WITHOUT_TILES();
  Workspace ws;
  Feed<float>(ws, "X", {3, 4, 5}, RandomVec(60, 1));
  Feed<float>(ws, "W", {20, 2, 10}, RandomVec(400, 2));  // N = 20 at axis_w 1, K = 20
  Feed<float>(ws, "b", {20}, RandomVec(20, 3));
  Feed<float>(ws, "W0", {20, 2, 10}, RandomVec(400, 4));
  caffe2::NetDef net;
  net.set_name("packs_at_creation");
  net.add_external_input("X");
  *net.add_op() = PackedFC(false);
  net.mutable_op(0)->set_input(0, "X");
  {
    auto* axis = net.mutable_op(0)->add_arg();
    axis->set_name("axis");
    axis->set_i(1);
  }
  const int64_t before = Packings();
  NetBase* created = ws.CreateNet(net);
  CHECK(Packings() == before + 1);  // at creation
  REQUIRE(created->operators()[0]->engine() == "PACKED");
  created->Run();
  CHECK(Packings() == before + 1);  // the first run used it
  const Tensor Y = Fetch(ws, "Y");
  REQUIRE(Y.shape() == std::vector<int64_t>{3, 20});
  const Tensor X = Fetch(ws, "X"), W = Fetch(ws, "W"), b = Fetch(ws, "b");
  const auto want = Reference(3, 20, 20, X.data<float>(), 20, W.data<float>(), false, b.data<float>(), false);
  CHECK(Worst(std::vector<float>(Y.data<float>(), Y.data<float>() + Y.numel()), want).error <= 1e-4);

  // FCTransposed: W is [K, N].
  Feed<float>(ws, "Wt", {20, 7}, RandomVec(140, 5));
  Feed<float>(ws, "bt", {7}, RandomVec(7, 6));
  caffe2::NetDef transposed = net;
  transposed.set_name("packs_transposed_at_creation");
  *transposed.mutable_op(0) = MakeOp("FCTransposed", {"X", "Wt", "bt"}, {"Yt"});
  transposed.mutable_op(0)->set_engine("PACKED");
  const int64_t before_t = Packings();
  NetBase* created_t = ws.CreateNet(transposed);
  CHECK(Packings() == before_t + 1);
  created_t->Run();
  CHECK(Packings() == before_t + 1);
  const Tensor Yt = Fetch(ws, "Yt"), Wt = Fetch(ws, "Wt"), bt = Fetch(ws, "bt");
  const auto want_t = Reference(3, 20, 7, X.data<float>(), 20, Wt.data<float>(), true, bt.data<float>(), false);
  CHECK(Worst(std::vector<float>(Yt.data<float>(), Yt.data<float>() + Yt.numel()), want_t).error <= 1e-4);

  // W written by the net itself (a Copy before the FC): nothing to prepare at creation.
  caffe2::NetDef writes = net;
  writes.set_name("writes_its_weight");
  writes.clear_op();
  *writes.add_op() = MakeOp("Copy", {"W0"}, {"W"});
  *writes.add_op() = net.op(0);
  const int64_t before_writes = Packings();
  NetBase* second = ws.CreateNet(writes);
  CHECK(Packings() == before_writes);
  second->Run();
  CHECK(Packings() == before_writes + 1);
}
