#include "operators/onnx_rnn_op.h"

#include <algorithm>
#include <cmath>

#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

namespace {

double Activate(int kind, double x) {
  switch (kind) {
    case 0: return 1.0 / (1.0 + std::exp(-x));
    case 1: return std::tanh(x);
    default: return x > 0 ? x : 0.0;
  }
}

}  // namespace

OnnxRecurrentOp::OnnxRecurrentOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      gates_(def.type() == "RNN" ? 1 : def.type() == "GRU" ? 3 : 4),
      slot_(8, -1),
      hidden_(GetSingleArgument<int64_t>("hidden_size", 0)),
      layout_(GetSingleArgument<int64_t>("layout", 0)),
      linear_before_reset_(GetSingleArgument<int64_t>("linear_before_reset", 0) != 0),
      input_forget_(GetSingleArgument<int64_t>("input_forget", 0) != 0),
      clip_(GetSingleArgument<float>("clip", 0.f)) {
  const std::vector<int64_t> present = GetRepeatedArgument<int64_t>("inputs", {0, 1, 2});
  HN_ENFORCE(static_cast<int>(present.size()) == def.input_size(), def.type(), ": arg inputs lists ", present.size(),
             " ONNX inputs, the op has ", def.input_size());
  for (size_t k = 0; k < present.size(); ++k) {
    HN_ENFORCE(present[k] >= 0 && present[k] < (gates_ == 4 ? 8 : 6) && slot_[present[k]] < 0, def.type(),
               ": arg inputs has a bad or repeated index ", present[k]);
    slot_[present[k]] = static_cast<int>(k);
  }
  HN_ENFORCE(slot_[0] == 0 && slot_[1] == 1 && slot_[2] == 2, def.type(), ": inputs X, W and R come first");
  const std::string dir = GetSingleArgument<std::string>("direction", "forward");
  HN_ENFORCE(dir == "forward" || dir == "reverse" || dir == "bidirectional", def.type(), ": direction '", dir,
             "'; forward, reverse or bidirectional");
  directions_ = dir == "bidirectional" ? 2 : 1;
  reverse_only_ = dir == "reverse";
  HN_ENFORCE(layout_ == 0 || layout_ == 1, def.type(), ": layout ", layout_, "; 0 or 1");
  HN_ENFORCE(std::isfinite(clip_) && clip_ >= 0, def.type(), ": clip must be a finite threshold >= 0");
  const int per_dir = gates_ == 1 ? 1 : gates_ == 3 ? 2 : 3;
  const std::vector<std::string> names = GetRepeatedArgument<std::string>("activations", {});
  HN_ENFORCE(names.empty() || static_cast<int>(names.size()) == per_dir * directions_, def.type(), ": ", names.size(),
             " activations; ", per_dir * directions_, " are needed (", per_dir, " per direction)");
  for (int k = 0; k < per_dir * directions_; ++k) {
    if (names.empty()) {
      act_.push_back(gates_ == 1 || k % per_dir != 0 ? 1 : 0);  // RNN: Tanh; else Sigmoid, Tanh[, Tanh]
      continue;
    }
    const std::string& n = names[k];
    HN_CHECK_KIND(kUnsupported, n == "Sigmoid" || n == "Tanh" || n == "Relu", def.type(), ": activation '", n,
                  "' is not supported (Sigmoid, Tanh, Relu)");
    act_.push_back(n == "Sigmoid" ? 0 : n == "Tanh" ? 1 : 2);
  }
}

void OnnxRecurrentOp::RunOnDevice() {
  std::vector<int> same;
  for (int i = 1; i < InputSize(); ++i)
    if (i != slot_[4]) same.push_back(i);  // sequence_lens: int
  DispatchFloat32Or64(*this, same, [this](auto t) { Compute<decltype(t)>(); });
}

