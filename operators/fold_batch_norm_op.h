// FoldBatchNormWeights: the weights of a Conv or FC with the inference-mode SpatialBN after it
// folded in, so that one op computes both (inserted by core/inference_fusion.cc):
//   alpha[c] = scale[c] / sqrt(var[c] + epsilon)
//   W_folded[c, ...] = W[c, ...] * alpha[c]
//   B_folded[c] = (B[c] - mean[c]) * alpha[c] + shift[c]      (B = 0 when the op had no bias)
// Inputs (W, scale, shift, mean, var[, B]); c runs over the product of W's dims before `axis_w`
// (1 for Conv; FC's axis_w). The op folds again only when an input may have changed since its last
// fold (another storage, a write generation, a shape, or storage hetnet does not own) or when
// something else wrote its outputs; otherwise a run costs a few comparisons. So weights fed or
// trained after the net was created are always folded in, unlike a fold done once at creation.
// CPU and CUDA kernels: the fold runs on the device that holds the weights.
// `to` (bfloat16 / float16; the reduced-precision rewrite, core/reduced_precision.h, sets it) makes
// the outputs narrow: computed in float32 and rounded once, with no float32 copy kept; W may then be
// of that dtype too (a Predictor's weights converted in place: W rounded, then the folded product).
#pragma once

#include <memory>
#include <type_traits>
#include <vector>

#include "core/operator.h"
#include "device/prepared_weights.h"
#include "operators/cast_ops.h"
#include "operators/tensor_version.h"

namespace hetnet {

// wd[c * row + k] = src[c * row + k] * alpha[c]; bd[c] = (bias[c] or 0 - mean[c]) * alpha[c] + shift[c],
// alpha[c] = scale[c] / sqrt(var[c] + epsilon), in double. CPU in fold_batch_norm_op.cc, CUDA in
// fold_batch_norm_op.cu (a net imported for a GPU keeps its weights there: the fold runs there).
template <class Context>
void FoldBatchNormKernel(int64_t channels, int64_t row, const float* src, const float* const stats[4],
                         const float* bias, double epsilon, float* wd, float* bd, Context* ctx);

// `to`: float32 (default), bfloat16 or float16; a kInvalidArgument error otherwise.
DataType FoldedBatchNormType(const caffe2::OperatorDef& def);

// Folds of CPU weights are shared by every instance of the op that folds the same versions of the
// same inputs with the same arguments (a Predictor's child workspaces, one net instance each): one
// folded copy, and so one copy of what kernels prepare from it (packed panels, Winograd filters),
// instead of one per instance. The output blobs share the folded tensors, read-only: only the
// Conv / FC the inference rewrite made reads them.
struct FoldArguments {
  std::vector<WeightVersion> others;  // scale, shift, mean, var[, B] (W is the cache's key)
  double epsilon = 0;
  int axis_w = 1;
  DataType to = DataType::Float;
  bool operator==(const FoldArguments& o) const {
    return others == o.others && epsilon == o.epsilon && axis_w == o.axis_w && to == o.to;
  }
};
struct FoldedWeights {
  Tensor w, b;
};
PreparedWeightCache<FoldArguments, FoldedWeights>& SharedFolds();

template <class Context>
class FoldBatchNormWeightsOp final : public Operator<Context> {
 public:
  FoldBatchNormWeightsOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        epsilon_(this->template GetSingleArgument<float>("epsilon", 1e-5f)),
        axis_w_(this->template GetSingleArgument<int>("axis_w", 1)),
        to_(FoldedBatchNormType(def)) {}
  void RunOnDevice() override {
    if (!UpToDate()) Fold();
  }
  // Constant CPU weights are folded when the net is created; its runs then keep the outputs. (GPU
  // folds stay at the first run, where the CUDA graph executor expects them.)
  bool PrepareConstantInputs(const std::vector<bool>& constant) override {
    if constexpr (!std::is_same<Context, CPUContext>::value) {
      return false;
    } else {
      for (bool c : constant)
        if (!c) return false;
      this->Run();
      return true;
    }
  }

 private:
  bool UpToDate() {
    if (inputs_seen_.size() != static_cast<size_t>(this->InputSize())) return false;
    for (int i = 0; i < this->InputSize(); ++i)
      if (!inputs_seen_[i].Holds(this->Input(i))) return false;
    for (int o = 0; o < 2; ++o) {
      const Blob* b = this->OutputBlob(o);
      if (!b->IsTensor() || !outputs_seen_[o].Same(TensorVersion::Of(b->GetTensor()))) return false;
    }
    return true;
  }
  void Fold();
  // The fold into w_out and b_out (shaped and typed as the outputs).
  void FoldInto(Tensor* w_out, Tensor* b_out);

