#include "device/collectives/gloo_redis_store_handler.h"

#include <sys/time.h>
#include <unistd.h>

#include <thread>

#define HIREDIS_NESTED_INCLUDE 1  // Debian installs <hiredis/hiredis.h>
#include <gloo/common/error.h>
#include <gloo/rendezvous/redis_store.h>

#include "core/error.h"

namespace hetnet {

using Clock = std::chrono::steady_clock;

class GlooRedisStoreHandler::Store : public gloo::rendezvous::RedisStore {
 public:
  using gloo::rendezvous::RedisStore::RedisStore;
  redisContext* context() { return redis_; }
};

namespace {

// One hiredis command; the reply is freed at scope exit. Errors are kIo naming the store.
class Reply {
 public:
  template <typename... Args>
  Reply(redisContext* ctx, const std::string& store, const char* format, Args... args) {
    reply_ = static_cast<redisReply*>(redisCommand(ctx, format, args...));
    HN_CHECK_KIND(kIo, reply_ != nullptr, store, ": ", ctx->errstr[0] ? ctx->errstr : "no reply");
    if (reply_->type == REDIS_REPLY_ERROR) {
      const std::string why(reply_->str, reply_->len);
      freeReplyObject(reply_);
      reply_ = nullptr;
      HN_THROW(kInvalidArgument, store, ": ", why);
    }
  }
  ~Reply() {
    if (reply_) freeReplyObject(reply_);
  }
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  const redisReply* operator->() const { return reply_; }

 private:
  redisReply* reply_ = nullptr;
};

}  // namespace

GlooRedisStoreHandler::GlooRedisStoreHandler(const std::string& host, int port, const std::string& prefix,
                                             std::chrono::milliseconds timeout)
    : host_(host), port_(port), prefix_(prefix), timeout_(timeout) {
  HN_ENFORCE(!host.empty() && port > 0 && port <= 65535, "Redis store: host and a port in 1..65535 are required");
  Connect();
}

void GlooRedisStoreHandler::Connect() {
  try {
    store_ = std::make_unique<Store>(host_, port_);
  } catch (const std::exception& e) {
    HN_THROW(kIo, "cannot connect to ", Describe(), ": ", e.what());
  }
  pid_ = ::getpid();
  if (timeout_.count() > 0) {
    timeval tv{static_cast<time_t>(timeout_.count() / 1000), static_cast<suseconds_t>(timeout_.count() % 1000 * 1000)};
    redisSetTimeout(store_->context(), tv);
  }
}

GlooRedisStoreHandler::Store& GlooRedisStoreHandler::Connection() {
  if (pid_ != ::getpid()) Connect();  // freeing the inherited context only closes this process's copy
  return *store_;
}

GlooRedisStoreHandler::~GlooRedisStoreHandler() = default;

std::string GlooRedisStoreHandler::Describe() const {
  return "Redis store " + host_ + ":" + std::to_string(port_) + (prefix_.empty() ? "" : " (prefix '" + prefix_ + "')");
}

void GlooRedisStoreHandler::Set(const std::string& name, const std::string& data) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = Key(name);
  // SETNX (as Gloo's set), then the set-once rule: the same data again is fine.
  Reply set(Connection().context(), Describe(), "SETNX %b %b", key.data(), key.size(), data.data(), data.size());
  if (set->type == REDIS_REPLY_INTEGER && set->integer == 1) return;
  Reply get(Connection().context(), Describe(), "GET %b", key.data(), key.size());
  HN_ENFORCE(get->type == REDIS_REPLY_STRING && std::string(get->str, get->len) == data, Describe(), ": key '", name,
             "' is already set to different data; keys are set once (a prefix or run ID reused from an earlier run?)");
}

std::string GlooRedisStoreHandler::Get(const std::string& name, std::chrono::milliseconds timeout) {
  Wait({name}, timeout);
  std::lock_guard<std::mutex> lock(mu_);
  try {
    const std::vector<char> v = Connection().get(Key(name));
    return std::string(v.begin(), v.end());
  } catch (const std::exception& e) {
    HN_THROW(kIo, Describe(), ": get '", name, "': ", e.what());
  }
}

int64_t GlooRedisStoreHandler::Add(const std::string& name, int64_t value) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = Key(name);
  Reply r(Connection().context(), Describe(), "INCRBY %b %lld", key.data(), key.size(), static_cast<long long>(value));
  HN_CHECK_KIND(kIo, r->type == REDIS_REPLY_INTEGER, Describe(), ": unexpected reply to INCRBY");
  return r->integer;
}

int64_t GlooRedisStoreHandler::GetNumKeys() {
  std::lock_guard<std::mutex> lock(mu_);
  if (prefix_.empty()) {
    Reply r(Connection().context(), Describe(), "DBSIZE");
    return r->integer;
  }
  // KEYS with the prefix escaped for the glob.
  std::string pattern;
  for (char c : prefix_) {
    if (c == '*' || c == '?' || c == '[' || c == ']' || c == '\\') pattern += '\\';
    pattern += c;
  }
  pattern += '*';
  Reply r(Connection().context(), Describe(), "KEYS %b", pattern.data(), pattern.size());
  return r->type == REDIS_REPLY_ARRAY ? static_cast<int64_t>(r->elements) : 0;
}

bool GlooRedisStoreHandler::DeleteKey(const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  const std::string key = Key(name);
  Reply r(Connection().context(), Describe(), "DEL %b", key.data(), key.size());
  return r->type == REDIS_REPLY_INTEGER && r->integer > 0;
}

bool GlooRedisStoreHandler::Check(const std::vector<std::string>& names) {
  std::vector<std::string> keys;
  for (const auto& n : names) keys.push_back(Key(n));
  std::lock_guard<std::mutex> lock(mu_);
  try {
    return Connection().check(keys);
  } catch (const std::exception& e) {
    HN_THROW(kIo, Describe(), ": check: ", e.what());
  }
}

void GlooRedisStoreHandler::Wait(const std::vector<std::string>& names, std::chrono::milliseconds timeout) {
  // Polled here rather than in Gloo's wait, whose timeout is an IoException: ours is kTimeout.
  const auto start = Clock::now();
  while (!Check(names)) {
    if (timeout != kNoTimeout && Clock::now() - start >= timeout)
      HN_THROW(kTimeout, WaitTimeoutMessage(names, *this, timeout));
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

}  // namespace hetnet
