// Harness cases for DFT (operators/dft_op.*). The forward and inverse references are the textbook
// sums (angles 2 pi k t / n without the kernel's reduction mod n); the one-sided inverse uses the real
// form x[t] = (X0 + 2 sum_{0<k<n/2} Re(X_k e^{i theta}) + (-1)^t X_{n/2}) / n (even n), independent
// of the kernel's Hermitian extension. The [dft] TEST_CASE checks refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <complex>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}

// X [B, n_in, comps], axis 1.
RefTensors DftRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const bool inverse = IntArg(def, "inverse", 0) != 0, onesided = IntArg(def, "onesided", 0) != 0;
  const int64_t B = X.shape[0], n_in = X.shape[1], comps = X.shape[2];
  const int64_t n = in.size() > 1 ? static_cast<int64_t>(in[1][0]) : (inverse && onesided ? 2 * (n_in - 1) : n_in);
  const double pi = std::acos(-1.0);
  auto at = [&](int64_t b, int64_t t) {
    if (t >= n_in) return std::complex<double>();
    return std::complex<double>(X[(b * n_in + t) * comps], comps == 2 ? X[(b * n_in + t) * comps + 1] : 0.0);
  };
  if (inverse && onesided) {
    RefTensor Y({B, n, 1}, X.dtype);
    for (int64_t b = 0; b < B; ++b)
      for (int64_t t = 0; t < n; ++t) {
        double v = at(b, 0).real() + (t % 2 ? -1 : 1) * at(b, n / 2).real();
        for (int64_t k = 1; k < n / 2; ++k) v += 2 * (at(b, k) * std::polar(1.0, 2 * pi * k * t / n)).real();
        Y[b * n + t] = v / n;
      }
    return {Y};
  }
  const int64_t n_out = !inverse && onesided ? n / 2 + 1 : n;
  RefTensor Y({B, n_out, 2}, X.dtype);
  for (int64_t b = 0; b < B; ++b)
    for (int64_t k = 0; k < n_out; ++k) {
      std::complex<double> s;
      for (int64_t t = 0; t < n; ++t) s += at(b, t) * std::polar(1.0, (inverse ? 2 : -2) * pi * k * t / n);
      if (inverse) s /= static_cast<double>(n);
      Y[(b * n_out + k) * 2] = s.real();
      Y[(b * n_out + k) * 2 + 1] = s.imag();
    }
  return {Y};
}

caffe2::OperatorDef Dft(int inverse, int onesided, bool length) {
  return Op("DFT", length ? std::vector<std::string>{"X", "L"} : std::vector<std::string>{"X"}, {"Y"},
            {Arg("axis", 1), Arg("inverse", inverse), Arg("onesided", onesided)});
}

}  // namespace

HN_OP_CASES(DFT) {
  std::vector<Case> c = {
      Case("real forward").Def(Dft(0, 0, false)).Inputs({In({2, 7, 1})}),
      Case("complex forward, double").Def(Dft(0, 0, false)).Inputs({In({2, 6, 2}, DataType::Double)}),
      Case("one-sided forward, padded to 9").Def(Dft(0, 1, true)).Inputs({In({3, 5, 1}), In({}, DataType::Int64).Values({9})}),
      Case("inverse complex, truncated to 4").Def(Dft(1, 0, true)).Inputs({In({2, 6, 2}), In({}, DataType::Int32).Values({4})}),
      Case("inverse one-sided (irfft)").Def(Dft(1, 1, false)).Inputs({In({2, 5, 2})}),
  };
  for (auto& k : c) k.Ref(DftRef).NoGrad().CpuOnly();
  return c;
}

TEST_CASE("DFT refuses bad axes, lengths and shapes, naming op and blob", "[dft]") {
  auto run = [](std::vector<int64_t> shape, caffe2::OperatorDef def, int64_t length) -> std::string {
    Workspace ws;
    Tensor x(shape, DataType::Float), l({}, DataType::Int64);
    x.mutable_data<float>();
    l.mutable_data<int64_t>()[0] = length;
    *ws.CreateBlob("X")->GetMutable<Tensor>() = x;
    *ws.CreateBlob("L")->GetMutable<Tensor>() = l;
    try {
      CreateOperator(def, &ws)->Run();
    } catch (const std::exception& e) {
      return e.what();
    }
    return "";
  };
  CHECK_THAT(run({2, 4, 3}, Dft(0, 0, false), 0), Catch::Contains("DFT") && Catch::Contains("'X'"));
  CHECK_THAT(run({2, 4, 2}, Dft(0, 0, true), 0), Catch::Contains("dft_length 0") && Catch::Contains("'L'"));
  caffe2::OperatorDef last = Dft(0, 0, false);
  last.mutable_arg(0)->set_i(2);
  CHECK_THAT(run({2, 4, 2}, last, 0), Catch::Contains("axis 2"));
  CHECK_THAT(run({2, 4, 2}, Dft(0, 0, true), int64_t{1} << 40), Catch::Contains("2^32") || Catch::Contains("too many"));
}

}  // namespace harness
}  // namespace hetnet
