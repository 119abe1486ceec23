#include "operators/onnx_max_unpool_op.h"

#include <algorithm>
#include <cstring>
#include <vector>

#include "core/checked_size.h"
#include "core/gradient.h"
#include "core/op_schema.h"

namespace hetnet {

void OnnxMaxUnpoolOp::RunOnDevice() {
  const Tensor &X = Input(0), &I = Input(1);
  const int k = X.ndim() - 2;
  HN_ENFORCE(k >= 1 && X.dtype() != DataType::String, type(), ": input 0 ('", def().input(0), "') is ",
             DataTypeName(X.dtype()), " ", X.ShapeString(), "; a numeric tensor [N, C, spatial...] is required");
  HN_ENFORCE(I.dtype() == DataType::Int64 && I.shape() == X.shape(), type(), ": indices (input 1, '", def().input(1),
             "') are ", DataTypeName(I.dtype()), " ", I.ShapeString(), "; int64 of X's shape ", X.ShapeString(),
             " is required");
  const auto kernel = GetRepeatedArgument<int64_t>("kernel_shape");
  const auto strides = GetRepeatedArgument<int64_t>("strides", std::vector<int64_t>(k, 1));
  const auto pads = GetRepeatedArgument<int64_t>("pads", std::vector<int64_t>(2 * k, 0));
  HN_ENFORCE(static_cast<int>(kernel.size()) == k && static_cast<int>(strides.size()) == k &&
                 static_cast<int>(pads.size()) == 2 * k,
             type(), ": kernel_shape, strides (", k, " values each) and pads (", 2 * k, ") must match input 0 ('",
             def().input(0), "') ", X.ShapeString());
  std::vector<int64_t> inferred{X.dim(0), X.dim(1)};
  for (int i = 0; i < k; ++i) {
    const int64_t lim = int64_t{1} << 30;
    HN_ENFORCE(kernel[i] >= 1 && kernel[i] <= lim && strides[i] >= 1 && strides[i] <= lim && pads[i] >= 0 &&
                   pads[i] <= lim && pads[k + i] >= 0 && pads[k + i] <= lim,
               type(), ": dim ", i, ": kernel and stride must be in [1, 2^30], pads in [0, 2^30]");
    const int64_t d = (X.dim(i + 2) - 1) * strides[i] + kernel[i] - pads[i] - pads[k + i];
    HN_ENFORCE(d >= 0, type(), ": the output size of spatial dim ", i, " is negative (", d, ")");
    inferred.push_back(d);
  }
  const int64_t total = CheckedNumel(inferred, "MaxUnpool output");
  std::vector<int64_t> shape = inferred;
  if (InputSize() > 2) {
    const Tensor& S = Input(2);
    HN_ENFORCE(S.dtype() == DataType::Int64 && S.ndim() == 1 && S.numel() == X.ndim(), type(), ": output_shape ",
               "(input 2, '", def().input(2), "') is ", DataTypeName(S.dtype()), " ", S.ShapeString(), "; int64 [",
               X.ndim(), "] is required");
    shape.assign(S.data<int64_t>(), S.data<int64_t>() + S.numel());
    for (int i = 0; i < X.ndim(); ++i)
      HN_ENFORCE(shape[i] >= inferred[i], type(), ": output_shape ", ShapeToString(shape), " ('", def().input(2),
                 "') is smaller than the inferred shape ", ShapeToString(inferred), " in dim ", i);
  }
  CheckedNumel(shape, "MaxUnpool output");
  Tensor* Y = Output(0, shape, X.dtype());
  const size_t item = ItemSize(X.dtype());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  std::memset(y, 0, Y->nbytes());
  // Scatter into the inferred block, then place it in Y's leading corner (in place from the back: a row never lands
  // before where it came from, since each Y dim is >= the inferred one).
  const char* x = static_cast<const char*>(X.raw_data());
  const int64_t* idx = I.data<int64_t>();
  for (int64_t j = 0; j < X.numel(); ++j) {
    HN_ENFORCE(idx[j] >= 0 && idx[j] < total, type(), ": index ", idx[j], " at ", j, " of '", def().input(1),
               "' is outside the inferred output ", ShapeToString(inferred), " (", total, " elements)");
    std::memcpy(y + idx[j] * item, x + j * item, item);
  }
  if (shape == inferred) return;
  const int64_t row = inferred.back();
  for (int64_t r = total / std::max<int64_t>(row, 1) - 1; row > 0 && r >= 0; --r) {
    int64_t at = 0;  // the row's offset in Y: its coordinates in the inferred shape, strided by Y's
    for (int64_t rem = r, d = static_cast<int64_t>(shape.size()) - 2, stride = shape.back(); d >= 0; --d) {
      at += (rem % inferred[d]) * stride;
      rem /= inferred[d];
      stride *= shape[d];
    }
    if (at == r * row) continue;
    std::memmove(y + at * item, y + r * row * item, row * item);
    std::memset(y + r * row * item, 0, std::min(at - r * row, row) * item);  // the part the row left
  }
}

OPERATOR_SCHEMA(OnnxMaxUnpool).NumInputs(2, 3).NumOutputs(1)
    .SetDoc("ONNX's MaxUnpool (as its reference): scatter X into the inferred shape by MaxPool's flat indices, placed "
            "in the leading corner of output_shape when given. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxMaxUnpool, OnnxMaxUnpoolOp);
NO_GRADIENT(OnnxMaxUnpool);

}  // namespace hetnet
