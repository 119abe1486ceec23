#include "operators/lengths_reducer_ops.h"

#include <algorithm>

#include "core/argument.h"
#include "core/gradient.h"
#include "operators/index_read.h"

namespace hetnet {

std::vector<int64_t> LengthsToOffsets(const caffe2::OperatorDef& def, const Tensor& lengths, int input, int64_t k,
                                      const std::string& what, DeviceContext* ctx) {
  EnforceDtype(def, lengths, input, DataType::Int32);
  HN_ENFORCE(lengths.ndim() == 1, def.type(), ": input ", input, " ('", def.input(input), "') must be 1-D, got ",
             lengths.ShapeString());
  std::vector<int32_t> host(static_cast<size_t>(lengths.numel()));
  if (!host.empty()) {
    ctx->CopyBytes(host.size() * sizeof(int32_t), lengths.data<int32_t>(), lengths.device(), host.data(),
                   Device::CPU());
    ctx->FinishDeviceComputation();
  }
  std::vector<int64_t> offsets(host.size() + 1, 0);
  for (size_t s = 0; s < host.size(); ++s) {
    HN_ENFORCE(host[s] >= 0, def.type(), ": length ", host[s], " at position ", s, " of input ", input, " ('",
               def.input(input), "') is negative");
    offsets[s + 1] = offsets[s] + host[s];
  }
  HN_ENFORCE(k < 0 || offsets.back() == k, def.type(), ": the lengths in input ", input, " ('", def.input(input),
             "') sum to ", offsets.back(), " but there are ", k, " ", what);
  return offsets;
}

std::vector<int64_t> SegmentOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& data,
                                        int64_t segments) {
  HN_ENFORCE(!data.empty(), def.type(), ": input 0 ('", def.input(0), "') must have at least 1 dim");
  std::vector<int64_t> out = data;
  out[0] = segments;
  return out;
}

void ThrowBadSegmentIndex(const caffe2::OperatorDef& def, int input, const Tensor& indices, int64_t pos, int64_t n,
                          DeviceContext* ctx) {
  const int64_t value = ReadIndexToHost(indices, pos, ctx);
  HN_THROW(kInvalidArgument, def.type(), ": index ", value, " at position ", pos, " of input ", input, " ('",
           def.input(input), "') is out of range for input 0 ('", def.input(0), "') with ", n, " rows (valid: 0 to ",
           n - 1, ")");
}

Tensor OffsetsOnDevice(const std::vector<int64_t>& offsets, DeviceContext* ctx) {
  Tensor t({static_cast<int64_t>(offsets.size())}, DataType::Int64, ctx->device());
  ctx->CopyBytes(offsets.size() * sizeof(int64_t), offsets.data(), Device::CPU(), t.mutable_data<int64_t>(),
                 ctx->device());
  return t;
}

template <typename I, class Context>
int64_t SegmentReduce(const SegmentGeom& g, const float* data, const I* indices, const float* weights,
                      const int64_t* offsets, bool mean, float* out, Context*) {
  if (indices)
    for (int64_t j = 0; j < g.k; ++j)
      if (indices[j] < 0 || static_cast<int64_t>(indices[j]) >= g.n) return j;
  for (int64_t s = 0; s < g.segments; ++s) {
    float* y = out + s * g.inner;
    std::fill(y, y + g.inner, 0.f);
    const int64_t b = offsets[s], e = offsets[s + 1];
    const float scale = mean && e > b ? 1.f / static_cast<float>(e - b) : 1.f;
    for (int64_t j = b; j < e; ++j) {
      const float* x = data + (indices ? static_cast<int64_t>(indices[j]) : j) * g.inner;
      const float w = (weights ? weights[j] : 1.f) * scale;
      for (int64_t q = 0; q < g.inner; ++q) y[q] += w * x[q];
    }
  }
  return -1;
}

