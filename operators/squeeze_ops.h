// Squeeze(X) -> Y without the size-1 dims listed in `dims`; ExpandDims(X) -> Y with size-1 dims inserted
// at `dims` (positions in Y). `dims` is required, non-negative, and taken sorted without duplicates, as in
// Caffe2. Any dtype; in place (Y == X) only relabels the dims. Each is the other's gradient.
#pragma once

#include <algorithm>

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

inline std::vector<int> SqueezeDimsArg(const caffe2::OperatorDef& def) {
  std::vector<int> dims = ArgumentHelper(def).GetRepeatedArgument<int>("dims");
  HN_ENFORCE(!dims.empty(), def.type(), ": argument `dims` is required");
  std::sort(dims.begin(), dims.end());
  dims.erase(std::unique(dims.begin(), dims.end()), dims.end());
  HN_ENFORCE(dims.front() >= 0, def.type(), ": dims must be non-negative, got ", dims.front());
  return dims;
}

inline std::vector<int64_t> SqueezeShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& x) {
  const std::vector<int> dims = SqueezeDimsArg(def);
  HN_ENFORCE(dims.back() < static_cast<int>(x.size()), def.type(), ": dim ", dims.back(), " is out of range for input 0 ('",
             def.input(0), "') of shape ", ShapeToString(x));
  std::vector<int64_t> y;
  size_t j = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    if (j < dims.size() && dims[j] == static_cast<int>(i)) {
      HN_ENFORCE(x[i] == 1, def.type(), ": dim ", i, " of input 0 ('", def.input(0), "') of shape ", ShapeToString(x),
                 " is ", x[i], ", not 1; only size-1 dims can be squeezed");
      ++j;
      continue;
    }
    y.push_back(x[i]);
  }
  return y;
}

inline std::vector<int64_t> ExpandDimsShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& x) {
  const std::vector<int> dims = SqueezeDimsArg(def);
  HN_ENFORCE(dims.back() < static_cast<int>(x.size() + dims.size()), def.type(), ": input 0 ('", def.input(0),
             "') of shape ", ShapeToString(x), " has too few dims for dims up to ", dims.back());
  std::vector<int64_t> y = x;
  for (int d : dims) y.insert(y.begin() + d, 1);
  return y;
}

template <class Context, bool kSqueeze>
class SqueezeOpT final : public Operator<Context> {
 public:
  using Operator<Context>::Operator;
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    std::vector<int64_t> shape = kSqueeze ? SqueezeShape(this->def(), X.shape()) : ExpandDimsShape(this->def(), X.shape());
    Tensor* Y = this->Output(0);
    if (Y != &X) Y->CopyFrom(X, &this->context_);
    Y->Resize(std::move(shape));
  }
};

template <class Context> using SqueezeOp = SqueezeOpT<Context, true>;
template <class Context> using ExpandDimsOp = SqueezeOpT<Context, false>;

}  // namespace hetnet
