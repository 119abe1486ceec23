// Add, Sub, Mul, Div with Caffe2's broadcast rules, and their gradients. One broadcast plan serves
// every op and device; the arithmetic is math::BroadcastBinary (legacy) or math::NumpyBroadcastBinary.
//
// broadcast=1 (legacy): B's shape (leading and trailing 1s stripped) must equal a contiguous run of
// A's dims starting at `axis` (default: aligned to A's suffix); a one-element B broadcasts
// everywhere; C has A's shape. No broadcast argument (or 0): equal shapes as before; differing
// shapes broadcast numpy-style in both directions, C has the broadcast shape (modern Caffe2).
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "device/broadcast.h"
#include "device/math.h"

namespace hetnet {

struct BroadcastPlan {
  int64_t pre = 1, n = 1, post = 1;
};

BroadcastPlan ComputeBroadcastPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b, bool broadcast, int axis,
                                   int a_index = 0, int b_index = 1);

// Caffe2's broadcast arguments (broadcast, axis) and the checks shared by the forward binary ops
// (the arithmetic here, the comparisons in comparison_ops.h): both inputs of one dtype; with
// broadcast=1 or equal shapes, B planned against A by the legacy rule (Plan); otherwise numpy's
// multidirectional rule (NumpyBroadcastOutputShape, device/broadcast.h).
struct LegacyBroadcast {
  explicit LegacyBroadcast(const caffe2::OperatorDef& def);
  void CheckSameDtype(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B) const;
  bool UsesLegacy(const Tensor& A, const Tensor& B) const { return broadcast || A.shape() == B.shape(); }
  BroadcastPlan Plan(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B) const;
  // *out = the output shape of A op B; true when the (pre, n, post) plan *p computes it (the legacy
  // rule, or numpy's in that form: NumpyIsLegacyPlan), false when it needs the general index.
  bool PlainPlan(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B, std::vector<int64_t>* out,
                 BroadcastPlan* p) const;
  bool broadcast;
  int axis;
};

// The numpy broadcast of inputs ai and bi's shapes; an error naming the op, both inputs and their
// shapes when a dim pair differs and neither is 1.
std::vector<int64_t> NumpyBroadcastOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b, int ai = 0, int bi = 1);
// Whether numpy's broadcast of b onto a (into shape `out`) is Caffe2's legacy (pre, n, post) form: a
// holds out's elements as they are and b's dims other than 1 are one contiguous run of out's (b
// [C,1,1] on [N,C,H,W], [16] on [N,16], [16M] on [1,16M], one value); then *p is that plan, run by
// the plain loops instead of the general index (a 16M-float Add of [1,16M] and [16M]: 4x faster).
bool NumpyIsLegacyPlan(const std::vector<int64_t>& out, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                       BroadcastPlan* p);
// The forward output shape for inputs 0 and 1 under the def's broadcast arguments (shape inference).
std::vector<int64_t> BinaryOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b);

// An in-place run writes C over an input's storage; that is safe only where the input has C's shape
// (each element read before it is written, at its own position). Otherwise C gets fresh storage (the
// op's local views keep the input alive). Called before allocating C.
inline void DropAliasedStorage(Tensor* C, const std::vector<int64_t>& out_shape,
                               std::initializer_list<const Tensor*> inputs) {
  for (const Tensor* in : inputs)
    if (C->SharesStorageWith(*in) && in->shape() != out_shape) {
      *C = Tensor(C->device());
      return;
    }
}

// float16 and bfloat16 on CPU: the binary ops and comparisons compute on float32 copies of the inputs,
// the arithmetic results rounded once to the inputs' dtype (as NumPy computes them).
inline bool IsSixteenBitFloat(DataType t) { return t == DataType::Float16 || t == DataType::BFloat16; }
Tensor WidenToFloat(const Tensor& x);            // a float32 CPU copy of a float16 / bfloat16 CPU tensor
void NarrowFromFloat(const Tensor& f, Tensor* y);  // f's values rounded into y (y's dtype, f's shape)

