// Device placement of a net's operators and the cross-device copy pass.
//
// Placement rules: an op's own DeviceOption wins, else the NetDef's, else CPU. CrossDeviceCopyPass
// then makes every input live where its reader needs it (schema device inference decides; e.g.
// shape inputs stay on CPU), inserting one copy per (blob, device) named as Caffe2 did
// (`<blob>_gpu_<id>`, `<blob>_cpu`) and reused by later readers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/op_schema.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

struct PlacementOptions {
  // An op placed on a GPU whose type has no GPU kernel is an error instead of a CPU fallback.
  // Net argument "strict_placement" (int) also sets it.
  bool strict = false;
  // With no usable GPU, ops placed on GPUs run on CPU (and the report says so) instead of failing.
  // Net argument "soft_placement" (int) also sets it.
  bool soft_placement = false;
};
// Process-wide defaults, changed by the runtime option (`hetnet --strict`, Python workspace option).
PlacementOptions& DefaultPlacementOptions();

struct OpPlacement {
  int index = 0;  // in the rewritten net
  std::string type;
  Device device;
  std::string engine;
  // "own device option", "net device option", "default (CPU)", "CPU fallback (no CUDA kernel)",
  // "soft placement (no GPU)", "inserted copy"
  std::string reason;
};

struct CopyInfo {
  int op_index = 0;  // of the copy op in the rewritten net
  std::string type;  // CopyCPUToGPU, CopyGPUToCPU, Copy
  std::string src_blob, dst_blob;
  Device from, to;
  int64_t bytes = -1;  // per run; -1 when the shape is not known before running
};

struct PlacementReport {
  std::string net_name;
  std::vector<OpPlacement> ops;
  std::vector<CopyInfo> copies;
  std::string ToText() const;
  // Graphviz drawing of the placed net: ops coloured by device, copies drawn as the red edges that
  // cross a device boundary (labelled with blob, direction and bytes per run).
  std::string ToDot() const;
  caffe2::NetDef placed_net;  // the rewritten net the report describes
};

// SVG from Graphviz's `dot`, or "" when dot is not installed.
std::string DotToSvg(const std::string& dot);

struct CopyPassResult {
  caffe2::NetDef net;
  std::map<std::string, Device> blob_devices;  // where every blob lives after the pass
  std::map<std::string, TensorInfo> blob_shapes;  // shapes known from shape inference after the pass
  PlacementReport report;
};

// The pass on its own. `input_devices`: where external inputs live (missing ones: the net's
// device option, else CPU). `input_shapes` lets the report count copy bytes. Idempotent.
// Throws kInvalidArgument for an op that overwrites a blob living on another device without reading it.
CopyPassResult CrossDeviceCopyPass(const caffe2::NetDef& net,
                                   const std::map<std::string, Device>& input_devices = {},
                                   const std::map<std::string, TensorInfo>& input_shapes = {});

// Full preparation used at net creation: placement rules, CPU fallback / soft placement, and the
// copy pass, with external input devices and shapes read from the workspace; an input the workspace
// holds no data for is on its fed_input_devices entry if it has one, else on the net's device.
CopyPassResult PlaceNet(const caffe2::NetDef& def, const Workspace& ws, const PlacementOptions& opts,
                        const std::map<std::string, Device>& fed_input_devices = {});
// PlaceNet with the machine given explicitly (GPU count, which types have CUDA kernels): testable
// without a GPU.
CopyPassResult PlaceNetWith(const caffe2::NetDef& def, const std::map<std::string, Device>& input_devices,
                            const std::map<std::string, TensorInfo>& input_shapes, const PlacementOptions& opts,
                            int gpu_count, const std::function<bool(const std::string&)>& has_cuda_kernel);

// Where and how big the blobs that `def` reads before writing them are in `ws` (what PlaceNet uses).
void ExternalInputsFromWorkspace(const caffe2::NetDef& def, const Workspace& ws,
                                 std::map<std::string, Device>* devices, std::map<std::string, TensorInfo>* shapes);

// Offline planning (`hetnet inspect --placement --devices`, `workspace.PlacementReport(devices=)`):
// PlaceNetWith for a machine with `devices` ("cpu", "cuda:N"; the CPU is always there), on this
// machine, without a GPU and without running anything. Which types have CUDA kernels comes from
// this build's registry (a build without CUDA assumes every type has one). Throws kInvalidArgument
// for a bad list (unknown or repeated name, GPU ids not numbered from 0) and otherwise what net
// creation on that machine would throw (e.g. an op on a GPU the list lacks, unless soft placement),
// with the planned devices as context.
CopyPassResult PlanPlacement(const caffe2::NetDef& def, const std::vector<std::string>& devices,
                             const std::map<std::string, Device>& input_devices,
                             const std::map<std::string, TensorInfo>& input_shapes, const PlacementOptions& opts);
// The GPU count of such a device list, validated as PlanPlacement does.
int PlannedGpuCount(const std::vector<std::string>& devices);

}  // namespace hetnet
