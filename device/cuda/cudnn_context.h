// cuDNN handle per (thread, device, stream), bound to the CUDAContext's stream. Used by *_cudnn.cc
// operator files; built only when cuDNN is found (HETNET_WITH_CUDNN).
#pragma once

#include <cudnn.h>

#include "device/cuda/cuda_context.h"

#define HN_CUDNN_CHECK(expr)                                                                          \
  do {                                                                                                \
    cudnnStatus_t hn_st_ = (expr);                                                                    \
    if (hn_st_ != CUDNN_STATUS_SUCCESS)                                                               \
      HN_THROW(kRuntime, "cuDNN error ", cudnnGetErrorString(hn_st_), " in ", #expr);                 \
  } while (0)

namespace hetnet {

// The calling thread's cuDNN handle for ctx's device and stream.
cudnnHandle_t CudnnHandle(const CUDAContext& ctx);

}  // namespace hetnet
