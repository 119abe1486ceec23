// hetnet's own Winograd F(4x4, 3x3) (operators/conv_winograd_f43.h), run by the DNNL Conv on nChw8c
// activations where oneDNN has no Winograd kernel (no AVX-512). Each case runs the blocked Conv with
// dnnl_winograd=2 (wherever it fits) and 0 (the direct kernel) on 1 and 2 threads: both close to the
// EIGEN reference, and not bit-identical (the Winograd kernel did run).
#include <catch2/catch.hpp>

#include <cmath>

#include "core/intra_op_threads.h"
#include "core/net.h"
#include "core/operator.h"
#include "operators/conv_winograd_f43.h"
#include "tests/cpp/fused_conv_case.h"
#include "tests/cpp/op_test_util.h"

using namespace hetnet;
using namespace hetnet::optest;

namespace {

ConvPoolGeom Geom(int64_t n, int64_t c, int64_t m, int64_t h, int64_t w) {
  ConvPoolGeom g;
  g.N = n, g.C = c, g.H = h, g.W = w, g.M = m, g.OH = h, g.OW = w;
  g.kh = g.kw = 3, g.pt = g.pb = g.pl = g.pr = 1, g.channel_block = 8;
  return g;
}

}  // namespace

TEST_CASE("Winograd F(4x4 3x3) on blocked activations equals the direct kernel", "[ops][conv][dnnl][blocked]") {
  if (ResolveEngine(MakeOp("Conv", {"X", "F"}, {"Y"}, {ArgI("kernel", 3)}), Device::CPU()) != "DNNL") {
    WARN("skipped: no DNNL engine in this build");
    return;
  }
  const bool runs = WinogradF43Conv::Fits(Geom(1, 64, 64, 56, 56));
  if (!runs) WARN("this CPU has AVX-512 (oneDNN's own Winograd) or no AVX2: only the direct path is checked");
  struct Case {
    const char* label;
    int64_t n, c, m, h, w;
    int pad;
    bool residual, relu;
  };
  // Sizes that are and are not whole numbers of 4x4 tiles, pads 1 and 0, one and three images,
  // the residual sum and Relu; channels of one block and several; tiles in one chunk and in two.
  for (const Case& s : {Case{"56x56-like, residual, relu", 1, 16, 24, 20, 20, 1, true, true},
                        Case{"odd sizes", 2, 8, 16, 13, 11, 1, false, true},
                        Case{"no pad", 3, 24, 8, 10, 9, 0, true, false},
                        Case{"a 7x7 image", 1, 32, 32, 7, 7, 1, false, false},
                        Case{"wide channels", 1, 64, 64, 12, 12, 1, true, true},
                        // 144 tiles of 256 + 256 channels: two chunks of the 8 MiB scratch (113 tiles each).
                        Case{"two chunks of tiles", 1, 256, 256, 48, 48, 1, true, true}}) {
    INFO(s.label);
    Workspace ws;
    const int64_t oh = s.h + 2 * s.pad - 2, ow = s.w + 2 * s.pad - 2;
    Feed<float>(ws, "X", {s.n, s.c, s.h, s.w}, RandomVec(s.n * s.c * s.h * s.w, 1));
    Feed<float>(ws, "F", {s.m, s.c, 3, 3}, RandomVec(s.m * s.c * 9, 2, -0.1f, 0.1f));
    Feed<float>(ws, "b", {s.m}, RandomVec(s.m, 3));
    Feed<float>(ws, "R", {s.n, s.m, oh, ow}, RandomVec(s.n * s.m * oh * ow, 4));
    std::vector<caffe2::Argument> args{ArgI("kernel", 3), ArgI("pad", s.pad)};
    auto ref = MakeOp("Conv", {"X", "F", "b"}, {"Want"}, args);
    ref.set_engine("EIGEN");
    RunOp(ws, ref);
    if (s.residual) RunOp(ws, MakeOp("Add", {"Want", "R"}, {"Want"}));
    if (s.relu) RunOp(ws, MakeOp("Relu", {"Want"}, {"Want"}));
    const auto want = FetchVec<float>(ws, "Want");
    float largest = 0;
    for (float v : want) largest = std::max(largest, std::abs(v));
    RunOp(ws, MakeOp("NCHWToBlocked", {"X"}, {"Xb"}, {ArgI("channel_block", 8)}));
    RunOp(ws, MakeOp("NCHWToBlocked", {"R"}, {"Rb"}, {ArgI("channel_block", 8)}));
    std::vector<std::string> in{"Xb", "F", "b"};
    args.push_back(ArgS("activation_order", "NCHW8c"));
    if (s.residual) in.push_back("Rb"), args.push_back(ArgI("fused_residual", 1));
    if (s.relu) args.push_back(ArgS("fused_activation", "Relu"));
    for (int threads : {1, 2}) {
      INFO(threads << " threads");
      ScopedIntraOpThreads team(threads);
      std::vector<float> got[2];
      for (int winograd = 0; winograd < 2; ++winograd) {
        std::vector<caffe2::Argument> a = args;
        a.push_back(ArgI("dnnl_winograd", 2 * winograd));  // 2: wherever it fits, whatever it costs
        const auto conv = MakeOp("Conv", in, {"Yb"}, a);
        RunOp(ws, conv);
        RunOp(ws, MakeOp("BlockedToNCHW", {"Yb"}, {"Y"}, {ArgI("channel_block", 8)}));
        got[winograd] = FetchVec<float>(ws, "Y");
        REQUIRE(got[winograd].size() == want.size());
      }
      const auto [to_ref, between] = Gaps(got[1], got[0], want);
      // F(4x4, 3x3)'s transforms (factors up to 5 in, 8 out) lose a few bits more than a direct sum:
      // measured 1.2e-5 of the largest output with 256 input channels, under 1e-5 below.
      CHECK(to_ref <= 2e-5 * largest);
      CHECK(between <= 2e-5 * largest);
      if (runs) CHECK(between > 0);  // Winograd ran: its rounding differs from the direct kernel's
    }
  }
}

