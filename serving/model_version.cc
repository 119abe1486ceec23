#include "serving/model_version.h"

#include <fstream>
#include <map>
#include <random>
#include <sstream>

#include "core/device.h"
#include "core/error.h"
#include "core/intra_op_threads.h"
#include "core/reduced_precision.h"
#include "serving/inference_server.h"
#include "serving/request_tensors.h"
#include "serving/tensor_codec.h"

namespace hetnet::serving {
namespace {

uint64_t NsSince(Clock::time_point t) {
  return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - t).count());
}

BatcherOptions BatcherOptionsOf(const inference::ModelConfig& config) {
  BatcherOptions o;
  if (!config.has_dynamic_batching()) return o;  // each request executes alone
  const auto& db = config.dynamic_batching();
  o.max_batch_size = config.max_batch_size();
  o.preferred_batch_sizes.assign(db.preferred_batch_size().begin(), db.preferred_batch_size().end());
  o.max_queue_delay = std::chrono::microseconds(db.max_queue_delay_microseconds());
  o.max_queue_size = static_cast<size_t>(db.default_queue_policy().max_queue_size());
  o.priority_levels = std::max<size_t>(1, db.priority_levels());
  o.reject_on_timeout = db.default_queue_policy().timeout_action() == inference::ModelQueuePolicy::REJECT;
  return o;
}

// Instances of every loaded model version: they may all run at once, so by default each one's
// OpenMP team gets an equal share of the cores (core/intra_op_threads.h says why).
std::atomic<int> g_loaded_instances{0};

