#include "operators/grid_sample_op.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/checked_size.h"
#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

namespace {

// x reflected at lo and hi until inside [lo, hi].
double Reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x < lo || x > hi) {
    const double dx = x < lo ? lo - x : x - hi;
    const double n = std::floor(dx / range), r = dx - n * range;
    const bool even = std::fmod(n, 2.0) == 0;
    return (x < lo) == even ? lo + r : hi - r;
  }
  return x;
}

// Keys' cubic convolution weights of the taps at -1, 0, 1, 2 from a point t in [0, 1) past tap 0.
void CubicWeights(double t, double w[4]) {
  const double a = -0.75, x = std::fabs(t);
  w[0] = ((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a;
  w[1] = ((a + 2) * x - (a + 3)) * x * x + 1;
  w[2] = ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1;
  w[3] = ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a;
}

}  // namespace

GridSampleOp::GridSampleOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws), align_corners_(GetSingleArgument<int64_t>("align_corners", 0) != 0) {
  const std::string mode = GetSingleArgument<std::string>("mode", "linear");
  const std::string pad = GetSingleArgument<std::string>("padding_mode", "zeros");
  HN_ENFORCE(mode == "linear" || mode == "bilinear" || mode == "nearest" || mode == "cubic" || mode == "bicubic",
             def.type(), ": mode '", mode, "'; linear, nearest or cubic (bilinear, bicubic) is required");
  HN_ENFORCE(pad == "zeros" || pad == "border" || pad == "reflection", def.type(), ": padding_mode '", pad,
             "'; zeros, border or reflection is required");
  mode_ = mode == "nearest" ? 1 : mode == "cubic" || mode == "bicubic" ? 2 : 0;
  padding_ = pad == "zeros" ? 0 : pad == "border" ? 1 : 2;
}

void GridSampleOp::RunOnDevice() { DispatchFloat32Or64(*this, {1}, [this](auto t) { Compute<decltype(t)>(); }); }

template <typename T>
void GridSampleOp::Compute() {
  const Tensor &X = Input(0), &G = Input(1);
  const int r = X.ndim() - 2;
  HN_ENFORCE(r >= 1, type(), ": X ('", def().input(0), "') has shape ", X.ShapeString(),
             "; [N, C, spatial dims...] with at least one spatial dim is required");
  HN_ENFORCE(G.ndim() == r + 2 && G.dim(0) == X.dim(0) && G.dim(r + 1) == r, type(), ": grid ('", def().input(1),
             "') has shape ", G.ShapeString(), "; [", X.dim(0), ", ", r, " output dims..., ", r,
             "] is required for X ", X.ShapeString());
  const int64_t N = X.dim(0), C = X.dim(1);
  std::vector<int64_t> out{N, C}, dims(r), stride(r);
  int64_t points = 1, in_size = 1;
  for (int i = 0; i < r; ++i) out.push_back(G.dim(i + 1)), points *= G.dim(i + 1);
  for (int i = r - 1; i >= 0; --i) dims[i] = X.dim(i + 2), stride[i] = in_size, in_size *= dims[i];
  T* y = Output(0, out, X.dtype())->template mutable_data<T>();
  if (CheckedNumel(out, "GridSample Y") == 0) return;
  const T *x = X.data<T>(), *g = G.data<T>();
  const int taps = mode_ == 0 ? 2 : mode_ == 1 ? 1 : 4;
  int64_t combos = 1;
  for (int i = 0; i < r; ++i) combos *= taps;
  std::vector<int64_t> index(static_cast<size_t>(r * taps));  // per dim and tap: input index, -1 for a zero
  std::vector<double> weight(static_cast<size_t>(r * taps));
  std::vector<int64_t> offset(static_cast<size_t>(combos));
  std::vector<double> cw(static_cast<size_t>(combos));
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < points; ++p) {
      for (int i = 0; i < r; ++i) {
        const double d = static_cast<double>(dims[i]), v = g[(n * points + p) * r + (r - 1 - i)];
        const double lo = align_corners_ ? 0.0 : -0.5, hi = align_corners_ ? d - 1 : d - 0.5;
        float c = NarrowTo<float>(align_corners_ ? (v + 1) / 2 * (d - 1) : ((v + 1) * d - 1) / 2);
        if (mode_ == 1) c = std::nearbyint(c);
        if (c < lo || c > hi) {
          if (padding_ == 1) c = static_cast<float>(std::min(std::max<double>(c, 0.0), d - 1));
          else if (padding_ == 2) c = static_cast<float>(Reflect(c, lo, hi));
        }
        const double base = mode_ == 1 ? std::trunc(c) : std::floor(c), t = c - base;
        double w[4] = {1, 0, 0, 0};
        if (mode_ == 0) w[0] = 1 - t, w[1] = t;
        if (mode_ == 2) CubicWeights(t, w);
        for (int k = 0; k < taps; ++k) {
          const double at = std::max(-1e18, std::min(1e18, base + k - (mode_ == 2 ? 1 : 0)));
          int64_t j = static_cast<int64_t>(at);
          if (padding_ == 0 && (j < 0 || j >= dims[i])) j = -1;
          else if (padding_ == 1) j = std::min<int64_t>(std::max<int64_t>(j, 0), dims[i] - 1);
          else if (padding_ == 2) j = std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(Reflect(at, lo, hi)), 0),
                                                        dims[i] - 1);
          index[i * taps + k] = j;
          weight[i * taps + k] = w[k];
        }
      }
      // Every combination of one tap per dim: its input offset (-1: a zero) and weight.
      for (int64_t q = 0; q < combos; ++q) {
        int64_t off = 0, rem = q;
        double wq = 1;
        for (int i = r - 1; i >= 0; --i) {
          const int k = static_cast<int>(rem % taps);
          rem /= taps;
          const int64_t j = index[i * taps + k];
          wq *= weight[i * taps + k];
          off = off < 0 || j < 0 ? -1 : off + j * stride[i];
        }
        offset[q] = off, cw[q] = wq;
      }
      for (int64_t c = 0; c < C; ++c) {
        const T* xc = x + (n * C + c) * in_size;
        double acc = 0;
        for (int64_t q = 0; q < combos; ++q)
          if (offset[q] >= 0) acc += cw[q] * static_cast<double>(xc[offset[q]]);
        y[(n * C + c) * points + p] = static_cast<T>(acc);
      }
    }
}

