#include "core/predictor.h"

#include <algorithm>
#include <set>

#include "core/copy_timing.h"
#include "core/inference_fusion.h"
#include "core/net.h"
#include "core/operator.h"
#include "core/reduced_precision.h"
#include "core/run_guard.h"
#include "core/workspace_memory.h"

namespace hetnet {

struct Predictor::Instance {
  std::unique_ptr<Workspace> ws;
  std::shared_ptr<MemoryAccount> account;  // ws's bytes (looked up once, not per run)
  NetBase* net = nullptr;
  // Device of each input when the net instance was created (placement depends on it).
  std::map<std::string, Device> input_devices;
  // Filled inputs that the current run replaced (restored after the run).
  std::vector<std::string> replaced;
  bool recreate_net = false;  // a replaced input's device differed: placement must be redone
};

Predictor::Predictor(const caffe2::NetDef& init_net, const caffe2::NetDef& predict_net, PredictorOptions options)
    : options_(options), predict_net_(predict_net), parent_(std::make_unique<Workspace>()) {
  if (predict_net_.name().empty()) predict_net_.set_name("predict");
  RequestInferenceRewrite(&predict_net_);  // BN folding, Relu fusion, Dropout removal (core/inference_fusion.h)
  try {
    if (init_net.op_size() > 0) parent_->RunNetOnce(init_net);
  } catch (Error& e) {
    e.AddContext("while running the init net '" + init_net.name() + "' of a Predictor");
    throw;
  }
  // Reduced precision (net argument hetnet_precision): weights only narrow operators read are
  // converted once, here, so that their float32 copies are freed (core/reduced_precision.h).
  try {
    narrowed_weights_ = NarrowConstantsInPlace(predict_net_, parent_.get());
  } catch (Error& e) {
    e.AddContext("while preparing the weights of predict net '" + predict_net_.name() + "'");
    throw;
  }
  std::set<std::string> seen;
  for (const auto& name : predict_net_.external_input()) {
    if (!seen.insert(name).second) continue;
    (parent_->HasBlob(name) ? filled_input_names_ : input_names_).push_back(name);
  }
  output_names_.assign(predict_net_.external_output().begin(), predict_net_.external_output().end());
  if (output_names_.empty()) {
    Throw(ErrorKind::kInvalidArgument,
          "predict net '" + predict_net_.name() + "' declares no external_output: nothing to return");
  }
  assumed_input_device_ =
      predict_net_.has_device_option() ? DeviceFromOption(predict_net_.device_option()) : Device::CPU();
  for (const auto& op : predict_net_.op())
    for (const auto& out : op.output())
      if (seen.count(out)) written_inputs_.insert(out);
  for (const auto& name : input_names_) net_writes_inputs_ |= written_inputs_.count(name) > 0;
  Release(NewInstance());
}

// Runs in flight register in the weights' workspace (their child's parent), whose destructor waits
// for them: destroying a Predictor while another thread is inside Run waits for that Run to return
// (a Run that starts after destruction began is the caller's error). The weights go first, so the
// pool and its mutex are still there while the waited-for runs give their instances back.
Predictor::~Predictor() { parent_.reset(); }

size_t Predictor::NumInstances() const {
  std::lock_guard<std::mutex> lock(mu_);
  return num_instances_;
}

std::unique_ptr<Predictor::Instance> Predictor::NewInstance() const {
  auto inst = std::make_unique<Instance>();
  inst->ws = std::make_unique<Workspace>(parent_.get());
  inst->account = WorkspaceMemoryAccount(inst->ws.get());
  for (const auto& name : input_names_) inst->input_devices[name] = assumed_input_device_;
  // Filled inputs get a blob of the instance's own that holds the init net's tensor (shared), so a
  // run can replace it without touching the weights; the net's ops bind to these blobs.
  for (const auto& name : filled_input_names_) RestoreFilled(inst.get(), name);
  inst->net = inst->ws->CreateNet(predict_net_, /*overwrite=*/false, inst->input_devices);
  {
    std::lock_guard<std::mutex> lock(mu_);
    ++num_instances_;
  }
  return inst;
}

std::unique_ptr<Predictor::Instance> Predictor::Acquire() const {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!pool_.empty()) {
      auto inst = std::move(pool_.back());
      pool_.pop_back();
      return inst;
    }
  }
  return NewInstance();  // outside the lock: creating a net may take a while
}

void Predictor::Release(std::unique_ptr<Instance> instance) const {
  std::lock_guard<std::mutex> lock(mu_);
  pool_.push_back(std::move(instance));
}

std::string Predictor::ExpectedInputsText() const {
  std::string s;
  for (const auto& n : input_names_) s += (s.empty() ? "" : ", ") + ("'" + n + "'");
  return s.empty() ? "none" : s;
}

bool Predictor::IsInput(const std::string& name) const {
  return std::find(input_names_.begin(), input_names_.end(), name) != input_names_.end();
}

bool Predictor::IsFilledInput(const std::string& name) const {
  return std::find(filled_input_names_.begin(), filled_input_names_.end(), name) != filled_input_names_.end();
}

