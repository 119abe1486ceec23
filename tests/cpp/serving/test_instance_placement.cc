// Instance groups and per-instance placement, checked for machines with GPUs without needing one:
// the functions take the GPU count as an argument.
#include <catch2/catch.hpp>

#include <google/protobuf/text_format.h>

#include "core/device.h"
#include "core/error.h"
#include "serving/inference_server.h"
#include "serving/instance_placement.h"

using namespace hetnet;
using namespace hetnet::serving;

namespace {

inference::ModelConfig Config(const std::string& text) {
  inference::ModelConfig c;
  REQUIRE(google::protobuf::TextFormat::ParseFromString(text, &c));
  if (c.name().empty()) c.set_name("m");
  return c;
}

// FC pinned to CUDA 1, Relu unpinned, Softmax pinned to CPU.
caffe2::NetDef MixedNet() {
  caffe2::NetDef net;
  net.set_name("m");
  auto* fc = net.add_op();
  fc->set_type("FC");
  fc->add_input("x");
  fc->add_input("w");
  fc->add_input("b");
  fc->add_output("y");
  DeviceToOption(Device::CUDA(1), fc->mutable_device_option());
  auto* relu = net.add_op();
  relu->set_type("Relu");
  relu->add_input("y");
  relu->add_output("r");
  auto* sm = net.add_op();
  sm->set_type("Softmax");
  sm->add_input("r");
  sm->add_output("p");
  DeviceToOption(Device::CPU(), sm->mutable_device_option());
  return net;
}

Device OpDevice(const caffe2::NetDef& net, int i) {
  const auto& op = net.op(i);
  if (op.has_device_option()) return DeviceFromOption(op.device_option());
  return net.has_device_option() ? DeviceFromOption(net.device_option()) : Device::CPU();
}

}  // namespace

TEST_CASE("instance groups expand as Triton's kinds say", "[serving]") {
  ServerOptions opts;
  auto groups = ExpandInstanceGroups(Config("instance_group [ { kind: KIND_GPU count: 2 gpus: [ 0, 1 ] } ]"), 2, opts);
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].device == Device::CUDA(0));
  CHECK(groups[1].device == Device::CUDA(1));
  CHECK(groups[0].count == 2);
  // No instance_group: one instance per GPU, or one on CPU.
  CHECK(ExpandInstanceGroups(Config(""), 3, opts).size() == 3);
  auto none = ExpandInstanceGroups(Config(""), 0, opts);
  REQUIRE(none.size() == 1);
  CHECK(none[0].device.is_cpu());
  // KIND_AUTO: GPUs when present, else CPU.
  CHECK(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_AUTO } ]"), 0, opts)[0].device.is_cpu());
  CHECK(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_AUTO } ]"), 1, opts)[0].device == Device::CUDA(0));
  CHECK(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_MODEL } ]"), 2, opts)[0].keep_model_placement);
  // Refusals.
  CHECK_THROWS_AS(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_GPU gpus: [ 4 ] } ]"), 2, opts), Error);
  CHECK_THROWS_AS(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_CPU gpus: [ 0 ] } ]"), 2, opts), Error);
  CHECK_THROWS_AS(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_GPU } ]"), 0, opts), Error);
  opts.soft_placement = true;
  CHECK(ExpandInstanceGroups(Config("instance_group [ { kind: KIND_GPU } ]"), 0, opts)[0].device.is_cpu());
}

TEST_CASE("a GPU instance moves GPU and unpinned ops to its GPU and keeps CPU-pinned ops", "[serving]") {
  const caffe2::NetDef net = MixedNet();
  caffe2::NetDef on1 = PlaceForInstance(net, InstancePlacement{"g", Device::CUDA(0), false, 1});
  CHECK(OpDevice(on1, 0) == Device::CUDA(0));  // was CUDA 1: the instance's GPU
  CHECK(OpDevice(on1, 1) == Device::CUDA(0));  // unpinned: follows the instance
  CHECK(OpDevice(on1, 2).is_cpu());             // pinned to CPU by the model
  caffe2::NetDef cpu = PlaceForInstance(net, InstancePlacement{"c", Device::CPU(), false, 1});
  for (int i = 0; i < cpu.op_size(); ++i) CHECK(OpDevice(cpu, i).is_cpu());
  caffe2::NetDef model = PlaceForInstance(net, InstancePlacement{"m", Device::CPU(), true, 1});
  CHECK(OpDevice(model, 0) == Device::CUDA(1));  // KIND_MODEL: as written

  // Weights go where their readers run: w and b to the GPU of FC, an unread blob stays on CPU.
  caffe2::NetDef init;
  for (const char* blob : {"w", "b", "unused"}) {
    auto* op = init.add_op();
    op->set_type("ConstantFill");
    op->add_output(blob);
  }
  caffe2::NetDef placed_init = PlaceInitForInstance(init, on1);
  CHECK(OpDevice(placed_init, 0) == Device::CUDA(0));
  CHECK(OpDevice(placed_init, 1) == Device::CUDA(0));
  CHECK(OpDevice(placed_init, 2).is_cpu());
}
