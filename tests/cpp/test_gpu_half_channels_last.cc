// float16 GPU nets on cuDNN's NHWC tensor-core path (issue 16): the layout pass
// (core/channels_last_pass.h) gives the CUDNN convolutions and pools of a float16 GPU net NHWC
// activations, reduced precision (core/reduced_precision.h) then runs them float16, with the order
// switches on the GPU; float32 GPU nets, and convolutions cuDNN cannot pad, keep NCHW float32. The
// rewrites are checked here on any machine; the [gpu] case runs the net against float32.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>

#include "core/inference_fusion.h"
#include "core/operator.h"
#include "core/predictor.h"
#include "core/reduced_precision.h"
#include "core/workspace.h"
#include "tests/cpp/op_test_util.h"
#include "tests/cpp/residual_test_net.h"
#include "test_util_io.h"

using namespace hetnet;
using hetnet_test::FloatTensor;
using hetnet_test::Values;
using optest::ArgI;
using optest::RandomVec;

namespace {

caffe2::OperatorDef* Conv(caffe2::NetDef* net, caffe2::NetDef* init, const std::string& x, const std::string& y,
                          int64_t c, int64_t m, int k, bool relu) {
  return hetnet_test::AddConv(net, init, x, y, c, m, k, 1, relu);
}

// The shared residual net (tests/cpp/residual_test_net.h), 16 channels wide, every op on CUDA:0
// (the init net fills the weights on the CPU), rewritten for inference in `precision`.
void ResidualGpuNet(caffe2::NetDef* init, caffe2::NetDef* net, DataType precision) {
  hetnet_test::ResidualNet(init, net, 16);
  net->set_name("residual_gpu");
  net->mutable_device_option()->set_device_type(1);
  SetNetPrecision(net, precision);
  auto* a = net->add_arg();
  a->set_name("hetnet_optimize");
  a->set_i(1);
}

caffe2::NetDef Rewritten(const caffe2::NetDef& init, const caffe2::NetDef& net) {
  Workspace ws;
  ws.RunNetOnce(init);
  return RewriteForInference(net, &ws).net;
}

std::string StringArg(const caffe2::OperatorDef& op, const std::string& name) {
  for (const auto& a : op.arg())
    if (a.name() == name) return a.s();
  return "";
}

int Count(const caffe2::NetDef& net, const std::string& type) {
  return static_cast<int>(std::count_if(net.op().begin(), net.op().end(),
                                        [&](const caffe2::OperatorDef& op) { return op.type() == type; }));
}

bool OnGpu(const caffe2::OperatorDef& op, const caffe2::NetDef& net) {
  return (op.has_device_option() ? op.device_option() : net.device_option()).device_type() == 1;
}

std::string Listing(const caffe2::NetDef& net) {
  std::string s;
  for (const auto& op : net.op()) {
    s += op.type() + (OnGpu(op, net) ? " [gpu]" : " [cpu]");
    for (const auto& in : op.input()) s += " " + in;
    s += " ->";
    for (const auto& out : op.output()) s += " " + out;
    s += "\n";
  }
  return s;
}

// With a visible reason: a build without CUDA registers no CUDNN Conv, so no GPU op can be rewritten.
bool SkippedWithoutCudnnConv() {
  if (ResolveEngine(optest::MakeOp("Conv", {"x", "w"}, {"y"}), Device::CUDA(0)) == "CUDNN") return false;
  WARN("skipped: this build has no CUDA, so no CUDNN Conv to rewrite");
  return true;
}

}  // namespace

TEST_CASE("A float16 GPU net runs its CUDNN convolutions and pools NHWC in float16, switches on the GPU",
          "[reduced_precision][channels_last]") {
  if (SkippedWithoutCudnnConv()) return;
  caffe2::NetDef init, net;
  ResidualGpuNet(&init, &net, DataType::Float16);
  const caffe2::NetDef r = Rewritten(init, net);
  INFO(Listing(r));
  int convs = 0;
  for (const auto& op : r.op()) {
    if (op.type() == "Conv") {
      ++convs;
      CHECK(StringArg(op, "activation_order") == "NHWC");
      CHECK(ResolveEngine(op, Device::CUDA(0)) == "CUDNN");
      for (const auto& in : op.input()) CHECK(in.find("_fp16") != std::string::npos);
    }
    if (op.type() == "MaxPool" || op.type() == "AveragePool") {
      CHECK(StringArg(op, "order") == "NHWC");
      CHECK(op.input(0).find("_fp16") != std::string::npos);
    }
    if (op.type() == "NCHW2NHWC" || op.type() == "NHWC2NCHW" || op.type() == "Cast") CHECK(OnGpu(op, r));
  }
  CHECK(convs == 3);  // the residual Add went into the last Conv, the Relus into all three
  CHECK(Count(r, "NCHW2NHWC") == 1);
  CHECK(Count(r, "NHWC2NCHW") == 1);  // after the global pool, for Flatten and the float16 FC
  // data in, out back: the switches, pools, Flatten and FC all run float16 in between.
  CHECK(Count(r, "Cast") == 2);
  CHECK(r.op(r.op_size() - 1).type() == "Cast");
  CHECK(r.op(r.op_size() - 1).output(0) == "out");
}

