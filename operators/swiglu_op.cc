#include "operators/swiglu_op.h"

#include <cmath>

#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

void SwiGLUOp::RunOnDevice() {
  const Tensor &A = Input(0), &B = Input(1);
  HN_ENFORCE(A.dtype() == B.dtype() && A.sizes() == B.sizes(), type(), ": A ('", def().input(0), "') ",
             DataTypeName(A.dtype()), " ", A.ShapeString(), " and B ('", def().input(1), "') ", DataTypeName(B.dtype()),
             " ", B.ShapeString(), " must have one shape and dtype (no broadcasting)");
  switch (A.dtype()) {
    case DataType::Float: return Compute<float, float>();
    case DataType::Double: return Compute<double, double>();
    case DataType::Float16: return Compute<Half, float>();
    case DataType::BFloat16: return Compute<BFloat16, float>();
    default:
      HN_THROW(kInvalidArgument, type(), ": A ('", def().input(0), "') is ", DataTypeName(A.dtype()),
               "; float32, float64, float16 or bfloat16 is required");
  }
}

template <typename T, typename C>
void SwiGLUOp::Compute() {
  const Tensor &A = Input(0), &B = Input(1);
  const T *a = A.data<T>(), *b = B.data<T>();
  T* y = Output(0, A.sizes(), A.dtype())->template mutable_data<T>();
  const C alpha = static_cast<C>(alpha_);
  for (int64_t k = 0; k < A.numel(); ++k) {
    const C x = ToCompute<C>(a[k]);
    const C s = RoundTo<T>(C(1) / RoundTo<T>(C(1) + RoundTo<T>(std::exp(RoundTo<T>(-alpha * x)))));
    y[k] = FromCompute<T, C>(RoundTo<T>(x * s) * ToCompute<C>(b[k]));
  }
}

OPERATOR_SCHEMA(SwiGLU).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's SwiGLU: A * sigmoid(alpha * A) * B, one shape and dtype (float32/64/16, bfloat16). CPU only.");
REGISTER_CPU_OPERATOR(SwiGLU, SwiGLUOp);

}  // namespace hetnet
