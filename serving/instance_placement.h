// Where a model's instances run (Triton's instance_group: KIND_AUTO/GPU/CPU/MODEL, count, gpus) and
// the nets each instance runs: hetnet keeps per-op placement, so a GPU instance moves the net's
// unpinned and GPU ops to its GPU while ops the model pins to CPU stay there.
#pragma once

#include <string>
#include <vector>

#include "core/device.h"
#include "proto/caffe2.pb.h"
#include "serving/proto/model_config.pb.h"

namespace hetnet::serving {

struct ServerOptions;

// One placement of the model: where its instances run and how many there are.
struct InstancePlacement {
  std::string group_name;
  Device device;         // CPU, or the GPU whose ops this instance runs
  bool keep_model_placement = false;  // KIND_MODEL: the NetDef's own device options
  int count = 1;
};
// Expands instance_group (KIND_AUTO/GPU/CPU/MODEL, count, gpus) for a machine with `gpu_count` GPUs.
std::vector<InstancePlacement> ExpandInstanceGroups(const inference::ModelConfig& config, int gpu_count,
                                                    const ServerOptions& options);
// The predict net for one placement: KIND_CPU moves every op to CPU; a GPU placement puts the net's
// unpinned ops and every CUDA op on that GPU while ops the model pins to CPU stay there.
caffe2::NetDef PlaceForInstance(const caffe2::NetDef& net, const InstancePlacement& placement);
// The init net for one placement: an init op the model does not pin goes to the device of the
// predict-net ops that read its outputs when they all run on one device, so weights live where
// they are used instead of being copied on every run.
caffe2::NetDef PlaceInitForInstance(const caffe2::NetDef& init, const caffe2::NetDef& placed_predict);

}  // namespace hetnet::serving
