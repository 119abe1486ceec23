// CrossDeviceCopyPass and placement rules on NetDefs (no GPU needed), plus CPU runs of placed nets.
#include <catch2/catch.hpp>

#include "core/device_scope.h"
#include "core/net.h"
#include "core/placement.h"
#include "core/workspace.h"

using namespace hetnet;

namespace {

// A GPU op whose input 1 (a shape) stays on CPU, like Reshape's.
OPERATOR_SCHEMA(PlacementTestShapeOp).NumInputs(2).NumOutputs(1).InputsOnCPU({1});

caffe2::DeviceOption Opt(int type, int id) {
  caffe2::DeviceOption o;
  o.set_device_type(type);
  o.set_device_id(id);
  return o;
}

caffe2::OperatorDef* AddOp(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                           std::vector<std::string> out, const caffe2::DeviceOption* opt = nullptr) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  if (opt) *op->mutable_device_option() = *opt;
  return op;
}

// The seed's net: FC on CPU (id -1), Sigmoid and SoftmaxWithLoss on GPU 1.
caffe2::NetDef SeedNet() {
  caffe2::NetDef net;
  net.set_name("my first net");
  auto cpu = Opt(0, -1), gpu = Opt(1, 1);
  AddOp(&net, "FC", {"data", "fc_w", "fc_b"}, {"fc1"}, &cpu);
  AddOp(&net, "Sigmoid", {"fc1"}, {"pred"}, &gpu);
  AddOp(&net, "SoftmaxWithLoss", {"pred", "label"}, {"softmax", "loss"}, &gpu);
  for (auto n : {"data", "fc_w", "fc_b", "label"}) net.add_external_input(n);
  return net;
}

std::vector<std::string> Types(const caffe2::NetDef& net) {
  std::vector<std::string> t;
  for (const auto& op : net.op()) t.push_back(op.type());
  return t;
}

}  // namespace

TEST_CASE("seed net: one copy per blob and device, Caffe2 names and devices", "[placement]") {
  auto r = CrossDeviceCopyPass(SeedNet());
  const auto& net = r.net;
  REQUIRE(Types(net) == std::vector<std::string>{"FC", "CopyCPUToGPU", "Sigmoid", "CopyCPUToGPU", "SoftmaxWithLoss"});
  CHECK(net.op(1).input(0) == "fc1");
  CHECK(net.op(1).output(0) == "fc1_gpu_1");
  CHECK(net.op(1).device_option().device_type() == 1);
  CHECK(net.op(1).device_option().device_id() == 1);  // under the destination GPU
  CHECK(net.op(2).input(0) == "fc1_gpu_1");
  CHECK(net.op(3).input(0) == "label");
  CHECK(net.op(3).output(0) == "label_gpu_1");
  CHECK(net.op(4).input(0) == "pred");  // produced on the GPU: no copy
  CHECK(net.op(4).input(1) == "label_gpu_1");
  CHECK(r.blob_devices.at("loss") == Device::CUDA(1));
  CHECK(r.blob_devices.at("fc1") == Device::CPU());
  REQUIRE(r.report.copies.size() == 2);
  CHECK(r.report.copies[0].from == Device::CPU());
  CHECK(r.report.copies[0].to == Device::CUDA(1));
  CHECK(r.report.ops[0].reason == "own device option");
  CHECK(r.report.ops[1].reason == "inserted copy");
}

TEST_CASE("the pass is idempotent", "[placement]") {
  auto once = CrossDeviceCopyPass(SeedNet());
  auto twice = CrossDeviceCopyPass(once.net);
  CHECK(twice.net.SerializeAsString() == once.net.SerializeAsString());
  CHECK(twice.report.copies.empty());
}

TEST_CASE("copies are reused by later readers and invalidated by writes", "[placement]") {
  caffe2::NetDef net;
  net.set_name("reuse");
  net.add_external_input("x");
  auto gpu = Opt(1, 0), cpu = Opt(0, 0);
  AddOp(&net, "Relu", {"x"}, {"a"}, &gpu);
  AddOp(&net, "Sigmoid", {"x"}, {"b"}, &gpu);  // reuses x_gpu_0
  AddOp(&net, "Tanh", {"a"}, {"x"}, &cpu);     // x rewritten on CPU: the GPU copy is stale now
  AddOp(&net, "Relu", {"x"}, {"c"}, &gpu);     // needs a fresh copy
  auto r = CrossDeviceCopyPass(net);
  REQUIRE(Types(r.net) == std::vector<std::string>{"CopyCPUToGPU", "Relu", "Sigmoid", "CopyGPUToCPU", "Tanh",
                                                   "CopyCPUToGPU", "Relu"});
  CHECK(r.net.op(2).input(0) == "x_gpu_0");
  CHECK(r.net.op(3).input(0) == "a");
  CHECK(r.net.op(3).output(0) == "a_cpu");
  CHECK(r.net.op(3).device_option().device_id() == 0);  // CopyGPUToCPU under the source GPU
  CHECK(r.net.op(3).device_option().device_type() == 1);
  CHECK(r.net.op(5).input(0) == "x");
  CHECK(r.net.op(5).output(0) == "x_gpu_0");
}

