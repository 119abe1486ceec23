// ONNX export: a Caffe2 predict NetDef (+ init NetDef with its weights) becomes an ONNX ModelProto,
// the C++ twin of caffe2.python.onnx.frontend.caffe2_net_to_onnx_model. Names no ONNX type.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet::onnxio {

// Type and shape of a predict-net external input that the init net does not fill, as Caffe2's
// frontend takes it: value_info = {"data": (onnx.TensorProto.FLOAT, (1, 3, 224, 224))}.
// elem_type is ONNX's TensorProto.DataType number.
struct OnnxExportValueInfo {
  int32_t elem_type = 1;  // FLOAT
  std::vector<int64_t> dims;
};

struct OnnxExportOptions {
  int64_t opset = 17;  // ai.onnx opset of the exported model
  std::string producer_name = "hetnet";
};

// Returns the serialized ModelProto. kUnsupported lists every operator (and argument form) that has
// no ONNX equivalent, in one message.
std::string ExportOnnxModel(const caffe2::NetDef& predict_net, const caffe2::NetDef& init_net,
                            const std::map<std::string, OnnxExportValueInfo>& value_info,
                            const OnnxExportOptions& options = {});

}  // namespace hetnet::onnxio
