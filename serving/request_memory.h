// The server-wide budget of memory held by requests in flight (--max-request-memory): request
// bodies as they arrive, the JSON parse of their headers, the gRPC messages whose bytes the inputs
// point into. Without it, a client holding 1,024 connections with 64 MiB bodies each (or a few
// 2 GiB gRPC messages) makes the server allocate until the kernel kills it; with it, a request
// that does not fit is answered 503 / UNAVAILABLE "retry later" and the server serves on.
// HTTP and gRPC charge the same budget, which the InferenceServer owns.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

namespace hetnet::serving {

class RequestMemoryBudget;

// What one request holds of the budget; gives it back when destroyed. Not thread-safe itself: one
// request's steps run one after another.
class RequestMemoryLease {
 public:
  RequestMemoryLease(const RequestMemoryLease&) = delete;
  RequestMemoryLease& operator=(const RequestMemoryLease&) = delete;
  ~RequestMemoryLease();

  // Takes `bytes` more; false (nothing taken) when that would exceed the budget.
  bool Grow(uint64_t bytes);
  // As Grow, but throws as RequestMemoryBudget::Take does.
  void GrowOrThrow(uint64_t bytes, const std::string& what);
  // Gives back up to `bytes` of what this lease holds (a step's scratch memory is freed).
  void Shrink(uint64_t bytes);
  uint64_t held() const { return held_; }

 private:
  friend class RequestMemoryBudget;
  explicit RequestMemoryLease(RequestMemoryBudget* budget) : budget_(budget) {}
  RequestMemoryBudget* budget_;
  uint64_t held_ = 0;
};

class RequestMemoryBudget {
 public:
  // limit 0: no limit (the leases still count, for the metrics).
  explicit RequestMemoryBudget(uint64_t limit) : limit_(limit) {}
  RequestMemoryBudget(const RequestMemoryBudget&) = delete;
  RequestMemoryBudget& operator=(const RequestMemoryBudget&) = delete;

  // A lease holding `bytes`, or null when they do not fit now (then refusals() counts one).
  std::unique_ptr<RequestMemoryLease> TryTake(uint64_t bytes);
  // As TryTake, but throws hetnet::Error: kUnavailable (503, UNAVAILABLE) when the bytes do not
  // fit now, kInvalidArgument when they exceed the whole budget. `what` names the request.
  std::unique_ptr<RequestMemoryLease> Take(uint64_t bytes, const std::string& what);
  // The message of a refusal of `bytes` (for front ends that answer without an exception).
  std::string RefusalMessage(uint64_t bytes, const std::string& what) const;
  // True when `bytes` can never fit (over the whole limit): retrying will not help.
  bool NeverFits(uint64_t bytes) const { return limit_ != 0 && bytes > limit_; }

  uint64_t limit() const { return limit_; }
  uint64_t held() const { return held_.load(std::memory_order_relaxed); }
  uint64_t refusals() const { return refusals_.load(std::memory_order_relaxed); }

 private:
  friend class RequestMemoryLease;
  bool Add(uint64_t bytes);
  void Sub(uint64_t bytes) { held_.fetch_sub(bytes, std::memory_order_relaxed); }

  const uint64_t limit_;
  std::atomic<uint64_t> held_{0};
  std::atomic<uint64_t> refusals_{0};
};

// The default limit: a third of the memory this process may use (the smaller of physical memory and
// the cgroup's memory.max / memory.limit_in_bytes, so a container's limit counts), at least 256 MiB.
// A third, because gRPC's receive buffers may hold up to twice the limit beside it.
uint64_t DefaultRequestMemoryLimit();

// Bytes of parse state charged per byte of a JSON request header: RapidJSON keeps a 16-byte value
// for every number (often 2 bytes of text: "0,"), first on its parse stack, then copied into the
// DOM. Measured: a 30 MB body of "0,0,..." peaked at 13.6 bytes per byte beyond the body and the
// tensor it decodes to.
inline constexpr uint64_t kJsonParseBytesPerByte = 16;

// Bytes charged for each gRPC inference call in flight, beyond its message: gRPC's call state, the
// reactor, the request and its queue entry. Measured: 5,000 and 20,000 concurrent calls of a 64-byte
// input, queued behind a slow model, grew the server by 33 and 21 KB per call; charged nothing, a
// flood of 10^6 such calls (HTTP/2 lets one connection open that many streams) would have taken
// ~25 GB. (HTTP holds at most one request per connection, and connections are capped.)
inline constexpr uint64_t kGrpcCallBytes = 32 * 1024;

}  // namespace hetnet::serving
