#include "onnx/onnx_predictor.h"

namespace hetnet::onnxio {

std::unique_ptr<Predictor> LoadOnnxPredictor(const std::string& path, PredictorOptions predictor_options,
                                             OnnxImportOptions import_options) {
  const ImportedOnnxModel m = ImportOnnxFile(path, std::move(import_options));
  return std::make_unique<Predictor>(m.init_net, m.predict_net, predictor_options);
}

std::unique_ptr<Predictor> OnnxPredictorFromBytes(const std::string& model_bytes, PredictorOptions predictor_options,
                                                  const OnnxImportOptions& import_options) {
  const ImportedOnnxModel m = ImportOnnxModel(model_bytes, import_options);
  return std::make_unique<Predictor>(m.init_net, m.predict_net, predictor_options);
}

}  // namespace hetnet::onnxio
