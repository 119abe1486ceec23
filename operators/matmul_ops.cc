#include "operators/matmul_ops.h"

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

BatchMatMulPlan ComputeBatchMatMulPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a0,
                                       const std::vector<int64_t>& b0) {
  ArgumentHelper args(def);
  return ComputeBatchMatMulPlan(def, a0, b0, args.GetSingleArgument<int>("trans_a", 0) != 0,
                                args.GetSingleArgument<int>("trans_b", 0) != 0,
                                args.GetSingleArgument<int>("broadcast", 0) != 0);
}

BatchMatMulPlan ComputeBatchMatMulPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a0,
                                       const std::vector<int64_t>& b0, bool ta, bool tb, bool broadcast) {
  const std::string desc = MakeString("input 0 ('", def.input(0), "') has shape ", ShapeToString(a0), " and input 1 ('",
                                      def.input(1), "') has shape ", ShapeToString(b0));
  std::vector<int64_t> a = a0, b = b0;
  bool a_vec = false, b_vec = false;
  if (!broadcast) {
    HN_ENFORCE(a.size() >= 2 && a.size() == b.size(), def.type(), ": ", desc,
               "; without broadcast both need the same rank >= 2 (set broadcast=1 for other ranks)");
  } else {
    HN_ENFORCE(!a.empty() && !b.empty(), def.type(), ": ", desc, "; 0-d operands are not matrices");
    if (a.size() == 1) { a.insert(a.begin(), 1); a_vec = true; }
    if (b.size() == 1) { b.push_back(1); b_vec = true; }
  }
  const size_t na = a.size(), nb = b.size();
  BatchMatMulPlan p;
  p.M = (ta && !a_vec) ? a[na - 1] : a[na - 2];
  p.K = (ta && !a_vec) ? a[na - 2] : a[na - 1];
  const int64_t bk = (tb && !b_vec) ? b[nb - 1] : b[nb - 2];
  p.N = (tb && !b_vec) ? b[nb - 2] : b[nb - 1];
  HN_ENFORCE(p.K == bk, def.type(), ": ", desc, "; the inner dims differ (", p.K, " vs ", bk, ") with trans_a=", ta,
             " trans_b=", tb);
  const std::vector<int64_t>& longer = na >= nb ? a : b;
  const size_t nshort = std::min(na, nb);
  std::vector<int64_t> batch(longer.begin(), longer.end() - 2);  // Y's batch dims
  bool stretch = false;
  for (size_t i = 3; i <= nshort; ++i) {
    const int64_t x = a[na - i], y = b[nb - i];
    HN_ENFORCE(x == y || (broadcast && (x == 1 || y == 1)), def.type(), ": ", desc, "; batch dims differ (", x,
               " vs ", y, ")", broadcast ? " and neither is 1" : " (set broadcast=1 for numpy's broadcasting)");
    stretch |= x != y;
    batch[batch.size() + 2 - i] = std::max(x, y);
  }
  p.a_batches = ProdDims(a, 0, na - 2);
  p.b_batches = ProdDims(b, 0, nb - 2);
  p.batches = ProdDims(batch, 0, batch.size());
  if (stretch) {  // each operand's batch index of every output batch, by strides that are 0 on stretched dims
    p.a_index.resize(p.batches), p.b_index.resize(p.batches);
    const size_t nbatch = batch.size();
    for (int64_t t = 0; t < p.batches; ++t) {
      int64_t ia = 0, ib = 0, sa = 1, sb = 1, rem = t;
      for (size_t i = 0; i < nbatch; ++i) {  // i-th batch dim from the right
        const int64_t c = rem % batch[nbatch - 1 - i];
        rem /= batch[nbatch - 1 - i];
        if (i + 2 < na) ia += (a[na - 3 - i] == 1 ? 0 : c) * sa, sa *= a[na - 3 - i];
        if (i + 2 < nb) ib += (b[nb - 3 - i] == 1 ? 0 : c) * sb, sb *= b[nb - 3 - i];
      }
      p.a_index[t] = ia, p.b_index[t] = ib;
    }
  }
  if (a_vec && b_vec) {
    p.y_shape = {1};
    return p;
  }
  p.y_shape = batch;
  if (!a_vec) p.y_shape.push_back(p.M);
  if (!b_vec) p.y_shape.push_back(p.N);
  return p;
}

OPERATOR_SCHEMA(MatMul)
    .NumInputs(2, 3)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const MatMulDims d = ComputeMatMulDims(def, in[0].dims, in[1].dims);
      return std::vector<TensorInfo>{
          TensorInfo::Of(MatMulOutputShape(def, d, in.size() > 2 ? &in[2].dims : nullptr), in[0].dtype)};
    })
    .SetDoc("Y = op(A) * op(B) with A, B flattened to 2-D at axis_a, axis_b; args trans_a, trans_b.");
