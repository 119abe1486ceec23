// Blocked activations (core/blocked_activations_pass.h) and the kernels they rely on: residual nets
// rewritten and run against the same nets run as written, at blocks of 8 and 16, one image (the
// Conv cut into channel slices) and several; the op list the pass produces; the channels-last pass
// where blocks do not fit; the DNNL Conv and the pools on blocked activations against their NCHW
// results; refusals that name the operator.
#include <catch2/catch.hpp>

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_test_util.h"
#include "tests/cpp/residual_test_net.h"
#include "tests/cpp/rewrite_test_util.h"
#include "test_util_io.h"

using namespace hetnet;
using hetnet_test::Count;
using hetnet_test::HasArg;
using hetnet_test::ResidualNet;
using hetnet_test::RunBoth;
using hetnet_test::Values;
using optest::ArgI;
using optest::ArgS;
using optest::RandomVec;

namespace {

bool DnnlConv() { return ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CPU()) == "DNNL"; }

// The rewrite with blocks of `block` channels (0: this CPU's), restored after the test.
struct BlockOption {
  const InferenceFusionOptions was = DefaultInferenceFusionOptions();
  explicit BlockOption(int block) {
    DefaultInferenceFusionOptions().blocked_activations = true;
    DefaultInferenceFusionOptions().channel_block = block;
  }
  ~BlockOption() { DefaultInferenceFusionOptions() = was; }
};

int Blocked(const caffe2::NetDef& net, const std::string& type, const char* arg, const std::string& order) {
  int n = 0;
  for (const auto& op : net.op()) n += op.type() == type && HasArg(op, arg, order);
  return n;
}

}  // namespace

TEST_CASE("Blocked residual net equals the net as written, with no switch in and one out", "[fusion][blocked]") {
  if (!DnnlConv()) {
    WARN("skipped: no DNNL engine for CPU Conv in this build (or HETNET_CPU_ENGINE), the pass does not apply");
    return;
  }
  for (int block : {8, 16}) {
    for (int64_t width : {int64_t{16}, int64_t{64}}) {
      for (int64_t n : {int64_t{1}, int64_t{3}}) {  // one image: channel slices (64 wide, 2 threads)
        INFO("block " << block << ", width " << width << ", batch " << n);
        BlockOption opt(block);
        caffe2::NetDef init, net;
        ResidualNet(&init, &net, width);
        const caffe2::NetDef r = RunBoth(init, net, {n, 3, 10, 9});
        const std::string order = "NCHW" + std::to_string(block) + "c";
        CHECK(Count(r, "NCHWToBlocked") == 0);  // data's 3 channels go into the first Conv as they are
        CHECK(Count(r, "BlockedToNCHW") == 1);  // before Flatten
        CHECK(Count(r, "NCHW2NHWC") == 0);
        CHECK(Blocked(r, "Conv", "activation_order", order) == 3);
        CHECK(Blocked(r, "MaxPool", "order", order) + Blocked(r, "AveragePool", "order", order) == 2);
      }
    }
  }
  SECTION("an intermediate external output keeps its NCHW value") {
    BlockOption opt(8);
    caffe2::NetDef init, net;
    ResidualNet(&init, &net, 16);
    net.add_external_output("c2");
    net.add_external_output("p1");
    const caffe2::NetDef r = RunBoth(init, net, {2, 3, 7, 8});
    CHECK(Count(r, "BlockedToNCHW") == 3);  // c2, p1 (at the end) and g (before Flatten)
  }
  SECTION("a net input with whole blocks is switched in") {
    BlockOption opt(8);
    caffe2::NetDef init, net;
    net.set_name("two_convs");
    hetnet_test::AddConv(&net, &init, "data", "c1", 8, 16, 3, 1, true);
    hetnet_test::AddConv(&net, &init, "c1", "c2", 16, 16, 1, 1, false);
    net.add_external_input("data");
    net.add_external_output("c2");
    const caffe2::NetDef r = RunBoth(init, net, {2, 8, 6, 6});
    CHECK(Count(r, "NCHWToBlocked") == 1);
    CHECK(Count(r, "BlockedToNCHW") == 1);
  }
  SECTION("channels that blocks do not fit leave the net to the channels-last pass") {
    BlockOption opt(16);
    caffe2::NetDef init, net;
    ResidualNet(&init, &net, 8);
    const caffe2::NetDef r = RunBoth(init, net, {1, 3, 7, 8});
    CHECK(Count(r, "BlockedToNCHW") == 0);
    CHECK(Count(r, "NCHW2NHWC") == 1);
  }
  SECTION("the process switch turns it off") {
    BlockOption opt(8);
    DefaultInferenceFusionOptions().blocked_activations = false;
    caffe2::NetDef init, net;
    ResidualNet(&init, &net, 16);
    const caffe2::NetDef r = RunBoth(init, net, {1, 3, 7, 8});
    CHECK(Count(r, "BlockedToNCHW") == 0);
    CHECK(Count(r, "NCHW2NHWC") == 1);
  }
}

