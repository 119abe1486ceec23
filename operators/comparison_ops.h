// Caffe2's comparison operators EQ, NE, GT, GE, LT, LE: C = A <op> B elementwise, output BOOL, with
// the arithmetic ops' broadcast rules (elementwise_ops.h's LegacyBroadcast): broadcast=1 is Caffe2's
// legacy rule (B viewed as [n] against A viewed as [pre, n, post], C of A's shape); otherwise equal
// shapes, or numpy broadcasting of both (C of the broadcast shape). Inputs of one dtype:
// float32, float64, int32, int64 or bool (Caffe2 registered bool for all six); uint32 and uint64 on
// CPU; string (std::string elements, byte-wise ordering) on CPU only. No gradient.
//
// NaN: IEEE comparisons, so every comparison with NaN is false except NE, which is true. The CPU
// loop and the CUDA kernel share CompareValues.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>

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

// c[i] = a[off_a(i)] <op> b[off_b(i)] for i < total (numpy broadcast; ix has two inputs).
template <typename T, class Context>
void NumpyBroadcastCompare(CompareOp op, const math::BroadcastIndex& ix, int64_t total, const T* a, const T* b,
                           bool* c, Context* ctx);

template <class Context, CompareOp Op>
class ComparisonOp final : public Operator<Context> {
 public:
  ComparisonOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws), args_(def) {}

  void RunOnDevice() override {
    const Tensor& A = this->Input(0);
    const Tensor& B = this->Input(1);
    args_.CheckSameDtype(this->def(), A, B);
    if (args_.UsesLegacy(A, B)) {
      p_ = args_.Plan(this->def(), A, B);
      numpy_ = false;
    } else {
      out_ = NumpyBroadcastOutputShape(this->def(), A.shape(), B.shape());
      ix_ = math::MakeBroadcastIndex(out_, {A.shape(), B.shape()});
      numpy_ = true;
    }
    constexpr bool cpu = std::is_same<Context, CPUContext>::value;  // float16/bfloat16: CPU only
    switch (A.dtype()) {
      case DataType::Float: return Compute<float>(A, B);
      case DataType::Double: return Compute<double>(A, B);
      case DataType::Int32: return Compute<int32_t>(A, B);
      case DataType::Int64: return Compute<int64_t>(A, B);
      case DataType::Bool: return Compute<bool>(A, B);
      case DataType::UInt32: return Compute<uint32_t>(A, B);
      case DataType::UInt64: return Compute<uint64_t>(A, B);
      case DataType::Float16:
      case DataType::BFloat16:  // compared as float32 (exact: both widen without rounding)
        if constexpr (cpu) return Compute<float>(WidenToFloat(A), WidenToFloat(B));
        break;
      case DataType::String:
        if constexpr (cpu) return Compute<std::string>(A, B);
        HN_THROW(kUnsupported, this->type(), ": input 0 ('", this->def().input(0), "') and input 1 ('",
                 this->def().input(1), "') are string tensors, which only the CPU kernel compares");
      default: break;
    }
    HN_THROW(kInvalidArgument, this->type(), ": unsupported dtype ", DataTypeName(A.dtype()), " of input 0 ('",
             this->def().input(0), "'); float32, float64, int32, int64, uint32, uint64 and bool are supported",
             cpu ? ", and float16, bfloat16 and string" : " (float16, bfloat16 and string on CPU only)");
  }

 private:
  // Not in place (the schema refuses it: C is BOOL), so C never aliases A or B.
  template <typename T>
  void Compute(const Tensor& A, const Tensor& B) {
    if (!numpy_) {
      Tensor* C = this->Output(0, A.shape(), DataType::Bool);
      BroadcastCompare<T, Context>(Op, p_.pre, p_.n, p_.post, A.template data<T>(), B.template data<T>(),
                                   C->template mutable_data<bool>(), &this->context_);
    } else {
      Tensor* C = this->Output(0, out_, DataType::Bool);
      NumpyBroadcastCompare<T, Context>(Op, ix_, C->numel(), A.template data<T>(), B.template data<T>(),
                                        C->template mutable_data<bool>(), &this->context_);
    }
  }
  LegacyBroadcast args_;
  bool numpy_ = false;
  BroadcastPlan p_;
  std::vector<int64_t> out_;
  math::BroadcastIndex ix_;
};

}  // namespace hetnet
