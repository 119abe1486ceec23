#include "serving/repository_worker.h"

#include <exception>
#include <iostream>

#include "core/error.h"

namespace hetnet::serving {

RepositoryWorker::RepositoryWorker(size_t capacity) : capacity_(capacity), thread_([this] { Loop(); }) {}

RepositoryWorker::~RepositoryWorker() { Join(); }

bool RepositoryWorker::TryPost(std::function<void()> job) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stopping_ || jobs_.size() + running_ >= capacity_) return false;
    jobs_.push_back(std::move(job));
  }
  cv_.notify_one();
  return true;
}

std::string RepositoryWorker::BusyMessage() const {
  return MakeString("too many repository requests are in progress (", capacity_, " wait or run); retry later");
}

void RepositoryWorker::Join() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
  if (thread_.joinable() && thread_.get_id() != std::this_thread::get_id()) thread_.join();
}

void RepositoryWorker::Loop() {
  std::unique_lock<std::mutex> lock(mu_);
  while (true) {
    cv_.wait(lock, [this] { return stopping_ || !jobs_.empty(); });
    if (jobs_.empty()) return;  // stopping, and everything posted has run
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    ++running_;
    lock.unlock();
    try {
      job();  // jobs answer their own errors; this is the last line of defence for the thread
    } catch (const std::exception& e) {
      std::cerr << "hetnet serve: a repository request failed unanswered: " << e.what() << std::endl;
    }
    job = nullptr;  // what it holds (the request's memory) goes before the next one starts
    lock.lock();
    --running_;
  }
}

}  // namespace hetnet::serving