TEST_CASE("DNNL Conv with blocked activations equals the NCHW convolution", "[dnnl][blocked]") {
  if (!DnnlConv()) return;
  struct Geo {
    int64_t n, c, m;
    int k, stride, pad, group;
    bool relu, residual;
  };
  for (int block : {8, 16}) {
    const std::string order = "NCHW" + std::to_string(block) + "c";
    for (const Geo& g : {Geo{2, 3, 16, 3, 1, 1, 1, true, false}, Geo{1, 16, 64, 3, 1, 1, 1, false, true},
                         Geo{1, 32, 64, 1, 2, 0, 1, true, true}, Geo{3, 16, 32, 3, 2, 1, 1, true, false},
                         Geo{2, 32, 32, 3, 1, 1, 2, false, false}, Geo{1, 64, 96, 3, 1, 1, 1, true, true}}) {
      INFO(order << ": N " << g.n << " C " << g.c << " M " << g.m << " k " << g.k << " stride " << g.stride
                 << " group " << g.group);
      Workspace ws;
      const int64_t H = 11, W = 10, OH = (H + 2 * g.pad - g.k) / g.stride + 1, OW = (W + 2 * g.pad - g.k) / g.stride + 1;
      optest::Feed<float>(ws, "X", {g.n, g.c, H, W}, RandomVec(g.n * g.c * H * W, 1));
      optest::Feed<float>(ws, "F", {g.m, g.c / g.group, g.k, g.k}, RandomVec(g.m * g.c / g.group * g.k * g.k, 2));
      optest::Feed<float>(ws, "b", {g.m}, RandomVec(g.m, 3));
      optest::Feed<float>(ws, "R", {g.n, g.m, OH, OW}, RandomVec(g.n * g.m * OH * OW, 4));
      std::vector<caffe2::Argument> args{ArgI("kernel", g.k), ArgI("stride", g.stride), ArgI("pad", g.pad),
                                         ArgI("group", g.group)};
      if (g.relu) args.push_back(ArgS("fused_activation", "Relu"));
      if (g.residual) args.push_back(ArgI("fused_residual", 1));
      std::vector<std::string> in{"X", "F", "b"}, in_b{g.c % block == 0 ? "Xb" : "X", "F", "b"};
      if (g.residual) in.push_back("R"), in_b.push_back("Rb");
      optest::RunOp(ws, optest::MakeOp("Conv", in, {"Y"}, args));
      if (g.c % block == 0) optest::RunOp(ws, optest::MakeOp("NCHWToBlocked", {"X"}, {"Xb"}, {ArgI("channel_block", block)}));
      optest::RunOp(ws, optest::MakeOp("NCHWToBlocked", {"R"}, {"Rb"}, {ArgI("channel_block", block)}));
      args.push_back(ArgS("activation_order", order));
      const auto conv = optest::MakeOp("Conv", in_b, {"Yb"}, args);
      for (int run = 0; run < 2; ++run) {  // the second run reuses the plans
        optest::RunOp(ws, conv);
        optest::RunOp(ws, optest::MakeOp("BlockedToNCHW", {"Yb"}, {"Yp"}, {ArgI("channel_block", block)}));
        CHECK(optest::Fetch(ws, "Yb").shape() == optest::Fetch(ws, "Y").shape());
        const auto y = Values(optest::Fetch(ws, "Y")), yp = Values(optest::Fetch(ws, "Yp"));
        REQUIRE(y.size() == yp.size());
        REQUIRE(optest::Worst(yp, y).error <= 1e-4);
      }
    }
  }
}

