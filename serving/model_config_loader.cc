#include "serving/model_config_loader.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <google/protobuf/io/tokenizer.h>
#include <google/protobuf/text_format.h>

#include "core/error.h"
#include "core/proto_io.h"
#include "serving/inference_server.h"
#include "serving/onnx_model_reader.h"
#include "serving/proto_json.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving {
namespace fs = std::filesystem;
namespace pb = google::protobuf;

void CheckModelName(const std::string& name) {
  const bool ok = !name.empty() && name != "." && name != ".." && name.size() <= 255 &&
                  std::all_of(name.begin(), name.end(), [](char c) {
                    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
                  });
  if (!ok) HN_THROW(kInvalidArgument, "invalid model name '", name, "': names are [A-Za-z0-9_.-]+");
}

std::string ResolveInside(const std::string& root, const std::string& path) {
  std::error_code ec;
  fs::path real_root = fs::weakly_canonical(root, ec);
  fs::path real = fs::weakly_canonical(path, ec);
  if (ec) HN_THROW(kInvalidArgument, "cannot resolve '", path, "': ", ec.message());
  auto rel = real.lexically_relative(real_root);
  if (rel.empty() || *rel.begin() == "..")
    HN_THROW(kInvalidArgument, "'", path, "' resolves to '", real.string(),
             "', outside the model repository '", real_root.string(), "' (symbolic links out are refused)");
  return real.string();
}

