#include "operators/onnx_label_encoder_op.h"

#include <cmath>

#include "core/gradient.h"
#include "core/types_dispatch.h"

namespace hetnet {

OnnxLabelEncoderOp::OnnxLabelEncoderOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      keys_s_(GetRepeatedArgument<std::string>("keys_strings")),
      values_s_(GetRepeatedArgument<std::string>("values_strings")),
      keys_i_(GetRepeatedArgument<int64_t>("keys_int64s")),
      values_i_(GetRepeatedArgument<int64_t>("values_int64s")),
      keys_f_(GetRepeatedArgument<float>("keys_floats")),
      values_f_(GetRepeatedArgument<float>("values_floats")),
      default_s_(GetSingleArgument<std::string>("default_string", "_Unused")),
      default_i_(GetSingleArgument<int64_t>("default_int64", -1)),
      default_f_(GetSingleArgument<float>("default_float", -0.f)) {
  const int nk = !keys_s_.empty() + !keys_i_.empty() + !keys_f_.empty();
  const int nv = !values_s_.empty() + !values_i_.empty() + !values_f_.empty();
  HN_CHECK_KIND(kInvalidArgument, nk == 1 && nv == 1, type(), " '", def.name(),
                "': exactly one of keys_strings / keys_int64s / keys_floats and one of values_strings / "
                "values_int64s / values_floats must be given and non-empty");
  key_kind_ = !keys_s_.empty() ? Kind::kString : !keys_i_.empty() ? Kind::kInt : Kind::kFloat;
  value_kind_ = !values_s_.empty() ? Kind::kString : !values_i_.empty() ? Kind::kInt : Kind::kFloat;
  const size_t n_keys = std::max({keys_s_.size(), keys_i_.size(), keys_f_.size()});
  const size_t n_values = std::max({values_s_.size(), values_i_.size(), values_f_.size()});
  HN_CHECK_KIND(kInvalidArgument, n_keys == n_values, type(), " '", def.name(), "': ", n_keys, " keys but ",
                n_values, " values");
  for (size_t k = 0; k < n_keys; ++k) {  // the last of repeated keys wins (ONNX's rule)
    if (key_kind_ == Kind::kString) index_s_[keys_s_[k]] = k;
    else if (key_kind_ == Kind::kInt) index_i_[keys_i_[k]] = k;
    else if (std::isnan(keys_f_[k])) nan_index_ = k;
    else index_f_[keys_f_[k]] = k;
  }
  const DataType natural = value_kind_ == Kind::kString ? DataType::String
                           : value_kind_ == Kind::kInt  ? DataType::Int64
                                                        : DataType::Float;
  value_dtype_ = static_cast<DataType>(GetSingleArgument<int64_t>("value_dtype", static_cast<int64_t>(natural)));
  const bool ok = value_kind_ == Kind::kString ? value_dtype_ == DataType::String
                  : value_kind_ == Kind::kInt
                      ? (value_dtype_ == DataType::Int64 || value_dtype_ == DataType::Int32 ||
                         value_dtype_ == DataType::Int16 || value_dtype_ == DataType::Int8 ||
                         value_dtype_ == DataType::UInt8 || value_dtype_ == DataType::UInt16)
                      : (value_dtype_ == DataType::Float || value_dtype_ == DataType::Double);
  HN_CHECK_KIND(kInvalidArgument, ok, type(), " '", def.name(), "': value_dtype ", DataTypeName(value_dtype_),
                " does not hold the values");
}

void OnnxLabelEncoderOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const DataType want = key_kind_ == Kind::kString ? DataType::String
                        : key_kind_ == Kind::kInt  ? DataType::Int64
                                                   : DataType::Float;
  HN_CHECK_KIND(kInvalidArgument, X.dtype() == want, type(), " '", def().name(), "': input 0 ('", def().input(0),
                "') is ", DataTypeName(X.dtype()), " but the keys are ", DataTypeName(want));
  const int64_t n = X.numel();
  std::vector<size_t> pos(static_cast<size_t>(n));
  const size_t none = static_cast<size_t>(-1);
  for (int64_t i = 0; i < n; ++i) {
    if (key_kind_ == Kind::kString) {
      auto it = index_s_.find(X.data<std::string>()[i]);
      pos[i] = it == index_s_.end() ? none : it->second;
    } else if (key_kind_ == Kind::kInt) {
      auto it = index_i_.find(X.data<int64_t>()[i]);
      pos[i] = it == index_i_.end() ? none : it->second;
    } else {
      const float v = X.data<float>()[i];
      auto it = index_f_.find(v);
      pos[i] = std::isnan(v) ? nan_index_ : it == index_f_.end() ? none : it->second;
    }
  }
  Tensor* Y = Output(0, X.shape(), value_dtype_);
  if (value_kind_ == Kind::kString) {
    auto* y = Y->mutable_data<std::string>();
    for (int64_t i = 0; i < n; ++i) y[i] = pos[i] == none ? default_s_ : values_s_[pos[i]];
    return;
  }
  DispatchDataType(value_dtype_, [&](auto zero) {
    using T = decltype(zero);
    if constexpr (std::is_arithmetic<T>::value) {
      T* y = static_cast<T*>(Y->raw_mutable_data(value_dtype_));
      for (int64_t i = 0; i < n; ++i) {
        if (value_kind_ == Kind::kInt) y[i] = static_cast<T>(pos[i] == none ? default_i_ : values_i_[pos[i]]);
        else y[i] = static_cast<T>(pos[i] == none ? default_f_ : values_f_[pos[i]]);
      }
    }
  });
}

OPERATOR_SCHEMA(OnnxLabelEncoder).NumInputs(1).NumOutputs(1).SetDoc("ONNX-ML LabelEncoder: see onnx_label_encoder_op.h");
REGISTER_CPU_OPERATOR(OnnxLabelEncoder, OnnxLabelEncoderOp);
NO_GRADIENT(OnnxLabelEncoder);

}  // namespace hetnet