TEST_CASE("Winograd F(4x4 3x3) is chosen where its cost rule predicts a gain", "[ops][conv][dnnl]") {
  // ResNet's 3x3 layers at batch 1 and 8 (measured 1.3-2.8x faster, benchmarks/RESULTS.md).
  for (int64_t n : {1, 8}) {
    CHECK(WinogradF43Conv::Pays(Geom(n, 64, 64, 56, 56)));
    CHECK(WinogradF43Conv::Pays(Geom(n, 128, 128, 28, 28)));
    CHECK(WinogradF43Conv::Pays(Geom(n, 256, 256, 14, 14)));
    CHECK(WinogradF43Conv::Pays(Geom(n, 512, 512, 7, 7)));
  }
  CHECK_FALSE(WinogradF43Conv::Pays(Geom(1, 16, 16, 56, 56)));    // too few channels: no gain measured
  CHECK_FALSE(WinogradF43Conv::Pays(Geom(1, 1024, 1024, 7, 7)));  // a 151 MB transformed filter
  CHECK_FALSE(WinogradF43Conv::Pays(Geom(1, 64, 64, 2, 2)));      // one tile for 4 pixels: no saving
}

TEST_CASE("Winograd F(4x4 3x3) transforms a filter again when it is written", "[ops][conv][dnnl][blocked]") {
  if (!WinogradF43Conv::Fits(Geom(1, 8, 8, 6, 6))) {
    WARN("this CPU has AVX-512 (oneDNN's own Winograd) or no AVX2: nothing to check");
    return;
  }
  Workspace ws;
  Feed<float>(ws, "X", {1, 8, 6, 6}, RandomVec(8 * 36, 1));
  RunOp(ws, MakeOp("NCHWToBlocked", {"X"}, {"Xb"}, {ArgI("channel_block", 8)}));
  const auto conv = MakeOp("Conv", {"Xb", "F"}, {"Yb"},
                           {ArgI("kernel", 3), ArgI("pad", 1), ArgS("activation_order", "NCHW8c"),
                            ArgI("dnnl_winograd", 2)});
  auto ref = MakeOp("Conv", {"X", "F"}, {"Want"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  ref.set_engine("EIGEN");
  std::unique_ptr<OperatorBase> op;
  for (int seed : {2, 3}) {  // the same operator instance, the filter rewritten in between
    INFO("filter seed " << seed);
    Feed<float>(ws, "F", {8, 8, 3, 3}, RandomVec(8 * 8 * 9, seed, -0.1f, 0.1f));
    if (!op) op = CreateOperator(conv, &ws);
    op->Run();
    RunOp(ws, ref);
    RunOp(ws, MakeOp("BlockedToNCHW", {"Yb"}, {"Y"}, {ArgI("channel_block", 8)}));
    CHECK(Worst(FetchVec<float>(ws, "Y"), FetchVec<float>(ws, "Want")).error <= 1e-5);
  }
}

TEST_CASE("Winograd F(4x4 3x3) transforms a constant filter when its net is created", "[ops][conv][dnnl][blocked][prepared]") {
  if (!WinogradF43Conv::Fits(Geom(1, 32, 32, 6, 6))) {
    WARN("this CPU has AVX-512 (oneDNN's own Winograd) or no AVX2: nothing to check");
    return;
  }
  Workspace ws;
  Feed<float>(ws, "X", {1, 32, 10, 10}, RandomVec(32 * 100, 1));
  Feed<float>(ws, "F", {32, 32, 3, 3}, RandomVec(32 * 32 * 9, 2, -0.1f, 0.1f));
  Feed<float>(ws, "b", {32}, RandomVec(32, 3));
  Feed<float>(ws, "F16", {16, 32, 3, 3}, RandomVec(16 * 32 * 9, 4, -0.1f, 0.1f));
  caffe2::NetDef net;
  net.set_name("winograd_at_creation");
  net.add_external_input("X");
  *net.add_op() = MakeOp("NCHWToBlocked", {"X"}, {"Xb"}, {ArgI("channel_block", 8)});
  const std::vector<caffe2::Argument> blocked{ArgI("kernel", 3), ArgI("pad", 1), ArgS("activation_order", "NCHW8c")};
  *net.add_op() = MakeOp("Conv", {"Xb", "F", "b"}, {"Yb"}, blocked);
  *net.add_op() = MakeOp("Conv", {"Xb", "F16"}, {"Zb"}, blocked);  // 16 outputs: the cost rule keeps the direct kernel
  *net.add_op() = MakeOp("BlockedToNCHW", {"Yb"}, {"Y"}, {ArgI("channel_block", 8)});
  const int64_t before = WinogradF43Conv::FilterPreparations();
  NetBase* created = ws.CreateNet(net);
  CHECK(WinogradF43Conv::FilterPreparations() == before + 1);
  created->Run();
  CHECK(WinogradF43Conv::FilterPreparations() == before + 1);
  auto ref = MakeOp("Conv", {"X", "F", "b"}, {"Want"}, {ArgI("kernel", 3), ArgI("pad", 1)});
  ref.set_engine("EIGEN");
  RunOp(ws, ref);
  CHECK(Worst(FetchVec<float>(ws, "Y"), FetchVec<float>(ws, "Want")).error <= 2e-5);

  // A filter the net writes (here a Copy first) is transformed by the run, not before.
  caffe2::NetDef writes = net;
  writes.set_name("writes_its_filter");
  writes.clear_op();
  *writes.add_op() = MakeOp("NCHWToBlocked", {"X"}, {"Xb"}, {ArgI("channel_block", 8)});
  *writes.add_op() = MakeOp("Copy", {"F"}, {"G"});
  *writes.add_op() = MakeOp("Conv", {"Xb", "G"}, {"Yg"}, blocked);
  const int64_t before_writes = WinogradF43Conv::FilterPreparations();
  NetBase* second = ws.CreateNet(writes);
  CHECK(WinogradF43Conv::FilterPreparations() == before_writes);
  second->Run();
  CHECK(WinogradF43Conv::FilterPreparations() == before_writes + 1);
}
