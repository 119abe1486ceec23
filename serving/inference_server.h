// The one serving core: models loaded from Triton-style repositories, a scheduler (bounded queue +
// dynamic batcher) per model version, statistics and metrics. HTTP, gRPC and the metrics endpoint
// are thin front ends over this class; none of them batches, validates tensors or runs nets.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "serving/infer_request.h"
#include "serving/proto/grpc_service.pb.h"
#include "serving/proto/model_config.pb.h"

namespace hetnet::serving {

enum class ModelControlMode { kNone, kExplicit, kPoll };

struct ServerOptions {
  std::vector<std::string> model_repositories;
  ModelControlMode control_mode = ModelControlMode::kNone;
  std::vector<std::string> startup_models;  // --load-model (explicit mode); "*" = every model
  int repository_poll_secs = 15;
  bool strict_readiness = true;
  bool soft_placement = false;  // GPU ops (and KIND_GPU groups) run on CPU when no GPU exists
  bool allow_unsafe_ops = false;  // Save, Load, DB readers, Python ops in served nets
  // When a repository directory is itself one model (KServe mounts one at /mnt/models), the model's
  // name; empty = the directory's own name.
  std::string model_name;
  // Limits on what one request may ask for (errors say which flag raises them).
  int64_t max_tensor_elements = int64_t{1} << 28;
  int64_t max_batch_size = 1 << 16;  // cap on any config's max_batch_size
  // Bytes that requests in flight may hold (serving/request_memory.h): -1 = DefaultRequestMemoryLimit(),
  // 0 = no limit.
  int64_t max_request_memory = -1;
  // Clients may register system shared memory regions (--allow-client-shm; off by default, as in
  // Triton: a registered key lets a client read and write that object through the server).
  bool allow_client_shm = false;
  int log_verbose = 0;
};

class ModelRegistry;  // serving/model_registry.h
class RequestMemoryBudget;  // serving/request_memory.h
class RequestMemoryLease;   // serving/request_memory.h
class SystemSharedMemory;   // serving/system_shared_memory.h

class InferenceServer {
 public:
  // Scans the repositories and loads models as the control mode says. A model that fails to load
  // is logged and left UNAVAILABLE (Triton's behaviour); a repository that cannot be read throws.
  explicit InferenceServer(ServerOptions options);
  ~InferenceServer();
  InferenceServer(const InferenceServer&) = delete;
  InferenceServer& operator=(const InferenceServer&) = delete;

  const ServerOptions& options() const { return options_; }

  // ---- health and metadata ----
  bool IsLive() const;
  bool IsReady() const;  // not shutting down, and (strict readiness) every loaded model ready
  inference::ServerMetadataResponse ServerMetadata() const;
  // Throws kNotFound ("Request for unknown model: 'm' is not found") for an unknown model/version.
  bool ModelReady(const std::string& name, const std::string& version) const;
  inference::ModelMetadataResponse ModelMetadata(const std::string& name, const std::string& version) const;
  inference::ModelConfig ModelConfig(const std::string& name, const std::string& version) const;
  // name empty = every model; version empty = every loaded version.
  inference::ModelStatisticsResponse ModelStatistics(const std::string& name, const std::string& version) const;
  // Placement of a served model (hetnet extension): ops per device, inserted copies, bytes.
  std::string PlacementJson(const std::string& name, const std::string& version) const;
  std::string PlacementSvg(const std::string& name, const std::string& version) const;

  // ---- repository control (explicit mode; otherwise kUnavailable, as Triton answers) ----
  inference::RepositoryIndexResponse RepositoryIndex(bool ready_only) const;
  // config_json: a JSON ModelConfig that replaces config.pbtxt; files: "file:<version>/<name>" -> bytes.
  void LoadModel(const std::string& name, const std::string& config_json = "",
                 const std::map<std::string, std::string>& files = {});
  void UnloadModel(const std::string& name);

  // ---- inference ----
  // Validates the request against the model's config and queues it; `done` is called exactly once.
  // Errors found before queuing (unknown model, bad shape, queue full, shutting down) are also
  // delivered through `done`, on the caller's thread. Inputs in shared memory are read here, charged
  // to `memory` (the request's lease; may be null); outputs asked in shared memory are written there
  // before `done` sees the response.
  void InferAsync(std::unique_ptr<InferRequest> request, InferCallback done, RequestMemoryLease* memory = nullptr);
  // Blocking convenience over InferAsync (tests, benchmarks, the in-process path).
  InferResult Infer(std::unique_ptr<InferRequest> request);

  // What requests in flight hold of memory; the front ends charge it before reading or keeping a body.
  RequestMemoryBudget& request_memory() const { return *request_memory_; }
  // The registered system shared memory regions (both front ends register into this one).
  SystemSharedMemory& shared_memory() const { return *shared_memory_; }

  // ---- observability ----
  std::string MetricsText() const;  // Prometheus text exposition format

  // ---- shutdown ----
  // Readiness turns false and new requests get kUnavailable "Server is shutting down"; requests
  // already accepted still complete.
  void StopAccepting();
  bool accepting() const;
  // Waits until no accepted request is in flight or the timeout passes; true when idle.
  bool WaitForIdle(std::chrono::milliseconds timeout);
  size_t InflightRequests() const;

 private:
  struct Inflight;
  ServerOptions options_;
  // Before registry_: destroyed after it, since unloading models answers what is still queued.
  std::unique_ptr<Inflight> inflight_;
  std::unique_ptr<RequestMemoryBudget> request_memory_;
  std::unique_ptr<SystemSharedMemory> shared_memory_;
  std::unique_ptr<ModelRegistry> registry_;
};

// Version string of a running server ("0.1.0").
const char* ServerVersion();

}  // namespace hetnet::serving
