// GivenTensorFill (float), GivenTensorDoubleFill, GivenTensorIntFill (int32), GivenTensorInt64Fill,
// GivenTensorBoolFill, GivenTensorStringFill (CPU only): args `shape` and `values` (with an input,
// the input's shape plus `extra_shape`, as every filler). The values are parsed once into a host
// tensor and copied to the output's device on each run.
#pragma once

#include "core/operator.h"
#include "operators/filler_ops.h"

namespace hetnet {

template <class Context, typename T>
class GivenTensorFillOp final : public Operator<Context> {
 public:
  GivenTensorFillOp(const caffe2::OperatorDef& def, Workspace* ws) : Operator<Context>(def, ws) {
    ArgumentHelper args(def);
    if constexpr (std::is_same_v<T, float> || std::is_same_v<T, double>) {
      Load(args.GetRepeatedArgument<T>("values"));
    } else if constexpr (std::is_same_v<T, std::string>) {
      Load(args.GetRepeatedArgument<std::string>("values"));
    } else {
      Load(args.GetRepeatedArgument<int64_t>("values"));
    }
  }

  void RunOnDevice() override {
    const std::vector<int64_t> shape = FillerOutputShape(this->def(), this->InputSize() ? &this->Input(0) : nullptr);
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    HN_ENFORCE(n == values_.numel(), this->type(), ": output '", this->def().output(0), "' has shape ",
               ShapeToString(shape), " (", n, " elements) but ", values_.numel(), " values were given");
    Tensor* Y = this->Output(0);
    if constexpr (std::is_same_v<T, std::string>) {
      HN_CHECK_KIND(kUnsupported, Context::kDeviceType == DeviceType::CPU, this->type(),
                    ": string tensors live on CPU only; output '", this->def().output(0), "'");
    }
    Y->CopyFrom(values_, &this->context_);
    Y->Resize(shape);
  }

 private:
  template <typename V>
  void Load(const std::vector<V>& v) {
    values_.Resize({static_cast<int64_t>(v.size())});
    T* p = values_.template mutable_data<T>();
    for (size_t i = 0; i < v.size(); ++i) p[i] = static_cast<T>(v[i]);
  }
  Tensor values_;  // on CPU
};

}  // namespace hetnet