OPERATOR_SCHEMA(BatchMatMul)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(ComputeBatchMatMulPlan(def, in[0].dims, in[1].dims).y_shape,
                                                    in[0].dtype)};
    })
    .SetDoc("Batched op(A) * op(B) over the last two dims; args trans_a, trans_b, broadcast.");

REGISTER_OP_COST(MatMul, [](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in,
                            const std::vector<TensorInfo>& out) {
  const MatMulDims d = ComputeMatMulDims(def, in[0].dims, in[1].dims);
  return ComputeCost(OpKind::kGemm, 2.0 * d.M * d.N * d.K, in, out);
});
REGISTER_OP_COST(BatchMatMul, [](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in,
                                 const std::vector<TensorInfo>& out) {
  const BatchMatMulPlan p = ComputeBatchMatMulPlan(def, in[0].dims, in[1].dims);
  return ComputeCost(OpKind::kGemm, 2.0 * p.batches * p.M * p.N * p.K, in, out);
});

REGISTER_CPU_OPERATOR(MatMul, MatMulOp<CPUContext>);
REGISTER_CPU_OPERATOR(BatchMatMul, BatchMatMulOp<CPUContext>);

namespace {
caffe2::Argument IntArg(const std::string& name, int64_t v) {
  caffe2::Argument a;
  a.set_name(name);
  a.set_i(v);
  return a;
}
}  // namespace

// Caffe2's MatMul gradient: two MatMul ops whose third input gives the gradient its operand's shape.
class GetMatMulGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    const bool ta = args.GetSingleArgument<int>("trans_a", 0) != 0, tb = args.GetSingleArgument<int>("trans_b", 0) != 0;
    const int64_t axa = args.GetSingleArgument<int>("axis_a", 1), axb = args.GetSingleArgument<int>("axis_b", 1);
    auto mm = [&](const std::string& x, const std::string& y, const std::string& like, const std::string& out,
                  bool t1, bool t2, const char* axis_name, int64_t axis) {
      return GradientOp("MatMul", {x, y, like}, {out},
                        {IntArg("trans_a", t1), IntArg("trans_b", t2), IntArg(axis_name, axis)});
    };
    const std::string ga = GI(0), gb = GI(1);
    if (!ta && !tb)  // Y = A B: dA = G B', dB = A' G
      return {mm(GO(0), I(1), I(0), ga, false, true, "axis_b", axb), mm(I(0), GO(0), I(1), gb, true, false, "axis_a", axa)};
    if (!ta && tb)  // Y = A B': dA = G B, dB = G' A
      return {mm(GO(0), I(1), I(0), ga, false, false, "axis_b", axb), mm(GO(0), I(0), I(1), gb, true, false, "axis_b", axa)};
    if (ta && !tb)  // Y = A' B: dA = B G', dB = A G
      return {mm(I(1), GO(0), I(0), ga, false, true, "axis_a", axb), mm(I(0), GO(0), I(1), gb, false, false, "axis_a", axa)};
    // Y = A' B': dA = B' G', dB = G' A'
    return {mm(I(1), GO(0), I(0), ga, true, true, "axis_a", axb), mm(GO(0), I(0), I(1), gb, true, true, "axis_b", axa)};
  }
};
REGISTER_GRADIENT(MatMul, GetMatMulGradient);

class GetBatchMatMulGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    ArgumentHelper args(Def());
    HN_ENFORCE(args.GetSingleArgument<int>("broadcast", 0) == 0,
               "BatchMatMul: the gradient is not supported with broadcast=1 (as in Caffe2)");
    const bool ta = args.GetSingleArgument<int>("trans_a", 0) != 0, tb = args.GetSingleArgument<int>("trans_b", 0) != 0;
    auto bmm = [&](const std::string& x, const std::string& y, const std::string& out, bool t1, bool t2) {
      return GradientOp("BatchMatMul", {x, y}, {out}, {IntArg("trans_a", t1), IntArg("trans_b", t2)});
    };
    const std::string ga = GI(0), gb = GI(1);
    if (!ta && !tb) return {bmm(GO(0), I(1), ga, false, true), bmm(I(0), GO(0), gb, true, false)};
    if (!ta && tb) return {bmm(GO(0), I(1), ga, false, false), bmm(GO(0), I(0), gb, true, false)};
    if (ta && !tb) return {bmm(I(1), GO(0), ga, false, true), bmm(I(0), GO(0), gb, false, false)};
    return {bmm(I(1), GO(0), ga, true, true), bmm(GO(0), I(0), gb, true, true)};
  }
};
REGISTER_GRADIENT(BatchMatMul, GetBatchMatMulGradient);

}  // namespace hetnet
