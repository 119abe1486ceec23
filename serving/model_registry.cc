#include "serving/model_registry.h"

#include <stdlib.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "core/error.h"

namespace hetnet::serving {
namespace fs = std::filesystem;

ModelRegistry::ModelRegistry(const ServerOptions& options) : options_(options) {
  for (const auto& r : options_.model_repositories) {
    std::error_code ec;
    if (!fs::is_directory(r, ec))
      HN_THROW(kNotFound, "model repository '", r, "' is not a readable directory");
  }
}

ModelRegistry::~ModelRegistry() {
  {
    std::lock_guard<std::mutex> lock(poll_mu_);
    stopping_ = true;
  }
  poll_cv_.notify_all();
  if (poller_.joinable()) poller_.join();
}

std::vector<std::pair<std::string, std::string>> ModelRegistry::ScanRepositories() const {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& repo : options_.model_repositories) {
    // A directory that is itself one model (KServe mounts one at /mnt/models).
    std::error_code ec;
    if (fs::exists(fs::path(repo) / "config.pbtxt", ec) || !ListVersions(repo).empty()) {
      std::string name = options_.model_name.empty() ? fs::path(repo).lexically_normal().filename().string()
                                                     : options_.model_name;
      if (name.empty()) name = fs::path(repo).lexically_normal().parent_path().filename().string();
      out.emplace_back(name, repo);
      continue;
    }
    for (const auto& e : fs::directory_iterator(repo, ec)) {
      if (!e.is_directory(ec)) continue;
      const std::string name = e.path().filename().string();
      try {
        CheckModelName(name);
      } catch (const Error&) {
        continue;
      }
      out.emplace_back(name, e.path().string());
    }
  }
  return out;
}

void ModelRegistry::LoadAtStartup() {
  std::vector<std::string> wanted;
  const bool all = options_.control_mode != ModelControlMode::kExplicit ||
                   std::count(options_.startup_models.begin(), options_.startup_models.end(), "*");
  for (const auto& [name, dir] : ScanRepositories()) {
    if (!all && !std::count(options_.startup_models.begin(), options_.startup_models.end(), name)) continue;
    try {
      std::lock_guard<std::mutex> lock(load_mu_);
      LoadModel(name, fs::path(dir).parent_path().string(), dir, "");
    } catch (const Error& e) {
      std::cerr << "hetnet serve: failed to load '" << name << "': " << e.what() << "\n";
    }
  }
  if (!all)
    for (const auto& name : options_.startup_models)
      if (name != "*" && !State(name))
        HN_THROW(kNotFound, "--load-model '", name, "': no such model in the repository");
  if (options_.control_mode == ModelControlMode::kPoll) poller_ = std::thread([this] { PollLoop(); });
}

