#include "operators/elementwise_ops.h"

#include <algorithm>

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

LegacyBroadcast::LegacyBroadcast(const caffe2::OperatorDef& def) {
  ArgumentHelper a(def);
  broadcast = a.GetSingleArgument<int>("broadcast", 0) != 0;
  axis = a.GetSingleArgument<int>("axis", -1);
}

void LegacyBroadcast::CheckSameDtype(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B) const {
  HN_ENFORCE(A.dtype() == B.dtype(), def.type(), ": input 0 ('", def.input(0), "') is ", DataTypeName(A.dtype()),
             " but input 1 ('", def.input(1), "') is ", DataTypeName(B.dtype()),
             "; both inputs must have the same dtype");
}

Tensor WidenToFloat(const Tensor& x) {
  Tensor f(x.shape(), DataType::Float);
  float* y = f.mutable_data<float>();
  if (x.dtype() == DataType::Float16) {
    const Half* p = x.data<Half>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = HalfToFloat(p[i]);
  } else {
    const BFloat16* p = x.data<BFloat16>();
    for (int64_t i = 0; i < x.numel(); ++i) y[i] = BFloat16ToFloat(p[i]);
  }
  return f;
}

void NarrowFromFloat(const Tensor& f, Tensor* y) {
  const float* x = f.data<float>();
  if (y->dtype() == DataType::Float16) {
    Half* p = y->mutable_data<Half>();
    for (int64_t i = 0; i < f.numel(); ++i) p[i] = FloatToHalf(x[i]);
  } else {
    BFloat16* p = y->mutable_data<BFloat16>();
    for (int64_t i = 0; i < f.numel(); ++i) p[i] = FloatToBFloat16(x[i]);
  }
}

BroadcastPlan LegacyBroadcast::Plan(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B) const {
  return ComputeBroadcastPlan(def, A.shape(), B.shape(), broadcast, axis);
}

bool LegacyBroadcast::PlainPlan(const caffe2::OperatorDef& def, const Tensor& A, const Tensor& B,
                                std::vector<int64_t>* out, BroadcastPlan* p) const {
  if (UsesLegacy(A, B)) {
    *out = A.shape();
    *p = Plan(def, A, B);
    return true;
  }
  *out = NumpyBroadcastOutputShape(def, A.shape(), B.shape());
  return NumpyIsLegacyPlan(*out, A.shape(), B.shape(), p);
}

std::vector<int64_t> NumpyBroadcastOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                               const std::vector<int64_t>& b, int ai, int bi) {
  std::vector<int64_t> out;
  HN_ENFORCE(math::NumpyBroadcastShape({a, b}, &out), def.type(), ": input ", ai, " ('", def.input(ai),
             "') has shape ", ShapeToString(a), " and input ", bi, " ('", def.input(bi), "') has shape ",
             ShapeToString(b), "; they do not broadcast (with broadcast=0, numpy's rule: aligned from the last dim, each pair "
             "must be equal or contain a 1; broadcast=1 selects Caffe2's legacy rule)");
  return out;
}

bool NumpyIsLegacyPlan(const std::vector<int64_t>& out, const std::vector<int64_t>& a, const std::vector<int64_t>& b,
                       BroadcastPlan* p) {
  const size_t r = out.size();
  if (a.size() > r || b.size() > r) return false;
  auto dim = [r](const std::vector<int64_t>& s, size_t k) { return k + s.size() < r ? int64_t{1} : s[k + s.size() - r]; };
  auto numel = [&](size_t from, size_t to) {
    int64_t n = 1;
    for (size_t k = from; k < to; ++k) n *= out[k];
    return n;
  };
  size_t first = r, last = 0;  // b's dims other than 1
  for (size_t k = 0; k < r; ++k) {
    if (dim(a, k) != out[k]) return false;
    if (dim(b, k) != 1) first = std::min(first, k), last = k;
  }
  BroadcastPlan q;
  if (first == r) {  // b is one value
    q.pre = numel(0, r);
  } else {
    for (size_t k = first; k <= last; ++k)
      if (dim(b, k) != out[k]) return false;
    q.pre = numel(0, first), q.n = numel(first, last + 1), q.post = numel(last + 1, r);
  }
  *p = q;
  return true;
}

std::vector<int64_t> BinaryOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b) {
  ArgumentHelper args(def);
  const bool broadcast = args.GetSingleArgument<int>("broadcast", 0) != 0;
  if (!broadcast && a != b) return NumpyBroadcastOutputShape(def, a, b);
  ComputeBroadcastPlan(def, a, b, broadcast, args.GetSingleArgument<int>("axis", -1));
  return a;
}

