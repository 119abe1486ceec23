#include "serving/model_stats.h"

#include <chrono>

namespace hetnet::serving {

void ModelStats::CountFailure(FailureReason r, uint64_t ns) {
  fail.Add(ns);
  (r == FailureReason::kRejected ? failures_rejected : r == FailureReason::kBackend ? failures_backend : failures_other)
      .fetch_add(1, std::memory_order_relaxed);
}

void ModelStats::CountExecution(int64_t batch_size, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns) {
  execution_count.fetch_add(1, std::memory_order_relaxed);
  inference_count.fetch_add(static_cast<uint64_t>(batch_size), std::memory_order_relaxed);
  last_inference_ms.store(std::chrono::duration_cast<std::chrono::milliseconds>(
                              std::chrono::system_clock::now().time_since_epoch())
                              .count(),
                          std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mu_);
  auto& b = batches_[batch_size];
  ++b.count;
  b.input_ns += input_ns;
  b.infer_ns += infer_ns;
  b.output_ns += output_ns;
}

void ModelStats::CountCopies(const std::vector<CopyInfo>& copies, const std::vector<double>& seconds) {
  if (copies.empty()) return;
  std::lock_guard<std::mutex> lock(mu_);
  for (size_t k = 0; k < copies.size(); ++k) {
    const CopyInfo& c = copies[k];
    auto& t = copies_[{c.from.str(), c.to.str()}];
    ++t.count;
    if (c.bytes > 0) t.bytes += static_cast<uint64_t>(c.bytes);
    if (k < seconds.size() && seconds[k] >= 0) {
      t.ns += static_cast<uint64_t>(seconds[k] * 1e9);
      ++t.timed;
    }
  }
}

std::map<std::pair<std::string, std::string>, ModelStats::CopyTotals> ModelStats::Copies() const {
  std::lock_guard<std::mutex> lock(mu_);
  return copies_;
}

std::map<int64_t, ModelStats::BatchTotals> ModelStats::Batches() const {
  std::lock_guard<std::mutex> lock(mu_);
  return batches_;
}

namespace {
void SetDuration(const DurationStat& d, inference::StatisticDuration* out) {
  out->set_count(d.count.load(std::memory_order_relaxed));
  out->set_ns(d.ns.load(std::memory_order_relaxed));
}
}  // namespace

void ModelStats::ToProto(const std::string& name, const std::string& version, inference::ModelStatistics* out) const {
  out->set_name(name);
  out->set_version(version);
  out->set_last_inference(last_inference_ms.load());
  out->set_inference_count(inference_count.load());
  out->set_execution_count(execution_count.load());
  auto* s = out->mutable_inference_stats();
  SetDuration(success, s->mutable_success());
  SetDuration(fail, s->mutable_fail());
  SetDuration(queue, s->mutable_queue());
  SetDuration(compute_input, s->mutable_compute_input());
  SetDuration(compute_infer, s->mutable_compute_infer());
  SetDuration(compute_output, s->mutable_compute_output());
  s->mutable_cache_hit();
  s->mutable_cache_miss();
  for (const auto& [size, b] : Batches()) {
    auto* bs = out->add_batch_stats();
    bs->set_batch_size(static_cast<uint64_t>(size));
    bs->mutable_compute_input()->set_count(b.count);
    bs->mutable_compute_input()->set_ns(b.input_ns);
    bs->mutable_compute_infer()->set_count(b.count);
    bs->mutable_compute_infer()->set_ns(b.infer_ns);
    bs->mutable_compute_output()->set_count(b.count);
    bs->mutable_compute_output()->set_ns(b.output_ns);
  }
}

}  // namespace hetnet::serving