// Triton's ONNX Runtime backend key: parameters { key: "intra_op_thread_count" value: { string_value: "2" } }.
int IntraOpThreadsOf(const inference::ModelConfig& config) {
  auto it = config.parameters().find("intra_op_thread_count");
  if (it == config.parameters().end()) return 0;
  const std::string& s = it->second.string_value();
  size_t used = 0;
  long n = 0;
  try {
    n = std::stol(s, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  HN_CHECK_KIND(kInvalidArgument, !s.empty() && used == s.size() && n >= 0 && n <= 4096, "model '", config.name(),
                "': parameter intra_op_thread_count must be an integer in [0, 4096] (0 = the server's default), got '",
                s, "'");
  return static_cast<int>(n);
}

// Reduced precision (core/reduced_precision.h): parameters { key: "precision" value: { string_value:
// "bf16" } } (float32, bfloat16 / bf16, float16 / fp16); inputs and outputs keep the config's dtypes.
DataType PrecisionOf(const inference::ModelConfig& config) {
  auto it = config.parameters().find("precision");
  if (it == config.parameters().end()) return DataType::Float;
  try {
    return ParsePrecision(it->second.string_value());
  } catch (Error& e) {
    throw e.AddContext("model '" + config.name() + "': parameter precision");
  }
}

}  // namespace

ModelVersion::ModelVersion(inference::ModelConfig config, int64_t version, const ModelNets& nets,
                           const ServerOptions& options)
    : config_(std::move(config)), version_(version), max_tensor_elements_(options.max_tensor_elements) {
  intra_op_threads_ = IntraOpThreadsOf(config_);
  const DataType precision = PrecisionOf(config_);
  for (const auto& placement : ExpandInstanceGroups(config_, NumCudaDevices(), options)) {
    caffe2::NetDef predict = PlaceForInstance(nets.predict_net, placement);
    if (precision != DataType::Float) SetNetPrecision(&predict, precision);
    caffe2::NetDef init = PlaceForInstance(nets.init_net, placement);
    init = PlaceInitForInstance(init, predict);
    if (options.soft_placement) {
      for (auto* net : {&predict, &init}) {
        auto* a = net->add_arg();
        a->set_name("soft_placement");
        a->set_i(1);
      }
    }
    try {
      devices_.push_back({placement, std::make_unique<Predictor>(init, predict)});
    } catch (Error& e) {
      e.AddContext(MakeString("while loading model '", config_.name(), "' version ", version_, " instance group '",
                              placement.group_name, "' on ", placement.device.str()));
      throw;
    }
    for (int c = 0; c < placement.count; ++c) worker_device_.push_back(static_cast<int>(devices_.size()) - 1);
  }
  for (const auto& in : config_.input()) {
    const auto& names = devices_.front().predictor->input_names();
    if (std::find(names.begin(), names.end(), in.name()) == names.end())
      HN_THROW(kInvalidArgument, "model '", config_.name(), "': input '", in.name(), "' is not an input of the net");
  }
  Warmup();
  batcher_ = std::make_unique<DynamicBatcher>(
      BatcherOptionsOf(config_), static_cast<int>(worker_device_.size()),
      [this](DynamicBatcher::Batch& b, int w) { Execute(b, w); },
      [this](std::unique_ptr<QueuedRequest> q, Error e) {
        stats_.pending.fetch_sub(1);
        stats_.CountFailure(FailureReason::kRejected, NsSince(q->request->received));
        Answer(std::move(q), InferResult{nullptr, std::move(e)});
      });
  g_loaded_instances.fetch_add(static_cast<int>(worker_device_.size()));
}

ModelVersion::~ModelVersion() {
  batcher_.reset();
  g_loaded_instances.fetch_sub(static_cast<int>(worker_device_.size()));
}

void ModelVersion::Answer(std::unique_ptr<QueuedRequest> q, InferResult result) {
  InferCallback done = std::move(q->done);
  q.reset();
  done(std::move(result));
  inflight_.fetch_sub(1);
}

void ModelVersion::Enqueue(std::unique_ptr<InferRequest> request, InferCallback done) {
  auto q = std::make_unique<QueuedRequest>();
  q->request = std::move(request);
  q->done = std::move(done);
  try {
    ValidateRequest(config_, max_tensor_elements_, q.get());
    if (config_.has_dynamic_batching()) {
      const auto& db = config_.dynamic_batching();
      const uint64_t levels = db.priority_levels();
      uint64_t p = q->request->priority;
      if (p > levels && !(levels == 0 && p <= 1))
        HN_THROW(kInvalidArgument, "priority ", p, " is not in [0, ", levels, "] for model '", config_.name(), "'");
      q->level = p == 0 ? (levels ? db.default_priority_level() - 1 : 0) : p - 1;
      uint64_t timeout = db.default_queue_policy().default_timeout_microseconds();
      const uint64_t asked = q->request->timeout_us;
      if (asked > 0 && (timeout == 0 || asked < timeout || db.default_queue_policy().allow_timeout_override()))
        timeout = asked;
      if (timeout > 0) q->deadline = q->enqueued + std::chrono::microseconds(timeout);
    }
    inflight_.fetch_add(1);
    stats_.pending.fetch_add(1);
    // A short model runs on this thread when one of its instances is idle: its run costs less than
    // handing the request to an instance's thread and the answer back (two thread wake-ups).
    if (ShortEnoughToRunInline() && batcher_->TryExecuteNow(q)) return;
    try {
      batcher_->Enqueue(q);
    } catch (...) {
      stats_.pending.fetch_sub(1);
      inflight_.fetch_sub(1);
      throw;
    }
  } catch (const Error& e) {
    stats_.CountFailure(e.kind() == ErrorKind::kUnavailable ? FailureReason::kRejected : FailureReason::kOther,
                        NsSince(q->request->received));
    q->done(InferResult{nullptr, e});
  }
}

bool ModelVersion::ShortEnoughToRunInline() const {
  // Mean run under 1 ms, once measured: a longer run would hold the front end's thread (an HTTP
  // I/O thread or a gRPC handler) away from its other connections.
  constexpr uint64_t kInlineRunLimitNs = 1000 * 1000;
  const uint64_t runs = stats_.compute_infer.count.load(std::memory_order_relaxed);
  return runs > 0 && stats_.compute_infer.ns.load(std::memory_order_relaxed) < kInlineRunLimitNs * runs;
}

void ModelVersion::Execute(DynamicBatcher::Batch& batch, int worker) {
  const auto start = Clock::now();
  // On the instance's thread or a front end's (inline): either way one of the instances running.
  ScopedIntraOpThreads team_size(intra_op_threads_ > 0 ? intra_op_threads_
                                                        : IntraOpBudget(g_loaded_instances.load()));
  stats_.pending.fetch_sub(static_cast<int64_t>(batch.size()));
  for (const auto& q : batch) stats_.queue.Add(static_cast<uint64_t>((start - q->enqueued).count()));
  const DeviceInstances& dev = devices_[worker_device_[worker]];
  int64_t rows = 0;
  for (const auto& q : batch) rows += q->batch_size;
  try {
    size_t copied = 0;
    std::vector<Tensor> inputs = BuildInputs(config_, batch, !dev.placement.device.is_cpu(), &copied);
    stats_.input_bytes_copied.fetch_add(copied);
    Predictor::TensorMap feed;
    for (int i = 0; i < config_.input_size(); ++i)
      if (inputs[i].initialized()) feed.emplace(config_.input(i).name(), std::move(inputs[i]));
    const auto t_infer = Clock::now();
    Predictor::RunInfo info;
    Predictor::TensorMap result = dev.predictor->Run(feed, &info);
    const auto t_output = Clock::now();
    stats_.CountCopies(info.copies, info.copy_seconds);
    std::vector<std::string> names;
    std::vector<Tensor> tensors;
    for (auto& [name, t] : result) {
      names.push_back(name);
      tensors.push_back(std::move(t));
    }
    std::vector<InferResult> results;
    int64_t row = 0;
    for (const auto& q : batch) {
      InferResult r;
      try {
        r.response = std::make_unique<InferResponse>();
        r.response->model_name = config_.name();
        r.response->model_version = std::to_string(version_);
        r.response->id = q->request->id;
        r.response->outputs = SliceOutputs(config_, names, tensors, *q->request, row, q->batch_size, batch.size() == 1);
      } catch (const Error& e) {
        r = InferResult{nullptr, e};
      }
      row += q->batch_size;
      results.push_back(std::move(r));
    }
    const uint64_t input_ns = static_cast<uint64_t>((t_infer - start).count());
    const uint64_t infer_ns = static_cast<uint64_t>((t_output - t_infer).count());
    const uint64_t output_ns = NsSince(t_output);
    stats_.CountExecution(rows, input_ns, infer_ns, output_ns);
    for (size_t i = 0; i < batch.size(); ++i) {
      stats_.compute_input.Add(input_ns);
      stats_.compute_infer.Add(infer_ns);
      stats_.compute_output.Add(output_ns);
      const uint64_t total = NsSince(batch[i]->request->received);
      if (results[i].error) {
        stats_.CountFailure(FailureReason::kBackend, total);
      } else {
        stats_.success.Add(total);
      }
      Answer(std::move(batch[i]), std::move(results[i]));
    }
  } catch (Error& e) {
    e.AddContext(MakeString("while running model '", config_.name(), "' version ", version_, " on ",
                            dev.placement.device.str()));
    for (auto& q : batch) {
      stats_.CountFailure(FailureReason::kBackend, NsSince(q->request->received));
      Answer(std::move(q), InferResult{nullptr, e});
    }
  } catch (const std::exception& ex) {
    Error e(ErrorKind::kRuntime, MakeString("model '", config_.name(), "' failed: ", ex.what()));
    for (auto& q : batch) {
      stats_.CountFailure(FailureReason::kBackend, NsSince(q->request->received));
      Answer(std::move(q), InferResult{nullptr, e});
    }
  }
}

void ModelVersion::Warmup() {
  for (const auto& w : config_.model_warmup()) {
    const std::string what = "model '" + config_.name() + "' warmup '" + w.name() + "'";
    const int64_t batch = std::max<int64_t>(1, w.batch_size());
    Predictor::TensorMap feed;
    std::mt19937 rng(7);
    for (const auto& [name, in] : w.inputs()) {
      const std::string proto = ProtocolNameOfConfigType(in.data_type());
      DataType dtype = DataTypeFromProtocol(proto, what);
      std::vector<int64_t> shape(in.dims().begin(), in.dims().end());
      if (config_.max_batch_size() > 0) shape.insert(shape.begin(), batch);
      Tensor t(shape, dtype, Device::CPU());
      const int64_t n = CheckedElementCount(shape, max_tensor_elements_, what);
      if (dtype == DataType::String) {
        t.mutable_data<std::string>();
      } else if (in.has_input_data_file()) {
        HN_THROW(kUnsupported, what, ": input_data_file warmup is not supported; use zero_data or random_data");
      } else {
        char* p = static_cast<char*>(t.raw_mutable_data(dtype));
        if (in.random_data() && dtype == DataType::Float) {
          std::uniform_real_distribution<float> u(0.f, 1.f);
          float* f = reinterpret_cast<float*>(p);
          for (int64_t i = 0; i < n; ++i) f[i] = u(rng);
        } else {
          std::memset(p, 0, t.nbytes());
        }
      }
      feed.emplace(name, std::move(t));
    }
    for (const auto& dev : devices_)
      for (int i = 0; i < std::max(1, static_cast<int>(w.count())); ++i) {
        try {
          dev.predictor->Run(feed);
        } catch (Error& e) {
          e.AddContext(what + " failed on " + dev.placement.device.str());
          throw;
        }
      }
  }
}

PlacementReport ModelVersion::Placement() const { return devices_.front().predictor->Placement(); }

std::vector<std::pair<std::string, int>> ModelVersion::OpsPerDevice() const {
  std::map<std::string, int> counts;
  for (const auto& dev : devices_)
    for (const auto& op : dev.predictor->Placement().ops) ++counts[op.device.str()];
  return {counts.begin(), counts.end()};
}

}  // namespace hetnet::serving
