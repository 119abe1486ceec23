// Seeds for contexts and random operators whose device_option has no random_seed. One
// std::random_device read per process, then a splitmix64 sequence: a random_device per operator
// (an open and read of /dev/urandom or a hardware RNG round) made it 60% of net creation time.
#pragma once

#include <cstdint>

namespace hetnet {

// A fresh, unpredictable-per-process 32-bit seed (thread-safe).
uint32_t NonDeterministicSeed();

}  // namespace hetnet