// Calls f(T{}) for the arithmetic dtypes; other dtypes are refused naming input 0.
template <class Context, typename F>
void DispatchArithmeticType(const caffe2::OperatorDef& def, DataType t, F&& f) {
  constexpr bool cpu = std::is_same<Context, CPUContext>::value;
  switch (t) {
    case DataType::Float: return f(float{});
    case DataType::Double: return f(double{});
    case DataType::Int32: return f(int32_t{});
    case DataType::Int64: return f(int64_t{});
    case DataType::UInt32: return f(uint32_t{});
    case DataType::UInt64: return f(uint64_t{});
    default: break;
  }
  HN_THROW(kInvalidArgument, def.type(), ": unsupported dtype ", DataTypeName(t), " of input 0 ('", def.input(0),
           "'); float32, float64, int32, int64, uint32 and uint64 are supported",
           cpu ? " (float16 and bfloat16 through float32)" : " (float16 and bfloat16 on CPU only)");
}

template <class Context, math::BinaryOp Op>
class BinaryElementwiseOp final : public Operator<Context> {
 public:
  BinaryElementwiseOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws), args_(def) {}

  void RunOnDevice() override {
    // Local views keep both inputs' storage alive if C replaces one of them (in place).
    const Tensor A = this->Input(0);
    const Tensor B = this->Input(1);
    args_.CheckSameDtype(this->def(), A, B);
    if constexpr (std::is_same<Context, CPUContext>::value) {
      if (IsSixteenBitFloat(A.dtype())) return RunThroughFloat(A, B);
    }
    BroadcastPlan p;
    std::vector<int64_t> out;
    if (args_.PlainPlan(this->def(), A, B, &out, &p)) {
      DispatchArithmeticType<Context>(this->def(), A.dtype(), [&](auto zero) { ComputeLegacy<decltype(zero)>(A, B, p, out); });
    } else {
      const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {A.shape(), B.shape()});
      DispatchArithmeticType<Context>(this->def(), A.dtype(), [&](auto zero) { ComputeNumpy<decltype(zero)>(A, B, out, ix); });
    }
  }

 private:
  // C (of shape `out`: A's elements) = A op B by the (pre, n, post) plan.
  template <typename T>
  void ComputeLegacy(const Tensor& A, const Tensor& B, const BroadcastPlan& p, const std::vector<int64_t>& out) {
    Tensor* C = this->Output(0);
    DropAliasedStorage(C, out, {&B});
    C = this->Output(0, out, A.dtype());
    math::BroadcastBinary<T, Context>(Op, p.pre, p.n, p.post, A.template data<T>(), B.template data<T>(),
                                      C->template mutable_data<T>(), &this->context_);
  }
  template <typename T>
  void ComputeNumpy(const Tensor& A, const Tensor& B, const std::vector<int64_t>& out, const math::BroadcastIndex& ix) {
    DropAliasedStorage(this->Output(0), out, {&A, &B});
    Tensor* C = this->Output(0, out, A.dtype());
    math::NumpyBroadcastBinary<T, Context>(Op, ix, C->numel(), A.template data<T>(), B.template data<T>(),
                                           C->template mutable_data<T>(), &this->context_);
  }
  // The inputs' float32 copies computed into a float32 result, then rounded into C (in place is safe:
  // A and B were read into the copies first).
  void RunThroughFloat(const Tensor& A, const Tensor& B) {
    const Tensor a = WidenToFloat(A), b = WidenToFloat(B);
    Tensor c(Device::CPU());
    BroadcastPlan p;
    std::vector<int64_t> out;
    if (args_.PlainPlan(this->def(), a, b, &out, &p)) {
      c.Resize(out);
      math::BroadcastBinary<float, Context>(Op, p.pre, p.n, p.post, a.template data<float>(), b.template data<float>(),
                                            c.template mutable_data<float>(), &this->context_);
    } else {
      const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {a.shape(), b.shape()});
      c.Resize(out);
      math::NumpyBroadcastBinary<float, Context>(Op, ix, c.numel(), a.template data<float>(), b.template data<float>(),
                                                 c.template mutable_data<float>(), &this->context_);
    }
    DropAliasedStorage(this->Output(0), c.shape(), {&A, &B});
    NarrowFromFloat(c, this->Output(0, c.shape(), A.dtype()));
  }
  LegacyBroadcast args_;
};

// AddGradient / SubGradient / MulGradient / DivGradient: inputs (dC, A, B), outputs (dA, dB), float32.
// Legacy: dB is reduced over the broadcast dims. Numpy: dA and dB are each summed over the dims
// their input stretched, back to the input's shape.
template <class Context, math::BinaryOp Op>
class BinaryElementwiseGradientOp final : public Operator<Context> {
 public:
  BinaryElementwiseGradientOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        broadcast_(this->template GetSingleArgument<int>("broadcast", 0) != 0),
        axis_(this->template GetSingleArgument<int>("axis", -1)) {}

