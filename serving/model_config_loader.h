// Reading one model of a Triton-style repository: its config.pbtxt (or one completed from the
// NetDef), its numeric version folders, its init/predict NetDefs, and the per-instance-group
// placement of those nets. Every path read is checked to stay inside the repository.
#pragma once

#include <string>
#include <vector>

#include "core/device.h"
#include "proto/caffe2.pb.h"
#include "serving/proto/model_config.pb.h"

namespace hetnet::serving {

struct ServerOptions;

// Model names are [A-Za-z0-9_.-]+ and neither "." nor ".."; throws kInvalidArgument otherwise.
void CheckModelName(const std::string& name);
// `path` resolved (symlinks followed) must lie inside `root`; throws kInvalidArgument otherwise.
std::string ResolveInside(const std::string& root, const std::string& path);

// An input or output with the type a model file declares (ONNX graphs do; NetDefs do not).
// dtype: caffe2 TensorProto.DataType value; dims: -1 where symbolic; known_rank false: any rank.
struct DeclaredTensor {
  std::string name;
  int dtype = 0;
  std::vector<int64_t> dims;
  bool known_rank = true;
};

struct ModelNets {
  caffe2::NetDef init_net;  // empty when the model has none
  caffe2::NetDef predict_net;
  std::vector<DeclaredTensor> declared_inputs, declared_outputs;  // empty for NetDef models
};

// The config: `override_json` when given (a load request's "config"), else config.pbtxt, else one
// completed from the newest version's NetDef. Then defaults are filled and the config is checked
// against the nets and the server's options (honoured fields only, names, types, instance groups).
inference::ModelConfig ReadModelConfig(const std::string& repo_root, const std::string& model_dir,
                                       const std::string& name, const std::string& override_json,
                                       const ServerOptions& options);
// Version numbers present (numeric folder names not starting with '0'), ascending.
std::vector<int64_t> ListVersions(const std::string& model_dir);
// The versions the config's version_policy selects from those present.
std::vector<int64_t> SelectVersions(const inference::ModelConfig& config, const std::vector<int64_t>& present);
// The predict net (default_model_filename, default model.netdef; text format when it ends in
// .pbtxt) and init net ("init_" + that name), falling back to the zoo names predict_net.pb/init_net.pb;
// for an ONNX model (serving/onnx_model_reader.h) both nets imported from model.onnx.
ModelNets ReadModelNets(const std::string& repo_root, const std::string& version_dir,
                        const inference::ModelConfig& config);
// Checks the nets against the config: input/output names exist, no unsafe ops unless allowed.
void CheckNetsAgainstConfig(const ModelNets& nets, const inference::ModelConfig& config, const ServerOptions& options);

}  // namespace hetnet::serving
