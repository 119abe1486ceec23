#include "operators/top_k_op.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

TopKGeom MakeTopKGeom(const std::vector<int64_t>& x, int64_t k, int axis) {
  TopKGeom g;
  g.outer = ProdDims(x, 0, axis);
  g.n = x[axis];
  g.inner = ProdDims(x, axis + 1, x.size());
  g.k = k;
  return g;
}

int64_t ReadTopK(OperatorBase* op, const caffe2::OperatorDef& def, DeviceContext* ctx) {
  int64_t k = op->GetSingleArgument<int64_t>("k", -1);
  if (op->InputSize() > 1) {
    const Tensor& t = op->InputTensor(1);
    HN_ENFORCE(t.numel() == 1 && (t.dtype() == DataType::Int32 || t.dtype() == DataType::Int64), def.type(),
               ": input 1 ('", def.input(1), "') must hold one int32 or int64 value (k), got ",
               DataTypeName(t.dtype()), " ", t.ShapeString());
    if (t.dtype() == DataType::Int64) {
      ctx->CopyBytes(sizeof(k), t.data<int64_t>(), t.device(), &k, Device::CPU());
    } else {
      int32_t w = 0;
      ctx->CopyBytes(sizeof(w), t.data<int32_t>(), t.device(), &w, Device::CPU());
      k = w;
    }
    ctx->FinishDeviceComputation();
  }
  HN_ENFORCE(k >= 1 && k <= (int64_t{1} << 31), def.type(), ": k must be in [1, 2^31] (arg `k` or input 1), got ",
             k);
  return k;
}

template <>
void TopKForward<CPUContext>(const caffe2::OperatorDef& def, DataType t, TopKGeom g, const void* x, void* vals,
                             int64_t* idx, int64_t* flat, bool largest, CPUContext*) {
  DispatchRealOrIntegerType(def, t, 0, [&](auto zero) {
    using T = decltype(zero);
    for (int64_t c = 0, m = g.outer * g.inner; c < m; ++c)
      TopKColumn(c, g, static_cast<const T*>(x), static_cast<T*>(vals), idx, flat, largest);
  });
}

template <>
void TopKBackward<CPUContext>(TopKGeom g, const float* dv, const int64_t* idx, float* dx, CPUContext*) {
  for (int64_t c = 0, m = g.outer * g.inner; c < m; ++c) TopKGradColumn(c, g, dv, idx, dx);
}

OPERATOR_SCHEMA(TopK)
    .NumInputs(1, 2)
    .NumOutputs(2, 3)
    .InputsOnCPU({1})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const int n_out = def.output_size();
      if (!in[0].known || in.size() > 1) return std::vector<TensorInfo>(n_out, TensorInfo::Unknown());
      ArgumentHelper a(def);
      const int nd = static_cast<int>(in[0].dims.size());
      const int axis = CanonicalAxisFor(def, a.GetSingleArgument<int>("axis", -1), nd, 0);
      std::vector<int64_t> d = in[0].dims;
      d[axis] = a.GetSingleArgument<int64_t>("k", -1);
      std::vector<TensorInfo> out{TensorInfo::Of(d, in[0].dtype), TensorInfo::Of(d, DataType::Int64)};
      if (n_out > 2) out.push_back(TensorInfo::Of({ProdDims(d, 0, d.size())}, DataType::Int64));
      return out;
    })
    .SetDoc("TopK(X, [k]) -> (Values, Indices, [FlattenIndices]): the k (arg or one-element int input 1) largest "
            "entries along arg `axis` (default -1), largest first, lower index first on ties; Indices int64 along "
            "the axis, FlattenIndices int64 positions in flattened X. k > dim pads with 0 / -1. Float32; on CPU also "
            "float64 and the integer dtypes, and arg largest=0 (the k smallest, smallest first). "
            "Gradient: TopKGradient(dValues, Indices, X) -> dX.");
OPERATOR_SCHEMA(TopKGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      TensorInfo t = TensorInfo::Of(in[2].dims, DataType::Float);
      t.known = in[2].known;
      return std::vector<TensorInfo>{t};
    });
REGISTER_CPU_OPERATOR(TopK, TopKOp<CPUContext>);
REGISTER_CPU_OPERATOR(TopKGradient, TopKGradientOp<CPUContext>);

namespace {
// TopKGradient(dValues, Indices, X) -> dX, Caffe2's inputs; `axis` travels with the args.
class GetTopKGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp("TopKGradient", {GO(0), O(1), I(0)}, {GI(0)});
    for (const auto& a : Def().arg())
      if (a.name() == "axis") *op.add_arg() = a;
    return {op};
  }
};
}  // namespace
REGISTER_GRADIENT(TopK, GetTopKGradient);

}  // namespace hetnet
