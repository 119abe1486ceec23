// Runs every case registered with HN_OP_CASES (tests/cpp/harness_cases_*.cc) and prints the table
// operator x (float64 reference, shape inference, gradient, CUDA). The CPU columns are one test,
// the CUDA column a [gpu] test that skips without a device.
#include <catch2/catch.hpp>

#include <cstdlib>
#include <iostream>

#include "core/device.h"
#include "tests/cpp/op_harness.h"

using namespace hetnet;
using namespace hetnet::harness;

namespace {
// HETNET_HARNESS_FILTER=Conv runs only operator types containing "Conv".
std::string FilterFromEnv() {
  const char* f = std::getenv("HETNET_HARNESS_FILTER");
  return f ? f : "";
}
}  // namespace

TEST_CASE("op harness: every registered case on CPU", "[harness]") {
  Options opt;
  opt.gpu = false;
  opt.filter = FilterFromEnv();
  opt.log = &std::cout;
  Report rep = RunAll(opt);
  for (const auto& f : rep.failures) UNSCOPED_INFO(f);
  CHECK(rep.fail == 0);
  CHECK(rep.results.size() > 0);
}

TEST_CASE("op harness: every registered case on CUDA vs CPU", "[harness][gpu]") {
  if (NumCudaDevices() == 0) {
    WARN("skipped: no CUDA device");
    return;
  }
  Options opt;
  opt.cpu = false;
  opt.filter = FilterFromEnv();
  opt.log = &std::cout;
  Report rep = RunAll(opt);
  for (const auto& f : rep.failures) UNSCOPED_INFO(f);
  CHECK(rep.fail == 0);
}

// The harness itself must catch a wrong kernel: a reference that disagrees with Relu fails.
TEST_CASE("op harness: a wrong reference is reported as a failure", "[harness]") {
  Case c("deliberately wrong");
  c.Def(Op("Relu", {"X"}, {"Y"})).Inputs({In({4, 5})}).NoGrad().Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
    RefTensor y(in[0].shape);
    for (int64_t i = 0; i < y.numel(); ++i) y[i] = in[0][i];  // identity, not max(x, 0)
    return RefTensors{y};
  });
  Options opt;
  opt.gpu = false;
  CaseResult r = RunCase(c, opt);
  CHECK(r.ref == Status::kFail);
  CHECK(r.shape == Status::kPass);
}

// A kernel whose registered gradient is wrong must fail the finite-difference column: Scale's
// gradient uses the forward `scale`; giving the forward op a different `scale` through the
// gradient path is not possible, so check the positive direction and a too-tight tolerance on a
// non-smooth point instead: FD across Relu's kink disagrees with the analytic gradient.
TEST_CASE("op harness: finite differences across a kink are caught", "[harness]") {
  Case c("kink");
  c.Def(Op("Relu", {"X"}, {"Y"})).Inputs({In({3}).Values({0.0, 0.001, -0.001})}).GradTol(1e-3, 1e-2);
  Options opt;
  opt.gpu = false;
  CaseResult r = RunCase(c, opt);
  CHECK(r.grad == Status::kFail);
}
