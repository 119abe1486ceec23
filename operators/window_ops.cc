#include "operators/window_ops.h"

#include <cmath>

#include "core/checked_size.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

template <WindowKind K>
void WindowOp<K>::RunOnDevice() {
  EnforceIndexInput(*this, 0);
  const Tensor& S = Input(0);
  HN_ENFORCE(S.numel() == 1, type(), ": size (input 0, '", def().input(0), "') must hold one value, has shape ",
             S.ShapeString());
  const int64_t n = IndexAt(S, 0);
  HN_ENFORCE(n >= 0, type(), ": size (input 0, '", def().input(0), "') is ", n, "; it must be >= 0");
  CheckedNumel({n}, "window");
  const int dt = GetSingleArgument<int>("dtype", static_cast<int>(DataType::Float));
  HN_ENFORCE(IsKnownDataType(dt) && dt != 0, type(), ": arg dtype ", dt, " is not a data type");
  const DataType t = static_cast<DataType>(dt);
  Tensor* Y = Output(0, {n}, t);
  const bool periodic = GetSingleArgument<int>("periodic", 1) != 0;
  const double m = static_cast<double>(periodic ? n : n - 1), pi = std::acos(-1.0);
  const size_t item = ItemSize(t);
  char* y = static_cast<char*>(Y->raw_mutable_data(t));
  for (int64_t i = 0; i < n; ++i) {
    const double a = m == 0 ? 0.0 : 2 * pi * static_cast<double>(i) / m;
    double w = 0;
    if (K == WindowKind::kHann) w = 0.5 - 0.5 * std::cos(a);
    if (K == WindowKind::kHamming) w = 25.0 / 46.0 - (1 - 25.0 / 46.0) * std::cos(a);
    if (K == WindowKind::kBlackman) w = 0.42 - 0.5 * std::cos(a) + 0.08 * std::cos(2 * a);
    if (m == 0) w = 1.0;
    char bytes[16] = {};
    EncodeAs(*this, t, w, bytes);
    std::memcpy(y + i * item, bytes, item);
  }
}

#define HN_WINDOW(Name, Kind, Formula)                                                                     \
  OPERATOR_SCHEMA(Name).NumInputs(1).NumOutputs(1).SetDoc(                                                  \
      "ONNX's " #Name "(size) -> Y [size]: w[n] = " Formula ", M = size (arg periodic, default 1) or size - 1; " \
      "arg dtype (default float32). CPU only.");                                                          \
  REGISTER_CPU_OPERATOR(Name, WindowOp<WindowKind::Kind>);
HN_WINDOW(HannWindow, kHann, "0.5 - 0.5 cos(2 pi n / M)")
HN_WINDOW(HammingWindow, kHamming, "25/46 - 21/46 cos(2 pi n / M)")
HN_WINDOW(BlackmanWindow, kBlackman, "0.42 - 0.5 cos(2 pi n / M) + 0.08 cos(4 pi n / M)")
#undef HN_WINDOW

}  // namespace hetnet
