// The CPU kernels' intra-op pool (issue 16 item 4): math::ParallelFor runs on it. The calling
// thread works too, and it never waits for a pool thread that has not started: work is handed out
// chunk by chunk from a shared counter, so a pool thread that the OS left descheduled (the cores
// busy with other processes) simply finds nothing left to do. An OpenMP team instead joins every
// member at the end of each region: with both cores of this machine busy elsewhere, every region
// waited a time slice for its sleeping member (7.5 ms per call, whatever its size).
#pragma once

#include <cstdint>
#include <functional>

namespace hetnet {
namespace cpu_pool {

// f(i, slot) for every i in [0, n): on the calling thread (slot 0) and up to `workers` - 1 pool
// threads (slots 1..workers-1, each slot used by one thread at a time, so per-slot scratch is
// safe). Returns when every call has returned. With more than one worker f runs with an intra-op
// team of 1 (nested calls and Eigen inside it stay on their thread); with one, on the caller's
// team. f must not throw.
void Run(int64_t n, int workers, const std::function<void(int64_t, int)>& f);

}  // namespace cpu_pool
}  // namespace hetnet
