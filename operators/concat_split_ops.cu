// Concat and Split on CUDA: each piece is one cudaMemcpy2DAsync on the op's stream.
#include "device/cuda/cuda_context.h"
#include "operators/concat_split_ops.h"

namespace hetnet {

template <>
void CopyMatrixBytes<CUDAContext>(int64_t rows, int64_t row_bytes, const void* src, int64_t src_pitch, void* dst,
                                  int64_t dst_pitch, CUDAContext* ctx) {
  HN_CUDA_CHECK(cudaMemcpy2DAsync(dst, dst_pitch, src, src_pitch, row_bytes, rows, cudaMemcpyDeviceToDevice,
                                  ctx->stream()));
}

REGISTER_CUDA_OPERATOR(Concat, ConcatOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(Split, SplitOp<CUDAContext>);

}  // namespace hetnet
