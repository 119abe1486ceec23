// The channels-last pass (core/channels_last_pass.h) and the kernels it relies on: residual nets
// rewritten and run against the same nets run as written (hetnet_optimize=0); the op list the pass
// produces; blobs that must keep their NCHW value (external outputs, blobs other nets read, values a
// later run reads first); nets it leaves alone; pooling with order NHWC and the DNNL Conv with
// activation_order NHWC against their NCHW results; refusals where those layouts do not run.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "core/inference_fusion.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_test_util.h"
#include "tests/cpp/residual_test_net.h"
#include "tests/cpp/rewrite_test_util.h"
#include "test_util_io.h"

using namespace hetnet;
using hetnet_test::AddFill;
using hetnet_test::AddOp;
using hetnet_test::FloatTensor;
using hetnet_test::Values;
using optest::ArgI;
using optest::ArgS;
using optest::RandomVec;

namespace {

// The shared residual net's pieces (tests/cpp/residual_test_net.h).
void Conv(caffe2::NetDef* net, caffe2::NetDef* init, const std::string& x, const std::string& y, int64_t c,
          int64_t m, int k, int stride, bool relu) {
  hetnet_test::AddConv(net, init, x, y, c, m, k, stride, relu);
}
using hetnet_test::ResidualNet;

using hetnet_test::Count;
using hetnet_test::HasArg;
using hetnet_test::RunBoth;

// These tests are about the channels-last pass: the blocked-activations pass, tried first, is off.
struct ChannelsLastOnly {
  const bool was = DefaultInferenceFusionOptions().blocked_activations;
  ChannelsLastOnly() { DefaultInferenceFusionOptions().blocked_activations = false; }
  ~ChannelsLastOnly() { DefaultInferenceFusionOptions().blocked_activations = was; }
};

}  // namespace

TEST_CASE("Channels-last residual net equals the net as written, with one switch in and one out",
          "[fusion][channels_last]") {
  ChannelsLastOnly nhwc_only;
  if (ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CPU()) != "DNNL") {
    WARN("skipped: no DNNL engine for CPU Conv in this build (or HETNET_CPU_ENGINE), the pass does not apply");
    return;
  }
  caffe2::NetDef init, net;
  ResidualNet(&init, &net);
  const caffe2::NetDef r = RunBoth(init, net, {2, 3, 10, 9});
  CHECK(Count(r, "NCHW2NHWC") == 1);  // data
  CHECK(Count(r, "NHWC2NCHW") == 1);  // before Flatten
  int nhwc_convs = 0, nhwc_pools = 0;
  for (const auto& op : r.op()) {
    nhwc_convs += op.type() == "Conv" && HasArg(op, "activation_order", "NHWC");
    nhwc_pools += (op.type() == "MaxPool" || op.type() == "AveragePool") && HasArg(op, "order", "NHWC");
  }
  CHECK(nhwc_convs == 3);
  CHECK(nhwc_pools == 2);
  CHECK(Count(r, "Add") == 0);  // fused into c3 as its residual, and the Relu after it too
  CHECK(Count(r, "Relu") == 0);
  SECTION("an intermediate external output keeps its NCHW value") {
    net.add_external_output("c2");  // fused Conv+Relu inside the region
    net.add_external_output("s");
    const caffe2::NetDef r2 = RunBoth(init, net, {1, 3, 7, 8});
    CHECK(Count(r2, "NHWC2NCHW") == 3);  // c2, s (at the end) and g (before Flatten)
  }
  SECTION("the process switch turns it off") {
    DefaultInferenceFusionOptions().channels_last = false;
    const caffe2::NetDef r2 = RunBoth(init, net, {1, 3, 7, 8});
    DefaultInferenceFusionOptions().channels_last = true;
    CHECK(Count(r2, "NCHW2NHWC") == 0);
  }
}

int IntArgOf(const caffe2::OperatorDef& op, const std::string& name) {
  for (const auto& a : op.arg())
    if (a.name() == name) return static_cast<int>(a.i());
  return 0;
}
int Reusing(const caffe2::NetDef& net) {
  int n = 0;
  for (const auto& op : net.op()) n += IntArgOf(op, "fused_residual_reuse");
  return n;
}

