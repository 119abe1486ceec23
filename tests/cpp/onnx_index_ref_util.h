// Coordinate helpers of the ONNX index-op harness references (harness_cases_onnx_index.cc,
// harness_cases_onnx_select.cc): argument reads, row-major coordinates, negative-index wrapping.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "proto/caffe2.pb.h"

namespace hetnet {
namespace harness {
namespace onnx_ref {

inline int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
inline std::string StrArg(const caffe2::OperatorDef& def, const std::string& name) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return "none";
}
inline std::vector<int64_t> Coords(int64_t k, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    c[d] = k % shape[d];
    k /= shape[d];
  }
  return c;
}
inline int64_t Flat(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t k = 0;
  for (size_t d = 0; d < shape.size(); ++d) k = k * shape[d] + c[d];
  return k;
}
inline int64_t Wrap(double v, int64_t n) { return v < 0 ? static_cast<int64_t>(v) + n : static_cast<int64_t>(v); }

}  // namespace onnx_ref
}  // namespace harness
}  // namespace hetnet
