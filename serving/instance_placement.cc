#include "serving/instance_placement.h"

#include <map>
#include <set>

#include "core/error.h"
#include "serving/inference_server.h"

namespace hetnet::serving {

std::vector<InstancePlacement> ExpandInstanceGroups(const inference::ModelConfig& config, int gpu_count,
                                                    const ServerOptions& options) {
  std::vector<InstancePlacement> out;
  auto gpu_group = [&](const std::string& name, const std::vector<int>& gpus, int count) {
    if (gpu_count == 0) {
      if (!options.soft_placement)
        HN_THROW(kUnsupported, "model '", config.name(), "': instance group '", name,
                 "' is KIND_GPU but this machine has no usable GPU (start with --soft-placement to run it on CPU)");
      out.push_back({name, Device::CPU(), false, count});
      return;
    }
    std::vector<int> ids = gpus;
    if (ids.empty())
      for (int g = 0; g < gpu_count; ++g) ids.push_back(g);
    for (int g : ids) {
      if (g < 0 || g >= gpu_count)
        HN_THROW(kUnsupported, "model '", config.name(), "': instance group '", name, "' names GPU ", g, " but ",
                 gpu_count, " GPU(s) are usable");
      out.push_back({name, Device::CUDA(g), false, count});
    }
  };
  if (config.instance_group_size() == 0) {  // Triton: one instance per GPU, else one on CPU
    if (gpu_count == 0) return {{config.name(), Device::CPU(), false, 1}};
    gpu_group(config.name(), {}, 1);
    return out;
  }
  for (int i = 0; i < config.instance_group_size(); ++i) {
    const auto& g = config.instance_group(i);
    const std::string name = g.name().empty() ? MakeString(config.name(), "_", i) : g.name();
    const int count = std::max(1, g.count());
    std::vector<int> gpus(g.gpus().begin(), g.gpus().end());
    switch (g.kind()) {
      case inference::ModelInstanceGroup::KIND_CPU:
      case inference::ModelInstanceGroup::KIND_MODEL:
        if (!gpus.empty())
          HN_THROW(kInvalidArgument, "model '", config.name(), "': instance group '", name,
                   "' may not list gpus for KIND_CPU or KIND_MODEL");
        out.push_back({name, Device::CPU(), g.kind() == inference::ModelInstanceGroup::KIND_MODEL, count});
        break;
      case inference::ModelInstanceGroup::KIND_GPU:
        gpu_group(name, gpus, count);
        break;
      default:  // KIND_AUTO: the GPUs when they are there, else CPU
        if (gpu_count > 0) {
          gpu_group(name, gpus, count);
        } else {
          out.push_back({name, Device::CPU(), false, count});
        }
    }
  }
  return out;
}

caffe2::NetDef PlaceForInstance(const caffe2::NetDef& net, const InstancePlacement& placement) {
  caffe2::NetDef out = net;
  if (placement.keep_model_placement) return out;
  if (placement.device.is_cpu()) {
    // KIND_CPU (or a GPU group running on CPU under soft placement): everything on CPU.
    out.clear_device_option();
    for (auto& op : *out.mutable_op()) op.clear_device_option();
    return out;
  }
  DeviceToOption(placement.device, out.mutable_device_option());
  for (auto& op : *out.mutable_op()) {
    if (!op.has_device_option()) continue;  // follows the net's option: this GPU
    if (op.device_option().device_type() == caffe2::PROTO_CPU) continue;  // the model pins it to CPU
    DeviceToOption(placement.device, op.mutable_device_option());
  }
  return out;
}


caffe2::NetDef PlaceInitForInstance(const caffe2::NetDef& init, const caffe2::NetDef& placed_predict) {
  caffe2::NetDef out = init;
  const bool net_has = placed_predict.has_device_option();
  std::map<std::string, std::set<Device>> readers;
  for (const auto& op : placed_predict.op()) {
    Device d = op.has_device_option() ? DeviceFromOption(op.device_option())
               : net_has              ? DeviceFromOption(placed_predict.device_option())
                                      : Device::CPU();
    for (const auto& in : op.input()) readers[in].insert(d);
  }
  for (auto& op : *out.mutable_op()) {
    if (op.has_device_option()) continue;
    std::set<Device> where;
    for (const auto& o : op.output()) {
      auto it = readers.find(o);
      if (it != readers.end()) where.insert(it->second.begin(), it->second.end());
    }
    if (where.size() == 1 && !where.begin()->is_cpu()) DeviceToOption(*where.begin(), op.mutable_device_option());
  }
  if (init.has_device_option() && !out.op().empty()) {
    // Ops without their own option followed the net's; keep that unless set above.
    for (auto& op : *out.mutable_op())
      if (!op.has_device_option()) *op.mutable_device_option() = init.device_option();
  }
  out.clear_device_option();
  return out;
}


}  // namespace hetnet::serving
