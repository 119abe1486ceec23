// Private to onnx/convert_math.cc and convert_more_math.cc: helpers of the elementwise converters.
#pragma once

#include <string>

#include "onnx/onnx_context.h"

namespace hetnet::onnxio {

// Rank (and dims where known) of a numpy broadcast of a and b.
void BroadcastDims(ConvertContext& c, const std::string& out, const std::string& a, const std::string& b);

// Our arithmetic and comparison operators take float32/64 and int32/64 (comparisons also bool): for
// a blob the model declares int8 / int16 / uint8 / uint16 the type to compute in is INT32, for
// float16 FLOAT (both hold every value; results cast back wrap like numpy's astype, and float16
// sums, products and quotients rounded once from float32 are the correctly rounded ones); else
// UNDEFINED (compute in the blob's own type).
caffe2::TensorProto::DataType WideType(const ConvertContext& c, const std::string& blob);

// A fresh blob (named from hint) holding x cast to `to`.
std::string CastBlob(ConvertContext& c, const std::string& x, caffe2::TensorProto::DataType to, const std::string& hint);

// x itself when `to` is UNDEFINED, else CastBlob(x, to).
std::string MaybeWiden(ConvertContext& c, const std::string& x, caffe2::TensorProto::DataType to);

}  // namespace hetnet::onnxio
