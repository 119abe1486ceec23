// One loaded version of a model: its placed nets, one Predictor per device (weights shared by the
// instances on that device, each instance a child workspace), the dynamic batcher whose workers
// are the instances, and its statistics.
#pragma once

#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/predictor.h"
#include "serving/dynamic_batcher.h"
#include "serving/instance_placement.h"
#include "serving/model_config_loader.h"
#include "serving/model_stats.h"
#include "serving/proto/model_config.pb.h"

namespace hetnet::serving {

struct ServerOptions;

class ModelVersion {
 public:
  // Creates the predictors (running the init nets), then the warmup samples; throws on failure.
  ModelVersion(inference::ModelConfig config, int64_t version, const ModelNets& nets, const ServerOptions& options);
  ~ModelVersion();  // answers everything queued, then stops the instances

  const std::string& name() const { return config_.name(); }
  int64_t version() const { return version_; }
  const inference::ModelConfig& config() const { return config_; }
  const ModelStats& stats() const { return stats_; }
  // Validates and queues; every outcome reaches `done` (errors before queuing on this thread).
  void Enqueue(std::unique_ptr<InferRequest> request, InferCallback done);
  // Requests accepted and not yet answered.
  int64_t inflight() const { return inflight_.load(); }
  size_t queue_depth() const { return batcher_ ? batcher_->Depth() : 0; }
  // Placement of the first instance (ops per device, inserted copies, bytes of the last run).
  PlacementReport Placement() const;
  // Ops per device over the instances' placed nets ("cpu" -> 3, "cuda:0" -> 5), for metrics.
  std::vector<std::pair<std::string, int>> OpsPerDevice() const;

 private:
  void Execute(DynamicBatcher::Batch& batch, int worker);  // answers every request; never throws
  bool ShortEnoughToRunInline() const;
  void Warmup();
  void Answer(std::unique_ptr<QueuedRequest> q, InferResult result);

  struct DeviceInstances {
    InstancePlacement placement;
    std::unique_ptr<Predictor> predictor;
  };
  inference::ModelConfig config_;
  int64_t version_;
  int64_t max_tensor_elements_;
  std::vector<DeviceInstances> devices_;
  std::vector<int> worker_device_;  // worker index -> devices_ index
  int intra_op_threads_ = 0;        // config parameter "intra_op_thread_count"; 0 = server default
  ModelStats stats_;
  std::atomic<int64_t> inflight_{0};
  std::unique_ptr<DynamicBatcher> batcher_;
};

}  // namespace hetnet::serving