TEST_CASE("float32 GPU nets, and convolutions cuDNN cannot pad, keep NCHW float32", "[reduced_precision][channels_last]") {
  if (SkippedWithoutCudnnConv()) return;
  SECTION("float32") {
    caffe2::NetDef init, net;
    ResidualGpuNet(&init, &net, DataType::Float);
    const caffe2::NetDef r = Rewritten(init, net);
    INFO(Listing(r));
    CHECK(Count(r, "NCHW2NHWC") == 0);
    CHECK(Count(r, "Cast") == 0);
    for (const auto& op : r.op()) CHECK(StringArg(op, "activation_order").empty());
  }
  SECTION("legacy SAME padding and explicit asymmetric pads") {
    for (int variant = 0; variant < 2; ++variant) {
      caffe2::NetDef init, net;
      net.set_name("pads");
      auto* a = Conv(&net, &init, "data", "c1", 3, 8, 3, true);
      auto* b = Conv(&net, &init, "c1", "c2", 8, 8, 3, true);
      Conv(&net, &init, "c2", "c3", 8, 8, 3, false);
      for (auto* op : {a, b}) {
        op->clear_arg();
        op->add_arg()->CopyFrom(ArgI("kernel", 3));
        if (variant == 0) {
          op->add_arg()->CopyFrom(ArgI("legacy_pad", 2));
        } else {
          for (const auto& p : {ArgI("pad_t", 1), ArgI("pad_l", 1), ArgI("pad_b", 0), ArgI("pad_r", 1)})
            op->add_arg()->CopyFrom(p);
        }
      }
      net.add_external_input("data");
      net.add_external_output("c3");
      net.mutable_device_option()->set_device_type(1);
      SetNetPrecision(&net, DataType::Float16);
      const caffe2::NetDef r = Rewritten(init, net);
      INFO("variant " << variant << "\n" << Listing(r));
      // c1 and c2 stay NCHW (cuDNN pads symmetrically only), so float32; c3 alone is not worth its
      // two switches, and float16 on the GPU is NHWC only: the whole net runs float32 NCHW.
      for (const auto& op : r.op()) {
        if (op.type() != "Conv") continue;
        CHECK(StringArg(op, "activation_order").empty());
        for (const auto& in : op.input()) CHECK(in.find("_fp16") == std::string::npos);
      }
      CHECK(Count(r, "NCHW2NHWC") == 0);
      CHECK(Count(r, "Cast") == 0);
    }
  }
}

TEST_CASE("GPU: a float16 NHWC residual net is close to its float32 run", "[gpu][reduced_precision][channels_last]") {
  if (optest::SkipWithoutGpu()) return;
  caffe2::NetDef init, narrow_net, full_net;
  ResidualGpuNet(&init, &narrow_net, DataType::Float16);
  caffe2::NetDef init32;
  ResidualGpuNet(&init32, &full_net, DataType::Float);
  const Tensor data = FloatTensor({4, 3, 10, 10}, RandomVec(1200, 42));
  Predictor full(init32, full_net), narrow(init, narrow_net);
  const Tensor want = full.Run({{"data", data}}).at("out");
  for (int run = 0; run < 2; ++run) {
    const Tensor got = narrow.Run({{"data", data}}).at("out");
    REQUIRE(got.dtype() == DataType::Float);
    REQUIRE(got.shape() == want.shape());
    CHECK(optest::Worst(Values(got), Values(want)).error <= 2e-2);  // three float16 convolutions deep
  }
}

// An init net that fills the weights on the GPU (an ONNX model imported for one: `hetnet run
// --device cuda --precision fp16`) gets them converted in place too, so they are held in float16
// there (the sixteenth session found "0 weights converted" on the H200: only CPU weights were).
TEST_CASE("GPU: a float16 Predictor converts weights that its init net filled on the GPU",
          "[gpu][reduced_precision][channels_last]") {
  if (optest::SkipWithoutGpu()) return;
  caffe2::NetDef init, narrow_net, init32, full_net;
  ResidualGpuNet(&init, &narrow_net, DataType::Float16);
  ResidualGpuNet(&init32, &full_net, DataType::Float);
  init.mutable_device_option()->set_device_type(1);
  init32.mutable_device_option()->set_device_type(1);
  const Tensor data = FloatTensor({4, 3, 10, 10}, RandomVec(1200, 7));
  Predictor full(init32, full_net), narrow(init, narrow_net);
  INFO(Listing(narrow.predict_net()));
  REQUIRE_FALSE(narrow.narrowed_weights().empty());
  for (const auto& name : narrow.narrowed_weights()) {
    const Tensor& w = narrow.weights().GetBlob(name)->GetTensor();
    CHECK(w.dtype() == DataType::Float16);
    CHECK(w.device() == Device::CUDA(0));
  }
  const Tensor want = full.Run({{"data", data}}).at("out");
  const Tensor got = narrow.Run({{"data", data}}).at("out");
  CHECK(optest::Worst(Values(got), Values(want)).error <= 2e-2);
}
