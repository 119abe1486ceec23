#include "core/prepared_memory.h"

#include <mutex>

namespace hetnet {
namespace {

struct Registry {
  std::mutex mu;
  std::map<int, PreparedCopiesSource> sources;
  int next = 0;
};
Registry& Get() {
  static auto* r = new Registry;  // caches unregister from static destructors: never destroyed
  return *r;
}

}  // namespace

int RegisterPreparedCopies(PreparedCopiesSource source) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);
  r.sources.emplace(r.next, std::move(source));
  return r.next++;
}

void UnregisterPreparedCopies(int id) {
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);
  r.sources.erase(id);
}

std::map<uint64_t, int64_t> PreparedBytesByStorage() {
  std::map<uint64_t, int64_t> bytes;
  Registry& r = Get();
  std::lock_guard<std::mutex> lock(r.mu);  // a source takes its cache's lock inside: never the reverse
  for (const auto& kv : r.sources) kv.second(&bytes);
  return bytes;
}

}  // namespace hetnet
