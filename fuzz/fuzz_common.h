// Shared by the libFuzzer targets: small caps so that an input can only ask for little memory and
// work, and the input as a string. A hetnet::Error is the expected answer to bad input; anything
// else (another exception, a crash, a sanitizer report, an allocation over libFuzzer's
// -malloc_limit_mb) is a finding.
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <google/protobuf/io/zero_copy_stream_impl_lite.h>
#include <google/protobuf/message.h>

#include "core/checked_size.h"
#include "core/error.h"
#include "core/proto_parse_bound.h"

namespace hetnet_fuzz {

inline void SetFuzzLimits() {
  hetnet::SetLimit(hetnet::Limit::kMaxTensorBytes, int64_t{64} << 20);  // 64 MiB per tensor
  hetnet::SetLimit(hetnet::Limit::kMaxProtoBytes, int64_t{16} << 20);
  hetnet::SetLimit(hetnet::Limit::kMaxNetOps, 4096);
  hetnet::SetLimit(hetnet::Limit::kMaxDagWorkers, 4);
}

inline std::string Bytes(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

// `msg` was parsed from `bytes` (binary or text): the bound that the parse was checked against
// (core/proto_parse_bound.h) must hold what it took. Aborts, as a finding, when it does not.
inline void CheckParseBound(const std::string& bytes, const google::protobuf::Message& msg) {
  google::protobuf::io::ArrayInputStream wire(bytes.data(), static_cast<int>(bytes.size()), 64);
  const hetnet::ParseBound binary = hetnet::BoundParsedSize(msg.GetDescriptor(), &wire, bytes.size());
  const uint64_t text = hetnet::BoundTextParsedSize(msg.GetDescriptor(), bytes);
  const uint64_t bound = std::max<uint64_t>(binary.bytes, text);
  if (bound < msg.SpaceUsedLong()) {
    std::fprintf(stderr, "parse bound %llu < %llu bytes used by %s\n", static_cast<unsigned long long>(bound),
                 static_cast<unsigned long long>(msg.SpaceUsedLong()), msg.GetTypeName().c_str());
    std::abort();
  }
}

}  // namespace hetnet_fuzz

// Runs `body` once per input after the caps are set; hetnet::Error is swallowed.
#define HETNET_FUZZ_ENTRY(body)                                                 \
  extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {     \
    static const bool hetnet_fuzz_init = (hetnet_fuzz::SetFuzzLimits(), true);  \
    (void)hetnet_fuzz_init;                                                     \
    try {                                                                       \
      body(data, size);                                                         \
    } catch (const hetnet::Error&) {                                            \
    }                                                                           \
    return 0;                                                                   \
  }
