#include "serving/request_memory.h"

#include <unistd.h>

#include <algorithm>
#include <fstream>

#include "core/error.h"

namespace hetnet::serving {

RequestMemoryLease::~RequestMemoryLease() {
  if (held_ > 0) budget_->Sub(held_);
}

bool RequestMemoryLease::Grow(uint64_t bytes) {
  if (!budget_->Add(bytes)) return false;
  held_ += bytes;
  return true;
}

void RequestMemoryLease::Shrink(uint64_t bytes) {
  bytes = std::min(bytes, held_);
  held_ -= bytes;
  budget_->Sub(bytes);
}

bool RequestMemoryBudget::Add(uint64_t bytes) {
  uint64_t cur = held_.load(std::memory_order_relaxed);
  do {
    if (limit_ != 0 && (bytes > limit_ || cur > limit_ - bytes)) {
      refusals_.fetch_add(1, std::memory_order_relaxed);
      return false;
    }
  } while (!held_.compare_exchange_weak(cur, cur + bytes, std::memory_order_relaxed));
  return true;
}

std::unique_ptr<RequestMemoryLease> RequestMemoryBudget::TryTake(uint64_t bytes) {
  std::unique_ptr<RequestMemoryLease> lease(new RequestMemoryLease(this));
  if (!lease->Grow(bytes)) return nullptr;
  return lease;
}

std::string RequestMemoryBudget::RefusalMessage(uint64_t bytes, const std::string& what) const {
  if (NeverFits(bytes)) {
    return MakeString(what, " needs ", bytes, " bytes of request memory, more than the server's limit of ", limit_,
                      " bytes; raise it with --max-request-memory");
  }
  return MakeString("the server is at its request memory limit: ", what, " needs ", bytes, " bytes and requests in flight hold ",
                    held(), " of ", limit_, " bytes (--max-request-memory); retry later");
}

std::unique_ptr<RequestMemoryLease> RequestMemoryBudget::Take(uint64_t bytes, const std::string& what) {
  std::unique_ptr<RequestMemoryLease> lease(new RequestMemoryLease(this));
  lease->GrowOrThrow(bytes, what);
  return lease;
}

void RequestMemoryLease::GrowOrThrow(uint64_t bytes, const std::string& what) {
  if (Grow(bytes)) return;
  const uint64_t total = held_ + bytes;
  if (budget_->NeverFits(total)) HN_THROW(kInvalidArgument, budget_->RefusalMessage(total, what));
  HN_THROW(kUnavailable, budget_->RefusalMessage(total, what));
}

namespace {

// The first number in a file ("max" and unreadable files give 0: no limit there).
uint64_t ReadLimitFile(const char* path) {
  std::ifstream in(path);
  uint64_t v = 0;
  if (!(in >> v)) return 0;
  return v;
}

}  // namespace

uint64_t DefaultRequestMemoryLimit() {
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  uint64_t usable = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  for (const char* f : {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    const uint64_t cg = ReadLimitFile(f);
    if (cg > 0 && (usable == 0 || cg < usable)) usable = cg;
  }
  const uint64_t floor = uint64_t{256} << 20;
  // A third: gRPC's receive buffers may hold up to twice the limit beside it (grpc_server.cc).
  return std::max(usable / 3, floor);
}

}  // namespace hetnet::serving