namespace {

std::string ReadFileInside(const std::string& root, const std::string& path) {
  std::string real = ResolveInside(root, path);
  std::ifstream f(real, std::ios::binary);
  if (!f) HN_THROW(kNotFound, "cannot read '", path, "'");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// Fields of ModelConfig that hetnet honours; any other field that is set fails the load, so a
// config never silently means something else here than in Triton. A prefix covers its sub-fields.
const std::set<std::string>& HonouredFields() {
  static const std::set<std::string> k = {
      "name", "platform", "backend", "version_policy", "max_batch_size",
      "input.name", "input.data_type", "input.format", "input.dims", "input.reshape", "input.optional",
      "output.name", "output.data_type", "output.dims", "output.reshape", "output.label_filename",
      "instance_group.name", "instance_group.kind", "instance_group.count", "instance_group.gpus",
      "dynamic_batching", "model_warmup", "default_model_filename", "parameters",
      "metric_tags", "optimization.input_pinned_memory", "optimization.output_pinned_memory"};
  return k;
}

bool IsHonoured(const std::string& path) {
  const auto& k = HonouredFields();
  for (std::string p = path;;) {
    if (k.count(p)) return true;
    auto dot = p.rfind('.');
    if (dot == std::string::npos) return false;
    p.resize(dot);
  }
}

void CheckHonoured(const pb::Message& m, const std::string& prefix) {
  std::vector<const pb::FieldDescriptor*> fields;
  m.GetReflection()->ListFields(m, &fields);
  for (const auto* f : fields) {
    std::string path = prefix.empty() ? f->name() : prefix + "." + f->name();
    if (IsHonoured(path)) continue;
    const auto& honoured = HonouredFields();
    const bool has_honoured_children = std::any_of(honoured.begin(), honoured.end(), [&](const std::string& h) {
      return h.rfind(path + ".", 0) == 0;
    });
    if (has_honoured_children && f->cpp_type() == pb::FieldDescriptor::CPPTYPE_MESSAGE && !f->is_map()) {
      // A message with some honoured sub-fields is refused only for the others it sets.
      const auto* r = m.GetReflection();
      if (f->is_repeated()) {
        for (int i = 0; i < r->FieldSize(m, f); ++i) CheckHonoured(r->GetRepeatedMessage(m, f, i), path);
      } else {
        CheckHonoured(r->GetMessage(m, f), path);
      }
      continue;
    }
    HN_THROW(kInvalidArgument, "unsupported model config field '", path, "' (hetnet does not implement it)");
  }
}

// Triton's auto-complete for models without config.pbtxt (or without inputs/outputs in it). ONNX
// graphs declare types and shapes: those are used, less the batch dimension when the model batches.
// NetDefs declare none: inputs are the predict net's external inputs that the init net does not
// fill, outputs its external outputs, FP32 of any shape.
void CompleteTensors(const std::vector<DeclaredTensor>& declared, bool batched,
                     pb::RepeatedPtrField<inference::ModelInput>* inputs,
                     pb::RepeatedPtrField<inference::ModelOutput>* outputs, bool* any_rank) {
  for (const auto& d : declared) {
    const char* protocol = IsKnownDataType(d.dtype) ? ProtocolDataType(static_cast<DataType>(d.dtype)) : "";
    const int type = ConfigTypeOfProtocolName(protocol);
    std::vector<int64_t> dims = d.dims;
    if (!d.known_rank) {
      dims = {-1};
      *any_rank = true;
    } else if (batched && !dims.empty()) {
      dims.erase(dims.begin());
    }
    auto fill = [&](auto* t) {
      t->set_name(d.name);
      t->set_data_type(static_cast<inference::DataType>(type ? type : inference::TYPE_FP32));
      for (int64_t v : dims) t->add_dims(v < 0 ? -1 : v);
    };
    if (inputs) fill(inputs->Add());
    if (outputs) fill(outputs->Add());
  }
}

void CompleteFromNets(inference::ModelConfig* config, const ModelNets& nets) {
  const bool batched = config->max_batch_size() > 0;
  bool any_rank = false;
  if (config->input_size() == 0 && !nets.declared_inputs.empty()) {
    CompleteTensors(nets.declared_inputs, batched, config->mutable_input(), nullptr, &any_rank);
  } else if (config->input_size() == 0) {
    std::set<std::string> filled;
    for (const auto& op : nets.init_net.op())
      for (const auto& o : op.output()) filled.insert(o);
    for (const auto& in : nets.predict_net.external_input()) {
      if (filled.count(in)) continue;
      auto* t = config->add_input();
      t->set_name(in);
      t->set_data_type(inference::TYPE_FP32);
      t->add_dims(-1);
    }
    any_rank = true;  // the NetDef says nothing about ranks: an auto-completed input accepts any shape
  }
  if (any_rank) (*config->mutable_parameters())["hetnet_any_input_rank"].set_string_value("true");
  if (config->output_size() == 0 && !nets.declared_outputs.empty()) {
    bool unused = false;
    CompleteTensors(nets.declared_outputs, batched, nullptr, config->mutable_output(), &unused);
  } else if (config->output_size() == 0) {
    for (const auto& out : nets.predict_net.external_output()) {
      auto* t = config->add_output();
      t->set_name(out);
      t->set_data_type(inference::TYPE_FP32);
      t->add_dims(-1);
    }
  }
}

void FillDefaults(inference::ModelConfig* config) {
  if (config->platform().empty() && config->backend().empty()) config->set_platform("caffe2_netdef");
  if (!config->has_version_policy()) config->mutable_version_policy()->mutable_latest()->set_num_versions(1);
  for (auto& g : *config->mutable_instance_group()) {
    if (g.count() == 0) g.set_count(1);
  }
  if (config->has_dynamic_batching() && config->dynamic_batching().priority_levels() > 0 &&
      config->dynamic_batching().default_priority_level() == 0) {
    config->mutable_dynamic_batching()->set_default_priority_level(
        (config->dynamic_batching().priority_levels() + 1) / 2);
  }
}

void CheckTensors(const inference::ModelConfig& config) {
  std::set<std::string> names;
  auto check = [&](const std::string& kind, const std::string& name, int type, const auto& dims, bool has_reshape,
                   const auto& reshape) {
    if (name.empty()) HN_THROW(kInvalidArgument, "model '", config.name(), "': an ", kind, " has no name");
    if (!names.insert(kind + ":" + name).second)
      HN_THROW(kInvalidArgument, "model '", config.name(), "': ", kind, " '", name, "' is listed twice");
    const std::string proto = ProtocolNameOfConfigType(type);
    if (proto.empty())
      HN_THROW(kInvalidArgument, "model '", config.name(), "': ", kind, " '", name, "' has no valid data_type");
    DataTypeFromProtocol(proto, "model '" + config.name() + "' " + kind + " '" + name + "'");
    for (auto d : dims)
      if (d < -1)
        HN_THROW(kInvalidArgument, "model '", config.name(), "': ", kind, " '", name, "' has dimension ", d);
    if (has_reshape) {
      int64_t a = 1, b = 1;
      bool variable = false;
      for (auto d : dims) d < 0 ? (void)(variable = true) : (void)(a *= d);
      for (auto d : reshape.shape()) d < 0 ? (void)(variable = true) : (void)(b *= d);
      if (!variable && a != b)
        HN_THROW(kInvalidArgument, "model '", config.name(), "': ", kind, " '", name,
                 "' reshape has a different element count than dims");
    }
  };
  for (const auto& in : config.input())
    check("input", in.name(), in.data_type(), in.dims(), in.has_reshape(), in.reshape());
  for (const auto& out : config.output())
    check("output", out.name(), out.data_type(), out.dims(), out.has_reshape(), out.reshape());
  if (config.max_batch_size() < 0)
    HN_THROW(kInvalidArgument, "model '", config.name(), "': max_batch_size must be >= 0");
  if (config.has_dynamic_batching()) {
    const auto& db = config.dynamic_batching();
    for (int p : db.preferred_batch_size())
      if (p <= 0 || (config.max_batch_size() > 0 && p > config.max_batch_size()))
        HN_THROW(kInvalidArgument, "model '", config.name(), "': preferred_batch_size ", p,
                 " is not in [1, max_batch_size]");
    if (db.priority_levels() > 0 &&
        (db.default_priority_level() < 1 || db.default_priority_level() > db.priority_levels()))
      HN_THROW(kInvalidArgument, "model '", config.name(), "': default_priority_level must be in [1, priority_levels]");
  }
}

}  // namespace

std::vector<int64_t> ListVersions(const std::string& model_dir) {
  std::vector<int64_t> versions;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(model_dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.empty() || n[0] == '0' || n.size() > 18 || !std::all_of(n.begin(), n.end(), ::isdigit)) continue;
    if (!e.is_directory(ec)) continue;
    versions.push_back(std::stoll(n));
  }
  std::sort(versions.begin(), versions.end());
  return versions;
}

