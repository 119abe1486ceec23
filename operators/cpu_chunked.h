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
void CpuChunked(int64_t n, F&& f, int64_t min_parallel = 4 * kCpuChunk, int64_t chunk = kCpuChunk) {
  if (n <= 0) return;
  const int64_t chunks = (n + chunk - 1) / chunk;
  const int workers = n < min_parallel ? 1 : static_cast<int>(std::min<int64_t>(math::CpuWorkers(), chunks));
  if (workers <= 1) return f(int64_t{0}, n);
  math::ParallelFor(chunks, workers, [&](int64_t c, int) { f(c * chunk, std::min(chunk, n - c * chunk)); });
}

// f(first_row, row_count) over `rows` rows of `row_elems` elements each, chunked as above by elements
// (whole rows per chunk).
template <typename F>
void CpuChunkedRows(int64_t rows, int64_t row_elems, F&& f) {
  const int64_t per = std::max<int64_t>(1, row_elems);
  CpuChunked(rows, f, (4 * kCpuChunk + per - 1) / per, std::max<int64_t>(1, kCpuChunk / per));
}

}  // namespace hetnet
