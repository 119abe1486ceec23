// RepositoryWorker: one thread, jobs in order, a cap on jobs waiting or running; the live-server
// side is test_lifecycle.py::test_a_flood_of_load_requests_is_refused_past_the_queue_not_given_threads.
#include <catch2/catch.hpp>

#include <atomic>
#include <chrono>
#include <future>
#include <stdexcept>
#include <thread>
#include <vector>

#include "serving/repository_worker.h"

using hetnet::serving::RepositoryWorker;

TEST_CASE("the repository worker runs jobs in order on one thread and refuses past its capacity", "[serving]") {
  RepositoryWorker worker(3);
  std::promise<void> release;
  std::shared_future<void> released = release.get_future().share();
  std::vector<int> order;
  std::vector<std::thread::id> threads;
  std::mutex mu;
  auto job = [&](int i) {
    return [&, i] {
      if (i == 0) released.wait();  // holds the worker: jobs 1 and 2 wait behind it
      std::lock_guard<std::mutex> lock(mu);
      order.push_back(i);
      threads.push_back(std::this_thread::get_id());
    };
  };
  REQUIRE(worker.TryPost(job(0)));
  REQUIRE(worker.TryPost(job(1)));
  REQUIRE(worker.TryPost(job(2)));
  CHECK_FALSE(worker.TryPost(job(3)));  // 1 running + 2 waiting = 3
  CHECK(worker.BusyMessage() == "too many repository requests are in progress (3 wait or run); retry later");
  release.set_value();
  worker.Join();  // runs what was posted
  CHECK(order == std::vector<int>{0, 1, 2});
  REQUIRE(threads.size() == 3);
  CHECK(threads[0] == threads[1]);
  CHECK(threads[1] == threads[2]);
  CHECK(threads[0] != std::this_thread::get_id());
  CHECK_FALSE(worker.TryPost(job(4)));  // after Join
  worker.Join();                        // idempotent
}

TEST_CASE("a job that throws does not stop the repository worker", "[serving]") {
  RepositoryWorker worker;
  std::atomic<int> ran{0};
  REQUIRE(worker.TryPost([] { throw std::runtime_error("a job's own error"); }));
  REQUIRE(worker.TryPost([&] { ++ran; }));
  worker.Join();
  CHECK(ran == 1);
}

TEST_CASE("capacity frees as jobs finish", "[serving]") {
  RepositoryWorker worker(1);
  std::atomic<int> ran{0};
  for (int i = 0; i < 50; ++i) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!worker.TryPost([&] { ++ran; })) {
      REQUIRE(std::chrono::steady_clock::now() < deadline);
      std::this_thread::yield();
    }
  }
  worker.Join();
  CHECK(ran == 50);
}
