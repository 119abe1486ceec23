// FC on float16 tensors (X, W, b all float16; Y float16), the CPU kernel: float32 arithmetic on converted
// copies, one rounding to float16 at the end. The CUDA kernel (tensor cores) is in fc_op_fp16.cu.
#include <vector>

#include "device/math.h"
#include "operators/fc_op.h"

namespace hetnet {

template <>
void FCHalfKernel<CPUContext>(int64_t M, int64_t N, int64_t K, const Half* x, const Half* w, const Half* b, bool relu,
                              Half* y, CPUContext* ctx) {
  if (M == 0 || N == 0) return;
  std::vector<float> xf(M * K), wf(N * K), yf(M * N);
  for (int64_t i = 0; i < M * K; ++i) xf[i] = HalfToFloat(x[i]);
  for (int64_t i = 0; i < N * K; ++i) wf[i] = HalfToFloat(w[i]);
  for (int64_t i = 0; i < M * N; ++i) yf[i] = HalfToFloat(b[i % N]);
  math::Gemm<CPUContext>(false, true, M, N, K, 1.f, xf.data(), wf.data(), 1.f, yf.data(), ctx);
  for (int64_t i = 0; i < M * N; ++i) y[i] = FloatToHalf(relu && !(yf[i] > 0.f) ? 0.f : yf[i]);
}

}  // namespace hetnet