void ModelRegistry::LoadModel(const std::string& name, const std::string& repo_root, const std::string& dir,
                              const std::string& config_json) {
  CheckModelName(name);
  auto loading = std::make_shared<ModelState>();
  loading->name = name;
  loading->repo_root = repo_root;
  loading->dir = dir;
  std::shared_ptr<const ModelState> old = State(name);
  {
    // Requests keep using the old versions while the new ones load.
    auto shown = old ? std::make_shared<ModelState>(*old) : std::make_shared<ModelState>(*loading);
    if (!old) shown->state = "LOADING";
    std::lock_guard<std::mutex> lock(mu_);
    models_[name] = shown;
  }
  try {
    loading->config = ReadModelConfig(repo_root, dir, name, config_json, options_);
    auto present = ListVersions(dir);
    if (present.empty()) HN_THROW(kNotFound, "model '", name, "' has no numeric version directory");
    for (int64_t v : SelectVersions(loading->config, present)) {
      // A version already loaded from the same config is kept as is.
      if (old && old->versions.count(v) && old->config.SerializeAsString() == loading->config.SerializeAsString()) {
        loading->versions[v] = old->versions.at(v);
        continue;
      }
      ModelNets nets = ReadModelNets(repo_root, (fs::path(dir) / std::to_string(v)).string(), loading->config);
      CheckNetsAgainstConfig(nets, loading->config, options_);
      loading->versions[v] = std::make_shared<ModelVersion>(loading->config, v, nets, options_);
    }
    loading->state = "READY";
    if (options_.log_verbose > 0)
      for (const auto& [v, mv] : loading->versions) {
        std::string devices;
        for (const auto& [d, n] : mv->OpsPerDevice()) devices += MakeString(devices.empty() ? "" : ", ", n, " ops on ", d);
        std::cerr << "hetnet serve: loaded '" << name << "' version " << v << " (" << devices << ")" << std::endl;
      }
  } catch (const Error& e) {
    loading->state = "UNAVAILABLE";
    loading->reason = e.what();
    if (old && !old->versions.empty()) {  // a failed reload leaves the old versions serving
      auto keep = std::make_shared<ModelState>(*old);
      keep->reason = e.what();
      std::lock_guard<std::mutex> lock(mu_);
      models_[name] = keep;
    } else {
      std::lock_guard<std::mutex> lock(mu_);
      models_[name] = loading;
    }
    throw;
  }
  std::vector<std::shared_ptr<ModelVersion>> retired;
  if (old)
    for (const auto& [v, mv] : old->versions)
      if (!loading->versions.count(v) || loading->versions.at(v) != mv) retired.push_back(mv);
  {
    std::lock_guard<std::mutex> lock(mu_);
    models_[name] = loading;
  }
  Retire(std::move(retired));
}

