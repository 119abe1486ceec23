// Add, Sub, Mul, Div with Caffe2's legacy broadcast rules, and their gradients. One broadcast plan
// (ComputeBroadcastPlan) serves every op and device; the arithmetic is math::BroadcastBinary.
//
// broadcast=0: A and B must have the same shape. broadcast=1: B's shape (leading and trailing 1s
// stripped) must equal a contiguous run of A's dims starting at `axis` (default: aligned to A's
// suffix); a one-element B broadcasts everywhere. C has A's shape.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "device/math.h"

namespace hetnet {

struct BroadcastPlan {
  int64_t pre = 1, n = 1, post = 1;
};

BroadcastPlan ComputeBroadcastPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b, bool broadcast, int axis,
                                   int a_index = 0, int b_index = 1);

// Caffe2's legacy broadcast arguments (broadcast, axis) and the check shared by the forward binary
// ops that use them (the arithmetic here, the comparisons in comparison_ops.h): both inputs of one
// dtype, B planned against A.
struct LegacyBroadcast {
  explicit LegacyBroadcast(const caffe2::OperatorDef& def);
  BroadcastPlan Plan(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B) const;
  bool broadcast;
  int axis;
};

template <class Context, math::BinaryOp Op>
class BinaryElementwiseOp final : public Operator<Context> {
 public:
  BinaryElementwiseOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws), args_(def) {}

  void RunOnDevice() override {
    // Local views keep both inputs' storage alive if C replaces one of them (in place).
    const Tensor A = this->Input(0);
    const Tensor B = this->Input(1);
    const BroadcastPlan p = args_.Plan(this->def(), A, B);
    switch (A.dtype()) {
      case DataType::Float: return Compute<float>(A, B, p);
      case DataType::Double: return Compute<double>(A, B, p);
      case DataType::Int32: return Compute<int32_t>(A, B, p);
      case DataType::Int64: return Compute<int64_t>(A, B, p);
      default:
        HN_THROW(kInvalidArgument, this->type(), ": unsupported dtype ", DataTypeName(A.dtype()), " of input 0 ('",
                 this->def().input(0), "'); float32, float64, int32 and int64 are supported");
    }
  }

 private:
  template <typename T>
  void Compute(const Tensor& A, const Tensor& B, const BroadcastPlan& p) {
    Tensor* C = this->Output(0, A.shape(), A.dtype());
    math::BroadcastBinary<T, Context>(Op, p.pre, p.n, p.post, A.template data<T>(), B.template data<T>(),
                                      C->template mutable_data<T>(), &this->context_);
  }
  LegacyBroadcast args_;
};

// AddGradient / SubGradient / MulGradient / DivGradient: inputs (dC, A, B), outputs (dA, dB), float32.
// dB is reduced over the broadcast dims.
template <class Context, math::BinaryOp Op>
class BinaryElementwiseGradientOp final : public Operator<Context> {
 public:
  BinaryElementwiseGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        broadcast_(this->template GetSingleArgument<int>("broadcast", 0) != 0),
        axis_(this->template GetSingleArgument<int>("axis", -1)) {}

  void RunOnDevice() override {
    const Tensor dC = this->Input(0);
    const Tensor& A = this->Input(1);
    const Tensor& B = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    const BroadcastPlan p = ComputeBroadcastPlan(this->def(), A.shape(), B.shape(), broadcast_, axis_, 1, 2);
    HN_ENFORCE(dC.shape() == A.shape(), this->type(), ": input 0 ('", this->def().input(0), "') has shape ",
               dC.ShapeString(), " but input 1 ('", this->def().input(1), "') has shape ", A.ShapeString());
    const int64_t total = A.numel();
    const float* dc = dC.template data<float>();
    const float* a = A.template data<float>();
    const float* b = B.template data<float>();
    auto* ctx = &this->context_;
    // dB first: dA may share dC's blob.
    Tensor* dB = this->Output(1, B.shape(), DataType::Float);
    float* db = dB->template mutable_data<float>();
    if (Op == math::BinaryOp::Add || Op == math::BinaryOp::Sub) {
      math::ReduceSumPreMidPost<Context>(p.pre, p.n, p.post, dc, db, ctx);
      if (Op == math::BinaryOp::Sub) math::Scale<Context>(B.numel(), -1.f, db, db, ctx);
    } else {
      scratch_.SetDevice(ctx->device());
      scratch_.Resize({total});
      float* t = scratch_.template mutable_data<float>();
      math::BroadcastBinary<float, Context>(math::BinaryOp::Mul, 1, total, 1, dc, a, t, ctx);
      if (Op == math::BinaryOp::Div) {  // dB = -sum(dC * A / B^2)
        math::BroadcastBinary<float, Context>(math::BinaryOp::Div, p.pre, p.n, p.post, t, b, t, ctx);
        math::BroadcastBinary<float, Context>(math::BinaryOp::Div, p.pre, p.n, p.post, t, b, t, ctx);
      }
      math::ReduceSumPreMidPost<Context>(p.pre, p.n, p.post, t, db, ctx);
      if (Op == math::BinaryOp::Div) math::Scale<Context>(B.numel(), -1.f, db, db, ctx);
    }
    Tensor* dA = this->Output(0, A.shape(), DataType::Float);
    float* da = dA->template mutable_data<float>();
    if (Op == math::BinaryOp::Add || Op == math::BinaryOp::Sub) {
      if (da != dc) ctx->CopyBytes(total * sizeof(float), dc, dC.device(), da, dA->device());
    } else {
      math::BroadcastBinary<float, Context>(Op, p.pre, p.n, p.post, dc, b, da, ctx);  // dC * B or dC / B
    }
  }

 private:
  Tensor scratch_;
  bool broadcast_;
  int axis_;
};

}  // namespace hetnet
