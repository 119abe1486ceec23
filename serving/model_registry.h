// The models of the repositories: which exist, which versions are loaded and ready, and loading,
// reloading and unloading them while requests run (a request holds its version until answered; a
// reload swaps in the new versions once they are ready, then retires the old ones when idle).
#pragma once

#include <condition_variable>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "serving/inference_server.h"
#include "serving/model_version.h"

namespace hetnet::serving {

struct ModelState {
  std::string name, repo_root, dir;
  inference::ModelConfig config;
  std::map<int64_t, std::shared_ptr<ModelVersion>> versions;  // loaded and ready
  std::string state = "UNAVAILABLE";  // READY, UNAVAILABLE, LOADING, UNLOADING
  std::string reason;
};

// Writes "file:<version>/<path>" -> bytes under a new private directory; returns it (the repository root).
std::string WriteUploadedModel(const std::string& name, const std::map<std::string, std::string>& files);

class ModelRegistry {
 public:
  explicit ModelRegistry(const ServerOptions& options);
  ~ModelRegistry();

  // Loads what the control mode says at start-up.
  void LoadAtStartup();
  // The version a request names ("" = highest loaded). kNotFound with Triton's texts.
  std::shared_ptr<ModelVersion> Find(const std::string& name, const std::string& version) const;
  std::shared_ptr<const ModelState> State(const std::string& name) const;  // nullptr when unknown
  std::vector<std::shared_ptr<const ModelState>> All() const;
  // Models present in the repositories (directory names), loaded or not.
  std::vector<std::pair<std::string, std::string>> ScanRepositories() const;  // (name, model dir)

  void Load(const std::string& name, const std::string& config_json, const std::map<std::string, std::string>& files);
  void Unload(const std::string& name);
  bool AllReady() const;

 private:
  void LoadModel(const std::string& name, const std::string& repo_root, const std::string& dir,
                 const std::string& config_json);
  void Retire(std::vector<std::shared_ptr<ModelVersion>> old);
  void PollLoop();

  const ServerOptions& options_;
  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<const ModelState>> models_;
  std::mutex load_mu_;  // one load/unload at a time
  std::mutex poll_mu_;
  std::condition_variable poll_cv_;
  bool stopping_ = false;
  std::thread poller_;
};

}  // namespace hetnet::serving
