// Harness cases for FoldBatchNormWeights (operators/fold_batch_norm_op.h): a Conv filter and an FC
// weight (axis_w) with and without a bias, float32 and bfloat16 outputs (`to`), checked against the
// fold written out here in double; the CUDA column runs the GPU fold on the same inputs.
#include <cmath>

#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {

namespace {

Case Fold(const std::string& label, std::vector<int64_t> w_shape, int axis_w, bool bias, DataType to) {
  int64_t channels = 1;
  for (int d = 0; d < axis_w; ++d) channels *= w_shape[static_cast<size_t>(d)];
  std::vector<caffe2::Argument> args{Arg("epsilon", 1e-3f), Arg("axis_w", axis_w)};
  if (to != DataType::Float) args.push_back(Arg("to", static_cast<int>(to)));
  std::vector<std::string> ins{"W", "scale", "shift", "mean", "var"};
  if (bias) ins.push_back("B");
  std::vector<InputSpec> specs{In(w_shape), In({channels}).Range(0.5, 1.5), In({channels}), In({channels}),
                               In({channels}).Range(0.1, 2.0)};
  if (bias) specs.push_back(In({channels}));
  Tolerance tol;
  if (to != DataType::Float) tol.f32 = tol.gpu = 1.0 / 128;  // one bfloat16 rounding
  return Case(label + (to == DataType::Float ? "" : " to bfloat16"))
      .Def(Op("FoldBatchNormWeights", ins, {"W_folded", "B_folded"}, args))
      .Inputs(specs)
      .Tol(tol)
      .NoGrad()
      .Ref([channels, to](const caffe2::OperatorDef&, const RefTensors& in) {
        const RefTensor& W = in[0];
        const int64_t row = W.numel() / channels;
        RefTensor Wf(W.shape, to), Bf({channels}, to);
        for (int64_t c = 0; c < channels; ++c) {
          const double alpha = in[1][c] / std::sqrt(in[4][c] + 1e-3);
          for (int64_t k = 0; k < row; ++k) Wf[c * row + k] = W[c * row + k] * alpha;
          Bf[c] = ((in.size() > 5 ? in[5][c] : 0.0) - in[3][c]) * alpha + in[2][c];
        }
        return RefTensors{Wf, Bf};
      });
}

}  // namespace

HN_OP_CASES(FoldBatchNormWeights) {
  std::vector<Case> out;
  for (DataType to : {DataType::Float, DataType::BFloat16}) {
    out.push_back(Fold("conv filter 6x3x3x3 with bias", {6, 3, 3, 3}, 1, true, to));
    out.push_back(Fold("conv filter 5x2x1x1", {5, 2, 1, 1}, 1, false, to));
    out.push_back(Fold("FC weight 7x10", {7, 10}, 1, true, to));
    out.push_back(Fold("FC weight 2x3x4, axis_w 2", {2, 3, 4}, 2, false, to));
  }
  return out;
}

}  // namespace harness
}  // namespace hetnet
