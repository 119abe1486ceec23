#include "operators/onnx_pad_op.h"

#include <cstring>
#include <type_traits>

#include "core/checked_size.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

OnnxPadOp::OnnxPadOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), mode_(GetSingleArgument<std::string>("mode", "constant")) {
  HN_ENFORCE(mode_ == "constant" || mode_ == "reflect" || mode_ == "edge" || mode_ == "wrap", def.type(),
             ": arg mode is '", mode_, "'; constant, reflect, edge or wrap is required");
}

void OnnxPadOp::RunOnDevice() {
  const Tensor& X = Input(0);
  HN_ENFORCE(X.dtype() != DataType::String, type(), ": input 0 ('", def().input(0), "') is string (unsupported)");
  const int r = X.ndim();
  EnforceIndexInput(*this, 1);
  const Tensor& P = Input(1);
  std::vector<int64_t> axes;
  const bool has_axes = InputSize() > 3 && !def().input(3).empty();
  if (has_axes) {
    EnforceIndexInput(*this, 3);
    std::vector<bool> seen(r, false);
    for (int64_t k = 0; k < Input(3).numel(); ++k) {
      int64_t a = IndexAt(Input(3), k);
      HN_ENFORCE(a >= -r && a < r, type(), ": axis ", a, " (input 3, '", def().input(3), "') is out of range for ", r,
                 " dims");
      if (a < 0) a += r;
      HN_ENFORCE(!seen[a], type(), ": axis ", a, " is repeated in input 3 ('", def().input(3), "')");
      seen[a] = true;
      axes.push_back(a);
    }
  } else {
    for (int a = 0; a < r; ++a) axes.push_back(a);
  }
  const int64_t n = static_cast<int64_t>(axes.size());
  HN_ENFORCE(P.numel() == 2 * n, type(), ": pads (input 1, '", def().input(1), "') has ", P.numel(),
             " values; 2 per padded dim (", 2 * n, ") are required");
  std::vector<int64_t> begin(r, 0), shape = X.shape();
  const int64_t kMaxPad = int64_t{1} << 40;
  for (int64_t j = 0; j < n; ++j) {
    const int64_t a = axes[j], b = IndexAt(P, j), e = IndexAt(P, j + n), d = X.dim(static_cast<int>(a));
    HN_ENFORCE(b >= -kMaxPad && b <= kMaxPad && e >= -kMaxPad && e <= kMaxPad && d + b + e >= 0, type(), ": pads ", b,
               ", ", e, " (input 1, '", def().input(1), "') for dim ", a, " of size ", d, " are out of range");
    HN_ENFORCE(mode_ == "constant" || d > 0 || (b <= 0 && e <= 0), type(), ": mode ", mode_, " cannot pad empty dim ",
               a, " of input 0 ('", def().input(0), "')");
    begin[a] += b;
    shape[a] = d + b + e;
  }
  CheckedNumel(shape, "OnnxPad output");
  Tensor* Y = Output(0, shape, X.dtype());
  const size_t item = X.itemsize();
  char value[16] = {};
  if (mode_ == "constant" && InputSize() > 2 && !def().input(2).empty()) {
    const Tensor& V = Input(2);
    HN_ENFORCE(V.numel() == 1, type(), ": constant_value (input 2, '", def().input(2), "') must hold one value");
    EncodeAs(*this, X.dtype(), ElementAsDouble(*this, V, 2, 0), value);
  }
  const char* x = static_cast<const char*>(X.raw_data());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  std::vector<int64_t> stride(r, 1);
  for (int d = r - 2; d >= 0; --d) stride[d] = stride[d + 1] * X.dim(d + 1);
  for (int64_t k = 0; k < Y->numel(); ++k) {
    int64_t rem = k, off = 0;
    bool outside = false;
    for (int d = r - 1; d >= 0; --d) {
      int64_t i = rem % shape[d] - begin[d];
      rem /= shape[d];
      const int64_t size = X.dim(d);
      if (i < 0 || i >= size) {
        if (mode_ == "constant") {
          outside = true;
          break;
        } else if (mode_ == "edge") {
          i = i < 0 ? 0 : size - 1;
        } else if (mode_ == "wrap") {
          i = ((i % size) + size) % size;
        } else if (size == 1) {
          i = 0;
        } else {  // reflect: period 2 (size - 1)
          const int64_t period = 2 * (size - 1);
          i = ((i % period) + period) % period;
          if (i >= size) i = period - i;
        }
      }
      off += i * stride[d];
    }
    std::memcpy(y + k * item, outside ? value : x + off * item, item);
  }
}

OPERATOR_SCHEMA(OnnxPad).NumInputs(2, 4).NumOutputs(1)
    .SetDoc("ONNX's Pad (opset 18) with pads, constant_value and axes as run-time inputs; arg mode constant, reflect, "
            "edge or wrap; negative pads crop; any rank and dtype. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxPad, OnnxPadOp);

}  // namespace hetnet
