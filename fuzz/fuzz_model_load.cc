// A load request with model files (Triton's repository API: a JSON config and file:<version>/<path>
// uploads), the way `hetnet serve --model-control-mode explicit` takes it: config parsed and checked,
// the nets read (binary NetDef, text NetDef, or ONNX, by the config's default_model_filename and
// platform), checked against the config, the model created; then unloaded.
// Input layout: the config JSON, a NUL byte, then the model file's bytes (uploaded as
// 1/model.netdef, 1/model.pbtxt and 1/model.onnx alike, so any config's choice finds it).
#include <cstring>
#include <map>
#include <memory>

#include "fuzz/fuzz_common.h"
#include "serving/inference_server.h"

namespace {
hetnet::serving::InferenceServer& Server() {
  static hetnet::serving::InferenceServer* server = [] {
    hetnet::serving::ServerOptions options;
    options.control_mode = hetnet::serving::ModelControlMode::kExplicit;
    options.max_tensor_elements = 1 << 20;
    options.max_batch_size = 64;
    return new hetnet::serving::InferenceServer(options);  // never destroyed: its threads outlive the loop
  }();
  return *server;
}
}  // namespace

static void Run(const uint8_t* data, size_t size) {
  const void* nul = std::memchr(data, 0, size);
  if (!nul) return;
  const size_t split = static_cast<const uint8_t*>(nul) - data;
  const std::string config(reinterpret_cast<const char*>(data), split);
  const std::string file(reinterpret_cast<const char*>(data) + split + 1, size - split - 1);
  const std::map<std::string, std::string> files = {
      {"file:1/model.netdef", file}, {"file:1/model.pbtxt", file}, {"file:1/model.onnx", file}};
  hetnet::serving::InferenceServer& server = Server();
  try {
    server.LoadModel("m", config, files);
  } catch (const hetnet::Error&) {
  }
  try {
    server.UnloadModel("m");
  } catch (const hetnet::Error&) {
  }
}

HETNET_FUZZ_ENTRY(Run)
