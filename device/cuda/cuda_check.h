// CUDA error checks that throw hetnet::Error (out-of-memory mapped to kOutOfMemory).
#pragma once

#include <cuda_runtime.h>

#include "core/error.h"

#define HN_CUDA_CHECK(expr)                                                                       \
  do {                                                                                            \
    cudaError_t hn_err_ = (expr);                                                                 \
    if (hn_err_ != cudaSuccess) {                                                                 \
      (void)cudaGetLastError(); /* clear the sticky-free error so the runtime stays usable */     \
      ::hetnet::Throw(hn_err_ == cudaErrorMemoryAllocation ? ::hetnet::ErrorKind::kOutOfMemory    \
                                                           : ::hetnet::ErrorKind::kRuntime,       \
                      ::hetnet::MakeString("CUDA error ", cudaGetErrorName(hn_err_), " (",        \
                                           cudaGetErrorString(hn_err_), ") in ", #expr));         \
    }                                                                                             \
  } while (0)

#define HN_CUBLAS_CHECK(expr)                                                                     \
  do {                                                                                            \
    cublasStatus_t hn_st_ = (expr);                                                               \
    if (hn_st_ != CUBLAS_STATUS_SUCCESS)                                                          \
      HN_THROW(kRuntime, "cuBLAS error ", static_cast<int>(hn_st_), " in ", #expr);               \
  } while (0)
