// One checked arithmetic for sizes (element counts, byte sizes, offsets, output shapes) and the
// runtime's caps, so that hostile input fails with a clear hetnet::Error instead of wrapping around:
//   - overflow, negative or absurd values: kInvalidArgument naming what was computed;
//   - a cap exceeded (largest tensor, proto size, op count, DAG workers): kOutOfMemory (bytes) or
//     kInvalidArgument (counts), naming the cap, its value and how to raise it.
// Include it only from .cc files that need it (it is not part of the widely included headers).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "core/error.h"

namespace hetnet {

// The largest element count of any tensor shape: numel times the largest item size (std::string,
// 32 bytes) stays far inside int64, so byte sizes computed from a checked shape never wrap.
constexpr int64_t kMaxElements = std::numeric_limits<int64_t>::max() / 64;

namespace checked_detail {
std::string ShapeStr(const int64_t* d, size_t n);
[[noreturn]] void ThrowOverflow(const char* what, const std::string& detail);
[[noreturn]] void ThrowNegativeDim(const char* what, const int64_t* d, size_t n);
[[noreturn]] void ThrowTooManyElements(const char* what, const int64_t* d, size_t n);
}  // namespace checked_detail

// a * b and a + b for sizes; `what` names the quantity in the message ("Conv output height").
inline int64_t CheckedMul(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_mul_overflow(a, b, &r)) checked_detail::ThrowOverflow(what, MakeString(a, " * ", b));
  return r;
}
inline int64_t CheckedAdd(int64_t a, int64_t b, const char* what) {
  int64_t r;
  if (__builtin_add_overflow(a, b, &r)) checked_detail::ThrowOverflow(what, MakeString(a, " + ", b));
  return r;
}
inline size_t CheckedMulSize(size_t a, size_t b, const char* what) {
  size_t r;
  if (__builtin_mul_overflow(a, b, &r)) checked_detail::ThrowOverflow(what, MakeString(a, " * ", b));
  return r;
}
inline size_t CheckedAddSize(size_t a, size_t b, const char* what) {
  size_t r;
  if (__builtin_add_overflow(a, b, &r)) checked_detail::ThrowOverflow(what, MakeString(a, " + ", b));
  return r;
}

// An int64 value narrowed into int (kernels index with int): kInvalidArgument when it does not fit.
inline int CheckedToInt(int64_t v, const char* what) {
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max())
    checked_detail::ThrowOverflow(what, MakeString(v, " does not fit in a 32-bit int"));
  return static_cast<int>(v);
}

// Element count of a shape. Every dim must be >= 0 and the product of the nonzero dims at most
// kMaxElements (so products of any sub-range of dims, e.g. FC's M and K, never wrap either, also
// for a zero-element tensor). `what` names the tensor in the message.
inline int64_t CheckedNumel(const int64_t* d, size_t n, const char* what) {
  int64_t numel = 1, nonzero = 1;
  for (size_t i = 0; i < n; ++i) {
    if (d[i] < 0) checked_detail::ThrowNegativeDim(what, d, n);
    if (d[i] == 0) {
      numel = 0;
      continue;
    }
    if (__builtin_mul_overflow(nonzero, d[i], &nonzero) || nonzero > kMaxElements)
      checked_detail::ThrowTooManyElements(what, d, n);
  }
  return numel == 0 ? 0 : nonzero;
}
inline int64_t CheckedNumel(const std::vector<int64_t>& shape, const char* what) {
  return CheckedNumel(shape.data(), shape.size(), what);
}

// Bytes of `numel` elements of `itemsize` bytes (numel from CheckedNumel: never wraps).
inline size_t CheckedByteSize(int64_t numel, size_t itemsize, const char* what) {
  if (numel < 0) checked_detail::ThrowOverflow(what, MakeString("negative element count ", numel));
  return CheckedMulSize(static_cast<size_t>(numel), itemsize, what);
}

// ---- caps -----------------------------------------------------------------------------------
// Each cap has a default, an environment variable read at first use, and SetLimit (tests, servers).
enum class Limit {
  kMaxTensorBytes,  // largest single tensor allocation (default 16 GiB): HETNET_MAX_TENSOR_BYTES
  kMaxProtoBytes,   // largest model/tensor file read (default 2 GiB, protobuf's own limit): HETNET_MAX_PROTO_BYTES
  kMaxNetOps,       // most operators in one net (default 1,000,000): HETNET_MAX_NET_OPS
  kMaxDagWorkers,   // most worker threads of a DAG net (default 1024): HETNET_MAX_DAG_WORKERS
  kMaxProtoDepth,   // deepest message nesting in a parsed file (default 100, protobuf's): HETNET_MAX_PROTO_DEPTH
  kMaxWorkspaceBytes,  // bytes of tensors held by a workspace and its children (default unlimited):
                       // HETNET_MAX_WORKSPACE_BYTES (see core/workspace_memory.h)
  kMaxProtoParseBytes,  // memory one binary proto parse may take, bounded from its bytes before
                        // parsing (default 4 GiB; core/proto_parse_bound.h): HETNET_MAX_PROTO_PARSE_BYTES
};
int64_t GetLimit(Limit which);
void SetLimit(Limit which, int64_t value);  // value > 0
const char* LimitName(Limit which);         // "largest-tensor cap"
const char* LimitEnvVar(Limit which);       // "HETNET_MAX_TENSOR_BYTES"
// Throws when value > the cap: kOutOfMemory for byte caps, kInvalidArgument for counts. The message
// is "<what> (<value>) exceeds the <cap> of <cap value>; raise it with <ENV>=<n> or hetnet::SetLimit".
void CheckLimit(Limit which, int64_t value, const std::string& what);

// ---- allocation failure injection (tests) ---------------------------------------------------
// With n > 0, the n-th tensor allocation from now fails with kOutOfMemory (once); 0 turns it off.
// Returns how many tensor allocations happened since the last call (to size a sweep over N).
int64_t SetTensorAllocationFailureAt(int64_t n);
// Called by Tensor before each allocation; throws the injected failure when it is due.
void MaybeInjectAllocationFailure(size_t bytes);

// ---- names ----------------------------------------------------------------------------------
// Names that become paths or messages may not hold NUL bytes (they would be cut at the NUL).
inline bool HasNul(const std::string& s) { return s.find('\0') != std::string::npos; }
// kInvalidArgument "<what> contains a NUL byte ..." (the name is printed with the NUL escaped).
void EnforceNoNul(const std::string& name, const char* what);
// The name with NUL and control bytes escaped (\x00), for messages.
std::string PrintableName(const std::string& name);

}  // namespace hetnet