template <typename I, class Context>
void SegmentReduceGradient(const SegmentGeom& g, const float* dout, const I* indices, const float* weights,
                           const int64_t* offsets, bool mean, float* ddata, Context*) {
  std::fill(ddata, ddata + g.n * g.inner, 0.f);
  for (int64_t s = 0; s < g.segments; ++s) {
    const int64_t b = offsets[s], e = offsets[s + 1];
    const float scale = mean && e > b ? 1.f / static_cast<float>(e - b) : 1.f;
    const float* dy = dout + s * g.inner;
    for (int64_t j = b; j < e; ++j) {
      const int64_t row = indices ? static_cast<int64_t>(indices[j]) : j;
      HN_ENFORCE(row >= 0 && row < g.n, "lengths reducer gradient: index ", row, " at position ", j,
                 " is out of range for ", g.n, " rows");
      const float w = (weights ? weights[j] : 1.f) * scale;
      float* d = ddata + row * g.inner;
      for (int64_t q = 0; q < g.inner; ++q) d[q] += w * dy[q];
    }
  }
}

template <typename I, class Context>
void SegmentWeightsGradient(const SegmentGeom& g, const float* dout, const float* data, const I* indices,
                            const int64_t* offsets, float* dweights, Context*) {
  for (int64_t s = 0; s < g.segments; ++s)
    for (int64_t j = offsets[s]; j < offsets[s + 1]; ++j) {
      const int64_t row = static_cast<int64_t>(indices[j]);
      HN_ENFORCE(row >= 0 && row < g.n, "SparseLengthsWeightedSumDenseGradient: index ", row, " at position ", j,
                 " is out of range for ", g.n, " rows");
      double acc = 0;
      for (int64_t q = 0; q < g.inner; ++q) acc += static_cast<double>(dout[s * g.inner + q]) * data[row * g.inner + q];
      dweights[j] = static_cast<float>(acc);
    }
}

#define HN_INSTANTIATE_SEGMENT(I)                                                                                  \
  template int64_t SegmentReduce<I, CPUContext>(const SegmentGeom&, const float*, const I*, const float*,          \
                                                const int64_t*, bool, float*, CPUContext*);                        \
  template void SegmentReduceGradient<I, CPUContext>(const SegmentGeom&, const float*, const I*, const float*,     \
                                                     const int64_t*, bool, float*, CPUContext*);      \
  template void SegmentWeightsGradient<I, CPUContext>(const SegmentGeom&, const float*, const float*, const I*,    \
                                                      const int64_t*, float*, CPUContext*);
HN_INSTANTIATE_SEGMENT(int32_t)
HN_INSTANTIATE_SEGMENT(int64_t)
#undef HN_INSTANTIATE_SEGMENT

namespace {
// Forward shape: [len(LENGTHS), DATA.dims[1:]].
OpSchema::ShapeFn SegmentShape(int lengths_input) {
  return [lengths_input](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
    if (!in[0].known || !in[lengths_input].known || in[lengths_input].dims.size() != 1)
      return std::vector<TensorInfo>{TensorInfo::Unknown()};
    return std::vector<TensorInfo>{
        TensorInfo::Of(SegmentOutputShape(def, in[0].dims, in[lengths_input].dims[0]), DataType::Float)};
  };
}
OpSchema::ShapeFn LikeInput0Float() {
  return [](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
    if (!in[0].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
    return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, DataType::Float)};
  };
}
}  // namespace

OPERATOR_SCHEMA(SparseLengthsSum)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(SegmentShape(2))
    .SetDoc("SparseLengthsSum(DATA, INDICES, LENGTHS) -> OUTPUT [len(LENGTHS), DATA.dims[1:]]: row s sums "
            "DATA[INDICES[j]] over the s-th run of LENGTHS[s] indices (int32/int64, in [0, rows)). Gradient: "
            "SparseLengthsSumDenseGradient (dense, w.r.t. DATA).");