TEST_CASE("A fused residual that no later op reads lends its storage to the Conv's output", "[fusion][conv]") {
  if (ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CPU()) != "DNNL") {
    WARN("skipped: no DNNL engine for CPU Conv in this build, the residual is not fused");
    return;
  }
  caffe2::NetDef init, net;
  ResidualNet(&init, &net);  // the skip p1 is read by c2 (which c3 waits for) and by the Add
  for (int channels_last : {1, 0}) {
    INFO("channels-last pass " << channels_last);
    DefaultInferenceFusionOptions().channels_last = channels_last != 0;
    CHECK(Reusing(RunBoth(init, net, {2, 3, 10, 9})) == 1);  // equal to the plain net over two runs
    CHECK(Reusing(RunBoth(init, net, {1, 3, 7, 8})) == 1);
  }
  DefaultInferenceFusionOptions().channels_last = true;
  SECTION("not when the skip is read after the Conv") {
    AddOp(&net, "Copy", {"p1"}, {"p1_copy"});
    net.add_external_output("p1_copy");
    const caffe2::NetDef r = RunBoth(init, net, {2, 3, 10, 9});  // p1_copy must equal the plain net's
    CHECK(Count(r, "Add") == 0);
    CHECK(Reusing(r) == 0);
  }
  SECTION("not when the skip is a result of the net") {
    net.add_external_output("p1");
    CHECK(Reusing(RunBoth(init, net, {2, 3, 10, 9})) == 0);
  }
  SECTION("not when an op the Conv does not wait for reads the skip before it") {
    // p1 -> side is independent of c2/c3: a DAG executor could run it after the Conv.
    auto* side = net.mutable_op()->Add();
    side->set_type("Copy");
    side->add_input("p1");
    side->add_output("side");
    // Move it before c3 (c3 is the op whose output feeds the Add).
    for (int i = net.op_size() - 1; i > 0 && net.op(i - 1).output(0) != "c2"; --i)
      net.mutable_op()->SwapElements(i, i - 1);
    net.add_external_output("side");
    CHECK(Reusing(RunBoth(init, net, {2, 3, 10, 9})) == 0);
  }
}

TEST_CASE("Channels-last pass leaves a lone convolution and non-DNNL convolutions alone", "[fusion][channels_last]") {
  ChannelsLastOnly nhwc_only;
  caffe2::NetDef init, net;
  net.set_name("lone");
  Conv(&net, &init, "data", "c1", 3, 4, 3, 1, true);
  net.add_external_input("data");
  net.add_external_output("c1");
  CHECK(Count(RunBoth(init, net, {1, 3, 6, 6}), "NCHW2NHWC") == 0);
  caffe2::NetDef init2, eigen;
  ResidualNet(&init2, &eigen);
  for (auto& op : *eigen.mutable_op())
    if (op.type() == "Conv") op.set_engine("EIGEN");
  CHECK(Count(RunBoth(init2, eigen, {1, 3, 6, 6}), "NCHW2NHWC") == 0);
}

TEST_CASE("A value the next run reads first is switched back at the end of the run", "[fusion][channels_last]") {
  ChannelsLastOnly nhwc_only;
  if (ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CPU()) != "DNNL") return;
  caffe2::NetDef init, net;
  net.set_name("recurrent");
  AddFill(&init, "state", {1, 4, 5, 5}, RandomVec(100, 5));
  AddOp(&net, "Add", {"data", "state"}, {"mix"});  // reads last run's state before this run writes it
  Conv(&net, &init, "mix", "a", 4, 4, 3, 1, true);
  Conv(&net, &init, "a", "state", 4, 4, 3, 1, false);
  net.add_external_input("data");
  net.add_external_output("a");
  const caffe2::NetDef r = RunBoth(init, net, {1, 4, 5, 5});  // two runs: the second reads the first's state
  for (const auto& op : r.op()) UNSCOPED_INFO(op.type() << " " << op.input(0) << " -> " << op.output(0));
  CHECK(Count(r, "NHWC2NCHW") >= 1);
}

