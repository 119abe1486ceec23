// OnnxLabelEncoder(X) -> Y: ONNX-ML's LabelEncoder, a lookup table. X holds strings, int64 or float32
// (the keys' type: arg keys_strings, keys_int64s or keys_floats); each element becomes the value at
// its key's position (arg values_strings, values_int64s or values_floats), or the default
// (default_string, default_int64, default_float) where no key matches. value_dtype (a TensorProto
// type; default: the values' own) stores integer values as int16/int32/... and float values as
// float64. A float key matches by value, a NaN key any NaN; of repeated keys the last wins (ONNX's
// rules). CPU only; no gradient.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/operator.h"

namespace hetnet {

class OnnxLabelEncoderOp final : public Operator<CPUContext> {
 public:
  OnnxLabelEncoderOp(const caffe2::OperatorDef& def, Workspace* ws);
  void RunOnDevice() override;

 private:
  enum class Kind { kString, kInt, kFloat };
  Kind key_kind_, value_kind_;
  DataType value_dtype_;
  std::vector<std::string> keys_s_, values_s_;
  std::vector<int64_t> keys_i_, values_i_;
  std::vector<float> keys_f_, values_f_;
  std::string default_s_;
  int64_t default_i_;
  float default_f_;
  // Key -> position in the values (the last of repeated keys wins).
  std::map<std::string, size_t> index_s_;
  std::map<int64_t, size_t> index_i_;
  std::map<float, size_t> index_f_;  // NaN keys: nan_index_
  size_t nan_index_ = static_cast<size_t>(-1);
};

}  // namespace hetnet
