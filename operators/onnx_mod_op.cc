#include "operators/onnx_mod_op.h"

#include <cmath>
#include <type_traits>

#include "device/broadcast.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

namespace {

template <typename T>
T ModOne(T a, T b, bool c_fmod) {
  if constexpr (std::is_floating_point<T>::value) {
    T m = std::fmod(a, b);
    if (c_fmod) return m;
    if (m != 0) {
      if ((b < 0) != (m < 0)) m += b;
    } else {
      m = std::copysign(T(0), b);
    }
    return m;
  } else {
    if (b == 0) return 0;
    if (std::is_signed<T>::value && b == static_cast<T>(-1)) return 0;  // lowest % -1 would trap
    T m = static_cast<T>(a % b);
    if (!c_fmod && m != 0 && ((m < 0) != (b < 0))) m = static_cast<T>(m + b);
    return m;
  }
}

}  // namespace

OnnxModOp::OnnxModOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), fmod_(GetSingleArgument<int>("fmod", 0) != 0) {}

void OnnxModOp::RunOnDevice() {
  const Tensor &A = Input(0), &B = Input(1);
  const auto& d = def();
  HN_ENFORCE(A.dtype() == B.dtype(), type(), ": input 0 ('", d.input(0), "') is ", DataTypeName(A.dtype()),
             " but input 1 ('", d.input(1), "') is ", DataTypeName(B.dtype()), "; they must have one dtype");
  std::vector<int64_t> out;
  HN_ENFORCE(math::NumpyBroadcastShape({A.shape(), B.shape()}, &out), type(), ": ",
             math::DescribeShapes({d.input(0), d.input(1)}, {A.shape(), B.shape()}),
             " do not broadcast (numpy rule: aligned from the last dim, each dim equal or 1)");
  const math::BroadcastIndex ix = math::MakeBroadcastIndex(out, {A.shape(), B.shape()});
  Tensor* C = Output(0, out, A.dtype());
  int64_t off[math::kMaxBroadcastInputs];
  if (A.dtype() == DataType::Float16) {
    const Half* a = A.data<Half>();
    const Half* b = B.data<Half>();
    Half* c = C->mutable_data<Half>();
    for (int64_t i = 0; i < C->numel(); ++i) {
      math::BroadcastOffsets(ix, i, off);
      c[i] = FloatToHalf(ModOne(HalfToFloat(a[off[0]]), HalfToFloat(b[off[1]]), fmod_));
    }
    return;
  }
  DispatchArithmetic(*this, A.dtype(), 0, [&](auto zero) {
    using T = decltype(zero);
    const T* a = A.template data<T>();
    const T* b = B.template data<T>();
    T* c = C->template mutable_data<T>();
    for (int64_t i = 0; i < C->numel(); ++i) {
      math::BroadcastOffsets(ix, i, off);
      c[i] = ModOne<T>(a[off[0]], b[off[1]], fmod_);
    }
  });
}

OPERATOR_SCHEMA(OnnxMod)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      std::vector<int64_t> out;
      if (!in[0].known || !in[1].known || !math::NumpyBroadcastShape({in[0].dims, in[1].dims}, &out))
        return std::vector<TensorInfo>{TensorInfo::Unknown()};
      return std::vector<TensorInfo>{TensorInfo::Of(out, in[0].dtype)};
    })
    .SetDoc("ONNX's Mod(A, B) -> C with numpy broadcasting; arg fmod 0 (default): numpy's mod, the divisor's sign; "
            "1: C's fmod, the dividend's sign. float16/32/64, int8/16/32/64, uint8/16; an integer zero divisor "
            "gives 0. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(OnnxMod, OnnxModOp);

}  // namespace hetnet
