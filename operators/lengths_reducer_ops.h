// Caffe2's segment reducers over LENGTHS (int32): row s of OUTPUT reduces the next LENGTHS[s] rows.
//   SparseLengthsSum(DATA, INDICES, LENGTHS)                   rows DATA[INDICES[j]], summed
//   SparseLengthsWeightedSum(DATA, WEIGHTS, INDICES, LENGTHS)  rows WEIGHTS[j] * DATA[INDICES[j]]
//   SparseLengthsMean(DATA, INDICES, LENGTHS)                  the mean of the segment's rows
//   LengthsSum(DATA, LENGTHS), LengthsMean(DATA, LENGTHS)      DATA's own rows in order
// OUTPUT is [len(LENGTHS), DATA.dims[1:]] float32; an empty segment gives zeros (also for Mean).
// INDICES are int32 or int64 in [0, DATA.dims[0]) (no wrapping, as Caffe2); LENGTHS must be >= 0 and
// sum to the number of indices (or of DATA's rows). Violations are errors naming blob and position.
// Gradients w.r.t. DATA; w.r.t. WEIGHTS only with arg grad_on_weights=1 (Caffe2's default is 0):
//   LengthsSumGradient(dOUT, LENGTHS), LengthsMeanGradient(dOUT, LENGTHS) -> dDATA, Caffe2's signature;
//   Sparse*DenseGradient(forward inputs..., dOUT) -> dDATA: dense scatter-add into DATA's shape
//   (Caffe2 emits a sparse (indices, values) gradient instead); with grad_on_weights=1 the weighted
//   one also outputs dWEIGHTS[j] = dot(dOUT[segment of j], DATA[INDICES[j]]).
#pragma once

#include <vector>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

// Which reducer: inputs are DATA, [WEIGHTS if weighted], [INDICES if sparse], LENGTHS.
struct ReducerKind {
  bool sparse, weighted, mean;
  int weights_input() const { return 1; }
  int indices_input() const { return weighted ? 2 : 1; }
  int lengths_input() const { return sparse ? (weighted ? 3 : 2) : 1; }
  int num_inputs() const { return lengths_input() + 1; }
};

// DATA as [n, inner]; `segments` output rows; `k` rows read (indices, or DATA's rows when dense).
struct SegmentGeom {
  int64_t segments = 0, n = 0, inner = 1, k = 0;
};

// LENGTHS (copied to the host when on a device) checked and turned into segments + 1 offsets.
std::vector<int64_t> LengthsToOffsets(const caffe2::OperatorDef& def, const Tensor& lengths, int input, int64_t k,
                                      const std::string& what, DeviceContext* ctx);
// Output shape [segments, data dims after the first], checking DATA has at least one dim.
std::vector<int64_t> SegmentOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& data,
                                        int64_t segments);
[[noreturn]] void ThrowBadSegmentIndex(const caffe2::OperatorDef& def, int input, const Tensor& indices, int64_t pos,
                                       int64_t n, DeviceContext* ctx);

// out[s] = scale_s * sum_{j in segment s} w_j * DATA[row_j]; row_j = indices[j] (or j when indices is
// null), w_j = weights[j] (or 1), scale_s = 1/len (mean) or 1. `offsets` lives on the context's device.
// Returns the first position whose index is outside [0, n), or -1 (then nothing is written).
template <typename I, class Context>
int64_t SegmentReduce(const SegmentGeom& g, const float* data, const I* indices, const float* weights,
                      const int64_t* offsets, bool mean, float* out, Context* ctx);
// dDATA (zeroed here, [n, inner]) += scale_s * w_j * dOUT[s] at row_j; indices already validated.
template <typename I, class Context>
void SegmentReduceGradient(const SegmentGeom& g, const float* dout, const I* indices, const float* weights,
                           const int64_t* offsets, bool mean, float* ddata, Context* ctx);

