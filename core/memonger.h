// Static memory planning for inference nets, like Caffe2's memonger: intermediate blobs whose
// lifetimes (first write to last read) do not overlap are renamed to one shared blob, so the
// workspace holds one buffer for all of them. Only blobs on the same device share (devices from the
// placement pass); external inputs and outputs, and blobs read before the net writes them, keep
// their names. The result is the placed net (copies inserted), so placing it again changes nothing.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "core/device.h"
#include "core/op_schema.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

struct MemongerOptions {
  // Shapes of external inputs (data and weights) for the report; sharing itself needs none.
  std::map<std::string, TensorInfo> input_shapes;
  std::map<std::string, Device> input_devices;  // default: the net's device option, else CPU
};

struct MemongerReport {
  std::string net_name;
  int intermediate_blobs = 0;  // blobs that could be shared
  int shared_buffers = 0;      // buffers they use after planning
  // Bytes the workspace holds for intermediates after a run (it keeps every blob): without and
  // with the plan. -1 where some shape is unknown.
  int64_t intermediate_bytes_before = -1, intermediate_bytes_after = -1;
  int64_t external_bytes = -1;  // inputs, weights and outputs: the same with and without
  std::map<std::string, std::string> renamed;  // original blob -> shared blob
  int64_t PeakBefore() const;   // external + intermediates (-1 when unknown)
  int64_t PeakAfter() const;
  std::string ToText() const;
};

struct OptimizedNet {
  caffe2::NetDef net;
  MemongerReport report;
};

// Plans `net` (an inference net: no gradient ops are expected) and returns the renamed, placed net.
OptimizedNet OptimizeInferenceNet(const caffe2::NetDef& net, const MemongerOptions& options = {});

// Schema shape inference through `net` from known blob shapes; returns every blob's info it could
// infer (unknown ones are left out). Also gives weight shapes from an init net's fill ops.
std::map<std::string, TensorInfo> InferBlobShapes(const caffe2::NetDef& net,
                                                  std::map<std::string, TensorInfo> known = {});

}  // namespace hetnet
