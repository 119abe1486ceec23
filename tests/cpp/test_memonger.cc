// Static memory plan (core/memonger.h): results unchanged, external blobs keep their names, sharing
// only on one device, and a ResNet-style FC/Relu/Add net needs at most half the memory.
#include <catch2/catch.hpp>

#include <cstring>
#include <random>
#include <set>

#include "core/memonger.h"
#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;

namespace {

caffe2::OperatorDef* AddOp(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                           std::vector<std::string> out, int device_type = 0) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  if (device_type) op->mutable_device_option()->set_device_type(device_type);
  return op;
}

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> shape, unsigned seed, float scale) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(shape);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(-scale, scale);
  for (int64_t i = 0; i < t->numel(); ++i) t->mutable_data<float>()[i] = u(rng);
}

// data -> FC -> Relu -> `blocks` x [FC, Relu, FC, Add(skip), Relu] -> FC -> out.
caffe2::NetDef ResNetStyle(int blocks, int64_t batch, int64_t dim, std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("resnet_fc");
  auto weight = [&](const std::string& w, const std::string& b) {
    net.add_external_input(w);
    net.add_external_input(b);
    (*shapes)[w] = TensorInfo::Of({dim, dim}, DataType::Float);
    (*shapes)[b] = TensorInfo::Of({dim}, DataType::Float);
  };
  net.add_external_input("data");
  (*shapes)["data"] = TensorInfo::Of({batch, dim}, DataType::Float);
  weight("w_in", "b_in");
  AddOp(&net, "FC", {"data", "w_in", "b_in"}, {"stem"});
  AddOp(&net, "Relu", {"stem"}, {"h0"});
  std::string h = "h0";
  for (int k = 0; k < blocks; ++k) {
    const std::string p = "blk" + std::to_string(k) + "_";
    weight(p + "w1", p + "b1");
    weight(p + "w2", p + "b2");
    AddOp(&net, "FC", {h, p + "w1", p + "b1"}, {p + "fc1"});
    AddOp(&net, "Relu", {p + "fc1"}, {p + "relu1"});
    AddOp(&net, "FC", {p + "relu1", p + "w2", p + "b2"}, {p + "fc2"});
    AddOp(&net, "Add", {p + "fc2", h}, {p + "sum"});
    AddOp(&net, "Relu", {p + "sum"}, {p + "out"});
    h = p + "out";
  }
  weight("w_out", "b_out");
  AddOp(&net, "FC", {h, "w_out", "b_out"}, {"out"});
  net.add_external_output("out");
  return net;
}

void FeedAll(Workspace* ws, const std::map<std::string, TensorInfo>& shapes) {
  unsigned seed = 1;
  for (const auto& [name, info] : shapes) Feed(ws, name, info.dims, seed++, name == "data" ? 1.f : 0.1f);
}

// Bytes held by tensors in ws other than `except` (the external blobs).
int64_t HeldBytes(const Workspace& ws, const std::set<std::string>& except) {
  int64_t n = 0;
  for (const auto& name : ws.LocalBlobs()) {
    const Blob* b = ws.GetBlob(name);
    if (!except.count(name) && b->IsTensor() && b->GetTensor().initialized()) n += b->GetTensor().nbytes();
  }
  return n;
}

}  // namespace

TEST_CASE("memonger: ResNet-style FC/Relu/Add net at most half the memory, same output", "[memonger]") {
  std::map<std::string, TensorInfo> shapes;
  caffe2::NetDef net = ResNetStyle(8, 32, 128, &shapes);
  MemongerOptions opts;
  opts.input_shapes = shapes;
  OptimizedNet planned = OptimizeInferenceNet(net, opts);
  const MemongerReport& r = planned.report;
  INFO(r.ToText());
  CHECK(r.intermediate_blobs == 2 + 5 * 8);
  REQUIRE(r.intermediate_bytes_before == (2 + 5 * 8) * 32 * 128 * 4);
  REQUIRE(r.intermediate_bytes_after > 0);
  CHECK(r.intermediate_bytes_after * 2 <= r.intermediate_bytes_before);
  CHECK(r.PeakAfter() < r.PeakBefore());
  CHECK(r.renamed.count("out") == 0);
  CHECK(r.ToText().find("peak") != std::string::npos);

  std::set<std::string> external(net.external_input().begin(), net.external_input().end());
  external.insert("out");
  Workspace plain_ws, planned_ws;
  FeedAll(&plain_ws, shapes);
  FeedAll(&planned_ws, shapes);
  plain_ws.CreateNet(net)->Run();
  NetBase* planned_net = planned_ws.CreateNet(planned.net);
  for (int run = 0; run < 3; ++run) planned_net->Run();  // repeated runs reuse the buffers
  const Tensor& want = plain_ws.GetBlob("out")->GetTensor();
  const Tensor& got = planned_ws.GetBlob("out")->GetTensor();
  REQUIRE(want.shape() == got.shape());
  CHECK(std::memcmp(want.raw_data(), got.raw_data(), want.nbytes()) == 0);
  // Measured: what the workspaces hold for intermediates after running.
  const int64_t held_plain = HeldBytes(plain_ws, external), held_planned = HeldBytes(planned_ws, external);
  CHECK(held_plain == r.intermediate_bytes_before);
  CHECK(held_planned == r.intermediate_bytes_after);
  CHECK(held_planned * 2 <= held_plain);
}