TEST_CASE("GPU to GPU copies use Copy under the destination; several GPU ids", "[placement]") {
  caffe2::NetDef net;
  net.set_name("multi");
  net.add_external_input("x");
  auto g0 = Opt(1, 0), g1 = Opt(1, 1), g2 = Opt(1, 2);
  AddOp(&net, "Relu", {"x"}, {"y"}, &g0);
  AddOp(&net, "Relu", {"y"}, {"z1"}, &g1);
  AddOp(&net, "Relu", {"y"}, {"z2"}, &g2);
  AddOp(&net, "Sum", {"z1", "z2"}, {"s"}, &g1);
  auto r = CrossDeviceCopyPass(net);
  REQUIRE(Types(r.net) == std::vector<std::string>{"CopyCPUToGPU", "Relu", "Copy", "Relu", "Copy", "Relu", "Copy", "Sum"});
  CHECK(r.net.op(2).output(0) == "y_gpu_1");
  CHECK(r.net.op(2).device_option().device_id() == 1);
  CHECK(r.net.op(4).output(0) == "y_gpu_2");
  CHECK(r.net.op(6).input(0) == "z2");
  CHECK(r.net.op(6).output(0) == "z2_gpu_1");
  CHECK(r.net.op(7).input(1) == "z2_gpu_1");
  CHECK(CrossDeviceCopyPass(r.net).report.copies.empty());
}

TEST_CASE("CPU ids -1 and 0 are the same CPU", "[placement]") {
  caffe2::NetDef net;
  net.set_name("cpu ids");
  auto a = Opt(0, -1), b = Opt(0, 0), c = Opt(0, 3);
  AddOp(&net, "Relu", {"x"}, {"y"}, &a);
  AddOp(&net, "Relu", {"y"}, {"z"}, &b);
  AddOp(&net, "Relu", {"z"}, {"w"}, &c);
  net.add_external_input("x");
  CHECK(CrossDeviceCopyPass(net).report.copies.empty());
}

TEST_CASE("external inputs live where fed, else on the net's device option", "[placement]") {
  caffe2::NetDef net;
  net.set_name("all gpu");
  *net.mutable_device_option() = Opt(1, 0);
  net.add_external_input("x");
  AddOp(&net, "Relu", {"x"}, {"y"});
  AddOp(&net, "Sigmoid", {"y"}, {"z"});
  auto r = CrossDeviceCopyPass(net);
  CHECK(r.report.copies.empty());
  CHECK(r.report.ops[0].reason == "net device option");
  CHECK(r.net.op(0).device_option().device_type() == 1);
  auto fed = CrossDeviceCopyPass(net, {{"x", Device::CPU()}});
  REQUIRE(Types(fed.net) == std::vector<std::string>{"CopyCPUToGPU", "Relu", "Sigmoid"});
}

TEST_CASE("schema device inference keeps shape inputs on CPU", "[placement]") {
  caffe2::NetDef net;
  net.set_name("shape input");
  net.add_external_input("x");
  net.add_external_input("shape");
  auto gpu = Opt(1, 0);
  AddOp(&net, "PlacementTestShapeOp", {"x", "shape"}, {"y"}, &gpu);
  auto r = CrossDeviceCopyPass(net);
  REQUIRE(Types(r.net) == std::vector<std::string>{"CopyCPUToGPU", "PlacementTestShapeOp"});
  CHECK(r.net.op(1).input(1) == "shape");
}

TEST_CASE("overwriting a blob on another device without reading it is refused", "[placement]") {
  caffe2::NetDef net;
  net.set_name("clobber");
  net.add_external_input("x");
  auto gpu = Opt(1, 0);
  AddOp(&net, "ConstantFill", {}, {"x"}, &gpu);
  try {
    CrossDeviceCopyPass(net);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK_THAT(e.what(), Catch::Contains("overwrites blob 'x'") && Catch::Contains("operator #0 (ConstantFill)"));
  }
}

