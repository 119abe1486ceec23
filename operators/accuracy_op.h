// Accuracy(predictions float [N, D], label int32 [N]) -> accuracy (float, 0-d): the fraction of rows whose
// label is among the top_k (arg, default 1) predictions. Ties count as Caffe2 counts them: an entry ranks
// above the label's if it is greater, or equal with a smaller index. No gradient. 0 for N == 0.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/host_device.h"

namespace hetnet {

// Whether row `row` (D entries) ranks label l within its top_k, for the CPU loop and the CUDA
// kernel. An out-of-range l counts as wrong (CPU has checked the ids before; CUDA cannot throw).
HN_HOST_DEVICE inline bool AccuracyRowCorrect(const float* row, int64_t D, int64_t l, int top_k) {
  if (l < 0 || l >= D) return false;
  const float lp = row[l];
  int ngt = 0;
  for (int64_t j = 0; j < D && ngt < top_k; ++j)
    if (row[j] > lp || (row[j] == lp && j < l)) ++ngt;
  return ngt < top_k;
}

// y[0] = correct / N on the device. CPU checks label ids; CUDA counts an out-of-range id as wrong.
template <class Context>
void AccuracyKernel(int64_t N, int64_t D, int top_k, const float* x, const int32_t* label, float* y, Context* ctx);

inline void CheckAccuracyInputs(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& label, int top_k) {
  HN_ENFORCE(x.size() == 2, def.type(), ": input 0 ('", def.input(0), "') must be 2-D [N, D], has shape ",
             ShapeToString(x));
  HN_ENFORCE(label.size() == 1 && label[0] == x[0], def.type(), ": input 1 ('", def.input(1), "') has shape ",
             ShapeToString(label), " but input 0 ('", def.input(0), "') of shape ", ShapeToString(x), " needs [", x[0],
             "] labels");
  HN_ENFORCE(top_k >= 1 && top_k <= x[1], def.type(), ": top_k ", top_k, " must be in [1, ", x[1],
             "] (the number of classes of input 0 ('", def.input(0), "'))");
}

template <class Context>
class AccuracyOp final : public Operator<Context> {
 public:
  AccuracyOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws), top_k_(this->template GetSingleArgument<int>("top_k", 1)) {}
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    const Tensor& L = this->Input(1);
    EnforceFloatInput(this->def(), X, 0);
    EnforceDtype(this->def(), L, 1, DataType::Int32);
    CheckAccuracyInputs(this->def(), X.shape(), L.shape(), top_k_);
    const int64_t N = X.dim(0), D = X.dim(1);
    if (Context::kDeviceType == DeviceType::CPU) {
      const int32_t* l = L.template data<int32_t>();
      for (int64_t i = 0; i < N; ++i)
        HN_ENFORCE(l[i] >= 0 && l[i] < D, this->type(), ": input 1 ('", this->def().input(1), "') holds label ",
                   l[i], " at ", i, " but input 0 ('", this->def().input(0), "') has ", D, " classes");
    }
    Tensor* Y = this->Output(0, {}, DataType::Float);
    AccuracyKernel<Context>(N, D, top_k_, X.template data<float>(), L.template data<int32_t>(),
                            Y->template mutable_data<float>(), &this->context_);
  }

 private:
  int top_k_;
};

}  // namespace hetnet
