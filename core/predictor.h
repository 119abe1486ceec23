// Serving a model: weights from an init net live in one parent Workspace; each Run borrows a child
// Workspace (with its own instance of the predict net) from a pool, so many threads can run at once
// while sharing one copy of the weights.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "core/placement.h"
#include "core/tensor.h"
#include "core/workspace.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

class NetBase;

struct PredictorOptions {
  // Outputs are copied to host memory (true, Caffe2's behaviour) or returned where they were made.
  bool outputs_to_cpu = true;
};

class Predictor {
 public:
  using TensorMap = std::map<std::string, Tensor>;

  // Runs init_net once in the parent workspace and creates one predict-net instance up front, so a
  // net that cannot be created (unknown operator, unavailable device) fails here, not on first Run.
  Predictor(const caffe2::NetDef& init_net, const caffe2::NetDef& predict_net, PredictorOptions options = {});
  ~Predictor();
  Predictor(const Predictor&) = delete;
  Predictor& operator=(const Predictor&) = delete;

  // Thread-safe. Inputs are fed where the caller's tensors live (shared, not copied, unless the net
  // overwrites an input); every name in input_names() must be given. A name in filled_input_names()
  // (an external input that the init net filled, e.g. a model-zoo init net's `data` placeholder) may
  // be given too: it replaces that blob for this run only, in the run's own workspace; the weights
  // are never modified and the next run sees the init net's blob again. Returns external outputs.
  TensorMap Run(const TensorMap& inputs) const;
  // Inputs by position in positional_input_names(); outputs by position in output_names().
  // When input_names() is not empty, exactly that many inputs; when the init net filled every
  // external input (a model-zoo pair), up to that many: the first k external inputs are replaced,
  // as Caffe2's Predictor fed `external_input(i)` for i < inputs.size().
  std::vector<Tensor> Run(const std::vector<Tensor>& inputs) const;
  // What one run moved between devices: the inserted copies with the bytes each copied this run
  // (what a server counts per model and device pair).
  struct RunInfo {
    std::vector<CopyInfo> copies;     // the inserted copies with the bytes this run moved
    std::vector<double> copy_seconds;  // per copy: how long it took (core/copy_timing.h), -1 unknown
  };
  TensorMap Run(const TensorMap& inputs, RunInfo* info) const;
  // Where the predict net's ops run and which copies were inserted, with bytes from the last run
  // of an instance (or from shape inference before any run).
  PlacementReport Placement() const;
  // What the predict net's executor reports beyond running its ops (NetBase::ExecutorNotes: a CUDA
  // graph executor's captures), for an instance that has run when there is one.
  std::string ExecutorNotes() const;
  // The weights converted in place to the predict net's reduced precision (net argument
  // hetnet_precision, core/reduced_precision.h); empty in float32.
  const std::vector<std::string>& narrowed_weights() const { return narrowed_weights_; }

  // Predict-net external inputs that the init net did not produce (what callers feed), in order.
  const std::vector<std::string>& input_names() const { return input_names_; }
  // Predict-net external inputs that the init net produced (a run may replace them), in order.
  const std::vector<std::string>& filled_input_names() const { return filled_input_names_; }
  // What Run(vector) feeds, in order: input_names() when it is not empty, else every external input
  // (Caffe2's order, in which a model-zoo net lists `data` first).
  const std::vector<std::string>& positional_input_names() const {
    return input_names_.empty() ? filled_input_names_ : input_names_;
  }
  const std::vector<std::string>& output_names() const { return output_names_; }
  const caffe2::NetDef& predict_net() const { return predict_net_; }
  // The weights, read by every run.
  const Workspace& weights() const { return *parent_; }
  // Child workspaces created so far (a measure of peak concurrency).
  size_t NumInstances() const;

 private:
  struct Instance;
  std::unique_ptr<Instance> Acquire() const;
  void Release(std::unique_ptr<Instance> instance) const;
  std::unique_ptr<Instance> NewInstance() const;
  void Feed(Instance* inst, const TensorMap& inputs) const;
  // Puts the init net's blob `name` (a filled input) back into an instance's workspace: shared, or a
  // copy when the predict net writes that blob.
  void RestoreFilled(Instance* inst, const std::string& name) const;
  // After a run, however it ended: drops the fed inputs and restores the replaced weights; false
  // when that failed (the instance is then not reused).
  bool ResetAfterRun(Instance* inst) const noexcept;
  bool IsInput(const std::string& name) const;
  bool IsFilledInput(const std::string& name) const;
  TensorMap Fetch(Instance* inst) const;
  std::string ExpectedInputsText() const;

  PredictorOptions options_;
  std::vector<std::string> narrowed_weights_;
  caffe2::NetDef predict_net_;
  std::unique_ptr<Workspace> parent_;
  std::vector<std::string> input_names_, output_names_, filled_input_names_;
  std::set<std::string> written_inputs_;  // external inputs (fed or filled) that the predict net writes
  Device assumed_input_device_;  // where net creation assumes unfed inputs live
  bool net_writes_inputs_ = false;
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Instance>> pool_;
  mutable size_t num_instances_ = 0;
};

}  // namespace hetnet
