// ONNX models in a repository (Triton's platform "onnxruntime_onnx", backend "onnxruntime", file
// model.onnx): the file is imported into an init and a predict NetDef by onnx/, so everything after
// loading (placement, instances, batching) is the same as for a Caffe2 NetDef model.
#pragma once

#include <string>

#include "serving/model_config_loader.h"

namespace hetnet::serving {

// The config names the ONNX platform or backend.
bool IsOnnxModelConfig(const inference::ModelConfig& config);
// The version folder holds an ONNX file (the config's default_model_filename, else model.onnx) and
// no Caffe2 predict net: how a config without platform is recognised as ONNX, as Triton does.
bool VersionHoldsOnnxModel(const std::string& version_dir, const inference::ModelConfig& config);
// Imports the version's ONNX file (read inside the repository; external data relative to the
// version folder), with the graph's declared inputs and outputs.
ModelNets ReadOnnxModelNets(const std::string& repo_root, const std::string& version_dir,
                            const inference::ModelConfig& config);
// Whether this build can read ONNX models (hetnet_onnx linked).
bool OnnxModelsSupported();

}  // namespace hetnet::serving