BroadcastPlan ComputeBroadcastPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                   const std::vector<int64_t>& b, bool broadcast, int axis, int ai, int bi) {
  auto numel = [](const std::vector<int64_t>& s, size_t from, size_t to) {
    int64_t n = 1;
    for (size_t i = from; i < to; ++i) n *= s[i];
    return n;
  };
  const std::string desc = MakeString("input ", ai, " ('", def.input(ai), "') has shape ", ShapeToString(a),
                                      " and input ", bi, " ('", def.input(bi), "') has shape ", ShapeToString(b));
  BroadcastPlan p;
  if (a == b) {
    p.n = numel(a, 0, a.size());
    return p;
  }
  HN_ENFORCE(broadcast, def.type(), ": ", desc, "; shapes differ and broadcast=0 (set broadcast=1 to broadcast the second)");
  HN_ENFORCE(b.size() <= a.size(), def.type(), ": ", desc, "; with broadcast=1 the second may not have more dims");
  if (numel(b, 0, b.size()) == 1) {
    p.pre = numel(a, 0, a.size());
    return p;
  }
  const int na = static_cast<int>(a.size()), nb = static_cast<int>(b.size());
  if (axis == -1) axis = na - nb;
  HN_ENFORCE(axis >= 0 && axis + nb <= na, def.type(), ": ", desc, "; axis ", axis,
             " does not leave room for the second's ", nb, " dims");
  int start = 0, end = nb - 1;
  while (start < nb && b[start] == 1) ++start;
  while (end >= start && b[end] == 1) --end;
  for (int i = start; i <= end; ++i)
    HN_ENFORCE(a[axis + i] == b[i], def.type(), ": ", desc, "; dim ", i, " of the second (", b[i],
               ") does not match dim ", axis + i, " of the first (", a[axis + i], ") with axis ", axis);
  p.pre = numel(a, 0, axis + start);
  p.n = numel(b, start, end + 1);
  p.post = numel(a, axis + end + 1, a.size());
  return p;
}

namespace {
std::vector<TensorInfo> BinaryShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  return {TensorInfo::Of(BinaryOutputShape(def, in[0].dims, in[1].dims), in[0].dtype)};
}
std::vector<TensorInfo> BinaryGradShape(const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
  return {in[1], in[2]};
}
}  // namespace

#define HN_BINARY_OP(Name, Op)                                                                                  \
  OPERATOR_SCHEMA(Name).NumInputs(2).NumOutputs(1).AllowInplace({{0, 0}, {1, 0}}).TensorInference(BinaryShape)  \
      .SetDoc(#Name " elementwise. broadcast=1: Caffe2's legacy broadcast of B over A (arg axis), C has A's "  \
              "shape. Otherwise equal shapes, or numpy broadcasting of both (C has the broadcast shape).");      \
  OPERATOR_SCHEMA(Name##Gradient).NumInputs(3).NumOutputs(2).AllowInplace({{0, 0}}).TensorInference(BinaryGradShape); \
  REGISTER_CPU_OPERATOR(Name, BinaryElementwiseOp<CPUContext, Op>);                                             \
  REGISTER_CPU_OPERATOR(Name##Gradient, BinaryElementwiseGradientOp<CPUContext, Op>);

HN_BINARY_OP(Add, math::BinaryOp::Add)
HN_BINARY_OP(Sub, math::BinaryOp::Sub)
HN_BINARY_OP(Mul, math::BinaryOp::Mul)
HN_BINARY_OP(Div, math::BinaryOp::Div)
#undef HN_BINARY_OP
REGISTER_OP_COST(Add, ElementwiseCostFn(1));
REGISTER_OP_COST(Sub, ElementwiseCostFn(1));
REGISTER_OP_COST(Mul, ElementwiseCostFn(1));
REGISTER_OP_COST(Div, ElementwiseCostFn(1));

// Gradient op "<Type>Gradient"(dC, A, B) -> dA, dB with the forward op's broadcast args.
class GetBinaryElementwiseGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp(Def().type() + "Gradient", {GO(0), I(0), I(1)}, {GI(0), GI(1)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
REGISTER_GRADIENT(Add, GetBinaryElementwiseGradient);
REGISTER_GRADIENT(Sub, GetBinaryElementwiseGradient);
REGISTER_GRADIENT(Mul, GetBinaryElementwiseGradient);
REGISTER_GRADIENT(Div, GetBinaryElementwiseGradient);

}  // namespace hetnet