TEST_CASE("in-place ops on another device update the copy and the blob is refreshed", "[placement]") {
  caffe2::NetDef net;
  net.set_name("inplace");
  net.add_external_input("x");
  auto gpu = Opt(1, 0), cpu = Opt(0, 0);
  AddOp(&net, "Relu", {"x"}, {"x"}, &gpu);
  AddOp(&net, "Sigmoid", {"x"}, {"y"}, &gpu);
  AddOp(&net, "Tanh", {"x"}, {"z"}, &cpu);
  auto r = CrossDeviceCopyPass(net);
  REQUIRE(Types(r.net) == std::vector<std::string>{"CopyCPUToGPU", "Relu", "Sigmoid", "CopyGPUToCPU", "Tanh"});
  CHECK(r.net.op(1).input(0) == "x_gpu_0");
  CHECK(r.net.op(1).output(0) == "x_gpu_0");
  CHECK(r.net.op(2).input(0) == "x_gpu_0");
  CHECK(r.net.op(3).output(0) == "x");  // copied back home: x holds its latest value again
  CHECK(r.net.op(4).input(0) == "x");
  CHECK(CrossDeviceCopyPass(r.net).report.copies.empty());
}

TEST_CASE("gradient ops on their forward op's device get copies too", "[placement]") {
  caffe2::NetDef net;
  net.set_name("grad");
  auto gpu = Opt(1, 0), cpu = Opt(0, 0);
  net.add_external_input("x");
  AddOp(&net, "Relu", {"x"}, {"y"}, &gpu);
  AddOp(&net, "ConstantFill", {"y"}, {"y_grad"}, &cpu);
  auto* g = AddOp(&net, "ReluGradient", {"y", "y_grad"}, {"x_grad"}, &gpu);
  g->set_is_gradient_op(true);
  auto r = CrossDeviceCopyPass(net);
  REQUIRE(Types(r.net) == std::vector<std::string>{"CopyCPUToGPU", "Relu", "CopyGPUToCPU", "ConstantFill",
                                                   "CopyCPUToGPU", "ReluGradient"});
  CHECK(r.net.op(5).input(1) == "y_grad_gpu_0");
  CHECK(r.net.op(5).is_gradient_op());
}

TEST_CASE("copy bytes come from shape inference where input shapes are known", "[placement]") {
  caffe2::NetDef net;
  net.set_name("bytes");
  net.add_external_input("x");
  auto gpu = Opt(1, 0);
  AddOp(&net, "Relu", {"x"}, {"y"}, &gpu);
  AddOp(&net, "Relu", {"y"}, {"z"});
  auto r = CrossDeviceCopyPass(net, {}, {{"x", TensorInfo::Of({16, 100}, DataType::Float)}});
  REQUIRE(r.report.copies.size() == 2);
  CHECK(r.report.copies[0].bytes == 16 * 100 * 4);
  CHECK(r.report.copies[1].bytes == 16 * 100 * 4);  // through Relu's shape inference
  const std::string text = r.report.ToText();
  CHECK_THAT(text, Catch::Contains("cpu -> cuda:0: 1 copy, 6.2 KiB"));
  CHECK_THAT(text, Catch::Contains("cuda:0 -> cpu: 1 copy"));
  const std::string dot = r.report.ToDot();
  CHECK_THAT(dot, Catch::Contains("color=red"));
  CHECK_THAT(dot, Catch::Contains("digraph"));
}

