// Values of ONNX's non-tensor types, held in blobs (core/blob.h) as strings are: a sequence of tensors
// (TensorSequence) and an empty optional (OptionalNone; an optional holding a value is just that
// tensor or sequence). Used by the CPU sequence / optional operators (operators/onnx_sequence_ops.h)
// and by the Python feed / fetch (a list of arrays, None). Tensors in a sequence are never written
// in place: every operator that puts one in makes its own copy, so sequences may share them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/blob.h"

namespace hetnet {

struct TensorSequence {
  DataType dtype = DataType::Float;  // of every element (also of an empty sequence)
  std::vector<Tensor> items;         // on CPU
};

struct OptionalNone {};

// "tensor", "sequence", "empty optional", or the blob's C++ type.
inline std::string ValueKindName(const Blob& b) {
  if (b.IsTensor()) return "tensor";
  if (b.IsType<TensorSequence>()) return "sequence";
  if (b.IsType<OptionalNone>()) return "empty optional";
  return b.TypeName();
}

// Copies the value `from` holds (tensor, sequence, empty optional) into `to` (a tensor on CPU);
// false when `from` holds none of those (or nothing).
inline bool CopyOnnxValue(const Blob& from, Blob* to) {
  if (&from == to) return true;
  if (from.IsType<TensorSequence>()) {
    to->Reset(std::make_shared<TensorSequence>(from.Get<TensorSequence>()));
  } else if (from.IsType<OptionalNone>()) {
    to->Reset(std::make_shared<OptionalNone>());
  } else if (from.IsTensor() && from.GetTensor().initialized()) {
    to->GetMutableTensor(Device::CPU())->CopyFrom(from.GetTensor());
  } else {
    return false;
  }
  return true;
}

}  // namespace hetnet
