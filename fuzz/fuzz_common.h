// Shared by the libFuzzer targets: small caps so that an input can only ask for little memory and
// work, and the input as a string. A hetnet::Error is the expected answer to bad input; anything
// else (another exception, a crash, a sanitizer report, an allocation over libFuzzer's
// -malloc_limit_mb) is a finding.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/checked_size.h"
#include "core/error.h"

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
