// hetnet's own Winograd convolution F(4x4, 3x3) (Lavin and Gray, 2016) on blocked activations
// (nChw8c), run by the DNNL Conv where oneDNN 2.6 has no Winograd kernel: hosts without AVX-512.
// There its direct kernel was the limit of ResNet's 3x3 layers; a 4x4 output tile costs 36
// multiply-adds per (input, output) channel pair here instead of 144.
//
// Three steps, each on the intra-op pool:
// 1. every 6x6 input tile (overlapping by 2, zeros outside the image) is transformed, V = B^T d B,
//    into 36 matrices V[xi] of [tiles, C];
// 2. 36 GEMMs M[xi] = V[xi] x U[xi] on the packed GEMM (device/cpu_packed_gemm.h), U[xi] the filter
//    transformed once, U = G g G^T, and packed ([C, M] per position, prepared once per weight
//    version and shared like the other prepared weights);
// 3. each tile back, Y = A^T M A, with the bias, the residual (fused_residual) and Relu.
// Results differ from the direct kernel's in the last bits: up to about 1e-5 of the largest output
// (2e-5 in the tests), a few bits more than a direct sum, from the transforms' factors.
#pragma once

#include <cstdint>
#include <memory>

#include "core/tensor.h"
#include "device/prepared_weights.h"
#include "operators/conv_pool_shape.h"

namespace hetnet {

class WinogradF43Conv {
 public:
  // float32 3x3, stride 1, no dilation, one group, filter [M, C, 3, 3] (not Caffe2's NHWC order),
  // X and Y nChw8c, on a CPU where the packed GEMM runs and oneDNN has no Winograd kernel.
  static bool Fits(const ConvPoolGeom& g);
  // Where it is predicted faster than the direct kernel: enough channels for the GEMMs, a
  // transformed filter (4x the filter: 36 positions instead of 9) of at most 64 MiB, and tiles that
  // do not overhang the image so much that the multiply-adds saved are lost.
  static bool Pays(const ConvPoolGeom& g);
  // y = Conv(x) + bias (+ residual), then Relu if asked; x, y, residual nChw8c of g's shapes.
  // residual may be y itself (read before written, element by element).
  void Run(const ConvPoolGeom& g, const float* x, const Tensor& filter, const float* bias, const float* residual,
           bool relu, float* y, int workers);

  // The transformed filter of `filter` ([M, C, 3, 3] float32), made now unless this instance or
  // another one already holds this version of it: at net creation for a constant filter, else at
  // the first run.
  struct Filter;  // U: 36 packed matrices [C, M]
  const Filter& Prepare(const Tensor& filter, int workers);
  // Test hook: filters transformed so far in this process.
  static int64_t FilterPreparations();

  struct Layout {
    int64_t C = 0, M = 0;
    bool operator==(const Layout& o) const { return C == o.C && M == o.M; }
  };

 private:
  static void InputTile(const ConvPoolGeom& g, const float* x, int64_t tile, float* v, int64_t ld);
  static void OutputTile(const ConvPoolGeom& g, const float* m, int64_t ld, int64_t tile, const float* bias,
                         const float* residual, bool relu, float* y);
  PreparedWeight<Layout, Filter> weight_;
};

}  // namespace hetnet
