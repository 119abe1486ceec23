// MatMul and BatchMatMul on CUDA: the math is cuBLAS (device/math's Gemm); this file only registers.
#include "device/cuda/cuda_context.h"
#include "operators/matmul_ops.h"

namespace hetnet {
REGISTER_CUDA_OPERATOR(MatMul, MatMulOp<CUDAContext>);
REGISTER_CUDA_OPERATOR(BatchMatMul, BatchMatMulOp<CUDAContext>);
}  // namespace hetnet
