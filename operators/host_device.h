// HN_HOST_DEVICE marks an inline function that both a CPU loop and a CUDA kernel call, so the
// per-element math is written once. No CUDA header here: .cc files must compile without CUDA.
#pragma once

#if defined(__CUDACC__)
#define HN_HOST_DEVICE __host__ __device__
#else
#define HN_HOST_DEVICE
#endif
