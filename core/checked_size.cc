#include "core/checked_size.h"

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <mutex>

namespace hetnet {

namespace checked_detail {

std::string ShapeStr(const int64_t* d, size_t n) {
  std::string s = "[";
  for (size_t i = 0; i < n; ++i) s += (i ? ", " : "") + std::to_string(d[i]);
  return s + "]";
}

void ThrowOverflow(const char* what, const std::string& detail) {
  HN_THROW(kInvalidArgument, what, ": size arithmetic overflows (", detail, ")");
}

void ThrowNegativeDim(const char* what, const int64_t* d, size_t n) {
  HN_THROW(kInvalidArgument, what, ": negative dimension in shape ", ShapeStr(d, n));
}

void ThrowTooManyElements(const char* what, const int64_t* d, size_t n) {
  HN_THROW(kInvalidArgument, what, ": shape ", ShapeStr(d, n), " has too many elements (the product of its dims ",
           "overflows or exceeds ", kMaxElements, ")");
}

}  // namespace checked_detail

namespace {

struct LimitInfo {
  const char* name;
  const char* env;
  int64_t dflt;
  bool bytes;
};

const LimitInfo& Info(Limit which) {
  static const LimitInfo infos[] = {
      {"largest-tensor cap", "HETNET_MAX_TENSOR_BYTES", int64_t{16} << 30, true},
      {"proto-size cap", "HETNET_MAX_PROTO_BYTES", int64_t{2} << 30, true},
      {"operators-per-net cap", "HETNET_MAX_NET_OPS", 1000000, false},
      {"DAG worker cap", "HETNET_MAX_DAG_WORKERS", 1024, false},
      {"nesting-depth cap", "HETNET_MAX_PROTO_DEPTH", 100, false},
      {"total-workspace-bytes cap", "HETNET_MAX_WORKSPACE_BYTES", std::numeric_limits<int64_t>::max(), true},
      {"proto-parse-memory cap", "HETNET_MAX_PROTO_PARSE_BYTES", int64_t{4} << 30, true},
  };
  return infos[static_cast<int>(which)];
}

constexpr int kNumLimits = 7;

std::atomic<int64_t>* Values() {
  static std::atomic<int64_t> values[kNumLimits];
  static std::once_flag once;
  std::call_once(once, [] {
    for (int i = 0; i < kNumLimits; ++i) {
      const LimitInfo& info = Info(static_cast<Limit>(i));
      int64_t v = info.dflt;
      if (const char* s = std::getenv(info.env)) {
        errno = 0;
        char* end = nullptr;
        const long long parsed = std::strtoll(s, &end, 10);
        if (errno == 0 && end != s && *end == '\0' && parsed > 0) v = parsed;
        // An unparsable value keeps the default (the error for the cap names the variable).
      }
      values[i].store(v);
    }
  });
  return values;
}

std::string HumanBytes(int64_t b) {
  if (b == std::numeric_limits<int64_t>::max()) return "unlimited";
  if (b >= (int64_t{1} << 30) && b % (int64_t{1} << 30) == 0) return MakeString(b >> 30, " GiB");
  if (b >= (int64_t{1} << 20) && b % (int64_t{1} << 20) == 0) return MakeString(b >> 20, " MiB");
  return MakeString(b, " bytes");
}

std::atomic<bool> g_inject_on{false};
std::atomic<int64_t> g_inject_countdown{0};
std::atomic<int64_t> g_alloc_count{0};

}  // namespace

int64_t GetLimit(Limit which) { return Values()[static_cast<int>(which)].load(std::memory_order_relaxed); }

void SetLimit(Limit which, int64_t value) {
  HN_ENFORCE(value > 0, "SetLimit: the ", LimitName(which), " must be positive, got ", value);
  Values()[static_cast<int>(which)].store(value);
}

const char* LimitName(Limit which) { return Info(which).name; }
const char* LimitEnvVar(Limit which) { return Info(which).env; }

void CheckLimit(Limit which, int64_t value, const std::string& what) {
  const int64_t cap = GetLimit(which);
  if (value <= cap) return;
  const LimitInfo& info = Info(which);
  const std::string shown = info.bytes ? MakeString(value, " bytes") : std::to_string(value);
  const std::string cap_shown = info.bytes ? HumanBytes(cap) : std::to_string(cap);
  throw Error(info.bytes ? ErrorKind::kOutOfMemory : ErrorKind::kInvalidArgument,
              MakeString(what, " (", shown, ") exceeds the ", info.name, " of ", cap_shown, "; raise it with the ",
                         "environment variable ", info.env, "=<n> or hetnet::SetLimit"));
}

int64_t SetTensorAllocationFailureAt(int64_t n) {
  g_inject_countdown.store(n > 0 ? n : 0);
  g_inject_on.store(n > 0);
  return g_alloc_count.exchange(0);
}

void MaybeInjectAllocationFailure(size_t bytes) {
  g_alloc_count.fetch_add(1, std::memory_order_relaxed);
  if (!g_inject_on.load(std::memory_order_relaxed)) return;
  if (g_inject_countdown.fetch_sub(1) == 1) {
    g_inject_on.store(false);
    HN_THROW(kOutOfMemory, "out of host memory allocating ", bytes, " bytes (injected allocation failure)");
  }
}

std::string PrintableName(const std::string& name) {
  std::string out;
  for (unsigned char c : name) {
    if (c < 0x20 || c == 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
  }
  return out;
}

void EnforceNoNul(const std::string& name, const char* what) {
  HN_ENFORCE(!HasNul(name), what, " '", PrintableName(name), "' contains a NUL byte (names may not contain NUL)");
}

}  // namespace hetnet