  double epsilon_;
  int axis_w_;
  DataType to_;  // the outputs' dtype (`to`: float32, or bfloat16 / float16 for reduced precision)
  std::vector<TensorVersion> inputs_seen_, outputs_seen_;
  std::shared_ptr<const FoldedWeights> shared_;  // the outputs' storage, when shared (SharedFolds)
};

template <class Context>
inline void FoldBatchNormWeightsOp<Context>::Fold() {
  const Tensor& W = this->Input(0);
  const caffe2::OperatorDef& def = this->def();
  // W may be narrow already (`to`'s dtype: a Predictor's weights converted in place).
  HN_ENFORCE((W.dtype() == DataType::Float || W.dtype() == to_) && W.ndim() >= 2, "FoldBatchNormWeights: W ('",
             def.input(0), "') must be a float32", to_ == DataType::Float ? std::string() : std::string(" or ") + DataTypeName(to_),
             " tensor of at least 2 dims, got ", DataTypeName(W.dtype()), " of ", W.ndim(), " dims");
  HN_ENFORCE(axis_w_ >= 1 && axis_w_ < W.ndim(), "FoldBatchNormWeights: axis_w ", axis_w_, " out of range for W of ",
             W.ndim(), " dims");
  const int64_t channels = W.size_to_dim(axis_w_);
  for (int k = 0; k < 4; ++k) {
    const Tensor& s = this->Input(k + 1);
    HN_ENFORCE(s.dtype() == DataType::Float && s.numel() == channels, "FoldBatchNormWeights: '", def.input(k + 1),
               "' must hold ", channels, " floats (one per output channel)");
  }
  if (this->InputSize() == 6) {
    const Tensor& B = this->Input(5);
    HN_ENFORCE(B.dtype() == DataType::Float && B.numel() == channels, "FoldBatchNormWeights: bias '", def.input(5),
               "' must hold ", channels, " floats");
  }
  const std::vector<int64_t> b_shape{channels};
  bool external = false;
  for (int i = 0; i < this->InputSize(); ++i) external = external || this->Input(i).external_storage();
  if (std::is_same<Context, CPUContext>::value && !external) {
    FoldArguments args{{}, epsilon_, axis_w_, to_};
    for (int i = 1; i < this->InputSize(); ++i) args.others.push_back(WeightVersion::Of(this->Input(i)));
    shared_.reset();  // an older fold need not stay alive while the new one is made
    shared_ = SharedFolds().GetOrPrepare(WeightVersion::Of(W), args, [&] {
      auto f = std::make_shared<FoldedWeights>();
      f->w = Tensor(W.shape(), to_, this->device());
      f->b = Tensor(b_shape, to_, this->device());
      FoldInto(&f->w, &f->b);
      return std::shared_ptr<const FoldedWeights>(std::move(f));
    });
    *this->OutputBlob(0)->template GetMutable<Tensor>() = shared_->w;  // shares the storage
    *this->OutputBlob(1)->template GetMutable<Tensor>() = shared_->b;
  } else {
    if (shared_) {  // never write into storage other instances share
      *this->OutputBlob(0)->template GetMutable<Tensor>() = Tensor();
      *this->OutputBlob(1)->template GetMutable<Tensor>() = Tensor();
      shared_.reset();
    }
    FoldInto(this->Output(0, W.shape(), to_), this->Output(1, b_shape, to_));
  }
  inputs_seen_.clear();
  for (int i = 0; i < this->InputSize(); ++i) inputs_seen_.push_back(TensorVersion::Of(this->Input(i)));
  outputs_seen_ = {TensorVersion::Of(this->OutputBlob(0)->GetTensor()), TensorVersion::Of(this->OutputBlob(1)->GetTensor())};
}

template <class Context>
inline void FoldBatchNormWeightsOp<Context>::FoldInto(Tensor* w_out, Tensor* b_out) {
  const Tensor& W = this->Input(0);
  const int64_t channels = b_out->numel();
  const float* stats[4];
  for (int k = 0; k < 4; ++k) stats[k] = this->Input(k + 1).template data<float>();
  const float* bias = this->InputSize() == 6 ? this->Input(5).template data<float>() : nullptr;
  const int64_t row = channels ? W.numel() / channels : 0;
  // float32 outputs are written in place; narrow ones (`to`) computed in float32, rounded once.
  const bool narrow = to_ != DataType::Float;
  const Device dev = this->device();
  // (Scratch freed after the fold: keeping it would keep the float32 copy.)
  Tensor w_scratch, b_scratch, widened;
  if (narrow) w_scratch = Tensor(W.shape(), DataType::Float, dev), b_scratch = Tensor({channels}, DataType::Float, dev);
  float* wd = (narrow ? &w_scratch : w_out)->template mutable_data<float>();
  float* bd = (narrow ? &b_scratch : b_out)->template mutable_data<float>();
  if (W.dtype() != DataType::Float) {
    widened = Tensor(W.shape(), DataType::Float, dev);
    CastKernel<Context>(W.dtype(), DataType::Float, W.numel(), W.raw_data(), widened.raw_mutable_data(DataType::Float),
                        false, &this->context_);
  }
  const float* src = (W.dtype() == DataType::Float ? W : widened).template data<float>();
  FoldBatchNormKernel<Context>(channels, row, src, stats, bias, epsilon_, wd, bd, &this->context_);
  if (narrow) {
    for (int o = 0; o < 2; ++o) {
      const Tensor& f = o ? b_scratch : w_scratch;
      Tensor* y = o ? b_out : w_out;
      CastKernel<Context>(DataType::Float, to_, f.numel(), f.raw_data(), y->raw_mutable_data(to_), false,
                          &this->context_);
    }
  }
  // (On a GPU the scratch goes back to the caching allocator on this op's stream, after the casts.)
}

}  // namespace hetnet
