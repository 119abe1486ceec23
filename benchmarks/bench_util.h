// Helpers shared by the benchmark programs: best-of-N wall time and seeded random tensors (float32,
// or rounded to float16).
#pragma once

#include <algorithm>
#include <chrono>
#include <random>
#include <vector>

#include "core/tensor.h"

namespace hetnet::bench {

using Clock = std::chrono::steady_clock;

// Runs f once to warm up, then `reps` times; returns the fastest run in seconds.
template <typename F>
double BestSeconds(F f, int reps) {
  f();
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    const auto t0 = Clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(Clock::now() - t0).count());
  }
  return best;
}

// A float32 CPU tensor of uniform values in [lo, hi), reproducible from `seed`.
inline Tensor RandomTensor(std::vector<int64_t> shape, unsigned seed, float lo = -1.f, float hi = 1.f) {
  Tensor t(std::move(shape), DataType::Float);
  std::mt19937 g(seed);
  std::uniform_real_distribution<float> d(lo, hi);
  float* p = t.mutable_data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) p[i] = d(g);
  return t;
}

// The same values rounded to float16.
inline Tensor HalfOf(const Tensor& f) {
  Tensor h(f.shape(), DataType::Float16);
  const float* src = f.data<float>();
  Half* dst = h.mutable_data<Half>();
  for (int64_t i = 0; i < f.numel(); ++i) dst[i] = FloatToHalf(src[i]);
  return h;
}

}  // namespace hetnet::bench
