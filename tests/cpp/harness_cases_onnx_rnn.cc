// Harness cases for ONNX's RNN, GRU and LSTM (operators/onnx_rnn_op.*). The reference steps the
// whole batch at once from the spec's equations: per gate, a [N, H] block = act(X_t W_g^T + H R_g^T
// + Wb_g + Rb_g), default activations, zero initial state unless given. The [rnn] TEST_CASE checks
// refusals.
#include <catch2/catch.hpp>

#include <cmath>
#include <cstring>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

using Mat = std::vector<std::vector<double>>;  // [N][H]

double Sig(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// Inputs by ONNX index (absent: nullptr), from arg inputs.
std::vector<const RefTensor*> ByIndex(const caffe2::OperatorDef& def, const RefTensors& in) {
  std::vector<const RefTensor*> by(8, nullptr);
  std::vector<int64_t> idx{0, 1, 2};
  for (const auto& a : def.arg())
    if (a.name() == "inputs") idx.assign(a.ints().begin(), a.ints().end());
  for (size_t k = 0; k < idx.size(); ++k) by[idx[k]] = &in[k];
  return by;
}

RefTensors RecurrentRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const auto by = ByIndex(def, in);
  int64_t layout = 0, lbr = 0;
  std::string dir = "forward";
  for (const auto& a : def.arg()) {
    if (a.name() == "layout") layout = a.i();
    if (a.name() == "linear_before_reset") lbr = a.i();
    if (a.name() == "direction") dir = a.s();
  }
  const RefTensor &X = *by[0], &W = *by[1], &R = *by[2];
  const int64_t G = def.type() == "RNN" ? 1 : def.type() == "GRU" ? 3 : 4, H = R.dim(2), D = W.dim(0), I = X.dim(2);
  const int64_t S = X.dim(layout ? 1 : 0), N = X.dim(layout ? 0 : 1);
  auto x = [&](int64_t t, int64_t n, int64_t i) { return X[(layout ? n * S + t : t * N + n) * I + i]; };
  auto state = [&](int64_t d, int64_t n) { return (layout ? n * D + d : d * N + n) * H; };
  RefTensor Y(layout ? std::vector<int64_t>{N, S, D, H} : std::vector<int64_t>{S, D, N, H}, X.dtype);
  const std::vector<int64_t> sd = layout ? std::vector<int64_t>{N, D, H} : std::vector<int64_t>{D, N, H};
  RefTensor Yh(sd, X.dtype), Yc(sd, X.dtype);
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = dir == "reverse" || (dir == "bidirectional" && d == 1);
    Mat h(N, std::vector<double>(H, 0.0)), c = h;
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) {
        if (by[5]) h[n][j] = (*by[5])[state(d, n) + j];
        if (by[6]) c[n][j] = (*by[6])[state(d, n) + j];
      }
    // Gate g's block for input part (Xt W_g^T + Wb_g) and recurrent part (hm R_g^T + Rb_g).
    auto xw = [&](int64_t g, int64_t t, int64_t n, int64_t j) {
      double s = by[3] ? (*by[3])[d * 2 * G * H + g * H + j] : 0.0;
      for (int64_t i = 0; i < I; ++i) s += W[(d * G * H + g * H + j) * I + i] * x(t, n, i);
      return s;
    };
    auto hr = [&](int64_t g, const std::vector<double>& hm, int64_t j) {
      double s = by[3] ? (*by[3])[d * 2 * G * H + G * H + g * H + j] : 0.0;
      for (int64_t i = 0; i < H; ++i) s += R[(d * G * H + g * H + j) * H + i] * hm[i];
      return s;
    };
    for (int64_t step = 0; step < S; ++step) {
      const int64_t t = rev ? S - 1 - step : step;
      for (int64_t n = 0; n < N; ++n) {
        std::vector<double> next(H);
        for (int64_t j = 0; j < H; ++j) {
          if (G == 1) {
            next[j] = std::tanh(xw(0, t, n, j) + hr(0, h[n], j));
          } else if (G == 3) {
            const double z = Sig(xw(0, t, n, j) + hr(0, h[n], j));
            std::vector<double> rh(H);
            for (int64_t i = 0; i < H; ++i) rh[i] = Sig(xw(1, t, n, i) + hr(1, h[n], i)) * h[n][i];
            const double r = Sig(xw(1, t, n, j) + hr(1, h[n], j));
            const double cand = lbr ? std::tanh(xw(2, t, n, j) + r * hr(2, h[n], j)) : std::tanh(xw(2, t, n, j) + hr(2, rh, j));
            next[j] = (1 - z) * cand + z * h[n][j];
          } else {
            auto p = [&](int64_t k) { return by[7] ? (*by[7])[d * 3 * H + k * H + j] : 0.0; };
            const double i_ = Sig(xw(0, t, n, j) + hr(0, h[n], j) + p(0) * c[n][j]);
            const double f_ = Sig(xw(2, t, n, j) + hr(2, h[n], j) + p(2) * c[n][j]);
            const double cn = f_ * c[n][j] + i_ * std::tanh(xw(3, t, n, j) + hr(3, h[n], j));
            const double o_ = Sig(xw(1, t, n, j) + hr(1, h[n], j) + p(1) * cn);
            c[n][j] = cn;
            next[j] = o_ * std::tanh(cn);
          }
        }
        h[n] = next;
        for (int64_t j = 0; j < H; ++j) Y[(layout ? (n * S + t) * D + d : (t * D + d) * N + n) * H + j] = next[j];
      }
    }
    for (int64_t n = 0; n < N; ++n)
      for (int64_t j = 0; j < H; ++j) Yh[state(d, n) + j] = h[n][j], Yc[state(d, n) + j] = c[n][j];
  }
  RefTensors out{Y, Yh, Yc};
  out.resize(def.output_size());
  return out;
}

