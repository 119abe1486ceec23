// SpatialBN on CPU: schemas, gradient maker (Caffe2's GetSpatialBNGradient, multi-batch included)
// and the per-channel loops (float64 statistics; ChannelSums / ChannelBackpropSums for the sums).
#include "operators/spatial_bn_op.h"

#include <cmath>

#include "core/gradient.h"
#include "core/op_cost.h"

namespace hetnet {

BNMultiBatch ReadBNMultiBatch(const OperatorBase& op, const ChannelLayout& d, bool allow_double) {
  const caffe2::OperatorDef& def = op.def();
  BNMultiBatch mb;
  mb.num_batches = ArgumentHelper(def).GetSingleArgument<int>("num_batches", 1);
  HN_ENFORCE(mb.num_batches >= 1, def.type(), ": num_batches must be >= 1, got ", mb.num_batches);
  const int n = op.InputSize();
  HN_ENFORCE(n == 5 || n == 7 || n == 8, def.type(), " takes 5 inputs, 7 (multi-batch: + the combined sums) or 8 "
             "(+ count), got ", n);
  HN_ENFORCE(n >= 7 || mb.num_batches == 1, def.type(), ": num_batches ", mb.num_batches, " > 1 needs inputs 5 and 6 "
             "(the sums over all batches: ChannelStats or ChannelBackpropStats, summed)");
  mb.on = n >= 7;
  mb.count.value = static_cast<double>(mb.num_batches) * static_cast<double>(d.N * d.HW);
  if (!mb.on) return mb;
  const Tensor& s = op.InputTensor(5);
  for (int i : {5, 6}) {
    const Tensor& t = op.InputTensor(i);
    HN_ENFORCE(t.dtype() == DataType::Float || (allow_double && t.dtype() == DataType::Double), def.type(), ": input ",
               i, " ('", def.input(i), "') is ", DataTypeName(t.dtype()), " but float32",
               allow_double ? " or float64" : "", " is required");
    HN_ENFORCE(t.dtype() == s.dtype(), def.type(), ": inputs 5 and 6 ('", def.input(5), "', '", def.input(6),
               "') must have one dtype, got ", DataTypeName(s.dtype()), " and ", DataTypeName(t.dtype()));
    HN_ENFORCE(t.shape() == std::vector<int64_t>{d.C}, def.type(), ": input ", i, " ('", def.input(i), "') has shape ",
               t.ShapeString(), " but [", d.C, "] (the channels of '", def.input(0), "') is required");
  }
  if (n == 8) {
    const Tensor& c = op.InputTensor(7);
    HN_ENFORCE(c.numel() == 1 && (c.dtype() == DataType::Float || c.dtype() == DataType::Double ||
                                  c.dtype() == DataType::Int64),
               def.type(), ": input 7 ('", def.input(7), "', the element count per channel over all batches) must "
               "hold one float32, float64 or int64 value, got ", DataTypeName(c.dtype()), " ", c.ShapeString());
    mb.count.ptr = c.raw_data();
    mb.count.dtype = c.dtype();
  }
  return mb;
}

template <>
void BNApply<CPUContext>(const ChannelLayout& d, const float* x, const float* mean, const float* rstd,
                         const float* scale, const float* bias, float* y, CPUContext*) {
  std::vector<float> a(d.C), b(d.C);
  for (int64_t c = 0; c < d.C; ++c) {
    a[c] = scale[c] * rstd[c];
    b[c] = bias[c] - mean[c] * a[c];
  }
  ForEachChannelElement(d, [&](int64_t i, int64_t c) { y[i] = x[i] * a[c] + b[c]; });
}

template <>
void BNStatsFromSums<CPUContext>(int64_t C, const void* sum, const void* sumsq, DataType dtype, const BNCount& count,
                                 float eps, float momentum, float* mean, float* rstd, float* rm, float* rv,
                                 CPUContext*) {
  const double M = BNCountValue(count);
  for (int64_t c = 0; c < C; ++c) {
    if (dtype == DataType::Double)
      BNChannelStats(c, static_cast<const double*>(sum), static_cast<const double*>(sumsq), M, eps, momentum, mean,
                     rstd, rm, rv);
    else
      BNChannelStats(c, static_cast<const float*>(sum), static_cast<const float*>(sumsq), M, eps, momentum, mean, rstd,
                     rm, rv);
  }
}

template <>
void BNInvStd<CPUContext>(int64_t C, const float* var, float eps, float* rstd, CPUContext*) {
  for (int64_t c = 0; c < C; ++c) rstd[c] = static_cast<float>(1.0 / std::sqrt(double(var[c]) + eps));
}

template <>
void BNBackward<CPUContext>(const ChannelLayout& d, bool is_test, const float* G, const float* B, const BNCount& count,
                            double n_batches, const float* x, const float* scale, const float* dy, const float* mean,
                            const float* rstd, float* coef, float* dscale, float* dbias, float* dx, CPUContext*) {
  const double M = BNCountValue(count);
  for (int64_t c = 0; c < d.C; ++c)
    BNBackwardChannel(c, d.C, is_test, G, B, M, n_batches, scale, mean, rstd, dscale, dbias, coef);
  const float *alpha = coef, *beta = coef + d.C, *gamma = coef + 2 * d.C;
  ForEachChannelElement(d, [&](int64_t i, int64_t c) { dx[i] = alpha[c] * dy[i] + beta[c] * x[i] + gamma[c]; });
}

OPERATOR_SCHEMA(SpatialBN)
    .NumInputs(5, 8)
    .NumOutputs(1, 5)
    .AllowInplace({{0, 0}, {5, 3}, {6, 4}})
    .EnforceInplace({{3, 1}, {4, 2}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{in[0]};
      for (int o = 1; o < def.output_size(); ++o) out.push_back(in[1]);
      return out;
    })
    .SetDoc("Spatial batch normalization. Inputs X, scale, bias, mean, var; training outputs Y, running_mean, "
            "running_var (in place with inputs 3, 4), saved_mean, saved_inv_std. Args is_test, epsilon (1e-5), "
            "momentum (0.9; running = momentum * running + (1 - momentum) * batch, biased var), order \"NCHW\" "
            "(default) or \"NHWC\"; X is 2-D or more. Multi-batch (Caffe2's combine_spatial_bn): inputs 5, 6 = "
            "sum and sumsq of X per channel over all batches (ChannelStats, summed over devices; float32 or "
            "float64), arg num_batches: mean = sum / M, var = sumsq / M - mean^2, M = num_batches * N * HxW. "
            "hetnet extension: input 7 `count`, one float32/float64/int64 value on the op's device, is M itself "
            "(batches of unequal size across devices or processes).");
// Inference: one multiply-add per element; training also reduces mean and variance (~3 more).
REGISTER_OP_COST(SpatialBN, [](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in,
                               const std::vector<TensorInfo>& out) {
  const bool is_test = ArgumentHelper(def).GetSingleArgument<int>("is_test", 0) != 0;
  return MemoryCost(in, out, is_test ? 2 : 5);
});
OPERATOR_SCHEMA(SpatialBNGradient)
    .NumInputs(5, 8)
    .NumOutputs(3)
    .AllowInplace({{5, 1}, {6, 2}})
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{in[0], in[1], in[1]};
    })
    .SetDoc("Inputs X, scale, dY, saved_mean, saved_inv_std (running mean and var with is_test) -> dX, dscale, "
            "dbias; args as SpatialBN. Multi-batch: inputs 5, 6 = dscale and dbias summed over all batches "
            "(ChannelBackpropStats; in place with outputs 1, 2), arg num_batches: outputs dscale = G / "
            "num_batches, dbias = B / num_batches, dX = scale * rstd * (dY - (B + (X - mean) * rstd * G) / M) "
            "with M = num_batches * N * HxW, or (hetnet) input 7 `count` as in SpatialBN.");

