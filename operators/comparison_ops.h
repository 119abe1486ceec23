// Caffe2's comparison operators EQ, NE, GT, GE, LT, LE: C = A <op> B elementwise, output BOOL of
// A's shape, with Caffe2's legacy broadcast (args broadcast, axis) through elementwise_ops.h's
// ComputeBroadcastPlan: B viewed as [n] against A viewed as [pre, n, post]. Inputs of one dtype:
// float32, float64, int32, int64 or bool (Caffe2 registered bool for all six). No gradient.
//
// NaN: IEEE comparisons, so every comparison with NaN is false except NE, which is true. The CPU
// loop and the CUDA kernel share CompareValues.
#pragma once

#include <cstdint>

#include "operators/elementwise_ops.h"
#include "operators/host_device.h"

namespace hetnet {

enum class CompareOp { EQ, NE, GT, GE, LT, LE };

template <CompareOp Op, typename T>
HN_HOST_DEVICE inline bool CompareValues(T a, T b) {
  if constexpr (Op == CompareOp::EQ) return a == b;
  else if constexpr (Op == CompareOp::NE) return a != b;
  else if constexpr (Op == CompareOp::GT) return a > b;
  else if constexpr (Op == CompareOp::GE) return a >= b;
  else if constexpr (Op == CompareOp::LT) return a < b;
  else return a <= b;
}

// c[i] = a[i] <op> b[(i / post) % n] for i < pre * n * post. Instantiated for float, double,
// int32_t, int64_t, bool on each device.
template <typename T, class Context>
void BroadcastCompare(CompareOp op, int64_t pre, int64_t n, int64_t post, const T* a, const T* b, bool* c,
                      Context* ctx);

template <class Context, CompareOp Op>
class ComparisonOp final : public Operator<Context> {
 public:
  ComparisonOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws), args_(def) {}

  void RunOnDevice() override {
    const Tensor& A = this->Input(0);
    const Tensor& B = this->Input(1);
    const BroadcastPlan p = args_.Plan(this->def(), A, B);
    switch (A.dtype()) {
      case DataType::Float: return Compute<float>(A, B, p);
      case DataType::Double: return Compute<double>(A, B, p);
      case DataType::Int32: return Compute<int32_t>(A, B, p);
      case DataType::Int64: return Compute<int64_t>(A, B, p);
      case DataType::Bool: return Compute<bool>(A, B, p);
      default:
        HN_THROW(kInvalidArgument, this->type(), ": unsupported dtype ", DataTypeName(A.dtype()), " of input 0 ('",
                 this->def().input(0), "'); float32, float64, int32, int64 and bool are supported");
    }
  }

 private:
  template <typename T>
  void Compute(const Tensor& A, const Tensor& B, const BroadcastPlan& p) {
    Tensor* C = this->Output(0, A.shape(), DataType::Bool);
    BroadcastCompare<T, Context>(Op, p.pre, p.n, p.post, A.template data<T>(), B.template data<T>(),
                                 C->template mutable_data<bool>(), &this->context_);
  }
  LegacyBroadcast args_;
};

}  // namespace hetnet