TEST_CASE("unknown device types are refused naming the operator", "[placement]") {
  caffe2::NetDef net;
  net.set_name("bad device");
  auto opt = Opt(7, 0);
  AddOp(&net, "Relu", {"x"}, {"y"}, &opt);
  net.add_external_input("x");
  try {
    CrossDeviceCopyPass(net);
    FAIL("expected an error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnsupported);
    CHECK_THAT(e.what(), Catch::Contains("device type 7") && Catch::Contains("operator #0 (Relu)"));
  }
}

TEST_CASE("missing CUDA kernels fall back to CPU, or fail under strict placement", "[placement]") {
  caffe2::NetDef net;
  net.set_name("fallback");
  *net.mutable_device_option() = Opt(1, 0);
  net.add_external_input("x");
  AddOp(&net, "Sigmoid", {"x"}, {"y"});
  AddOp(&net, "Relu", {"y"}, {"z"});
  AddOp(&net, "Tanh", {"z"}, {"w"});
  auto no_relu = [](const std::string& t) { return t != "Relu"; };
  auto r = PlaceNetWith(net, {}, {}, PlacementOptions{}, 1, no_relu);
  REQUIRE(Types(r.net) == std::vector<std::string>{"Sigmoid", "CopyGPUToCPU", "Relu", "CopyCPUToGPU", "Tanh"});
  CHECK(r.report.ops[2].reason == "CPU fallback (no CUDA kernel for cuda:0)");
  PlacementOptions strict;
  strict.strict = true;
  CHECK_THROWS_WITH(PlaceNetWith(net, {}, {}, strict, 1, no_relu),
                    Catch::Contains("strict placement") && Catch::Contains("#1 Relu on cuda:0"));
}

TEST_CASE("no GPU: a clear error naming the GPU ops, or soft placement on CPU", "[placement]") {
  auto net = SeedNet();
  auto any = [](const std::string&) { return true; };
  CHECK_THROWS_WITH(PlaceNetWith(net, {}, {}, PlacementOptions{}, 0, any),
                    Catch::Contains("#1 Sigmoid on cuda:1") && Catch::Contains("#2 SoftmaxWithLoss on cuda:1") &&
                        Catch::Contains("soft_placement"));
  auto* arg = net.add_arg();
  arg->set_name("soft_placement");
  arg->set_i(1);
  auto r = PlaceNetWith(net, {}, {}, PlacementOptions{}, 0, any);
  CHECK(r.report.copies.empty());
  CHECK(r.report.ops[1].device == Device::CPU());
  CHECK_THAT(r.report.ops[1].reason, Catch::Contains("soft placement"));
}

TEST_CASE("a soft-placed mixed net runs on CPU and equals the all-CPU net", "[placement]") {
  auto build = [](bool mixed) {
    caffe2::NetDef net;
    net.set_name(mixed ? "mixed" : "cpu");
    net.add_external_input("x");
    auto gpu = Opt(1, 0);
    AddOp(&net, "Relu", {"x"}, {"y"}, mixed ? &gpu : nullptr);
    AddOp(&net, "Relu", {"y"}, {"z"});
    auto* a = net.add_arg();
    a->set_name("soft_placement");
    a->set_i(1);
    return net;
  };
  auto run = [](const caffe2::NetDef& net) {
    Workspace ws;
    Tensor* x = ws.CreateBlob("x")->GetMutableTensor(Device::CPU());
    x->Resize({5});
    float* p = x->mutable_data<float>();
    for (int i = 0; i < 5; ++i) p[i] = static_cast<float>(i) - 2.f;
    NetBase* n = ws.CreateNet(net);
    n->Run();
    const Tensor& z = ws.GetBlobOrThrow("z").GetTensor();
    return std::vector<float>(z.data<float>(), z.data<float>() + z.numel());
  };
  if (NumCudaDevices() > 0) {
    WARN("soft placement is only taken without a GPU; this machine has one");
    return;
  }
  CHECK(run(build(true)) == run(build(false)));
}

TEST_CASE("C++ DeviceScope: innermost replaces, node_name inherited, restored on exit", "[placement]") {
  CHECK(CurrentDeviceScope() == nullptr);
  auto gpu = Opt(1, 1);
  gpu.set_node_name("node7");
  gpu.add_extra_info("z_outer");
  {
    DeviceScope outer(gpu);
    {
      auto cpu = Opt(0, -1);
      cpu.add_extra_info("a_inner");
      DeviceScope inner(cpu);
      caffe2::OperatorDef op;
      ApplyDeviceScope(&op);
      CHECK(op.device_option().device_type() == 0);
      CHECK(op.device_option().device_id() == -1);
      CHECK(op.device_option().node_name() == "node7");
      REQUIRE(op.device_option().extra_info_size() == 2);
      CHECK(op.device_option().extra_info(0) == "a_inner");
      CHECK(op.device_option().extra_info(1) == "z_outer");
    }
    caffe2::OperatorDef op;
    ApplyDeviceScope(&op);
    CHECK(op.device_option().device_id() == 1);
  }
  CHECK(CurrentDeviceScope() == nullptr);
}

TEST_CASE("PlaceNet: an input the workspace holds no data for is where it will be fed, else on the net's device",
          "[placement][predictor]") {
  // A Predictor re-creates an instance's net for inputs fed on another device while the inputs are
  // held out (empty): placement must take the fed device from fed_input_devices.
  caffe2::NetDef net;
  net.set_name("relu");
  AddOp(&net, "Relu", {"x"}, {"y"});
  net.add_external_input("x");
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = Tensor(Device::CUDA(0));  // held out: no data
  CHECK(Types(PlaceNet(net, ws, PlacementOptions()).net) == std::vector<std::string>{"Relu"});
  const auto fed = PlaceNet(net, ws, PlacementOptions(), {{"x", Device::CUDA(0)}}).net;
  REQUIRE(Types(fed) == std::vector<std::string>{"CopyGPUToCPU", "Relu"});
  CHECK(fed.op(0).input(0) == "x");
  // Data in the workspace wins over the declared device.
  *ws.CreateBlob("x")->GetMutable<Tensor>() = Tensor({2}, DataType::Float);
  CHECK(Types(PlaceNet(net, ws, PlacementOptions(), {{"x", Device::CUDA(0)}}).net) == std::vector<std::string>{"Relu"});
}
