// Einsum(X_0, ..., X_{n-1}) -> Y: ONNX's Einsum with arg equation ("ij,jk->ik", "...ii->...i",
// "i,i", implicit outputs as numpy: the labels used once, alphabetically, after the broadcast "..."
// dims). Labels are letters; a label repeated within one term takes the diagonal; "..." dims
// broadcast numpy-style across the inputs. All inputs of one dtype (float32/64, int32/64), computed in
// float64 (int64 sums exact to 2^53) by a plain loop over every label combination: meant for the
// small contractions models use outside their matmuls. The loop is capped at 2^32 steps. CPU only;
// no gradient.
//
// Det(X) -> Y: ONNX's Det, the determinants of X's trailing [M, M] matrices (Y has X's leading dims),
// by Gaussian elimination with partial pivoting in float64. float32/64. CPU only; no gradient.
#pragma once

#include <string>

#include "core/operator.h"

namespace hetnet {

class EinsumOp final : public Operator<CPUContext> {
 public:
  EinsumOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  std::string equation_;
};

class DetOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