TEST_CASE("Pooling with order NHWC equals NCHW pooling, transposed", "[ops][pool][channels_last]") {
  // Channels: fewer than one 16-lane register, one and a tail, two and a tail.
  const int64_t C = GENERATE(5, 20, 35);
  const int64_t N = 2, H = 9, W = 7;
  const std::vector<float> x = RandomVec(N * C * H * W, 11);
  struct Form {
    const char* type;
    std::vector<caffe2::Argument> args;
  };
  const std::vector<Form> forms = {
      {"MaxPool", {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)}},
      {"AveragePool", {ArgI("kernel", 3), ArgI("stride", 2), ArgI("pad", 1)}},
      {"AveragePool", {ArgI("kernel", 2), ArgI("stride", 1), ArgI("pad", 1), ArgI("count_include_pad", 1)}},
      {"AveragePool", {ArgI("global_pooling", 1)}},
      {"MaxPool", {ArgI("kernel_h", 4), ArgI("kernel_w", 2), ArgI("stride", 3)}}};
  for (const auto& f : forms) {
    Workspace ws;
    optest::Feed<float>(ws, "X", {N, C, H, W}, x);
    optest::RunOp(ws, optest::MakeOp("NCHW2NHWC", {"X"}, {"Xl"}));
    optest::RunOp(ws, optest::MakeOp(f.type, {"X"}, {"Y"}, f.args));
    auto last = f.args;
    last.push_back(ArgS("order", "NHWC"));
    optest::RunOp(ws, optest::MakeOp(f.type, {"Xl"}, {"Yl"}, last));
    optest::RunOp(ws, optest::MakeOp("NHWC2NCHW", {"Yl"}, {"Yb"}));
    const Tensor Y = optest::Fetch(ws, "Y"), Yb = optest::Fetch(ws, "Yb");
    INFO(f.type << " " << f.args.size() << " args, " << C << " channels");
    REQUIRE(Y.shape() == Yb.shape());
    CHECK(Values(Y) == Values(Yb));  // same window order: the same bits
  }
}

TEST_CASE("DNNL Conv with channels-last activations equals the NCHW convolution", "[dnnl][channels_last]") {
  if (ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CPU()) != "DNNL") return;
  struct Geo {
    int64_t c, m;
    int k, stride, pad, group;
    bool relu;
  };
  for (const Geo& g : {Geo{3, 8, 3, 1, 1, 1, false}, Geo{8, 16, 1, 1, 0, 1, true}, Geo{8, 6, 1, 2, 0, 1, false},
                       Geo{6, 6, 3, 2, 1, 3, true}, Geo{4, 4, 5, 1, 2, 4, false}}) {
    Workspace ws;
    optest::Feed<float>(ws, "X", {2, g.c, 9, 8}, RandomVec(2 * g.c * 72, 1));
    optest::Feed<float>(ws, "W", {g.m, g.c / g.group, g.k, g.k}, RandomVec(g.m * g.c / g.group * g.k * g.k, 2));
    optest::Feed<float>(ws, "b", {g.m}, RandomVec(g.m, 3));
    std::vector<caffe2::Argument> args{ArgI("kernel", g.k), ArgI("stride", g.stride), ArgI("pad", g.pad),
                                       ArgI("group", g.group)};
    if (g.relu) args.push_back(ArgS("fused_activation", "Relu"));
    optest::RunOp(ws, optest::MakeOp("Conv", {"X", "W", "b"}, {"Y"}, args));
    optest::RunOp(ws, optest::MakeOp("NCHW2NHWC", {"X"}, {"Xl"}));
    args.push_back(ArgS("activation_order", "NHWC"));
    optest::RunOp(ws, optest::MakeOp("Conv", {"Xl", "W", "b"}, {"Yl"}, args));
    optest::RunOp(ws, optest::MakeOp("NHWC2NCHW", {"Yl"}, {"Yb"}));
    const auto y = Values(optest::Fetch(ws, "Y")), yb = Values(optest::Fetch(ws, "Yb"));
    REQUIRE(y.size() == yb.size());
    REQUIRE(optest::Worst(yb, y).error <= 1e-4);
  }
  // An empty batch gives an empty NHWC output.
  Workspace ws;
  optest::Feed<float>(ws, "Xl", {0, 6, 6, 3}, std::vector<float>{});
  optest::Feed<float>(ws, "W", {4, 3, 3, 3}, RandomVec(108, 2));
  optest::RunOp(ws, optest::MakeOp("Conv", {"Xl", "W"}, {"Yl"}, {ArgI("kernel", 3), ArgS("activation_order", "NHWC")}));
  CHECK(optest::Fetch(ws, "Yl").shape() == std::vector<int64_t>{0, 4, 4, 4});
}