void Predictor::RestoreFilled(Instance* inst, const std::string& name) const {
  const Tensor& weight = parent_->GetBlobOrThrow(name).GetTensor();
  Tensor* dst = inst->ws->CreateBlob(name)->GetMutable<Tensor>();
  if (written_inputs_.count(name)) {
    WorkspaceMemoryScope charge_to(inst->account.get());
    *dst = weight.To(weight.device());  // the net writes it: the weight must not change
  } else {
    *dst = weight;  // shares storage; the net only reads it
  }
  inst->input_devices[name] = weight.device();
}

bool Predictor::ResetAfterRun(Instance* inst) const noexcept {
  try {
    // Fed inputs must not stay alive in the pool (they may be large, and belong to the caller).
    for (const auto& name : input_names_)
      *inst->ws->CreateBlob(name)->GetMutable<Tensor>() = Tensor(inst->input_devices[name]);
    // Replaced weights come back for the next run; so do filled inputs that the net wrote.
    std::set<std::string> restore(inst->replaced.begin(), inst->replaced.end());
    for (const auto& name : written_inputs_)
      if (IsFilledInput(name)) restore.insert(name);
    for (const auto& name : restore) {
      const Device fed = inst->input_devices[name];
      RestoreFilled(inst, name);
      if (fed != inst->input_devices[name]) inst->recreate_net = true;
    }
    inst->replaced.clear();
    return true;
  } catch (...) {
    return false;
  }
}

void Predictor::Feed(Instance* inst, const TensorMap& inputs) const {
  for (const auto& [name, tensor] : inputs) {
    if (!IsInput(name) && !IsFilledInput(name)) {
      const bool is_weight = parent_->HasBlob(name);
      Throw(ErrorKind::kInvalidArgument,
            MakeString("'", name, "' is not an input of net '", predict_net_.name(), "'",
                       is_weight ? " (it is a weight set by the init net, and not an external input of the net)" : "",
                       "; expected inputs: ", ExpectedInputsText()));
    }
    if (!tensor.initialized())
      Throw(ErrorKind::kInvalidArgument, MakeString("input '", name, "' of net '", predict_net_.name(),
                                                    "' has no data (", tensor.DebugString(), ")"));
  }
  bool devices_changed = false;
  for (const auto& name : input_names_) {
    auto it = inputs.find(name);
    if (it == inputs.end())
      Throw(ErrorKind::kInvalidArgument, MakeString("input '", name, "' of net '", predict_net_.name(),
                                                    "' was not given; expected inputs: ", ExpectedInputsText()));
    Tensor* dst = inst->ws->CreateBlob(name)->GetMutable<Tensor>();
    if (net_writes_inputs_) {
      *dst = it->second.To(it->second.device());  // the caller's tensor must not change
    } else {
      *dst = it->second;  // shares storage
    }
    if (inst->input_devices[name] != it->second.device()) {
      inst->input_devices[name] = it->second.device();
      devices_changed = true;
    }
  }
  // Weights replaced for this run: the instance's own blob gets the caller's tensor (the weight stays).
  for (const auto& [name, tensor] : inputs) {
    if (!IsFilledInput(name)) continue;
    inst->replaced.push_back(name);
    Tensor* dst = inst->ws->CreateBlob(name)->GetMutable<Tensor>();
    *dst = written_inputs_.count(name) ? tensor.To(tensor.device()) : tensor;
    if (inst->input_devices[name] != tensor.device()) {
      inst->input_devices[name] = tensor.device();
      devices_changed = true;
    }
  }
  devices_changed |= inst->recreate_net;
  inst->recreate_net = false;
  // Placement (cross-device copies) was decided for other input devices: re-create this instance's
  // net for the devices fed. The fed inputs are empty meanwhile: net creation must not take this
  // run's values for weights (the inference rewrite folds and converts tensors no op writes,
  // core/inference_fusion.h), and placement reads an empty input's device from input_devices.
  if (devices_changed) {
    std::vector<std::pair<Tensor*, Tensor>> held;
    for (const auto& name : input_names_) {
      Tensor* t = inst->ws->GetMutableBlob(name)->GetMutable<Tensor>();
      held.emplace_back(t, std::move(*t));
      *t = Tensor(held.back().second.device());
    }
    inst->net = inst->ws->CreateNet(predict_net_, /*overwrite=*/true, inst->input_devices);
    for (auto& [t, value] : held) *t = std::move(value);
  }
}

