// The CPU allocator (device/cpu_context.cc): 64-byte alignment, and blocks of 2 MiB or more on a
// huge-page boundary backed by transparent huge pages where the kernel gives them on request, freed
// ones kept for the next request of their size.
#include <catch2/catch.hpp>

#include <cstdint>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>

#include "core/context.h"

using namespace hetnet;

namespace {

constexpr uintptr_t kHugePage = uintptr_t{2} << 20;

// AnonHugePages (kB) of the mapping that holds address p, from /proc/self/smaps; -1 if not found.
long AnonHugeKbAt(const void* p) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in = false;
  const uintptr_t a = reinterpret_cast<uintptr_t>(p);
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    char dash = 0;
    std::istringstream head(line);
    if (head >> std::hex >> lo >> dash >> hi && dash == '-') {
      in = lo <= a && a < hi;
    } else if (in && line.rfind("AnonHugePages:", 0) == 0) {
      return std::stol(line.substr(14));
    }
  }
  return -1;
}

bool SanitizedBuild() {
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
  return true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
  return true;
#endif
#endif
  return false;
}

}  // namespace

TEST_CASE("CPU allocator: 64-byte alignment; large blocks on huge pages", "[allocator]") {
  Allocator* alloc = GetCPUAllocator();
  for (size_t n : {size_t{1}, size_t{100}, size_t{4096}, size_t{1} << 20}) {
    auto p = alloc->Allocate(n);
    CHECK(reinterpret_cast<uintptr_t>(p.get()) % 64 == 0);
  }
  const size_t big = (size_t{8} << 20) + 12345;  // 8 MiB and a bit: 4 whole huge pages
  auto p = alloc->Allocate(big);
  REQUIRE(reinterpret_cast<uintptr_t>(p.get()) % kHugePage == 0);
  std::memset(p.get(), 1, big);  // touch: the kernel backs the pages now
  std::ifstream mode_file("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string mode;
  std::getline(mode_file, mode);
  if (mode.find("[never]") != std::string::npos || mode.empty() || SanitizedBuild()) {
    WARN("transparent huge pages not checked: mode '" << mode << "'" << (SanitizedBuild() ? ", sanitizer build" : ""));
    return;
  }
  // "madvise" or "always": the block asked for them. The kernel may still fall back to small pages
  // when no 2 MiB of contiguous memory is free; on this test's 8 MiB at least one huge page is due.
  CHECK(AnonHugeKbAt(p.get()) >= 2048);
}

TEST_CASE("CPU allocator: a freed large block comes back for the next request of its size", "[allocator]") {
  Allocator* alloc = GetCPUAllocator();
  const size_t size = (size_t{6} << 20) + 100;  // rounds to 8 MiB of huge pages
  void* first = nullptr;
  {
    auto p = alloc->Allocate(size);
    first = p.get();
    std::memset(p.get(), 7, size);
  }
  auto again = alloc->Allocate(size - 50);  // the same rounded size: the cached block, already mapped
  CHECK(again.get() == first);
  auto other = alloc->Allocate(size);  // the cached one is in use: a fresh block
  CHECK(other.get() != first);
  CHECK(reinterpret_cast<uintptr_t>(other.get()) % kHugePage == 0);
  auto small = alloc->Allocate(1000);  // small blocks are not cached
  CHECK(reinterpret_cast<uintptr_t>(small.get()) % 64 == 0);
}