OPERATOR_SCHEMA(GridSample).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's GridSample (opsets 16-22): samples X [N, C, spatial...] at the normalized grid points, any number "
            "of spatial dims; mode linear/nearest/cubic, padding_mode zeros/border/reflection, align_corners. "
            "float32/64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(GridSample, GridSampleOp);

void AffineGridOp::RunOnDevice() { DispatchFloat32Or64(*this, {}, [this](auto t) { Compute<decltype(t)>(); }); }

template <typename T>
void AffineGridOp::Compute() {
  const Tensor &Th = Input(0), &Sz = Input(1);
  HN_ENFORCE(Sz.dtype() == DataType::Int64 && Sz.ndim() == 1 && (Sz.dim(0) == 4 || Sz.dim(0) == 5), type(),
             ": size ('", def().input(1), "') is ", DataTypeName(Sz.dtype()), " ", Sz.ShapeString(),
             "; int64 [4] (N, C, H, W) or [5] (N, C, D, H, W) is required");
  const int r = static_cast<int>(Sz.dim(0)) - 2;  // spatial dims
  const int64_t* size = Sz.data<int64_t>();
  const int64_t N = size[0];
  HN_ENFORCE(Th.ndim() == 3 && Th.dim(0) == N && Th.dim(1) == r && Th.dim(2) == r + 1, type(), ": theta ('",
             def().input(0), "') has shape ", Th.ShapeString(), "; [", N, ", ", r, ", ", r + 1, "] is required for size [",
             size[0], ", ", size[1], ", ...]");
  std::vector<int64_t> out{N}, dims;
  int64_t points = 1;
  for (int i = 0; i < r; ++i) {
    HN_ENFORCE(size[2 + i] >= 0, type(), ": size ('", def().input(1), "') has a negative dim ", size[2 + i]);
    out.push_back(size[2 + i]), dims.push_back(size[2 + i]), points *= size[2 + i];
  }
  out.push_back(r);
  T* g = Output(0, out, Th.dtype())->template mutable_data<T>();
  CheckedNumel(out, "AffineGrid grid");
  const T* th = Th.data<T>();
  auto coord = [&](int64_t i, int64_t n) {  // normalized coordinate of index i of n
    if (align_corners_) return n > 1 ? -1.0 + 2.0 * static_cast<double>(i) / static_cast<double>(n - 1) : -1.0;
    return -1.0 + (2.0 * static_cast<double>(i) + 1.0) / static_cast<double>(n);
  };
  std::vector<double> h(static_cast<size_t>(r + 1));  // (x, y[, z], 1): x along the last spatial dim
  for (int64_t n = 0; n < N; ++n)
    for (int64_t p = 0; p < points; ++p) {
      for (int64_t i = r - 1, rem = p; i >= 0; --i) h[r - 1 - i] = coord(rem % dims[i], dims[i]), rem /= dims[i];
      h[r] = 1;
      for (int a = 0; a < r; ++a) {
        double v = 0;
        for (int b = 0; b <= r; ++b) v += static_cast<double>(th[(n * r + a) * (r + 1) + b]) * h[b];
        g[(n * points + p) * r + a] = static_cast<T>(v);
      }
    }
}

OPERATOR_SCHEMA(AffineGrid).NumInputs(2).NumOutputs(1)
    .SetDoc("ONNX's AffineGrid (opset 20): the normalized sampling grid [N, (D,) H, W, r] of theta [N, r, r+1] for "
            "size (int64 [N, C, (D,) H, W]), align_corners. float32/64. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(AffineGrid, AffineGridOp);

}  // namespace hetnet
