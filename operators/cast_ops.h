// Cast(X) -> Y with dtype `to` (a TensorProto.DataType: int, or its name as a string such as "FLOAT");
// every numeric dtype and bool, float16 included (values convert as C++ static_cast, via float for
// float16, except float -> integer: see CastNumber; to bool is x != 0). The narrow types of
// core/narrow_types.h (float8, float4, int4, int2, ...) convert on CPU as ONNX's Cast: arg saturate
// (default 1) and round_mode ("up", "down", "nearest"; for float8 E8M0). FloatToHalf (arg clip: saturate at +-65504 instead of overflowing to inf)
// and HalfToFloat are the fixed-type forms. Gradients: Cast casts back (needs arg `from_type`, as in
// Caffe2); FloatToHalf <-> HalfToFloat.
#pragma once

#include <string>
#include <type_traits>

#include "core/narrow_types.h"
#include "core/operator.h"
#include "operators/cnn_op_utils.h"
#include "operators/host_device.h"

namespace hetnet {

// One element, shared by the CPU and CUDA kernels. Float -> integer truncates toward zero into int64
// and then wraps to the destination's width (as NumPy's astype does on x86), so out-of-range values
// give the same result on both devices instead of C++'s undefined behaviour (the GPU saturates, the
// CPU wraps); NaN, infinities and values beyond int64 give 0. Everything else is static_cast.
template <typename D, typename S>
HN_HOST_DEVICE inline D CastNumber(S v) {
  if constexpr (std::is_floating_point<S>::value && std::is_integral<D>::value) {
    const double d = static_cast<double>(v);
    if (!(d > -9.2e18 && d < 9.2e18)) return D(0);
    return static_cast<D>(static_cast<long long>(d));
  } else {
    return static_cast<D>(v);
  }
}

// y = cast(x), n elements; clip_half saturates at the float16 range when converting to float16.
template <class Context>
void CastKernel(DataType from, DataType to, int64_t n, const void* x, void* y, bool clip_half, Context* ctx);

// y = cast(x) where either side is a narrow type (CPU only).
void CastNarrowCPU(DataType from, DataType to, int64_t n, const void* x, void* y, bool saturate, E8M0Rounding rounding,
                   CPUContext* ctx);
E8M0Rounding CastRoundModeArg(const caffe2::OperatorDef& def);

// Calls f(S{}, D{}) with the C++ source and destination types of a cast, for both devices' kernels;
// throws kInvalidArgument for a string on either side.
template <typename F>
void DispatchCastTypes(DataType from, DataType to, F&& f) {
  DispatchDataType(from, [&](auto s) {
    using S = decltype(s);
    if constexpr (std::is_same<S, std::string>::value) {
      HN_THROW(kInvalidArgument, "Cast: string tensors cannot be cast");
    } else {
      DispatchDataType(to, [&](auto d) {
        using D = decltype(d);
        if constexpr (std::is_same<D, std::string>::value) {
          HN_THROW(kInvalidArgument, "Cast: cannot cast to string");
        } else {
          f(S{}, D{});
        }
      });
    }
  });
}

// The dtype named by argument `name` (int or string); Undefined when absent.
DataType CastDataTypeArg(const caffe2::OperatorDef& def, const std::string& name);

inline bool CastableType(DataType t) {
  return t != DataType::Undefined && t != DataType::String;
}

// Y (already shaped) = input 0 X as dtype `to`; a narrow type on either side converts on CPU only.
template <class Context>
void CastTensorData(const OperatorBase& op, const Tensor& X, DataType to, bool clip_half, bool saturate,
                    E8M0Rounding rounding, Tensor* Y, Context* ctx) {
  void* y = Y->raw_mutable_data(to);
  if (IsNarrowDataType(X.dtype()) || IsNarrowDataType(to)) {
    if constexpr (std::is_same<Context, CPUContext>::value) {
      return CastNarrowCPU(X.dtype(), to, X.numel(), X.raw_data(), y, saturate, rounding, ctx);
    } else {
      HN_THROW(kUnsupported, op.type(), ": casting input 0 ('", op.def().input(0), "') from ", DataTypeName(X.dtype()),
               " to ", DataTypeName(to), " runs on CPU only");
    }
  }
  CastKernel<Context>(X.dtype(), to, X.numel(), X.raw_data(), y, clip_half, ctx);
}

// kFrom/kTo Undefined: Cast (to from the argument); otherwise FloatToHalf / HalfToFloat.
template <class Context, DataType kFrom, DataType kTo>
class CastOpT final : public Operator<Context> {
 public:
  CastOpT(const caffe2::OperatorDef& def, Workspace* ws)
      : Operator<Context>(def, ws),
        to_(kTo != DataType::Undefined ? kTo : CastDataTypeArg(def, "to")),
        clip_(this->template GetSingleArgument<int>("clip", 0) != 0),
        saturate_(this->template GetSingleArgument<int>("saturate", 1) != 0),
        rounding_(CastRoundModeArg(def)) {
    HN_ENFORCE(to_ != DataType::Undefined, def.type(), ": argument `to` (the output dtype) is required");
    HN_ENFORCE(CastableType(to_), def.type(), ": cannot cast to ", DataTypeName(to_));
  }
  void RunOnDevice() override {
    const Tensor& X = this->Input(0);
    if (kFrom != DataType::Undefined) EnforceDtype(this->def(), X, 0, kFrom);
    HN_ENFORCE(CastableType(X.dtype()), this->type(), ": input 0 ('", this->def().input(0), "') is ",
               DataTypeName(X.dtype()), "; only numeric and bool tensors can be cast");
    CastTensorData(*this, X, to_, clip_, saturate_, rounding_, this->Output(0, X.shape(), to_), &this->context_);
  }

 private:
  DataType to_;
  bool clip_, saturate_;
  E8M0Rounding rounding_;
};

template <class Context> using CastOp = CastOpT<Context, DataType::Undefined, DataType::Undefined>;
template <class Context> using FloatToHalfOp = CastOpT<Context, DataType::Float, DataType::Float16>;
template <class Context> using HalfToFloatOp = CastOpT<Context, DataType::Float16, DataType::Float>;

}  // namespace hetnet
