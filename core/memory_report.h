// Memory report, like Caffe's net assembly log ("Top shape: 64 20 24 24 (737280)" per blob and
// "Memory required for data: N"): every blob's shape and bytes, the parameters per device, and the
// memory the net's data blobs need.
//
// Counting rules (Caffe's): parameters are counted once, on the device they live on; "data" is
// every non-parameter external input plus every op output that is not written in place (an output
// that is also an input of the same op adds nothing) and not already counted (a blob rewritten by a
// later op is one blob). Blobs of unknown shape are listed with bytes -1 and not counted (the total
// then says how many were unknown).
#pragma once

#include <cstdint>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/op_schema.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class Workspace;

struct BlobMemory {
  std::string name;
  TensorInfo info;       // shape and dtype (known = false: shape unknown)
  Device device;
  int64_t bytes = -1;    // -1 when unknown
  bool param = false;
  int producer = -1;     // first op writing it (-1: external input)
  bool in_place = false; // only ever written in place (counted with the blob it aliases)
};

struct MemoryReport {
  std::string net_name;
  std::vector<BlobMemory> blobs;  // in order of first appearance
  std::map<Device, int64_t> param_bytes, data_bytes;
  int64_t param_total = 0, data_total = 0;
  int unknown = 0;  // blobs whose size is unknown
  // From a workspace only: kernels' prepared copies of the net's blobs (packed GEMM panels,
  // oneDNN's reordered filters; core/prepared_memory.h), held beside the blobs they were made from.
  std::map<Device, int64_t> prepared_bytes;
  int64_t prepared_total = 0;
  std::string ToText() const;
};

// From shape inference: `shapes` gives the external inputs' shapes (data and parameters);
// `params` names the parameters. Devices are where ops place their outputs (own device option,
// else the net's, else CPU; schema device inference for e.g. CPU-only outputs).
MemoryReport MemoryReportFromShapes(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& shapes,
                                    const std::set<std::string>& params);

// From a workspace after a run: actual shapes, dtypes and devices of the blobs the net names
// (blobs missing from the workspace fall back to shape inference), and the prepared copies that
// kernels hold of them.
MemoryReport MemoryReportFromWorkspace(const caffe2::NetDef& net, const Workspace& ws,
                                       const std::set<std::string>& params);

}  // namespace hetnet