  void RunOnDevice() override {
    const Tensor dC = this->Input(0);  // a view: dA may replace dC's blob (in place)
    const Tensor& A = this->Input(1);
    const Tensor& B = this->Input(2);
    for (int i = 0; i < 3; ++i) EnforceFloatInput(this->def(), this->Input(i), i);
    if (broadcast_ || A.shape() == B.shape()) return RunLegacy(dC, A, B);
    RunNumpy(dC, A, B);
  }

 private:
  void RunLegacy(const Tensor& dC, const Tensor& A, const Tensor& B) {
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
      float* t = Scratch(&scratch_, total);
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

  // Numpy: with t of the output's shape, dA = reduce_A(dC op' B) and dB = reduce_B(...), where
  // reduce_X sums over the dims X stretched. dB first: dA may share dC's blob.
  void RunNumpy(const Tensor& dC, const Tensor& A, const Tensor& B) {
    const std::vector<int64_t> out = NumpyBroadcastOutputShape(this->def(), A.shape(), B.shape(), 1, 2);
    HN_ENFORCE(dC.shape() == out, this->type(), ": input 0 ('", this->def().input(0), "') has shape ",
               dC.ShapeString(), " but inputs 1 and 2 broadcast to ", ShapeToString(out));
    const int64_t total = dC.numel();
    const math::ReduceToShapeIndex to_a = math::MakeReduceToShapeIndex(out, A.shape());
    const math::ReduceToShapeIndex to_b = math::MakeReduceToShapeIndex(out, B.shape());
    const float* dc = dC.template data<float>();
    const float* a = A.template data<float>();
    const float* b = B.template data<float>();
    auto* ctx = &this->context_;
    const bool additive = Op == math::BinaryOp::Add || Op == math::BinaryOp::Sub;
    math::BroadcastIndex with_a, with_b;  // (out, A) and (out, B): dC against a stretched input
    if (!additive) {
      with_a = math::MakeBroadcastIndex(out, {out, A.shape()});
      with_b = math::MakeBroadcastIndex(out, {out, B.shape()});
    }
    Tensor* dB = this->Output(1);
    DropAliasedStorage(dB, B.shape(), {&dC, &A});
    dB = this->Output(1, B.shape(), DataType::Float);
    float* db = dB->template mutable_data<float>();
    float* t = additive ? nullptr : Scratch(&scratch_, total);
    if (additive) {
      math::ReduceSumToShape<Context>(to_b, B.numel(), dc, db, ctx);
    } else {
      math::NumpyBroadcastBinary<float, Context>(math::BinaryOp::Mul, with_a, total, dc, a, t, ctx);  // dC * A
      if (Op == math::BinaryOp::Div) {  // dB = -sum(dC * A / B^2)
        math::NumpyBroadcastBinary<float, Context>(math::BinaryOp::Div, with_b, total, t, b, t, ctx);
        math::NumpyBroadcastBinary<float, Context>(math::BinaryOp::Div, with_b, total, t, b, t, ctx);
      }
      math::ReduceSumToShape<Context>(to_b, B.numel(), t, db, ctx);
    }
    if (Op == math::BinaryOp::Sub || Op == math::BinaryOp::Div) math::Scale<Context>(B.numel(), -1.f, db, db, ctx);
    Tensor* dA = this->Output(0);
    DropAliasedStorage(dA, A.shape(), {&dC, &B});
    dA = this->Output(0, A.shape(), DataType::Float);
    float* da = dA->template mutable_data<float>();
    if (additive) {
      math::ReduceSumToShape<Context>(to_a, A.numel(), dc, da, ctx);
    } else {
      math::NumpyBroadcastBinary<float, Context>(Op, with_b, total, dc, b, t, ctx);  // dC * B or dC / B
      math::ReduceSumToShape<Context>(to_a, A.numel(), t, da, ctx);
    }
  }

  float* Scratch(Tensor* s, int64_t n) {
    s->SetDevice(this->context_.device());
    s->Resize({n});
    return s->template mutable_data<float>();
  }

  Tensor scratch_;
  bool broadcast_;
  int axis_;
};

}  // namespace hetnet
