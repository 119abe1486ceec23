// ONNX import: a ModelProto (bytes or a file) becomes a Caffe2 init NetDef (initializers, Constant
// nodes) and a predict NetDef of hetnet operators. This header is the onnx/ room's whole face to the
// rest of the code: it names no ONNX type, so nothing outside onnx/ includes an ONNX header.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet::onnxio {

// A graph input or output as the model declares it. dims: -1 where the model leaves a dimension
// symbolic or unknown; empty with known_rank=false where even the rank is unknown.
struct OnnxValueInfo {
  std::string name;
  caffe2::TensorProto::DataType dtype = caffe2::TensorProto::UNDEFINED;
  int32_t onnx_dtype = 0;  // the declared ONNX elem_type (0: none), also where hetnet has no such dtype
  std::vector<int64_t> dims;
  bool known_rank = true;
};

struct OnnxImportOptions {
  // Device of every imported operator unless node_devices names the node (by its ONNX name, or by
  // its first output's name when the node has no name). Cross-device copies are inserted by the
  // runtime, as for any mixed NetDef.
  caffe2::DeviceOption device;
  std::map<std::string, caffe2::DeviceOption> node_devices;
  // Directory that external-data initializers are relative to (a file import sets it to the
  // model's directory). Empty: external data is refused.
  std::string base_dir;
  // Name of the predict net (the init net gets name + "_init"). Empty: the graph's name, else "onnx_model".
  std::string net_name;
};

struct ImportedOnnxModel {
  caffe2::NetDef init_net;     // fills every initializer and Constant output
  caffe2::NetDef predict_net;  // external_input = graph inputs then weights; external_output = graph outputs
  std::vector<OnnxValueInfo> inputs;   // graph inputs that are not initializers, in graph order
  std::vector<OnnxValueInfo> outputs;  // graph outputs, in graph order
  int64_t ir_version = 0;
  std::map<std::string, int64_t> opsets;  // domain ("" = ai.onnx) -> version
  std::string producer;                  // producer_name + " " + producer_version
};

// Errors are hetnet::Error: kInvalidArgument for a malformed model, kUnsupported listing every
// operator (with its opset) that cannot be imported, all in one message.
ImportedOnnxModel ImportOnnxModel(const std::string& model_bytes, const OnnxImportOptions& options = {});
ImportedOnnxModel ImportOnnxFile(const std::string& path, OnnxImportOptions options = {});

// True for a path ending in ".onnx" (how `hetnet run` / `inspect` tell an ONNX model from a NetDef).
bool IsOnnxPath(const std::string& path);

}  // namespace hetnet::onnxio
