// One error mechanism for the whole runtime: hetnet::Error carries a kind (mapped to a Python
// exception type by the bindings) and a stack of context lines (net, operator, blob) added as the
// error travels outwards.
#pragma once

#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace hetnet {

enum class ErrorKind {
  kRuntime,          // generic failure while running
  kInvalidArgument,  // bad shapes, dtypes, argument values, malformed input files
  kNotFound,         // missing blob, net, operator type, file
  kUnsupported,      // a device or feature this build or machine does not have
  kOutOfMemory,      // an allocator could not satisfy a request
  kUnavailable,      // cannot be served now: not ready, queue full, shutting down (retry later)
  kTimeout,          // a wait ran past its deadline (a store key never set, a rendezvous incomplete)
  kIo,               // a peer or transport failed (connection closed, peer died mid-collective)
};

class Error : public std::exception {
 public:
  Error(ErrorKind kind, std::string message) : kind_(kind), message_(std::move(message)) { Rebuild(); }

  ErrorKind kind() const { return kind_; }
  const std::string& message() const { return message_; }
  const std::vector<std::string>& context() const { return context_; }
  const char* what() const noexcept override { return full_.c_str(); }

  // Adds an outer context line ("in net 'x', operator #3 (FC)"); returns *this for rethrow.
  Error& AddContext(std::string line) {
    context_.push_back(std::move(line));
    Rebuild();
    return *this;
  }

 private:
  void Rebuild() {
    full_ = message_;
    for (const auto& c : context_) full_ += "\n  " + c;
  }
  ErrorKind kind_;
  std::string message_;
  std::vector<std::string> context_;
  std::string full_;
};

template <typename... Args>
std::string MakeString(const Args&... args) {
  std::ostringstream ss;
  (ss << ... << args);
  return ss.str();
}

[[noreturn]] inline void Throw(ErrorKind kind, const std::string& msg) { throw Error(kind, msg); }

}  // namespace hetnet

#define HN_THROW(kind, ...) ::hetnet::Throw(::hetnet::ErrorKind::kind, ::hetnet::MakeString(__VA_ARGS__))

// Checks a condition; on failure throws hetnet::Error of the given kind with the message.
#define HN_CHECK_KIND(kind, cond, ...)                                        \
  do {                                                                        \
    if (!(cond)) HN_THROW(kind, __VA_ARGS__);                                 \
  } while (0)
#define HN_ENFORCE(cond, ...) HN_CHECK_KIND(kInvalidArgument, cond, __VA_ARGS__)