caffe2::OperatorDef Rnn(const std::string& type, std::vector<int64_t> idx, int outputs,
                        std::vector<caffe2::Argument> args) {
  const std::vector<std::string> names{"X", "W", "R", "B", "L", "H0", "C0", "P"}, outs{"Y", "Y_h", "Y_c"};
  std::vector<std::string> ins;
  for (auto i : idx) ins.push_back(names[i]);
  args.push_back(Ints("inputs", idx));
  return Op(type, ins, std::vector<std::string>(outs.begin(), outs.begin() + outputs), args);
}

}  // namespace

HN_OP_CASES(OnnxRecurrent) {
  std::vector<Case> c = {
      Case("RNN, bias, initial_h").Def(Rnn("RNN", {0, 1, 2, 3, 5}, 2, {Arg("hidden_size", 4)}))
          .Inputs({In({3, 2, 3}), In({1, 4, 3}), In({1, 4, 4}), In({1, 8}), In({1, 2, 4})}).Ref(RecurrentRef),
      Case("RNN bidirectional, layout 1").Def(Rnn("RNN", {0, 1, 2}, 2, {Arg("hidden_size", 3), Arg("direction", "bidirectional"),
                                                                          Arg("layout", 1)}))
          .Inputs({In({2, 4, 3}), In({2, 3, 3}), In({2, 3, 3})}).Ref(RecurrentRef),
      Case("GRU reverse, bias").Def(Rnn("GRU", {0, 1, 2, 3}, 2, {Arg("hidden_size", 3), Arg("direction", "reverse")}))
          .Inputs({In({3, 2, 2}), In({1, 9, 2}), In({1, 9, 3}), In({1, 18})}).Ref(RecurrentRef),
      Case("GRU linear_before_reset, bidirectional").Def(
              Rnn("GRU", {0, 1, 2, 3}, 2, {Arg("hidden_size", 2), Arg("linear_before_reset", 1), Arg("direction", "bidirectional")}))
          .Inputs({In({2, 1, 3}), In({2, 6, 3}), In({2, 6, 2}), In({2, 12})}).Ref(RecurrentRef),
      Case("LSTM peepholes, initial h/c, Y_c").Def(Rnn("LSTM", {0, 1, 2, 3, 5, 6, 7}, 3, {Arg("hidden_size", 3)}))
          .Inputs({In({2, 2, 4}), In({1, 12, 4}), In({1, 12, 3}), In({1, 24}), In({1, 2, 3}), In({1, 2, 3}), In({1, 9})})
          .Ref(RecurrentRef),
      Case("LSTM bidirectional, layout 1, double").Def(
              Rnn("LSTM", {0, 1, 2}, 3, {Arg("hidden_size", 2), Arg("direction", "bidirectional"), Arg("layout", 1)}))
          .Inputs({In({2, 3, 2}, DataType::Double), In({2, 8, 2}, DataType::Double), In({2, 8, 2}, DataType::Double)})
          .Ref(RecurrentRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

TEST_CASE("RNN / GRU / LSTM refuse bad shapes, directions, activations and lengths", "[rnn]") {
  using optest::RunError;
  auto zeros = [](std::vector<int64_t> s, DataType t = DataType::Float) {
    Tensor x(s, t);
    std::memset(x.raw_mutable_data(t), 0, x.nbytes());
    return x;
  };
  const auto X = zeros({3, 2, 4}), W = zeros({1, 12, 4}), R = zeros({1, 12, 3});
  CHECK_THAT(RunError(Rnn("GRU", {0, 1, 2}, 2, {Arg("hidden_size", 3)}), {X, W, R}), Catch::Contains("'W'") && Catch::Contains("[1, 9, 4]"));
  CHECK_THAT(RunError(Rnn("LSTM", {0, 1, 2}, 2, {Arg("hidden_size", 3)}), {zeros({3, 4}), W, R}), Catch::Contains("'X'"));
  CHECK_THAT(RunError(Rnn("LSTM", {0, 1, 2}, 2, {Arg("hidden_size", 3), Arg("direction", "sideways")}), {X, W, R}),
             Catch::Contains("sideways"));
  CHECK_THAT(RunError(Rnn("RNN", {0, 1, 2}, 2, {Arg("hidden_size", 3)}), {X, zeros({1, 3, 4}), zeros({1, 3, 3}, DataType::Double)}),
             Catch::Contains("'R'"));
  auto acts = NamedArg("activations");
  acts.add_strings("Softsign");
  CHECK_THAT(RunError(Rnn("RNN", {0, 1, 2}, 2, {Arg("hidden_size", 3), acts}), {X, zeros({1, 3, 4}), zeros({1, 3, 3})}),
             Catch::Contains("Softsign"));
  auto lens = zeros({2}, DataType::Int32);
  lens.mutable_data<int32_t>()[0] = 9;
  CHECK_THAT(RunError(Rnn("LSTM", {0, 1, 2, 4}, 2, {Arg("hidden_size", 3)}), {X, W, R, lens}),
             Catch::Contains("'L'") && Catch::Contains("holds 9"));
  CHECK_THAT(RunError(Rnn("LSTM", {0, 1, 2, 5}, 2, {Arg("hidden_size", 3)}), {X, W, R, zeros({1, 3, 3})}),
             Catch::Contains("initial_h"));
}

}  // namespace harness
}  // namespace hetnet
