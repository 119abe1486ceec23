#include "serving/onnx_model_reader.h"

#include <filesystem>

#include "core/error.h"
#ifdef HETNET_WITH_ONNX
#include "onnx/onnx_import.h"
#endif

namespace hetnet::serving {
namespace fs = std::filesystem;

namespace {
std::string OnnxFileName(const inference::ModelConfig& config) {
  return config.default_model_filename().empty() ? "model.onnx" : config.default_model_filename();
}
}  // namespace

bool IsOnnxModelConfig(const inference::ModelConfig& config) {
  return config.platform() == "onnxruntime_onnx" || config.backend() == "onnxruntime";
}

bool VersionHoldsOnnxModel(const std::string& version_dir, const inference::ModelConfig& config) {
  std::error_code ec;
  const std::string name = OnnxFileName(config);
  return name.size() > 5 && name.substr(name.size() - 5) == ".onnx" && fs::is_regular_file(fs::path(version_dir) / name, ec) &&
         !fs::exists(fs::path(version_dir) / "model.netdef", ec) && !fs::exists(fs::path(version_dir) / "predict_net.pb", ec);
}

bool OnnxModelsSupported() {
#ifdef HETNET_WITH_ONNX
  return true;
#else
  return false;
#endif
}

ModelNets ReadOnnxModelNets(const std::string& repo_root, const std::string& version_dir,
                            const inference::ModelConfig& config) {
  const std::string file = OnnxFileName(config);
  if (file.find('/') != std::string::npos)
    HN_THROW(kInvalidArgument, "model '", config.name(), "': default_model_filename must be a file name");
  const fs::path path = fs::path(version_dir) / file;
  std::error_code ec;
  if (!fs::exists(path, ec))
    HN_THROW(kNotFound, "model '", config.name(), "': no '", file, "' in '", version_dir, "'");
#ifdef HETNET_WITH_ONNX
  // Resolved inside the repository first, so a symbolic link cannot lead the import outside it.
  const std::string real = ResolveInside(repo_root, path.string());
  onnxio::OnnxImportOptions options;
  options.base_dir = ResolveInside(repo_root, version_dir);
  options.net_name = config.name();
  onnxio::ImportedOnnxModel imported;
  try {
    imported = onnxio::ImportOnnxFile(real, options);
  } catch (Error& e) {
    throw e.AddContext("loading model '" + config.name() + "' from '" + path.string() + "'");
  }
  ModelNets nets;
  nets.init_net = std::move(imported.init_net);
  nets.predict_net = std::move(imported.predict_net);
  auto declare = [](const std::vector<onnxio::OnnxValueInfo>& from, std::vector<DeclaredTensor>* to) {
    for (const auto& v : from) to->push_back({v.name, static_cast<int>(v.dtype), v.dims, v.known_rank});
  };
  declare(imported.inputs, &nets.declared_inputs);
  declare(imported.outputs, &nets.declared_outputs);
  return nets;
#else
  (void)repo_root;
  HN_THROW(kUnsupported, "model '", config.name(), "': this hetnet was built without ONNX support (HETNET_BUILD_ONNX=OFF)");
#endif
}

}  // namespace hetnet::serving