REGISTER_CPU_OPERATOR(SpatialBN, SpatialBNOp<CPUContext>);
REGISTER_CPU_OPERATOR(SpatialBNGradient, SpatialBNGradientOp<CPUContext>);

// Caffe2's GetSpatialBNGradient: is_test reads the running statistics; num_batches > 1 (or, in
// hetnet, a count input) gives the multi-batch form, whose inputs 5, 6 are the parameter-gradient
// blobs themselves: whoever syncs BN (data_parallel_model, hetnet.distributed) fills them with the
// summed ChannelBackpropStats before this op runs.
class GetSpatialBNGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    const ArgumentHelper args(Def());
    const bool is_test = args.GetSingleArgument<int>("is_test", 0) != 0;
    const int num_batches = args.GetSingleArgument<int>("num_batches", 1);
    std::vector<std::string> in;
    if (is_test) {
      in = {I(0), I(1), GO(0), I(3), I(4)};
    } else if (num_batches > 1 || Def().input_size() == 8) {
      HN_ENFORCE(Def().input_size() >= 7 && Def().output_size() == 5, "SpatialBN gradient: the multi-batch form "
                 "(num_batches ", num_batches, ") needs 7 or 8 inputs and 5 outputs, got ", Def().input_size(), " and ",
                 Def().output_size());
      in = {I(0), I(1), GO(0), O(3), O(4), GI(1), GI(2)};
      if (Def().input_size() == 8) in.push_back(I(7));
    } else {
      in = {I(0), I(1), GO(0), O(3), O(4)};
    }
    std::vector<caffe2::Argument> fwd_args(Def().arg().begin(), Def().arg().end());
    return {GradientOp("SpatialBNGradient", in, {GI(0), GI(1), GI(2)}, fwd_args)};
  }
};
REGISTER_GRADIENT(SpatialBN, GetSpatialBNGradient);

}  // namespace hetnet
