// Converters of the neural-network family: Gemm, MatMul, MatMulInteger, QLinearMatMul, BatchNormalization, LRN,
// Softmax / LogSoftmax, NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss (convolution and pooling:
// convert_conv.cc; attention: convert_attention.cc; RNN / GRU / LSTM: convert_rnn.cc; GridSample:
// convert_grid_sample.cc; Dropout: convert_dropout.cc; BitCast: convert_bitcast.cc; TfIdfVectorizer: convert_text.cc).
#include <cmath>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

namespace {

using C2 = caffe2::TensorProto;

ConstTensor Transposed2D(const ConstTensor& m) {
  ConstTensor t = m;
  const int64_t r = m.dims[0], c = m.dims[1];
  t.dims = {c, r};
  for (int64_t i = 0; i < r; ++i)
    for (int64_t j = 0; j < c; ++j) t.real[j * r + i] = m.real[i * c + j];
  return t;
}

// Gemm: Y = alpha * A' * B' + beta * C. With B (and C) constant it is FC (W = B' transposed to [N, K],
// alpha folded into W, beta * C broadcast to the bias [N]); otherwise MatMul + Scale + Add.
void Gemm(ConvertContext& c) {
  const bool ta = c.Int("transA", 0) != 0, tb = c.Int("transB", 0) != 0;
  const float alpha = c.Float("alpha", 1.f), beta = c.Float("beta", 1.f);
  const ConstTensor* b = c.Const(c.in(1));
  const ConstTensor* cc = c.has_in(2) ? c.Const(c.in(2)) : nullptr;
  std::string a = c.in(0);
  c.SetRank(c.out(0), 2);
  if (b && b->dtype == C2::FLOAT && b->dims.size() == 2 && (!c.has_in(2) || (cc && cc->dtype == C2::FLOAT))) {
    const int64_t n = tb ? b->dims[0] : b->dims[1];
    // beta * C as a bias [N], if C broadcasts along M (dims [], [1], [N], [1, N], [1, 1]).
    std::vector<double> bias(n, 0.0);
    bool fits = true;
    if (cc) {
      const int64_t cn = cc->numel();
      fits = cc->dims.size() <= 2 && (cc->dims.size() < 2 || cc->dims[0] == 1) && (cn == 1 || cn == n);
      for (int64_t j = 0; fits && j < n; ++j) bias[j] = beta * cc->real[cn == 1 ? 0 : j];
    }
    if (fits) {
      ConstTensor w = tb ? *b : Transposed2D(*b);
      if (alpha != 1.f)
        for (double& v : w.real) v *= alpha;
      const std::string w_blob = (tb && alpha == 1.f) ? c.in(1) : c.AddConst(c.in(1) + "_fc_w", std::move(w));
      const bool bias_is_c = cc && beta == 1.f && cc->dims.size() == 1 && cc->dims[0] == n;
      const std::string b_blob = bias_is_c ? c.in(2) : c.AddConst(c.out(0) + "_fc_b", ConstTensor::Float({n}, bias));
      if (ta) {
        a = c.Fresh(c.in(0) + "_t");
        AddArg(c.Emit("Transpose", {c.in(0)}, {a}), "axes", std::vector<int64_t>{1, 0});
      }
      c.Emit("FC", {a, w_blob, b_blob}, {c.out(0)});
      return;
    }
  }
  const bool scaled = alpha != 1.f, add = c.has_in(2) && beta != 0.f;
  const std::string prod = (scaled || add) ? c.Fresh(c.out(0) + "_ab") : c.out(0);
  auto& mm = c.Emit("MatMul", {c.in(0), c.in(1)}, {prod});
  AddArg(mm, "trans_a", static_cast<int64_t>(ta));
  AddArg(mm, "trans_b", static_cast<int64_t>(tb));
  std::string y = prod;
  if (scaled) {
    y = add ? c.Fresh(c.out(0) + "_alpha_ab") : c.out(0);
    AddArgF(c.Emit("Scale", {prod}, {y}), "scale", alpha);
  }
  if (add) {
    std::string bias = c.in(2);
    if (beta != 1.f) {
      bias = c.Fresh(c.in(2) + "_beta");
      AddArgF(c.Emit("Scale", {c.in(2)}, {bias}), "scale", beta);
    }
    c.Emit("Add", {y, bias}, {c.out(0)});
  }
}

void MatMul(ConvertContext& c) {
  const auto* da = c.Dims(c.in(0));
  const auto* db = c.Dims(c.in(1));
  if (da && db && da->size() == 2 && db->size() == 2) {
    c.Emit("MatMul", {c.in(0), c.in(1)}, {c.out(0)});
    c.SetDims(c.out(0), {(*da)[0], (*db)[1]});
    return;
  }
  // BatchMatMul broadcast=1: 1-D operands and batch dims as numpy's.
  const bool scalar = da && db && da->size() == 1 && db->size() == 1;  // numpy: a 0-D result
  const std::string y = scalar ? c.Fresh(c.out(0) + "_1") : c.out(0);
  AddArg(c.Emit("BatchMatMul", {c.in(0), c.in(1)}, {y}), "broadcast", int64_t{1});
  if (scalar) {
    AddArg(c.Emit("Reshape", {y}, {c.out(0), c.Fresh(c.out(0) + "_old_shape")}), "shape", std::vector<int64_t>{});
    c.SetDims(c.out(0), {});
  } else if (da && db) {
    c.SetRank(c.out(0), static_cast<int>(std::max(da->size(), db->size())) - (da->size() == 1 || db->size() == 1));
  }
}

// BatchNormalization with training_mode=1 (opsets 14+): batch statistics normalize X; outputs 1 and 2
// are the running mean / var updated with momentum, as Caffe2's training SpatialBN computes them in
// place on copies of the inputs (biased batch variance, as ONNX).
void BatchNormTraining(ConvertContext& c) {
  for (int i = 3; i < c.num_outputs(); ++i)
    if (c.has_out(i)) c.Refuse("the saved mean/var outputs are not supported");
  const std::string rm = c.has_out(1) ? c.out(1) : c.Fresh(c.out(0) + "_running_mean");
  const std::string rv = c.has_out(2) ? c.out(2) : c.Fresh(c.out(0) + "_running_var");
  c.Emit("Copy", {c.in(3)}, {rm});
  c.Emit("Copy", {c.in(4)}, {rv});
  auto& op = c.Emit("SpatialBN", {c.in(0), c.in(1), c.in(2), rm, rv},
                    {c.out(0), rm, rv, c.Fresh(c.out(0) + "_saved_mean"), c.Fresh(c.out(0) + "_saved_inv_std")});
  AddArg(op, "is_test", int64_t{0});
  AddArgF(op, "epsilon", c.Float("epsilon", 1e-5f));
  AddArgF(op, "momentum", c.Float("momentum", 0.9f));
  c.SameDims(c.out(0), c.in(0));
}

void BatchNorm(ConvertContext& c) {
  if (c.opset() < 9 && c.Int("spatial", 1) == 0) c.Refuse("spatial=0 (per-activation statistics) is not supported");
  if (c.Int("training_mode", 0) != 0) {
    if (c.opset() < 14) c.Refuse("training_mode=1 before opset 14 is not supported");
    return BatchNormTraining(c);
  }
  for (int i = 1; i < c.num_outputs(); ++i)
    if (c.has_out(i)) c.Refuse("the training outputs (running or saved mean/var) are not supported");
  auto& op = c.Emit("SpatialBN", {c.in(0), c.in(1), c.in(2), c.in(3), c.in(4)}, {c.out(0)});
  AddArg(op, "is_test", int64_t{1});
  AddArgF(op, "epsilon", c.Float("epsilon", 1e-5f));
  c.SameDims(c.out(0), c.in(0));
}

// Softmax / LogSoftmax. Before opset 13: the input coerced to 2-D at `axis` (default 1), which is
// Caffe2's Softmax. From opset 13: along one axis (default -1): our Softmax at the last axis, with
// the axis swapped to the end and back when it is not the last.
void Softmax(ConvertContext& c, bool log) {
  const int rank = c.Rank(c.in(0));
  const std::string y = log ? c.Fresh(c.out(0) + "_softmax") : c.out(0);
  if (c.opset() < 13) {
    AddArg(c.Emit("Softmax", {c.in(0)}, {y}), "axis", c.Int("axis", 1));
  } else {
    int64_t axis = c.Int("axis", -1);
    if (axis != -1 && !(rank >= 0 && axis == rank - 1)) {
      if (rank < 0) {  // exp(x - max) / sum along the axis, which the reductions check at run time
        auto reduce = [&c](const char* type, const std::string& x, int64_t a, const char* hint) {
          const std::string r = c.Fresh(c.out(0) + hint);
          auto& op = c.Emit(type, {x}, {r});
          AddArg(op, "axes", std::vector<int64_t>{a});
          AddArg(op, "keepdims", int64_t{1});
          return r;
        };
        const std::string d = c.Fresh(c.out(0) + "_shifted"), e = c.Fresh(c.out(0) + "_exp");
        c.Emit("Sub", {c.in(0), reduce("ReduceMax", c.in(0), axis, "_max")}, {d});
        c.Emit("Exp", {d}, {e});
        c.Emit("Div", {e, reduce("ReduceSum", e, axis, "_sum")}, {y});
        if (log) c.Emit("Log", {y}, {c.out(0)});
        return;
      }
      axis = c.Axis(axis, rank, "axis");
      std::vector<int64_t> perm(rank);
      for (int i = 0; i < rank; ++i) perm[i] = i;
      std::swap(perm[axis], perm[rank - 1]);
      const std::string xt = c.Fresh(c.in(0) + "_t"), yt = c.Fresh(c.out(0) + "_t");
      AddArg(c.Emit("Transpose", {c.in(0)}, {xt}), "axes", perm);
      AddArg(c.Emit("Softmax", {xt}, {yt}), "axis", int64_t{-1});
      AddArg(c.Emit("Transpose", {yt}, {y}), "axes", perm);
    } else {
      AddArg(c.Emit("Softmax", {c.in(0)}, {y}), "axis", int64_t{-1});
    }
  }
  if (log) c.Emit("Log", {y}, {c.out(0)});
  c.SameDims(c.out(0), c.in(0));
}

// NegativeLogLikelihoodLoss / SoftmaxCrossEntropyLoss: hetnet's operators of the same name, which
// follow ONNX (class axis 1, reduction, ignore_index, optional weight; SCE's optional log_prob).
void ClassLoss(ConvertContext& c) {
  std::vector<std::string> inputs{c.in(0), c.in(1)};
  if (c.has_in(2)) inputs.push_back(c.in(2));
  std::vector<std::string> outputs{c.out(0)};
  if (c.has_out(1)) outputs.push_back(c.out(1));
  const std::string reduction = c.Str("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    HN_THROW(kInvalidArgument, c.op_type(), ": reduction '", reduction, "' is not one of none, sum, mean");
  auto& op = c.Emit(c.op_type(), inputs, outputs);
  AddArg(op, "reduction", reduction);
  if (c.Has("ignore_index")) AddArg(op, "ignore_index", c.Int("ignore_index", 0));
  if (reduction != "none") c.SetDims(c.out(0), {});
  else if (c.Rank(c.in(0)) >= 2) c.SetRank(c.out(0), c.Rank(c.in(0)) - 1);
  if (c.has_out(1)) c.SameDims(c.out(1), c.in(0));
}

}  // namespace

void RegisterAttentionConverters(ConverterRegistry& r);  // convert_attention.cc
void RegisterRecurrentConverters(ConverterRegistry& r);  // convert_rnn.cc
void RegisterGridSampleConverters(ConverterRegistry& r);  // convert_grid_sample.cc
void RegisterBitCastConverters(ConverterRegistry& r);     // convert_bitcast.cc
void RegisterTextConverters(ConverterRegistry& r);        // convert_text.cc

void RegisterNnConverters(ConverterRegistry& r) {
  RegisterAttentionConverters(r);
  RegisterRecurrentConverters(r);
  RegisterGridSampleConverters(r);
  RegisterBitCastConverters(r);
  RegisterTextConverters(r);
  r.Add("Gemm", Gemm);
  r.Add("QLinearMatMul", 10, kNewestOpset, [](ConvertContext& c) {  // operators/qlinear_matmul_op
    std::vector<std::string> ins;
    for (int i = 0; i < 8; ++i) {
      if (!c.has_in(i)) c.Refuse("all 8 inputs are required");
      ins.push_back(c.in(i));
    }
    c.Emit("QLinearMatMul", ins, {c.out(0)});
  });
  r.Add("MatMulInteger", 10, kNewestOpset, [](ConvertContext& c) {  // operators/matmul_integer_op
    std::vector<std::string> ins{c.in(0), c.in(1)};
    int64_t zp_at[2] = {-1, -1};
    for (int i = 0; i < 2; ++i)
      if (c.has_in(2 + i)) zp_at[i] = static_cast<int64_t>(ins.size()), ins.push_back(c.in(2 + i));
    auto& op = c.Emit("MatMulInteger", ins, {c.out(0)});
    AddArg(op, "a_zero_point_input", zp_at[0]);
    AddArg(op, "b_zero_point_input", zp_at[1]);
  });
  r.Add("MatMul", MatMul);
  r.Add("BatchNormalization", BatchNorm);
  r.Add("LRN", [](ConvertContext& c) {
    if (!c.Has("size")) HN_THROW(kInvalidArgument, "LRN: attribute 'size' is required");
    auto& op = c.Emit("LRN", {c.in(0)}, {c.out(0)});
    AddArg(op, "size", c.Int("size", 1));
    AddArgF(op, "alpha", c.Float("alpha", 1e-4f));
    AddArgF(op, "beta", c.Float("beta", 0.75f));
    AddArgF(op, "bias", c.Float("bias", 1.f));
    c.SameDims(c.out(0), c.in(0));
  });
  r.Add("Softmax", [](ConvertContext& c) { Softmax(c, false); });
  r.Add("LogSoftmax", [](ConvertContext& c) { Softmax(c, true); });
  r.Add("NegativeLogLikelihoodLoss", ClassLoss);
  r.Add("SoftmaxCrossEntropyLoss", ClassLoss);
}

}  // namespace hetnet::onnxio
