// Shared by the DNNL tests (test_ops_dnnl.cc, test_dnnl_weights.cc) and harness_cases_dnnl.cc:
// the hand-written convolution geometry and its float64 reference, a tensor as a RefTensor, and the
// closeness check, so the tests compare against one reference.
#pragma once

#include <algorithm>
#include <cmath>
#include <string>

#include <catch2/catch.hpp>

#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {

struct DnnlConvGeo {  // hand-written geometry, independent of operators/conv_pool_shape.h
  int kh, kw, sh = 1, sw = 1, pt = 0, pl = 0, pb = 0, pr = 0, dh = 1, dw = 1, group = 1;
};

// Y[n, m, oh, ow] = b[m] + sum over the group's channels and taps of X * F (zero outside X).
// Defined in harness_cases_dnnl.cc.
RefTensor DnnlNaiveConv(const RefTensor& X, const RefTensor& F, const RefTensor* b, const DnnlConvGeo& g);

}  // namespace harness

namespace dnnl_test {

inline harness::RefTensor RefOf(const Tensor& t) {
  harness::RefTensor r(t.shape());
  for (int64_t i = 0; i < t.numel(); ++i) r[i] = t.data<float>()[i];
  return r;
}
inline harness::RefTensor RefOf(const Workspace& ws, const std::string& name) { return RefOf(optest::Fetch(ws, name)); }

inline void CheckClose(const Tensor& got, const harness::RefTensor& want) {
  REQUIRE(got.shape() == want.shape);
  for (int64_t i = 0; i < got.numel(); ++i)
    REQUIRE(std::abs(got.data<float>()[i] - want[i]) <= 1e-4 * std::max(1.0, std::abs(want[i])));
}
inline void CheckClose(const Workspace& ws, const std::string& name, const harness::RefTensor& want) {
  CheckClose(optest::Fetch(ws, name), want);
}

// Y of a k3 pad-1 convolution of the workspace's X, W, b.
inline harness::RefTensor ExpectedConv(const Workspace& ws) {
  const harness::RefTensor b = RefOf(ws, "b");
  return harness::DnnlNaiveConv(RefOf(ws, "X"), RefOf(ws, "W"), &b, harness::DnnlConvGeo{3, 3, 1, 1, 1, 1, 1, 1});
}

}  // namespace dnnl_test
}  // namespace hetnet