OPERATOR_SCHEMA(SparseLengthsWeightedSum)
    .NumInputs(4)
    .NumOutputs(1)
    .TensorInference(SegmentShape(3))
    .SetDoc("SparseLengthsWeightedSum(DATA, WEIGHTS, INDICES, LENGTHS) -> OUTPUT: as SparseLengthsSum with row j "
            "scaled by WEIGHTS[j]. Gradient w.r.t. DATA (dense), and w.r.t. WEIGHTS with arg grad_on_weights=1 "
            "(Caffe2's default 0: none).");
OPERATOR_SCHEMA(SparseLengthsMean)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference(SegmentShape(2))
    .SetDoc("SparseLengthsMean(DATA, INDICES, LENGTHS) -> OUTPUT: the mean of each segment's rows (zeros for an "
            "empty segment). Gradient: SparseLengthsMeanDenseGradient (dense, w.r.t. DATA).");
OPERATOR_SCHEMA(LengthsSum)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(SegmentShape(1))
    .SetDoc("LengthsSum(DATA, LENGTHS) -> OUTPUT: row s sums the next LENGTHS[s] rows of DATA; LENGTHS must sum "
            "to DATA.dims[0]. Gradient: LengthsSumGradient(dOUT, LENGTHS).");
OPERATOR_SCHEMA(LengthsMean)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference(SegmentShape(1))
    .SetDoc("LengthsMean(DATA, LENGTHS) -> OUTPUT: the mean of each segment of DATA's rows. Gradient: "
            "LengthsMeanGradient(dOUT, LENGTHS).");
OPERATOR_SCHEMA(SparseLengthsSumDenseGradient).NumInputs(4).NumOutputs(1).TensorInference(LikeInput0Float());
OPERATOR_SCHEMA(SparseLengthsWeightedSumDenseGradient)
    .NumInputs(5)
    .NumOutputs(1, 2)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out{in[0].known ? TensorInfo::Of(in[0].dims, DataType::Float) : TensorInfo::Unknown()};
      if (def.output_size() == 2)
        out.push_back(in[1].known ? TensorInfo::Of(in[1].dims, DataType::Float) : TensorInfo::Unknown());
      return out;
    });
OPERATOR_SCHEMA(SparseLengthsMeanDenseGradient).NumInputs(4).NumOutputs(1).TensorInference(LikeInput0Float());
OPERATOR_SCHEMA(LengthsSumGradient).NumInputs(2).NumOutputs(1);
OPERATOR_SCHEMA(LengthsMeanGradient).NumInputs(2).NumOutputs(1);

HN_REGISTER_REDUCERS(REGISTER_CPU_OPERATOR, CPUContext)

namespace {
// Sparse: the dense gradient op gets every forward input and dOUT; Lengths*: Caffe2's (dOUT, LENGTHS).
class GetSparseLengthsGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    std::vector<std::string> ins;
    for (int i = 0; i < Def().input_size(); ++i) ins.push_back(I(i));
    ins.push_back(GO(0));
    std::vector<std::string> outs{GI(0)};
    if (Def().type() == "SparseLengthsWeightedSum" && ArgumentHelper(Def()).GetSingleArgument<int>("grad_on_weights", 0))
      outs.push_back(GI(1));
    return {GradientOp(Def().type() + "DenseGradient", ins, outs)};
  }
};
class GetLengthsGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    return {GradientOp(Def().type() + "Gradient", {GO(0), I(1)}, {GI(0)})};
  }
};
}  // namespace
REGISTER_GRADIENT(SparseLengthsSum, GetSparseLengthsGradient);
REGISTER_GRADIENT(SparseLengthsWeightedSum, GetSparseLengthsGradient);
REGISTER_GRADIENT(SparseLengthsMean, GetSparseLengthsGradient);
REGISTER_GRADIENT(LengthsSum, GetLengthsGradient);
REGISTER_GRADIENT(LengthsMean, GetLengthsGradient);

}  // namespace hetnet
