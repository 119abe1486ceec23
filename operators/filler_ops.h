// ConstantFill, UniformFill, GaussianFill, XavierFill (Caffe2 semantics). The output shape is arg
// `shape`, or (with an input) the input's shape, or with input_as_shape=1 the input's 1-D int64/int32
// contents (read on CPU); `extra_shape` is appended after an input's shape. Random fills draw with
// the op's own mt19937 seeded from device_option.random_seed (random when unset).
#pragma once

#include <cmath>
#include <random>
#include <type_traits>

#include "core/operator.h"
#include "device/math.h"

namespace hetnet {

// The output shape of a filler op from its def and its input (nullptr without one).
std::vector<int64_t> FillerOutputShape(const caffe2::OperatorDef& def, const Tensor* input);
// Device inference of the fillers: with input_as_shape=1 the shape input is read on CPU.
std::pair<std::vector<Device>, std::vector<Device>> FillerDevices(const caffe2::OperatorDef& def, Device d);

template <class Context>
class FillerOp : public Operator<Context> {
 public:
  FillerOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {}
  void RunOnDevice() override {
    const std::vector<int64_t> shape = FillerOutputShape(this->def(), this->InputSize() ? &this->Input(0) : nullptr);
    Tensor* Y = this->Output(0);
    Y->Resize(shape);
    Fill(Y);
  }
  virtual void Fill(Tensor* Y) = 0;
};

template <class Context>
class ConstantFillOp final : public FillerOp<Context> {
 public:
  ConstantFillOp(const caffe2::OperatorDef& def, Workspace* ws);
  void Fill(Tensor* Y) override {
    if (dtype_ == DataType::String) {
      HN_CHECK_KIND(kUnsupported, Context::kDeviceType == DeviceType::CPU,
                    "ConstantFill: string tensors live on CPU only; output '", this->def().output(0), "'");
      auto* p = static_cast<std::string*>(Y->raw_mutable_data(DataType::String));
      for (int64_t i = 0; i < Y->numel(); ++i) p[i] = svalue_;
      return;
    }
    DispatchDataType(dtype_, [&](auto tag) {
      using T = decltype(tag);
      if constexpr (!std::is_same_v<T, std::string>) {
        math::Set<T, Context>(Y->numel(), Cast<T>(), Y->template mutable_data<T>(), &this->context_);
      }
    });
  }

 private:
  template <typename T>
  T Cast() const {
    if constexpr (std::is_same_v<T, Half>) return FloatToHalf(static_cast<float>(fvalue_));
    else if constexpr (std::is_same_v<T, BFloat16>) return FloatToBFloat16(static_cast<float>(fvalue_));
    else if constexpr (std::is_floating_point_v<T>) return static_cast<T>(fvalue_);
    else return static_cast<T>(ivalue_);
  }
  DataType dtype_;
  double fvalue_ = 0;
  int64_t ivalue_ = 0;
  std::string svalue_;
};

template <class Context>
ConstantFillOp<Context>::ConstantFillOp(const caffe2::OperatorDef& def, Workspace* ws) : FillerOp<Context>(def, ws) {
  const int dt = this->template GetSingleArgument<int>("dtype", static_cast<int>(DataType::Float));
  HN_ENFORCE(IsKnownDataType(dt) && dt != 0, "ConstantFill: argument dtype ", dt,
             " is not a TensorProto.DataType (output '", def.output(0), "')");
  dtype_ = static_cast<DataType>(dt);
  for (const auto& a : def.arg()) {
    if (a.name() != "value") continue;
    if (a.has_f()) {
      fvalue_ = a.f();
      // A float value for an integer dtype truncates toward zero; NaN or out of int64's range has
      // no integer value (converting it would be undefined behaviour).
      const bool representable = std::isfinite(fvalue_) && fvalue_ >= -0x1p63 && fvalue_ < 0x1p63;
      const bool integer = dtype_ != DataType::Float && dtype_ != DataType::Double &&
                           dtype_ != DataType::Float16 && dtype_ != DataType::BFloat16 &&
                           dtype_ != DataType::String;
      HN_ENFORCE(representable || !integer, "ConstantFill: value ", fvalue_,
                 " does not fit dtype ", DataTypeName(dtype_), " (output '", def.output(0), "')");
      ivalue_ = representable ? static_cast<int64_t>(fvalue_) : 0;
    }
    if (a.has_i()) { ivalue_ = a.i(); fvalue_ = static_cast<double>(a.i()); }
    if (a.has_s()) svalue_ = a.s();
  }
}

// Uniform in [min, max); Xavier is uniform in [-sqrt(3 / fan_in), +sqrt(3 / fan_in)] with
// fan_in = numel / dim 0.
enum class RandomFill { Uniform, Gaussian, Xavier };

template <class Context, RandomFill Kind>
class RandomFillOp final : public FillerOp<Context> {
 public:
  RandomFillOp(const caffe2::OperatorDef& def, Workspace* ws)
      : FillerOp<Context>(def, ws),
        gen_(def.device_option().has_random_seed() ? def.device_option().random_seed() : std::random_device{}()) {
    if (Kind == RandomFill::Uniform) {
      a_ = this->template GetSingleArgument<float>("min", 0.f);
      b_ = this->template GetSingleArgument<float>("max", 1.f);
      // Also finite, with a finite width: the uniform distribution is undefined otherwise.
      HN_ENFORCE(std::isfinite(a_) && std::isfinite(b_) && std::isfinite(b_ - a_), "UniformFill: min (", a_,
                 ") and max (", b_, ") must be finite numbers less than 3.4e38 apart for output '", def.output(0), "'");
      HN_ENFORCE(a_ <= b_, "UniformFill: min (", a_, ") is larger than max (", b_, ") for output '", def.output(0), "'");
    } else if (Kind == RandomFill::Gaussian) {
      a_ = this->template GetSingleArgument<float>("mean", 0.f);
      b_ = this->template GetSingleArgument<float>("std", 1.f);
      HN_ENFORCE(std::isfinite(a_), "GaussianFill: mean must be a finite number, got ", a_, " for output '",
                 def.output(0), "'");
      HN_ENFORCE(b_ > 0.f && std::isfinite(b_), "GaussianFill: std must be positive and finite, got ", b_,
                 " for output '", def.output(0), "'");
    }
  }
  void Fill(Tensor* Y) override {
    float* y = Y->template mutable_data<float>();
    const int64_t n = Y->numel();
    if (n == 0) return;
    if (Kind == RandomFill::Gaussian) {
      math::RandGaussian<Context>(n, a_, b_, y, gen_, &this->context_);
    } else if (Kind == RandomFill::Uniform) {
      math::RandUniform<Context>(n, a_, b_, y, gen_, &this->context_);
    } else {
      const int64_t fan_in = Y->ndim() > 0 && Y->shape()[0] > 0 ? n / Y->shape()[0] : n;
      const float scale = std::sqrt(3.f / static_cast<float>(fan_in));
      math::RandUniform<Context>(n, -scale, scale, y, gen_, &this->context_);
    }
  }

 private:
  std::mt19937 gen_;
  float a_ = 0.f, b_ = 1.f;
};

}  // namespace hetnet