std::vector<int64_t> SelectVersions(const inference::ModelConfig& config, const std::vector<int64_t>& present) {
  const auto& vp = config.version_policy();
  if (vp.has_all()) return present;
  if (vp.has_specific()) {
    std::vector<int64_t> out;
    for (auto v : vp.specific().versions()) {
      if (!std::count(present.begin(), present.end(), v))
        HN_THROW(kNotFound, "model '", config.name(), "': version ", v, " named by version_policy does not exist");
      out.push_back(v);
    }
    std::sort(out.begin(), out.end());
    return out;
  }
  const int n = std::max(1u, vp.latest().num_versions());
  std::vector<int64_t> out(present.end() - std::min<size_t>(n, present.size()), present.end());
  return out;
}

ModelNets ReadModelNets(const std::string& repo_root, const std::string& version_dir,
                        const inference::ModelConfig& config) {
  if (IsOnnxModelConfig(config)) return ReadOnnxModelNets(repo_root, version_dir, config);
  std::string predict_name = config.default_model_filename().empty() ? "model.netdef" : config.default_model_filename();
  if (predict_name.find('/') != std::string::npos)
    HN_THROW(kInvalidArgument, "model '", config.name(), "': default_model_filename must be a file name");
  std::string init_name = "init_" + predict_name;
  std::error_code ec;
  if (!fs::exists(fs::path(version_dir) / predict_name, ec) && fs::exists(fs::path(version_dir) / "predict_net.pb", ec)) {
    predict_name = "predict_net.pb";  // the Caffe2 model zoo's names
    init_name = "init_net.pb";
  }
  auto read_net = [&](const std::string& file, caffe2::NetDef* net) {
    const std::string path = (fs::path(version_dir) / file).string();
    std::string bytes = ReadFileInside(repo_root, path);
    const bool text = file.size() > 6 && file.substr(file.size() - 6) == ".pbtxt";
    // Both under the nesting cap: protobuf's text parser has no limit of its own, and a deeply nested
    // model.pbtxt (a repository's, or one sent with a load request) overflowed the stack.
    if (text) ParseTextProtoFromString(bytes, net, path);
    else ParseProtoFromString(bytes, net, path);
  };
  ModelNets nets;
  if (!fs::exists(fs::path(version_dir) / predict_name, ec))
    HN_THROW(kNotFound, "model '", config.name(), "': no '", predict_name, "' (or predict_net.pb) in '", version_dir, "'");
  read_net(predict_name, &nets.predict_net);
  if (fs::exists(fs::path(version_dir) / init_name, ec)) read_net(init_name, &nets.init_net);
  if (nets.predict_net.name().empty()) nets.predict_net.set_name(config.name());
  return nets;
}