void ModelRegistry::Retire(std::vector<std::shared_ptr<ModelVersion>> old) {
  // New lookups no longer find these; wait until their accepted requests are answered. The
  // destructor then answers anything a late holder queued and stops the instances.
  for (auto& mv : old) {
    while (mv->inflight() > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    mv.reset();
  }
}

std::shared_ptr<ModelVersion> ModelRegistry::Find(const std::string& name, const std::string& version) const {
  auto state = State(name);
  if (!state) HN_THROW(kNotFound, "Request for unknown model: '", name, "' is not found");
  if (version.empty()) {
    if (state->versions.empty())
      HN_THROW(kUnavailable, "Request for unknown model: '", name, "' has no available versions",
               state->reason.empty() ? "" : " (" + state->reason + ")");
    return state->versions.rbegin()->second;
  }
  int64_t v = -1;
  if (!version.empty() && version.size() < 18 && std::all_of(version.begin(), version.end(), ::isdigit))
    v = std::stoll(version);
  auto it = state->versions.find(v);
  if (it == state->versions.end())
    HN_THROW(kNotFound, "Request for unknown model: '", name, "' version ", version, " is not found");
  return it->second;
}

std::shared_ptr<const ModelState> ModelRegistry::State(const std::string& name) const {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = models_.find(name);
  return it == models_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<const ModelState>> ModelRegistry::All() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::vector<std::shared_ptr<const ModelState>> out;
  for (const auto& [n, s] : models_) out.push_back(s);
  return out;
}

namespace {
// A directory tree removed when this goes out of scope (none while path is empty).
struct RemovedTree {
  std::string path;
  ~RemovedTree() {
    std::error_code ec;
    if (!path.empty()) fs::remove_all(path, ec);
  }
};
}  // namespace

void ModelRegistry::Load(const std::string& name, const std::string& config_json,
                         const std::map<std::string, std::string>& files) {
  CheckModelName(name);
  std::string dir, root;
  // The load reads every uploaded file (nets, ONNX external data, warmup data), so their private
  // directory goes when it ends: each load request with files would otherwise leave one behind.
  RemovedTree upload;
  if (!files.empty()) {
    // Model files sent with the request (Triton's "file:<version>/<name>" override) go to a private
    // directory that becomes this model's repository; a config must come with them.
    if (config_json.empty())
      HN_THROW(kInvalidArgument, "failed to load '", name, "': model files in a load request need a \"config\"");
    root = WriteUploadedModel(name, files);
    dir = (fs::path(root) / name).string();
    upload.path = root;
  } else {
    for (const auto& [n, d] : ScanRepositories())
      if (n == name) dir = d;
    if (dir.empty()) HN_THROW(kNotFound, "failed to load '", name, "', no version is available (not in the repository)");
    root = fs::path(dir).parent_path().string();
  }
  std::lock_guard<std::mutex> lock(load_mu_);
  try {
    LoadModel(name, root, dir, config_json);
  } catch (Error& e) {
    throw Error(e.kind() == ErrorKind::kNotFound ? ErrorKind::kInvalidArgument : e.kind(),
                "failed to load '" + name + "': " + e.message());
  }
}

std::string WriteUploadedModel(const std::string& name, const std::map<std::string, std::string>& files) {
  std::string tmpl = (fs::temp_directory_path() / "hetnet-upload-XXXXXX").string();
  if (!mkdtemp(tmpl.data())) HN_THROW(kRuntime, "failed to load '", name, "': cannot create a directory for its files");
  RemovedTree partial{tmpl};  // a failed write leaves nothing behind
  for (const auto& [key, bytes] : files) {
    const std::string rel = key.substr(5);  // after "file:"
    fs::path p = fs::path(rel).lexically_normal();
    const std::string version = p.empty() ? "" : p.begin()->string();
    const bool ok = key.rfind("file:", 0) == 0 && p.is_relative() && !version.empty() &&
                    std::all_of(version.begin(), version.end(), ::isdigit) && std::distance(p.begin(), p.end()) >= 2;
    if (!ok)
      HN_THROW(kInvalidArgument, "failed to load '", name, "': file parameter '", key,
               "' must be \"file:<version>/<path>\" inside the model");
    fs::path dst = fs::path(tmpl) / name / p;
    fs::create_directories(dst.parent_path());
    std::ofstream f(dst, std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) HN_THROW(kRuntime, "failed to load '", name, "': cannot write '", dst.string(), "'");
  }
  partial.path.clear();
  return tmpl;
}

void ModelRegistry::Unload(const std::string& name) {
  std::lock_guard<std::mutex> lock(load_mu_);
  auto old = State(name);
  if (!old) HN_THROW(kNotFound, "failed to unload '", name, "': Request for unknown model: '", name, "' is not found");
  auto unloaded = std::make_shared<ModelState>(*old);
  unloaded->versions.clear();
  unloaded->state = "UNAVAILABLE";
  unloaded->reason = "unloaded";
  {
    std::lock_guard<std::mutex> l(mu_);
    models_[name] = unloaded;
  }
  std::vector<std::shared_ptr<ModelVersion>> retired;
  for (const auto& [v, mv] : old->versions) retired.push_back(mv);
  old.reset();
  Retire(std::move(retired));
}

bool ModelRegistry::AllReady() const {
  for (const auto& s : All())
    if (s->state != "READY" && !(s->reason == "unloaded")) return false;
  return true;
}

void ModelRegistry::PollLoop() {
  // Poll mode: new models and new version folders are loaded, removed models unloaded.
  std::map<std::string, std::vector<int64_t>> seen;
  for (const auto& s : All()) seen[s->name] = ListVersions(s->dir);
  for (;;) {
    {
      std::unique_lock<std::mutex> lock(poll_mu_);
      if (poll_cv_.wait_for(lock, std::chrono::seconds(std::max(1, options_.repository_poll_secs)),
                            [this] { return stopping_; }))
        return;
    }
    std::map<std::string, std::vector<int64_t>> now;
    for (const auto& [name, dir] : ScanRepositories()) {
      now[name] = ListVersions(dir);
      if (seen.count(name) && seen[name] == now[name]) continue;
      try {
        std::lock_guard<std::mutex> lock(load_mu_);
        LoadModel(name, fs::path(dir).parent_path().string(), dir, "");
      } catch (const Error& e) {
        std::cerr << "hetnet serve: poll: failed to load '" << name << "': " << e.what() << "\n";
      }
    }
    for (const auto& [name, versions] : seen)
      if (!now.count(name) && State(name) && !State(name)->versions.empty()) {
        try {
          Unload(name);
        } catch (const Error&) {
        }
      }
    seen = std::move(now);
  }
}

}  // namespace hetnet::serving