TEST_CASE("Channels-last layouts are refused where they do not run, naming the operator", "[channels_last]") {
  Workspace ws;
  optest::Feed<float>(ws, "X", {1, 5, 5, 3}, RandomVec(75, 1));
  optest::Feed<float>(ws, "W", {2, 3, 3, 3}, RandomVec(54, 2));
  auto conv = optest::MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgS("activation_order", "NHWC")});
  conv.set_engine("EIGEN");
  REQUIRE_THROWS_WITH(CreateOperator(conv, &ws), Catch::Contains("Conv") && Catch::Contains("activation_order"));
  auto bad = optest::MakeOp("Conv", {"X", "W"}, {"Y"}, {ArgI("kernel", 3), ArgS("activation_order", "CHWN")});
  REQUIRE_THROWS_WITH(CreateOperator(bad, &ws), Catch::Contains("activation_order 'CHWN'"));
  auto grad = optest::MakeOp("MaxPoolGradient", {"X", "X", "X"}, {"dX"}, {ArgI("kernel", 2), ArgS("order", "NHWC")});
  REQUIRE_THROWS_WITH(CreateOperator(grad, &ws), Catch::Contains("order 'NHWC'"));
}

TEST_CASE("Caffe2's order NHWC Conv (filter [M, kH, kW, C]) equals the NCHW convolution", "[dnnl][channels_last]") {
  if (ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CPU()) != "DNNL") return;
  struct Geo {
    int64_t C, M, kh, kw;
    int stride, pad, group;
  };
  // The last: a geometry oneDNN runs with Winograd, which cannot take the ohwi filter (it failed
  // with "could not create a primitive descriptor for a reorder primitive").
  for (const Geo& geo : {Geo{4, 6, 4, 3, 2, 2, 1}, Geo{4, 6, 4, 3, 2, 2, 2}, Geo{16, 24, 3, 3, 1, 1, 1}}) {
    const int64_t N = 2, C = geo.C, M = geo.M, H = 9, W = 7, kh = geo.kh, kw = geo.kw;
    const int group = geo.group;
    INFO("C " << C << " M " << M << " kernel " << kh << "x" << kw << " group " << group);
    Workspace ws;
    optest::Feed<float>(ws, "X", {N, C, H, W}, RandomVec(N * C * H * W, 1));
    optest::Feed<float>(ws, "F", {M, C / group, kh, kw}, RandomVec(M * C / group * kh * kw, 2));
    optest::Feed<float>(ws, "b", {M}, RandomVec(M, 3));
    const std::vector<caffe2::Argument> args{ArgI("kernel_h", static_cast<int>(kh)), ArgI("kernel_w", static_cast<int>(kw)),
                                             ArgI("stride", geo.stride), ArgI("pad", geo.pad), ArgI("group", group)};
    optest::RunOp(ws, optest::MakeOp("Conv", {"X", "F", "b"}, {"Y"}, args));
    // NHWC input and filter [M, kH, kW, C/group]: the same transposes NCHW2NHWC makes.
    optest::RunOp(ws, optest::MakeOp("NCHW2NHWC", {"X"}, {"Xl"}));
    optest::RunOp(ws, optest::MakeOp("NCHW2NHWC", {"F"}, {"Fl"}));
    auto nhwc = args;
    nhwc.push_back(ArgS("order", "NHWC"));
    optest::RunOp(ws, optest::MakeOp("Conv", {"Xl", "Fl", "b"}, {"Yl"}, nhwc));
    optest::RunOp(ws, optest::MakeOp("NHWC2NCHW", {"Yl"}, {"Yb"}));
    const auto y = Values(optest::Fetch(ws, "Y")), yb = Values(optest::Fetch(ws, "Yb"));
    REQUIRE(y.size() == yb.size());
    REQUIRE(optest::Worst(yb, y).error <= 1e-4);
    // The filter in NCHW order is refused with both layouts named.
    REQUIRE_THROWS_WITH(optest::RunOp(ws, optest::MakeOp("Conv", {"Xl", "F", "b"}, {"Yl"}, nhwc)),
                        Catch::Contains("'F'") && Catch::Contains("order NHWC"));
  }
  Workspace ws;
  optest::Feed<float>(ws, "X", {1, 5, 5, 2}, RandomVec(50, 1));
  optest::Feed<float>(ws, "F", {2, 3, 3, 2}, RandomVec(36, 2));
  auto eigen = optest::MakeOp("Conv", {"X", "F"}, {"Y"}, {ArgI("kernel", 3), ArgS("order", "NHWC")});
  eigen.set_engine("EIGEN");
  REQUIRE_THROWS_WITH(CreateOperator(eigen, &ws), Catch::Contains("order 'NHWC'") && Catch::Contains("DNNL"));
}
