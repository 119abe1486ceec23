// CPU elementwise kernels' work split: f(offset, count) over [0, n) in chunks of kChunk elements,
// spread over the OpenMP team (math::ParallelFor) only when there is enough work to pay for waking
// it. Vectorized float kernels run about 0.1-1 ns an element, so below `min_parallel` elements
// (default 4 chunks, 64K) one thread is faster than a team.
#pragma once

#include <algorithm>
#include <cstdint>

#include "device/math.h"

namespace hetnet {

constexpr int64_t kCpuChunk = 16384;

template <typename F>
void CpuChunked(int64_t n, F&& f, int64_t min_parallel = 4 * kCpuChunk) {
  if (n <= 0) return;
  const int64_t chunks = (n + kCpuChunk - 1) / kCpuChunk;
  const int workers = n < min_parallel ? 1 : static_cast<int>(std::min<int64_t>(math::CpuWorkers(), chunks));
  if (workers <= 1) return f(int64_t{0}, n);
  math::ParallelFor(chunks, workers,
                    [&](int64_t c, int) { f(c * kCpuChunk, std::min(kCpuChunk, n - c * kCpuChunk)); });
}

}  // namespace hetnet