inference::ModelConfig ReadModelConfig(const std::string& repo_root, const std::string& model_dir,
                                       const std::string& name, const std::string& override_json,
                                       const ServerOptions& options) {
  inference::ModelConfig config;
  const std::string pbtxt = (fs::path(model_dir) / "config.pbtxt").string();
  std::error_code ec;
  bool from_file = false;
  if (!override_json.empty()) {
    FromJson(override_json, &config, "model '" + name + "': the load request's config");
    from_file = true;
  } else if (fs::exists(pbtxt, ec)) {
    const std::string text = ReadFileInside(repo_root, pbtxt);
    struct Collector : pb::io::ErrorCollector {
      std::string first;
      void AddError(int line, int col, const std::string& msg) override {
        if (first.empty()) first = MakeString("line ", line + 1, ", column ", col + 1, ": ", msg);
      }
    } errors;
    pb::TextFormat::Parser parser;
    parser.SetRecursionLimit(ProtoDepthCap());
    parser.RecordErrorsTo(&errors);
    if (!parser.ParseFromString(text, &config))
      HN_THROW(kInvalidArgument, "model '", name, "': config.pbtxt does not parse (", errors.first, ")");
    from_file = true;
  }
  // --model-name (one model directory served as a repository, as KServe mounts it) overrides the name.
  if (!config.name().empty() && config.name() != name && name != options.model_name)
    HN_THROW(kInvalidArgument, "model '", name, "': config.pbtxt names the model '", config.name(),
             "', which differs from its directory name");
  config.set_name(name);
  CheckHonoured(config, "");
  const std::string& platform = config.platform();
  if (!platform.empty() && platform != "caffe2_netdef" && platform != "onnxruntime_onnx")
    HN_THROW(kInvalidArgument, "model '", name, "': unsupported platform '", platform,
             "' (hetnet serves platforms \"caffe2_netdef\" and \"onnxruntime_onnx\")");
  if (!config.backend().empty() && config.backend() != "hetnet" && config.backend() != "onnxruntime")
    HN_THROW(kInvalidArgument, "model '", name, "': unsupported backend '", config.backend(),
             "' (hetnet serves backends \"hetnet\" (NetDef) and \"onnxruntime\" (ONNX))");
  if (IsOnnxModelConfig(config) && !OnnxModelsSupported())
    HN_THROW(kUnsupported, "model '", name, "': this hetnet was built without ONNX support");
  // Like Triton, a model without platform or backend whose version holds model.onnx is an ONNX model.
  if (platform.empty() && config.backend().empty()) {
    const auto present = ListVersions(model_dir);
    if (!present.empty() && VersionHoldsOnnxModel((fs::path(model_dir) / std::to_string(present.back())).string(), config))
      config.set_platform("onnxruntime_onnx");
  }
  if (config.max_batch_size() > options.max_batch_size)
    HN_THROW(kInvalidArgument, "model '", name, "': max_batch_size ", config.max_batch_size(),
             " exceeds the server's limit of ", options.max_batch_size, " (--max-batch-size)");
  if (!from_file || config.input_size() == 0 || config.output_size() == 0) {
    auto versions = ListVersions(model_dir);
    if (versions.empty()) HN_THROW(kNotFound, "model '", name, "' has no numeric version directory");
    CompleteFromNets(&config, ReadModelNets(repo_root, (fs::path(model_dir) / std::to_string(versions.back())).string(),
                                            config));
  }
  FillDefaults(&config);
  CheckTensors(config);
  return config;
}

void CheckNetsAgainstConfig(const ModelNets& nets, const inference::ModelConfig& config, const ServerOptions& options) {
  std::set<std::string> filled, inputs(nets.predict_net.external_input().begin(), nets.predict_net.external_input().end()),
      outputs(nets.predict_net.external_output().begin(), nets.predict_net.external_output().end());
  for (const auto& op : nets.init_net.op())
    for (const auto& o : op.output()) filled.insert(o);
  for (const auto& in : config.input())
    if (!inputs.count(in.name()) || filled.count(in.name()))
      HN_THROW(kInvalidArgument, "model '", config.name(), "': input '", in.name(),
               "' is not an external input of the predict net that the init net leaves unset");
  for (const auto& out : config.output())
    if (!outputs.count(out.name()))
      HN_THROW(kInvalidArgument, "model '", config.name(), "': output '", out.name(),
               "' is not an external output of the predict net");
  if (options.allow_unsafe_ops) return;
  for (const auto* net : {&nets.init_net, &nets.predict_net})
    for (const auto& op : net->op()) {
      const std::string& t = op.type();
      const bool prints_to_file = t == "Print" && std::any_of(op.arg().begin(), op.arg().end(), [](const auto& a) {
                                    return a.name() == "to_file" && a.i() != 0;
                                  });
      const bool unsafe = t == "Save" || t == "Load" || t == "Checkpoint" || t == "Snapshot" || prints_to_file ||
                          t.find("DB") != std::string::npos || t.rfind("Python", 0) == 0 || t == "ImageInput";
      if (unsafe)
        HN_THROW(kInvalidArgument, "model '", config.name(), "': net '", net->name(), "' contains operator ", t,
                 ", which touches files or runs code; served nets may not, unless --allow-unsafe-ops");
    }
}

}  // namespace hetnet::serving
