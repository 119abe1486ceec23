// Mixed CPU/GPU nets on a real GPU: same numbers as the all-CPU net, and the copies the runtime
// counts equal the placement report's. Skipped, visibly, without a GPU.
#include <catch2/catch.hpp>

#include <cmath>
#include <random>

#include "core/net.h"
#include "core/workspace.h"

using namespace hetnet;

namespace {

caffe2::OperatorDef* Op(caffe2::NetDef* net, const std::string& type, std::vector<std::string> in,
                        std::vector<std::string> out, int device_type, int id) {
  auto* op = net->add_op();
  op->set_type(type);
  for (auto& i : in) op->add_input(i);
  for (auto& o : out) op->add_output(o);
  op->mutable_device_option()->set_device_type(device_type);
  op->mutable_device_option()->set_device_id(id);
  return op;
}

// Seed 000's net: FC on CPU; Sigmoid and SoftmaxWithLoss on `gpu` (or CPU when gpu < 0).
caffe2::NetDef SeedNet(int gpu) {
  caffe2::NetDef net;
  net.set_name(gpu < 0 ? "seed_cpu" : "seed_mixed");
  Op(&net, "FC", {"data", "fc_w", "fc_b"}, {"fc1"}, 0, -1);
  Op(&net, "Sigmoid", {"fc1"}, {"pred"}, gpu < 0 ? 0 : 1, gpu < 0 ? 0 : gpu);
  Op(&net, "SoftmaxWithLoss", {"pred", "label"}, {"softmax", "loss"}, gpu < 0 ? 0 : 1, gpu < 0 ? 0 : gpu);
  for (auto n : {"data", "fc_w", "fc_b", "label"}) net.add_external_input(n);
  net.add_external_output("softmax");
  net.add_external_output("loss");
  return net;
}

void Feed(Workspace* ws, const std::string& name, std::vector<int64_t> shape, std::mt19937* rng) {
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(Device::CPU());
  t->Resize(std::move(shape));
  std::uniform_real_distribution<float> u(-1.f, 1.f);
  float* p = t->mutable_data<float>();
  for (int64_t i = 0; i < t->numel(); ++i) p[i] = u(*rng);
}

std::vector<float> Fetch(const Workspace& ws, const std::string& name) {
  Tensor t = ws.GetBlobOrThrow(name).GetTensor().To(Device::CPU());
  return std::vector<float>(t.data<float>(), t.data<float>() + t.numel());
}

void FeedAll(Workspace* ws) {
  std::mt19937 rng(7);
  Feed(ws, "data", {16, 100}, &rng);
  Feed(ws, "fc_w", {10, 100}, &rng);
  Feed(ws, "fc_b", {10}, &rng);
  Tensor* label = ws->CreateBlob("label")->GetMutableTensor(Device::CPU());
  label->Resize({16});
  for (int i = 0; i < 16; ++i) label->mutable_data<int32_t>()[i] = i % 10;
}

}  // namespace

TEST_CASE("GPU: seed's mixed net equals the all-CPU net and copies match the report", "[gpu][placement]") {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device on this machine (NumCudaDevices() == 0)");
    return;
  }
  Workspace cpu_ws, gpu_ws;
  FeedAll(&cpu_ws);
  FeedAll(&gpu_ws);
  cpu_ws.RunNetOnce(SeedNet(-1));
  NetBase* net = gpu_ws.CreateNet(SeedNet(0));
  for (int run = 0; run < 3; ++run) net->Run();
  for (auto name : {"softmax", "loss"}) {
    auto a = Fetch(cpu_ws, name), b = Fetch(gpu_ws, name);
    REQUIRE(a.size() == b.size());
    for (size_t i = 0; i < a.size(); ++i) CHECK(std::fabs(a[i] - b[i]) <= 1e-5f);
  }
  CHECK(gpu_ws.GetBlobOrThrow("loss").GetTensor().device() == Device::CUDA(0));
  const PlacementReport planned = net->placement();
  const PlacementReport measured = net->MeasuredPlacement();
  REQUIRE(planned.copies.size() == 2);  // fc1 and label to the GPU
  REQUIRE(measured.copies.size() == planned.copies.size());
  for (size_t i = 0; i < planned.copies.size(); ++i) {
    CHECK(planned.copies[i].bytes > 0);
    CHECK(measured.copies[i].bytes == planned.copies[i].bytes);
  }
}

TEST_CASE("GPU: GPU to CPU to GPU round trips through copies are exact", "[gpu][placement]") {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device on this machine (NumCudaDevices() == 0)");
    return;
  }
  Workspace ws;
  std::mt19937 rng(3);
  Feed(&ws, "x", {1000, 37}, &rng);  // not a multiple of any staging chunk
  caffe2::NetDef net;
  net.set_name("roundtrip");
  net.add_external_input("x");
  Op(&net, "Relu", {"x"}, {"y"}, 1, 0);
  Op(&net, "Relu", {"y"}, {"z"}, 0, 0);
  Op(&net, "Scale", {"z"}, {"w"}, 1, NumCudaDevices() > 1 ? 1 : 0);
  ws.RunNetOnce(net);
  auto x = Fetch(ws, "x"), w = Fetch(ws, "w");
  for (size_t i = 0; i < x.size(); ++i) CHECK(w[i] == (x[i] > 0 ? x[i] : 0.f));
}