// dWEIGHTS[j] = dot(dOUT[s], DATA[row_j]) for j in segment s (SparseLengthsWeightedSum's weights).
template <typename I, class Context>
void SegmentWeightsGradient(const SegmentGeom& g, const float* dout, const float* data, const I* indices,
                            const int64_t* offsets, float* dweights, Context* ctx);

// Shared by forward and gradient ops: offsets checked on the host, then placed on the op's device.
Tensor OffsetsOnDevice(const std::vector<int64_t>& offsets, DeviceContext* ctx);

template <class Context, bool kSparse, bool kWeighted, bool kMean>
class LengthsReducerOp final : public Operator<Context> {
 public:
  static constexpr ReducerKind kKind{kSparse, kWeighted, kMean};
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const Tensor& D = this->Input(0);
    EnforceFloatInput(def, D, 0);
    SegmentGeom g;
    HN_ENFORCE(D.ndim() >= 1, def.type(), ": input 0 ('", def.input(0), "') must have at least 1 dim");
    g.n = D.dim(0);
    g.inner = ProdDims(D.shape(), 1, D.ndim());
    const Tensor* I = kSparse ? &this->Input(kKind.indices_input()) : nullptr;
    g.k = kSparse ? I->numel() : g.n;
    const float* w = nullptr;
    if (kWeighted) {
      const Tensor& W = this->Input(kKind.weights_input());
      EnforceFloatInput(def, W, kKind.weights_input());
      HN_ENFORCE(W.numel() == g.k, def.type(), ": input 1 ('", def.input(1), "') has ", W.numel(),
                 " weights but input 2 ('", def.input(2), "') has ", g.k, " indices");
      w = W.template data<float>();
    }
    const int li = kKind.lengths_input();
    const auto offsets = LengthsToOffsets(def, this->Input(li), li, g.k,
                                          kSparse ? "indices in input " + std::to_string(kKind.indices_input())
                                                  : "rows in input 0",
                                          &this->context_);
    g.segments = static_cast<int64_t>(offsets.size()) - 1;
    Tensor off = OffsetsOnDevice(offsets, &this->context_);
    Tensor* Y = this->Output(0, SegmentOutputShape(def, D.shape(), g.segments), DataType::Float);
    float* y = Y->template mutable_data<float>();
    const int64_t* o = off.template data<int64_t>();
    int64_t bad = -1;
    if (!kSparse) {
      bad = SegmentReduce<int32_t, Context>(g, D.template data<float>(), nullptr, w, o, kMean, y, &this->context_);
    } else if (I->dtype() == DataType::Int64) {
      bad = SegmentReduce<int64_t, Context>(g, D.template data<float>(), I->template data<int64_t>(), w, o, kMean, y,
                                            &this->context_);
    } else {
      EnforceDtype(def, *I, kKind.indices_input(), DataType::Int32);
      bad = SegmentReduce<int32_t, Context>(g, D.template data<float>(), I->template data<int32_t>(), w, o, kMean, y,
                                            &this->context_);
    }
    if (bad >= 0) ThrowBadSegmentIndex(def, kKind.indices_input(), *I, bad, g.n, &this->context_);
  }
};