Predictor::TensorMap Predictor::Fetch(Instance* inst) const {
  TensorMap out;
  for (const auto& name : output_names_) {
    const Blob* blob = inst->ws->GetBlob(name);
    if (!blob || !blob->IsTensor() || !blob->GetTensor().initialized())
      Throw(ErrorKind::kNotFound,
            MakeString("output '", name, "' of net '", predict_net_.name(), "' was not produced (the blob ",
                       !blob ? "does not exist" : !blob->IsTensor() ? "holds " + blob->TypeName() : "has no data",
                       ")"));
    const Tensor& t = blob->GetTensor();
    Blob* own = inst->ws->GetMutableBlob(name);
    const bool is_input = IsInput(name) || IsFilledInput(name);
    Tensor result;
    if (options_.outputs_to_cpu && !t.device().is_cpu()) {
      // Copied to the host; the device tensor stays for the next run, at the same address (a CUDA
      // graph replays its writes there) and without an allocation.
      result = t.To(Device::CPU());
    } else if (own && !is_input) {
      // Hand the storage to the caller; the next run of this instance allocates afresh.
      result = t;
      *own->GetMutable<Tensor>() = Tensor(t.device());
    } else {
      result = t.To(t.device());  // a weight or a fed input: never hand out shared storage
    }
    out.emplace(name, std::move(result));
  }
  return out;
}

Predictor::TensorMap Predictor::Run(const TensorMap& inputs) const { return Run(inputs, nullptr); }

PlacementReport Predictor::Placement() const {
  std::unique_ptr<Instance> inst = Acquire();
  PlacementReport report = inst->net->MeasuredPlacement();
  Release(std::move(inst));
  return report;
}

std::string Predictor::ExecutorNotes() const {
  std::unique_ptr<Instance> inst = Acquire();
  std::string notes = inst->net->ExecutorNotes();
  Release(std::move(inst));
  return notes;
}

Predictor::TensorMap Predictor::Run(const TensorMap& inputs, RunInfo* info) const {
  std::unique_ptr<Instance> inst = Acquire();
  // Registered as a run in the child and the weights' workspace until the instance is back in the
  // pool (declared before the returner, so released after it).
  RunGuard in_flight(inst->ws.get(), nullptr);
  // Give the instance back however this run ends: its blobs are overwritten by the next run. First
  // (the resetter is destroyed before the returner) the fed inputs are dropped and replaced weights
  // restored; an instance that could not be reset is not reused (it is destroyed with `inst`, after
  // the run guard is released).
  struct Returner {
    const Predictor* self;
    std::unique_ptr<Instance>* inst;
    bool reusable = true;
    ~Returner() {
      if (*inst && reusable) self->Release(std::move(*inst));
    }
  } returner{this, &inst};
  struct Resetter {
    Returner* returner;
    ~Resetter() {
      if (*returner->inst) returner->reusable = returner->self->ResetAfterRun(returner->inst->get());
    }
  } resetter{&returner};
  {
    WorkspaceMemoryScope charge_to(inst->account.get());  // copies of inputs count for the workspace
    Feed(inst.get(), inputs);
  }
  try {
    inst->net->Run();
  } catch (Error& e) {
    if (!inst->replaced.empty()) {
      std::string names;
      for (const auto& n : inst->replaced) names += (names.empty() ? "'" : ", '") + n + "'";
      e.AddContext("this run was given " + names + " in place of the blob(s) the init net filled");
    }
    throw;
  }
  TensorMap out = Fetch(inst.get());
  // Read after Fetch, which waited for the outputs: a GPU copy's timing events are usually done by then.
  if (info) {  // only the copies: the whole report (with its NetDef) is too much to copy per run
    const auto& ops = inst->net->operators();
    info->copies = inst->net->placement().copies;
    info->copy_seconds.assign(info->copies.size(), -1.0);
    for (size_t k = 0; k < info->copies.size(); ++k) {
      CopyInfo& c = info->copies[k];
      if (c.op_index >= static_cast<int>(ops.size())) continue;
      const OperatorBase* op = ops[c.op_index].get();
      if (op->bytes_copied_last_run() >= 0) c.bytes = op->bytes_copied_last_run();
      if (const auto* timed = dynamic_cast<const TimedCopy*>(op)) info->copy_seconds[k] = timed->copy_seconds_last_run();
    }
  }
  return out;
}

std::vector<Tensor> Predictor::Run(const std::vector<Tensor>& inputs) const {
  const auto& names = positional_input_names();
  if (!input_names_.empty() && inputs.size() != input_names_.size())
    Throw(ErrorKind::kInvalidArgument, MakeString("net '", predict_net_.name(), "' takes ", input_names_.size(),
                                                  " input(s) (", ExpectedInputsText(), "), ", inputs.size(),
                                                  " given"));
  if (input_names_.empty() && inputs.size() > names.size()) {
    std::string all;
    for (const auto& n : names) all += (all.empty() ? "'" : ", '") + n + "'";
    Throw(ErrorKind::kInvalidArgument,
          MakeString("net '", predict_net_.name(), "' takes at most ", names.size(),
                     " input(s) by position (its external inputs, all filled by the init net: ",
                     all.empty() ? "none" : all, "), ", inputs.size(), " given"));
  }
  TensorMap named;
  for (size_t i = 0; i < inputs.size(); ++i) named.emplace(names[i], inputs[i]);
  TensorMap out = Run(named);
  std::vector<Tensor> result;
  for (const auto& name : output_names_) result.push_back(std::move(out.at(name)));
  return result;
}

}  // namespace hetnet
