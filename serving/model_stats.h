// Counters of one served model version: Triton's statistics (the statistics extension and the
// nv_inference_* metrics read the same numbers) plus what hetnet adds — bytes and time each model
// moved between devices, batch sizes, queue depth, bytes copied from requests into tensors.
#pragma once

#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "core/placement.h"
#include "serving/proto/grpc_service.pb.h"

namespace hetnet::serving {

struct DurationStat {
  std::atomic<uint64_t> count{0}, ns{0};
  void Add(uint64_t nanoseconds) {
    count.fetch_add(1, std::memory_order_relaxed);
    ns.fetch_add(nanoseconds, std::memory_order_relaxed);
  }
};

enum class FailureReason { kRejected, kBackend, kOther };

class ModelStats {
 public:
  DurationStat success, fail, queue, compute_input, compute_infer, compute_output;
  std::atomic<uint64_t> inference_count{0}, execution_count{0}, last_inference_ms{0};
  std::atomic<uint64_t> failures_rejected{0}, failures_backend{0}, failures_other{0};
  std::atomic<int64_t> pending{0};             // queued, not yet executing
  std::atomic<uint64_t> input_bytes_copied{0};  // request bytes copied into instance tensors

  void CountFailure(FailureReason r, uint64_t ns);
  // One execution of `batch_size` rows made of `requests` requests.
  void CountExecution(int64_t batch_size, uint64_t input_ns, uint64_t infer_ns, uint64_t output_ns);
  // Inserted copies of one run: bytes measured by the copy ops, and seconds per copy (-1: unknown,
  // not counted; Predictor::RunInfo::copy_seconds).
  void CountCopies(const std::vector<CopyInfo>& copies, const std::vector<double>& seconds);

  struct CopyTotals {
    uint64_t bytes = 0, count = 0;
    uint64_t ns = 0, timed = 0;  // summed duration of the `timed` copies whose time was known
  };
  std::map<std::pair<std::string, std::string>, CopyTotals> Copies() const;  // (src, dst) -> totals
  struct BatchTotals {
    uint64_t count = 0, input_ns = 0, infer_ns = 0, output_ns = 0;
  };
  std::map<int64_t, BatchTotals> Batches() const;

  void ToProto(const std::string& name, const std::string& version, inference::ModelStatistics* out) const;

 private:
  mutable std::mutex mu_;
  std::map<std::pair<std::string, std::string>, CopyTotals> copies_;
  std::map<int64_t, BatchTotals> batches_;
};

}  // namespace hetnet::serving
