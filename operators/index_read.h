// One int32/int64 index read back to the host from any device, for error messages that name the
// offending value (Gather, the lengths reducers): the kernels find a bad position, this fetches it.
#pragma once

#include <cstdint>

#include "core/context.h"
#include "core/tensor.h"

namespace hetnet {

inline int64_t ReadIndexToHost(const Tensor& indices, int64_t pos, DeviceContext* ctx) {
  int64_t value = 0;
  if (indices.dtype() == DataType::Int64) {
    ctx->CopyBytes(sizeof(int64_t), indices.data<int64_t>() + pos, indices.device(), &value, Device::CPU());
  } else {
    int32_t v = 0;
    ctx->CopyBytes(sizeof(int32_t), indices.data<int32_t>() + pos, indices.device(), &v, Device::CPU());
    value = v;
  }
  ctx->FinishDeviceComputation();
  return value;
}

}  // namespace hetnet