// Sparse variants: inputs = the forward op's inputs, then dOUT. Dense variants (LengthsSumGradient,
// LengthsMeanGradient, Caffe2's signature): (dOUT, LENGTHS); dDATA has sum(LENGTHS) rows.
template <class Context, bool kSparse, bool kWeighted, bool kMean>
class LengthsReducerGradientOp final : public Operator<Context> {
 public:
  static constexpr ReducerKind kKind{kSparse, kWeighted, kMean};
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const auto& def = this->def();
    const int gi = kSparse ? kKind.num_inputs() : 0, li = kSparse ? kKind.lengths_input() : 1;
    const Tensor& dY = this->Input(gi);
    EnforceFloatInput(def, dY, gi);
    HN_ENFORCE(dY.ndim() >= 1, def.type(), ": input ", gi, " ('", def.input(gi), "') must have at least 1 dim");
    SegmentGeom g;
    g.inner = ProdDims(dY.shape(), 1, dY.ndim());
    std::vector<int64_t> dshape = dY.shape();
    const Tensor* I = kSparse ? &this->Input(kKind.indices_input()) : nullptr;
    std::vector<int64_t> offsets;
    if (kSparse) {
      const Tensor& D = this->Input(0);
      g.n = D.ndim() >= 1 ? D.dim(0) : 0;
      g.k = I->numel();
      dshape = D.shape();
      offsets = LengthsToOffsets(def, this->Input(li), li, g.k, "indices", &this->context_);
    } else {
      offsets = LengthsToOffsets(def, this->Input(li), li, -1, "", &this->context_);
      g.n = g.k = offsets.back();
      dshape[0] = g.n;
    }
    g.segments = static_cast<int64_t>(offsets.size()) - 1;
    HN_ENFORCE(dY.dim(0) == g.segments && ProdDims(dshape, 1, dshape.size()) == g.inner, def.type(), ": input ", gi,
               " ('", def.input(gi), "') has shape ", dY.ShapeString(), " but the forward output has ", g.segments,
               " rows of ", ProdDims(dshape, 1, dshape.size()), " elements");
    const float* w = kWeighted ? this->Input(kKind.weights_input()).template data<float>() : nullptr;
    Tensor off = OffsetsOnDevice(offsets, &this->context_);
    Tensor* dD = this->Output(0, dshape, DataType::Float);
    float* dd = dD->template mutable_data<float>();
    const int64_t* o = off.template data<int64_t>();
    if (!kSparse) {
      SegmentReduceGradient<int32_t, Context>(g, dY.template data<float>(), nullptr, w, o, kMean, dd, &this->context_);
    } else if (I->dtype() == DataType::Int64) {
      SegmentReduceGradient<int64_t, Context>(g, dY.template data<float>(), I->template data<int64_t>(), w, o, kMean,
                                              dd, &this->context_);
    } else {
      SegmentReduceGradient<int32_t, Context>(g, dY.template data<float>(), I->template data<int32_t>(), w, o, kMean,
                                              dd, &this->context_);
    }
    if (kWeighted && this->OutputSize() > 1) {
      const Tensor& D = this->Input(0);
      EnforceFloatInput(def, D, 0);
      float* dw = this->Output(1, this->Input(kKind.weights_input()).shape(), DataType::Float)
                      ->template mutable_data<float>();
      if (I->dtype() == DataType::Int64) {
        SegmentWeightsGradient<int64_t, Context>(g, dY.template data<float>(), D.template data<float>(),
                                                 I->template data<int64_t>(), o, dw, &this->context_);
      } else {
        SegmentWeightsGradient<int32_t, Context>(g, dY.template data<float>(), D.template data<float>(),
                                                 I->template data<int32_t>(), o, dw, &this->context_);
      }
    }
  }
};

// Every op of this file on one device (CPU in the .cc, CUDA in the .cu).
#define HN_REGISTER_REDUCERS(REG, Ctx)                                                                          \
  REG(SparseLengthsSum, LengthsReducerOp<Ctx, true, false, false>);                                            \
  REG(SparseLengthsWeightedSum, LengthsReducerOp<Ctx, true, true, false>);                                     \
  REG(SparseLengthsMean, LengthsReducerOp<Ctx, true, false, true>);                                            \
  REG(LengthsSum, LengthsReducerOp<Ctx, false, false, false>);                                                 \
  REG(LengthsMean, LengthsReducerOp<Ctx, false, false, true>);                                                 \
  REG(SparseLengthsSumDenseGradient, LengthsReducerGradientOp<Ctx, true, false, false>);                       \
  REG(SparseLengthsWeightedSumDenseGradient, LengthsReducerGradientOp<Ctx, true, true, false>);                \
  REG(SparseLengthsMeanDenseGradient, LengthsReducerGradientOp<Ctx, true, false, true>);                       \
  REG(LengthsSumGradient, LengthsReducerGradientOp<Ctx, false, false, false>);                                 \
  REG(LengthsMeanGradient, LengthsReducerGradientOp<Ctx, false, false, true>);

}  // namespace hetnet
