#include "operators/center_crop_pad_op.h"

#include <algorithm>
#include <cstring>

#include "core/checked_size.h"
#include "core/op_schema.h"

namespace hetnet {

void CenterCropPadOp::RunOnDevice() {
  const Tensor &X = Input(0), &S = Input(1);
  const int rank = X.ndim();
  HN_ENFORCE(X.dtype() != DataType::String, type(), ": X ('", def().input(0), "') is a string tensor; not supported");
  HN_ENFORCE((S.dtype() == DataType::Int64 || S.dtype() == DataType::Int32) && S.ndim() == 1, type(), ": shape ('",
             def().input(1), "') is ", DataTypeName(S.dtype()), " ", S.ShapeString(), "; a 1-D int32/int64 is required");
  std::vector<int64_t> axes = axes_;
  if (axes.empty())
    for (int a = 0; a < rank; ++a) axes.push_back(a);
  HN_ENFORCE(S.dim(0) == static_cast<int64_t>(axes.size()), type(), ": shape ('", def().input(1), "') has ", S.dim(0),
             " sizes for ", axes.size(), " axes");
  std::vector<int64_t> out = X.sizes(), src(rank, 0), dst(rank, 0);  // per dim: crop start, pad start
  std::vector<bool> seen(rank, false);
  for (size_t k = 0; k < axes.size(); ++k) {
    const int64_t a = axes[k] < 0 ? axes[k] + rank : axes[k];
    HN_ENFORCE(a >= 0 && a < rank && !seen[a], type(), ": axis ", axes[k], " is out of range or repeated for X ('",
               def().input(0), "') of rank ", rank);
    seen[a] = true;
    const int64_t want = S.dtype() == DataType::Int64 ? S.data<int64_t>()[k] : S.data<int32_t>()[k];
    HN_ENFORCE(want >= 0, type(), ": shape ('", def().input(1), "') asks for size ", want, " on axis ", axes[k]);
    const int64_t dim = X.dim(static_cast<int>(a));
    out[a] = want;
    if (want < dim) src[a] = (dim - want) / 2;
    else dst[a] = (want - dim) / 2;
  }
  Tensor* Y = Output(0, out, X.dtype());
  const int64_t n = CheckedNumel(out, "CenterCropPad Y");
  const size_t item = X.itemsize();
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  const char* x = static_cast<const char*>(X.raw_data());
  std::memset(y, 0, static_cast<size_t>(n) * item);
  // Copy the overlap: per output index along each dim, the input index is i - dst + src.
  std::vector<int64_t> copy(rank), xs(rank, 1), ys(rank, 1);
  int64_t total = 1;
  for (int d = rank - 1; d >= 0; --d) {
    copy[d] = std::min(out[d], X.dim(d)), total *= copy[d];
    if (d + 1 < rank) xs[d] = xs[d + 1] * X.dim(d + 1), ys[d] = ys[d + 1] * out[d + 1];
  }
  for (int64_t e = 0; e < total; ++e) {
    int64_t xo = 0, yo = 0;
    for (int64_t d = rank - 1, rem = e; d >= 0; --d) {
      const int64_t i = rem % copy[d];
      rem /= copy[d];
      xo += (i + src[d]) * xs[d], yo += (i + dst[d]) * ys[d];
    }
    std::memcpy(y + yo * item, x + xo * item, item);
  }
}

OPERATOR_SCHEMA(CenterCropPad).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's CenterCropPad (opset 18): crops or zero-pads X around its centre to the sizes in input shape "
            "along arg axes (default all). Any fixed-size dtype. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(CenterCropPad, CenterCropPadOp);

}  // namespace hetnet