template <typename T>
void OnnxRecurrentOp::Compute() {
  const Tensor &X = Input(0), &R = Input(2);
  auto blob = [&](int onnx_index) { return std::string(" ('") + def().input(slot_[onnx_index]) + "')"; };
  HN_ENFORCE(X.ndim() == 3, type(), ": X", blob(0), " has shape ", X.ShapeString(), "; 3-D is required");
  const int64_t S = X.dim(layout_ ? 1 : 0), N = X.dim(layout_ ? 0 : 1), I = X.dim(2), D = directions_;
  const int64_t H = hidden_ > 0 ? hidden_ : R.ndim() == 3 ? R.dim(2) : 0, G = gates_;
  HN_ENFORCE(H > 0, type(), ": hidden_size is required");
  auto check = [&](int k, const std::vector<int64_t>& want, const char* what) {
    if (slot_[k] < 0) return static_cast<const T*>(nullptr);
    const Tensor& v = Input(slot_[k]);
    HN_ENFORCE(v.sizes() == want, type(), ": ", what, blob(k), " has shape ", v.ShapeString(), "; [",
               want.size() == 3 ? std::to_string(want[0]) + ", " + std::to_string(want[1]) + ", " + std::to_string(want[2])
                                : std::to_string(want[0]) + ", " + std::to_string(want[1]),
               "] is required");
    return v.data<T>();
  };
  const T* w = check(1, {D, G * H, I}, "W");
  const T* r = check(2, {D, G * H, H}, "R");
  const T* bias = check(3, {D, 2 * G * H}, "B");
  const std::vector<int64_t> state_dims = layout_ ? std::vector<int64_t>{N, D, H} : std::vector<int64_t>{D, N, H};
  const T* h0 = check(5, state_dims, "initial_h");
  const T* c0 = gates_ == 4 ? check(6, state_dims, "initial_c") : nullptr;
  const T* peep = gates_ == 4 ? check(7, {D, 3 * H}, "P") : nullptr;
  std::vector<int64_t> lens(static_cast<size_t>(N), S);
  if (slot_[4] >= 0) {
    const Tensor& L = Input(slot_[4]);
    HN_ENFORCE((L.dtype() == DataType::Int32 || L.dtype() == DataType::Int64) && L.ndim() == 1 && L.dim(0) == N,
               type(), ": sequence_lens", blob(4), " is ", DataTypeName(L.dtype()), " ", L.ShapeString(),
               "; int32/int64 [", N, "] is required");
    for (int64_t n = 0; n < N; ++n) {
      lens[n] = L.dtype() == DataType::Int32 ? L.data<int32_t>()[n] : L.data<int64_t>()[n];
      HN_ENFORCE(lens[n] >= 0 && lens[n] <= S, type(), ": sequence_lens", blob(4), " holds ", lens[n],
                 ", outside [0, ", S, "]");
    }
  }
  const std::vector<int64_t> y_dims = layout_ ? std::vector<int64_t>{N, S, D, H} : std::vector<int64_t>{S, D, N, H};
  T* y = Output(0, y_dims, X.dtype())->template mutable_data<T>();
  std::fill(y, y + S * D * N * H, T(0));
  auto at_state = [&](int64_t d, int64_t n) { return (layout_ ? n * D + d : d * N + n) * H; };
  std::vector<T> yh(static_cast<size_t>(D * N * H)), yc(static_cast<size_t>(D * N * H));
  const T* x = X.data<T>();
  std::vector<double> a(static_cast<size_t>(G * H)), rec(static_cast<size_t>(G * H)), hn(static_cast<size_t>(H));
  auto clip = [&](double v) { return clip_ > 0 ? std::min<double>(clip_, std::max<double>(-clip_, v)) : v; };
  for (int64_t d = 0; d < D; ++d) {
    const bool rev = D == 2 ? d == 1 : reverse_only_;
    const T *wd = w + d * G * H * I, *rd = r + d * G * H * H;
    const T *wb = bias ? bias + d * 2 * G * H : nullptr, *rb = bias ? wb + G * H : nullptr;
    const int* act = &act_[static_cast<size_t>(d) * (G == 1 ? 1 : G == 3 ? 2 : 3)];
    for (int64_t n = 0; n < N; ++n) {
      std::vector<double> h(static_cast<size_t>(H), 0.0), c(static_cast<size_t>(H), 0.0);
      for (int64_t j = 0; j < H; ++j) {
        if (h0) h[j] = h0[at_state(d, n) + j];
        if (c0) c[j] = c0[at_state(d, n) + j];
      }
      for (int64_t k = 0; k < lens[n]; ++k) {
        const int64_t t = rev ? lens[n] - 1 - k : k;
        const T* xt = x + (layout_ ? n * S + t : t * N + n) * I;
        for (int64_t g = 0; g < G * H; ++g) {
          double s = wb ? wb[g] : 0.0, q = rb ? rb[g] : 0.0;
          for (int64_t i = 0; i < I; ++i) s += static_cast<double>(wd[g * I + i]) * xt[i];
          for (int64_t i = 0; i < H; ++i) q += static_cast<double>(rd[g * H + i]) * h[i];
          a[g] = s, rec[g] = q;
        }
        if (G == 1) {
          for (int64_t j = 0; j < H; ++j) hn[j] = Activate(act[0], clip(a[j] + rec[j]));
        } else if (G == 3) {
          std::vector<double> rr(static_cast<size_t>(H));
          for (int64_t j = 0; j < H; ++j) rr[j] = Activate(act[0], clip(a[H + j] + rec[H + j]));
          for (int64_t j = 0; j < H; ++j) {
            double cand = a[2 * H + j];
            if (linear_before_reset_) {
              cand += rr[j] * rec[2 * H + j];
            } else {  // R_h (r * h) + Rb_h
              double q = rb ? rb[2 * H + j] : 0.0;
              for (int64_t i = 0; i < H; ++i) q += static_cast<double>(rd[(2 * H + j) * H + i]) * rr[i] * h[i];
              cand += q;
            }
            const double z = Activate(act[0], clip(a[j] + rec[j]));
            hn[j] = (1 - z) * Activate(act[1], clip(cand)) + z * h[j];
          }
        } else {
          const T* p = peep ? peep + d * 3 * H : nullptr;
          for (int64_t j = 0; j < H; ++j) {
            const double ig = Activate(act[0], clip(a[j] + rec[j] + (p ? p[j] * c[j] : 0.0)));
            const double fg = input_forget_ ? 1 - ig : Activate(act[0], clip(a[2 * H + j] + rec[2 * H + j] +
                                                                              (p ? p[2 * H + j] * c[j] : 0.0)));
            c[j] = fg * c[j] + ig * Activate(act[1], clip(a[3 * H + j] + rec[3 * H + j]));
            const double og = Activate(act[0], clip(a[H + j] + rec[H + j] + (p ? p[H + j] * c[j] : 0.0)));
            hn[j] = og * Activate(act[2], c[j]);
          }
        }
        h = hn;
        for (int64_t j = 0; j < H; ++j)
          y[(layout_ ? (n * S + t) * D + d : (t * D + d) * N + n) * H + j] = static_cast<T>(h[j]);
      }
      for (int64_t j = 0; j < H; ++j) {
        yh[at_state(d, n) + j] = static_cast<T>(h[j]);
        yc[at_state(d, n) + j] = static_cast<T>(c[j]);
      }
    }
  }
  if (OutputSize() > 1) std::copy(yh.begin(), yh.end(), Output(1, state_dims, X.dtype())->template mutable_data<T>());
  if (OutputSize() > 2) std::copy(yc.begin(), yc.end(), Output(2, state_dims, X.dtype())->template mutable_data<T>());
}

OPERATOR_SCHEMA(RNN).NumInputs(3, 6).NumOutputs(1, 2)
    .SetDoc("ONNX's RNN: H = f(X W^T + H R^T + Wb + Rb) per direction; optional inputs as arg inputs lists them. "
            "float32/64. CPU only; no gradient.");
OPERATOR_SCHEMA(GRU).NumInputs(3, 6).NumOutputs(1, 2)
    .SetDoc("ONNX's GRU (gates z, r, h; linear_before_reset); optional inputs as arg inputs lists them. float32/64. "
            "CPU only; no gradient.");
OPERATOR_SCHEMA(LSTM).NumInputs(3, 8).NumOutputs(1, 3)
    .SetDoc("ONNX's LSTM (gates i, o, f, c; peepholes; input_forget); optional inputs as arg inputs lists them. "
            "float32/64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(RNN, OnnxRecurrentOp);
REGISTER_CPU_OPERATOR(GRU, OnnxRecurrentOp);
REGISTER_CPU_OPERATOR(LSTM, OnnxRecurrentOp);

}  // namespace hetnet
