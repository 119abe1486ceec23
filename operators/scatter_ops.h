// Index-driven gathers and scatters as ONNX defines them (CPU only, no gradients). Indices are int32
// or int64 and may be negative (counting from the end of their dim); out-of-range ones are refused
// naming the blob, the value and its position.
//   GatherND(data, indices) -> Y, arg batch_dims b (default 0): indices [..., k] with k <= rank - b;
//     each index tuple picks a slice data[batch][i0..ik-1]; Y = indices.shape[:-1] + data.shape[b+k:].
//   ScatterND(data, indices, updates) -> Y: Y = data with the slices at the index tuples of indices
//     [..., k] replaced by (or combined with, arg reduction "add" / "mul" / "max" / "min") updates of
//     shape indices.shape[:-1] + data.shape[k:]. Duplicate tuples apply in order.
//   ScatterElements(data, indices, updates) -> Y, arg axis (default 0), arg reduction as above:
//     Y = data; Y[... indices[p] (at axis) ...] = updates[p] for every position p of indices (same
//     shape as updates, no larger than data in dims other than axis). Caffe2's name Scatter is not
//     used (ONNX's deprecated Scatter imports as ScatterElements).
//   TensorScatter(cache, update[, write_indices]) -> Y (opset 24, KV caches): Y = cache with update's
//     slices along arg axis (default -2, not 0) written from write_indices[b] (int64 [batch], default
//     0) for each batch entry b (dim 0); arg mode "linear" (positions must stay inside the axis) or
//     "circular" (wrapping). update has cache's shape except a shorter or equal axis.
// Without a reduction any dtype but string moves as bytes; a reduction needs a numeric dtype.
#pragma once

#include "core/operator.h"

namespace hetnet {

enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };

class GatherNDOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

class ScatterNDOp final : public Operator<CPUContext> {
 public:
  ScatterNDOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  ScatterReduction reduction_;
};

class ScatterElementsOp final : public Operator<CPUContext> {
 public:
  ScatterElementsOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  ScatterReduction reduction_;
};

class TensorScatterOp final : public Operator<CPUContext> {
 public:
  using Operator<CPUContext>::Operator;
  void RunOnDevice() override;
};

}  // namespace hetnet
