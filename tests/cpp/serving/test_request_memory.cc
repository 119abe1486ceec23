// RequestMemoryBudget: what requests in flight may hold; the live-server side is in
// tests/python/serving/test_request_memory.py.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "core/error.h"
#include "serving/request_memory.h"

using hetnet::Error;
using hetnet::ErrorKind;
using hetnet::serving::DefaultRequestMemoryLimit;
using hetnet::serving::RequestMemoryBudget;

TEST_CASE("request memory leases take, grow, shrink and give back", "[serving]") {
  RequestMemoryBudget budget(1000);
  auto a = budget.TryTake(600);
  REQUIRE(a);
  CHECK(budget.held() == 600);
  CHECK_FALSE(budget.TryTake(401));  // 1001 > 1000
  CHECK(budget.refusals() == 1);
  auto b = budget.TryTake(400);
  REQUIRE(b);
  CHECK(budget.held() == 1000);
  CHECK_FALSE(b->Grow(1));
  CHECK(b->held() == 400);  // a failed Grow takes nothing
  a->Shrink(100);
  CHECK(budget.held() == 900);
  CHECK(b->Grow(100));
  a->Shrink(10'000);  // more than it holds: gives back what it has
  CHECK(a->held() == 0);
  CHECK(budget.held() == 500);
  b.reset();
  CHECK(budget.held() == 0);
  a.reset();
  CHECK(budget.held() == 0);
}

TEST_CASE("a request that can never fit is invalid, one that must wait is unavailable", "[serving]") {
  RequestMemoryBudget budget(1000);
  auto held = budget.Take(900, "first");
  try {
    budget.Take(200, "this request");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnavailable);
    CHECK(std::string(e.what()).find("at its request memory limit: this request needs 200 bytes and requests in "
                                     "flight hold 900 of 1000 bytes (--max-request-memory); retry later") !=
          std::string::npos);
  }
  try {
    budget.Take(1001, "this request");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK(std::string(e.what()).find("needs 1001 bytes of request memory, more than the server's limit of 1000") !=
          std::string::npos);
  }
  // Growing past the whole limit counts what the lease already holds.
  try {
    held->GrowOrThrow(101, "the request's JSON");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kInvalidArgument);
    CHECK(std::string(e.what()).find("the request's JSON needs 1001 bytes") != std::string::npos);
  }
  CHECK(budget.held() == 900);
  // Near the top of the range the sum must not wrap.
  CHECK_FALSE(budget.TryTake(UINT64_MAX));
  CHECK(budget.held() == 900);
}

TEST_CASE("without a limit leases always fit and are still counted", "[serving]") {
  RequestMemoryBudget budget(0);
  auto a = budget.TryTake(uint64_t{1} << 50);
  REQUIRE(a);
  CHECK(budget.held() == uint64_t{1} << 50);
  CHECK_FALSE(budget.NeverFits(UINT64_MAX));
  a.reset();
  CHECK(budget.held() == 0);
}

TEST_CASE("threads taking and giving back never hold more than the limit together", "[serving]") {
  constexpr uint64_t kLimit = 10'000;
  RequestMemoryBudget budget(kLimit);
  std::atomic<uint64_t> granted_now{0}, worst{0}, granted{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 20'000; ++i) {
        const uint64_t bytes = 1 + static_cast<uint64_t>((i * 7919 + t * 104729) % 3000);
        auto lease = budget.TryTake(bytes);
        if (!lease) continue;
        const uint64_t now = granted_now.fetch_add(bytes) + bytes;
        uint64_t w = worst.load();
        while (now > w && !worst.compare_exchange_weak(w, now)) {
        }
        granted.fetch_add(1);
        granted_now.fetch_sub(bytes);
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(worst.load() <= kLimit);
  CHECK(granted.load() > 0);
  CHECK(budget.held() == 0);
}

TEST_CASE("the default request memory limit is a third of what the process may use", "[serving]") {
  const uint64_t limit = DefaultRequestMemoryLimit();
  const long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
  const uint64_t physical = static_cast<uint64_t>(pages) * static_cast<uint64_t>(page);
  CHECK(limit >= (uint64_t{256} << 20));
  CHECK(limit <= std::max(physical / 3, uint64_t{256} << 20));
}