TEST_CASE("Pooling with a blocked order equals NCHW pooling", "[ops][pool][blocked]") {
  for (int block : {8, 16}) {
    for (const char* type : {"MaxPool", "AveragePool"}) {
      // Windows of 3 and 2 (the unrolled kernels for full windows, beside the border loop), of 4 (the
      // loop alone), and global pooling.
      struct Window { int kernel, stride, pad; };
      for (Window w : {Window{3, 2, 1}, Window{3, 1, 1}, Window{3, 1, 0}, Window{2, 2, 0}, Window{2, 1, 1},
                       Window{4, 2, 1}, Window{0, 0, 0}}) {
        const bool global = w.kernel == 0;
        INFO(type << " block " << block << " kernel " << w.kernel << " stride " << w.stride << " pad " << w.pad);
        Workspace ws;
        optest::Feed<float>(ws, "X", {2, 32, 9, 7}, RandomVec(2 * 32 * 63, 1));
        std::vector<caffe2::Argument> args;
        if (global) args = {ArgI("global_pooling", 1)};
        else args = {ArgI("kernel", w.kernel), ArgI("stride", w.stride), ArgI("pad", w.pad)};
        optest::RunOp(ws, optest::MakeOp(type, {"X"}, {"Y"}, args));
        optest::RunOp(ws, optest::MakeOp("NCHWToBlocked", {"X"}, {"Xb"}, {ArgI("channel_block", block)}));
        args.push_back(ArgS("order", "NCHW" + std::to_string(block) + "c"));
        optest::RunOp(ws, optest::MakeOp(type, {"Xb"}, {"Yb"}, args));
        optest::RunOp(ws, optest::MakeOp("BlockedToNCHW", {"Yb"}, {"Yp"}, {ArgI("channel_block", block)}));
        CHECK(optest::Fetch(ws, "Yb").shape() == optest::Fetch(ws, "Y").shape());
        // The same arithmetic in the same order per channel: the same bits.
        CHECK(Values(optest::Fetch(ws, "Yp")) == Values(optest::Fetch(ws, "Y")));
      }
    }
  }
}

TEST_CASE("Blocked layouts are refused where they do not run or do not fit, naming the operator", "[blocked]") {
  Workspace ws;
  optest::Feed<float>(ws, "X", {1, 12, 5, 5}, RandomVec(300, 1));
  optest::Feed<float>(ws, "W", {16, 12, 3, 3}, RandomVec(16 * 12 * 9, 2));
  optest::Feed<float>(ws, "W12", {12, 12, 3, 3}, RandomVec(12 * 12 * 9, 2));
  // The switches: channels a whole number of blocks, blocks of 8 or 16.
  REQUIRE_THROWS_WITH(optest::RunOp(ws, optest::MakeOp("NCHWToBlocked", {"X"}, {"Y"}, {ArgI("channel_block", 8)})),
                      Catch::Contains("NCHWToBlocked") && Catch::Contains("'X'") && Catch::Contains("12 channels"));
  REQUIRE_THROWS_WITH(optest::RunOp(ws, optest::MakeOp("BlockedToNCHW", {"X"}, {"Y"}, {ArgI("channel_block", 4)})),
                      Catch::Contains("channel_block 4"));
  // Pooling: the CPU kernels only, and whole blocks.
  REQUIRE_THROWS_WITH(optest::RunOp(ws, optest::MakeOp("MaxPool", {"X"}, {"Y"}, {ArgI("kernel", 2), ArgS("order", "NCHW8c")})),
                      Catch::Contains("MaxPool") && Catch::Contains("'X'") && Catch::Contains("blocks of 8"));
  auto grad = optest::MakeOp("MaxPoolGradient", {"X", "X", "X"}, {"dX"}, {ArgI("kernel", 2), ArgS("order", "NCHW8c")});
  REQUIRE_THROWS_WITH(CreateOperator(grad, &ws), Catch::Contains("order 'NCHW8c'"));
  // Conv: the DNNL engine only; output channels in whole blocks.
  auto eigen = optest::MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgS("activation_order", "NCHW8c")});
  eigen.set_engine("EIGEN");
  REQUIRE_THROWS_WITH(CreateOperator(eigen, &ws), Catch::Contains("activation_order 'NCHW8c'") && Catch::Contains("DNNL"));
  if (!DnnlConv()) return;
  auto conv = optest::MakeOp("Conv", {"X", "W12"}, {"Y"}, {ArgI("kernel", 3), ArgS("activation_order", "NCHW8c")});
  conv.set_name("c12");
  REQUIRE_THROWS_WITH(optest::RunOp(ws, conv), Catch::Contains("'c12'") && Catch::Contains("12 output channels"));
  // The workspace stays usable: the same op with a fitting filter runs.
  optest::RunOp(ws, optest::MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgS("activation_order", "NCHW8c")}));
  CHECK(optest::Fetch(ws, "Y").shape() == std::vector<int64_t>{1, 16, 3, 3});
}
