// MatMul(A, B[, like]) -> Y [M, N]: A flattened to 2-D at axis_a, B at axis_b (default 1), each optionally
// transposed (trans_a, trans_b); with a third input Y takes that input's shape (used by the gradient).
// BatchMatMul(A, B) -> Y: batched matrix products over the last two dims (trans_a, trans_b). broadcast=0:
// same rank >= 2 and equal batch dims. broadcast=1: a 1-D A is [1, K] and a 1-D B is [K, 1] (that dim is
// dropped from Y; two vectors give [1]); batch dims broadcast as numpy's (aligned at the right, a size-1
// dim stretches). Gradients are MatMul / BatchMatMul ops
// (BatchMatMul's only for broadcast=0, as in Caffe2). float32.
#pragma once

#include "core/operator.h"
#include "operators/cnn_op_utils.h"

namespace hetnet {

struct MatMulDims {
  int64_t M, K, N;
};

inline MatMulDims ComputeMatMulDims(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                    const std::vector<int64_t>& b) {
  ArgumentHelper args(def);
  const int axa = CanonicalAxisFor(def, args.GetSingleArgument<int>("axis_a", 1), static_cast<int>(a.size()), 0);
  const int axb = CanonicalAxisFor(def, args.GetSingleArgument<int>("axis_b", 1), static_cast<int>(b.size()), 1);
  const bool ta = args.GetSingleArgument<int>("trans_a", 0) != 0, tb = args.GetSingleArgument<int>("trans_b", 0) != 0;
  const int64_t a0 = ProdDims(a, 0, axa), a1 = ProdDims(a, axa, a.size());
  const int64_t b0 = ProdDims(b, 0, axb), b1 = ProdDims(b, axb, b.size());
  MatMulDims d{ta ? a1 : a0, ta ? a0 : a1, tb ? b0 : b1};
  const int64_t bk = tb ? b1 : b0;
  HN_ENFORCE(d.K == bk, def.type(), ": dimension mismatch: ", ta ? "trans(A)" : "A", " from input 0 ('", def.input(0),
             "') of shape ", ShapeToString(a), " is ", d.M, " x ", d.K, " but ", tb ? "trans(B)" : "B",
             " from input 1 ('", def.input(1), "') of shape ", ShapeToString(b), " is ", bk, " x ", d.N);
  return d;
}

inline std::vector<int64_t> MatMulOutputShape(const caffe2::OperatorDef& def, const MatMulDims& d,
                                              const std::vector<int64_t>* like) {
  if (!like) return {d.M, d.N};
  HN_ENFORCE(ProdDims(*like, 0, like->size()) == d.M * d.N, def.type(), ": input 2 ('", def.input(2), "') has shape ",
             ShapeToString(*like), " but the product is ", d.M, " x ", d.N);
  return *like;
}

template <class Context>
class MatMulOp final : public Operator<Context> {
 public:
  MatMulOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        ta_(this->template GetSingleArgument<int>("trans_a", 0) != 0),
        tb_(this->template GetSingleArgument<int>("trans_b", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& A = this->Input(0);
    const Tensor& B = this->Input(1);
    EnforceFloatInput(this->def(), A, 0);
    EnforceFloatInput(this->def(), B, 1);
    const MatMulDims d = ComputeMatMulDims(this->def(), A.shape(), B.shape());
    std::vector<int64_t> shape =
        MatMulOutputShape(this->def(), d, this->InputSize() > 2 ? &this->Input(2).shape() : nullptr);
    float* y = this->Output(0, std::move(shape), DataType::Float)->template mutable_data<float>();
    GemmOrZero<Context>(ta_, tb_, d.M, d.N, d.K, A.template data<float>(), B.template data<float>(), y,
                        &this->context_);
  }

 private:
  bool ta_, tb_;
};

struct BatchMatMulPlan {
  int64_t M, K, N;
  int64_t batches, a_batches, b_batches;  // operand i of batch t is at (t % i_batches), unless:
  std::vector<int64_t> a_index, b_index;  // non-empty where size-1 batch dims stretch: operand i of batch t
  int64_t a_at(int64_t t) const { return a_index.empty() ? t % a_batches : a_index[t]; }
  int64_t b_at(int64_t t) const { return b_index.empty() ? t % b_batches : b_index[t]; }
  std::vector<int64_t> y_shape;
};

BatchMatMulPlan ComputeBatchMatMulPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b);
// The same with the flags given (not read from def's args); def names the op and inputs in messages.
BatchMatMulPlan ComputeBatchMatMulPlan(const caffe2::OperatorDef& def, const std::vector<int64_t>& a,
                                       const std::vector<int64_t>& b, bool trans_a, bool trans_b, bool broadcast);

template <class Context>
class BatchMatMulOp final : public Operator<Context> {
 public:
  BatchMatMulOp(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        ta_(this->template GetSingleArgument<int>("trans_a", 0) != 0),
        tb_(this->template GetSingleArgument<int>("trans_b", 0) != 0) {}
  void RunOnDevice() override {
    const Tensor& A = this->Input(0);
    const Tensor& B = this->Input(1);
    EnforceFloatInput(this->def(), A, 0);
    EnforceFloatInput(this->def(), B, 1);
    const BatchMatMulPlan p = ComputeBatchMatMulPlan(this->def(), A.shape(), B.shape());
    const bool ta = ta_ && A.ndim() > 1, tb = tb_ && B.ndim() > 1;  // a vector is its own transpose
    float* y = this->Output(0, p.y_shape, DataType::Float)->template mutable_data<float>();
    const float* a = A.template data<float>();
    const float* b = B.template data<float>();
    for (int64_t t = 0; t < p.batches; ++t)
      GemmOrZero<Context>(ta, tb, p.M, p.N, p.K, a + p.a_at(t) * p.M * p.K, b + p.b_at(t) * p.K * p.N,
                          y + t * p.M * p.N, &this->context_);
  }

 private:
  bool ta_, tb_;
};

}  // namespace hetnet
