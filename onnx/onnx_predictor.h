// A core Predictor from an ONNX model file or bytes: the model is imported (onnx_import.h) and the
// two NetDefs go to hetnet::Predictor as any Caffe2 model does. Names no ONNX type.
#pragma once

#include <memory>
#include <string>

#include "core/predictor.h"
#include "onnx/onnx_import.h"

namespace hetnet::onnxio {

std::unique_ptr<Predictor> LoadOnnxPredictor(const std::string& path, PredictorOptions predictor_options = {},
                                             OnnxImportOptions import_options = {});
std::unique_ptr<Predictor> OnnxPredictorFromBytes(const std::string& model_bytes,
                                                  PredictorOptions predictor_options = {},
                                                  const OnnxImportOptions& import_options = {});

}  // namespace hetnet::onnxio