TEST_CASE("memonger: random nets compute the same outputs; externals keep their names", "[memonger]") {
  std::mt19937 rng(5);
  const std::vector<std::string> unary = {"Relu", "Sigmoid", "Tanh", "Scale"}, binary = {"Add", "Mul", "Sum"};
  for (int k = 0; k < 100; ++k) {
    caffe2::NetDef net;
    net.set_name("random");
    net.add_external_input("x");
    net.add_external_input("y");
    std::vector<std::string> avail = {"x", "y"};
    const int n = 3 + static_cast<int>(rng() % 30);
    for (int i = 0; i < n; ++i) {
      const bool two = rng() % 2;
      const std::string t = two ? binary[rng() % binary.size()] : unary[rng() % unary.size()];
      // Mostly recent blobs, so lifetimes end and buffers get reused.
      auto recent = [&] { return avail[avail.size() - 1 - rng() % std::min<size_t>(avail.size(), 4)]; };
      std::vector<std::string> in = {recent()};
      if (two) in.push_back(recent());
      const bool in_place_ok = in[0] != "x" && in[0] != "y" && !(t == "Sum" && two && in[1] == in[0]);
      const std::string out = rng() % 6 == 0 && in_place_ok ? in[0] : "b" + std::to_string(i);
      auto* op = AddOp(&net, t, in, {out});
      if (rng() % 8 == 0) op->add_control_input(avail[rng() % avail.size()]);
      if (out != in[0]) avail.push_back(out);
    }
    net.add_external_output(avail.back());
    if (avail.size() > 4) net.add_external_output(avail[avail.size() / 2]);
    MemongerOptions opts;
    opts.input_shapes["x"] = opts.input_shapes["y"] = TensorInfo::Of({3, 5}, DataType::Float);
    OptimizedNet planned = OptimizeInferenceNet(net, opts);
    for (const auto& [from, to] : planned.report.renamed) {
      CHECK(from != "x");
      CHECK(from != "y");
      for (const auto& o : net.external_output()) CHECK(from != o);
    }
    Workspace a, b;
    for (Workspace* ws : {&a, &b}) {
      Feed(ws, "x", {3, 5}, 1, 1.f);
      Feed(ws, "y", {3, 5}, 2, 1.f);
    }
    a.CreateNet(net)->Run();
    b.CreateNet(planned.net)->Run();
    for (const auto& o : net.external_output()) {
      INFO("net " << k << " output " << o << "\n" << planned.net.DebugString());
      const Tensor& want = a.GetBlob(o)->GetTensor();
      const Tensor& got = b.GetBlob(o)->GetTensor();
      REQUIRE(want.shape() == got.shape());
      CHECK(std::memcmp(want.raw_data(), got.raw_data(), want.nbytes()) == 0);
    }
  }
}

TEST_CASE("memonger: blobs share only with blobs on the same device", "[memonger]") {
  // Alternating CPU and GPU ops: planning needs no GPU (only the placement pass).
  caffe2::NetDef net;
  net.set_name("mixed");
  net.add_external_input("x");
  std::string prev = "x";
  for (int i = 0; i < 12; ++i) {
    const std::string out = "a" + std::to_string(i);
    AddOp(&net, "Relu", {prev}, {out}, i % 4 < 2 ? 1 : 0);
    prev = out;
  }
  net.add_external_output(prev);
  OptimizedNet planned = OptimizeInferenceNet(net);
  CHECK(!planned.report.renamed.empty());
  std::map<std::string, std::set<int>> writer_devices;  // blob -> device types that write it
  for (const auto& op : planned.net.op())
    for (const auto& o : op.output())
      writer_devices[o].insert(op.type() == "CopyGPUToCPU" ? 0 : op.device_option().device_type());
  for (const auto& [blob, devices] : writer_devices) {
    INFO(blob);
    CHECK(devices.size() == 1);
  }
}

TEST_CASE("InferBlobShapes: weight shapes from an init net's fills", "[memonger]") {
  caffe2::NetDef init;
  auto* fill = AddOp(&init, "GivenTensorFill", {}, {"w"});
  auto* shape = fill->add_arg();
  shape->set_name("shape");
  shape->add_ints(2);
  shape->add_ints(3);
  auto* values = fill->add_arg();
  values->set_name("values");
  for (int i = 0; i < 6; ++i) values->add_floats(1.f);
  auto shapes = InferBlobShapes(init);
  REQUIRE(shapes.count("w"));
  CHECK(shapes.at("w").dims == std::vector<int64_t>{2, 3});
}
