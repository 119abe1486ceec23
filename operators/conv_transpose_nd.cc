#include "operators/conv_transpose_nd.h"

#include <algorithm>

#include "core/argument.h"
#include "core/checked_size.h"
#include "core/error.h"
#include "core/tensor.h"

namespace hetnet {

namespace {
std::string Name(const caffe2::OperatorDef& def) {
  return def.type() + (def.name().empty() ? "" : " '" + def.name() + "'");
}
}  // namespace

std::vector<int64_t> ConvTransposeNdGeom::y_shape() const {
  std::vector<int64_t> s{N, M};
  s.insert(s.end(), out.begin(), out.end());
  return s;
}

bool IsConvTransposeNd(const caffe2::OperatorDef& def) {
  ArgumentHelper a(def);
  return a.HasArgument("kernels") && a.GetRepeatedArgument<int64_t>("kernels").size() != 2;
}

ConvTransposeNdGeom ComputeConvTransposeNdGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& x,
                                               const std::vector<int64_t>& w, const std::vector<int64_t>* b) {
  ArgumentHelper a(def);
  const std::string op = Name(def);
  ConvTransposeNdGeom g;
  g.kernel = a.GetRepeatedArgument<int64_t>("kernels");
  const size_t k = g.kernel.size();
  HN_ENFORCE(k >= 1, op, ": argument 'kernels' is empty");
  auto read = [&](const char* name, size_t n, int64_t def_value) {
    std::vector<int64_t> v = a.GetRepeatedArgument<int64_t>(name, std::vector<int64_t>(n, def_value));
    HN_ENFORCE(v.size() == n, op, ": argument '", name, "' has ", v.size(), " values; ", k, " spatial dims need ", n);
    return v;
  };
  g.stride = read("strides", k, 1);
  g.dilation = read("dilations", k, 1);
  std::vector<int64_t> pads = read("pads", 2 * k, 0), adj = read("adjs", k, 0);
  const int lp = a.GetSingleArgument<int>("legacy_pad", 0);
  HN_CHECK_KIND(kUnsupported, lp >= 0 && lp <= 2, op, ": legacy_pad ", lp, " is not supported (NOTSET, VALID or SAME)");
  if (lp != 0) std::fill(pads.begin(), pads.end(), 0);
  g.group = a.GetSingleArgument<int64_t>("group", 1);
  HN_ENFORCE(x.size() == k + 2, op, ": input 0 ('", def.input(0), "') has shape ", ShapeToString(x), " but ", k,
             " kernel dims need rank ", k + 2, " [N, C, spatial...]");
  HN_ENFORCE(w.size() == k + 2, op, ": filter (input 1, '", def.input(1), "') has shape ", ShapeToString(w), " but ",
             k, " kernel dims need rank ", k + 2, " [C, M/group, kernel...]");
  g.N = x[0], g.C = x[1];
  HN_ENFORCE(g.group >= 1 && g.group <= (int64_t{1} << 30) && g.C % g.group == 0 && w[0] == g.C, op, ": filter '",
             def.input(1), "' ", ShapeToString(w), " and group ", g.group, " do not fit input '", def.input(0), "' ",
             ShapeToString(x), " (filter [C, M/group, kernel...], C divisible by group)");
  g.M = w[1] * g.group;
  for (size_t i = 0; i < k; ++i) {
    HN_ENFORCE(w[i + 2] == g.kernel[i], op, ": filter '", def.input(1), "' ", ShapeToString(w),
               " differs from argument kernels ", ShapeToString(g.kernel));
    const int64_t lim = int64_t{1} << 30;
    HN_ENFORCE(g.kernel[i] >= 1 && g.kernel[i] <= lim && g.stride[i] >= 1 && g.stride[i] <= lim &&
                   g.dilation[i] >= 1 && g.dilation[i] <= lim && pads[i] >= 0 && pads[i] <= lim &&
                   pads[k + i] >= 0 && pads[k + i] <= lim && adj[i] >= 0 && adj[i] <= lim && x[i + 2] >= 0 &&
                   x[i + 2] <= (int64_t{1} << 31),
               op, ": dim ", i, ": kernel, stride, dilation must be in [1, 2^30], pads and adj in [0, 2^30]");
    const int64_t o = (x[i + 2] - 1) * g.stride[i] + g.dilation[i] * (g.kernel[i] - 1) + 1 + adj[i] - pads[i] -
                      pads[k + i];
    HN_ENFORCE(o > 0, op, ": output size ", o, " of spatial dim ", i, " is not positive (input '", def.input(0), "' ",
               ShapeToString(x), ")");
    g.in.push_back(x[i + 2]), g.out.push_back(o), g.pad_begin.push_back(pads[i]);
  }
  if (b)
    HN_ENFORCE(b->size() == 1 && (*b)[0] == g.M, op, ": bias (input 2, '", def.input(2), "') has shape ",
               ShapeToString(*b), " but ", g.M, " output channels need [", g.M, "]");
  CheckedNumel(g.y_shape(), "ConvTranspose output");
  return g;
}

void ConvTransposeNdCpu(const ConvTransposeNdGeom& g, const float* x, const float* w, const float* b, float* y) {
  const size_t k = g.kernel.size();
  int64_t in_sp = 1, out_sp = 1, taps = 1;
  for (size_t i = 0; i < k; ++i) in_sp *= g.in[i], out_sp *= g.out[i], taps *= g.kernel[i];
  const int64_t cg = g.C / g.group, mg = g.M / g.group;
  std::fill(y, y + g.N * g.M * out_sp, 0.f);
  // For each tap: its offset in every spatial dim; for each input position: where it lands.
  std::vector<int64_t> pos(k), tap_off(k);
  for (int64_t p = 0; p < in_sp; ++p) {
    for (int64_t rem = p, i = static_cast<int64_t>(k) - 1; i >= 0; --i) pos[i] = rem % g.in[i], rem /= g.in[i];
    for (int64_t t = 0; t < taps; ++t) {
      int64_t flat = 0;
      bool inside = true;
      for (int64_t rem = t, i = static_cast<int64_t>(k) - 1, stride = 1; i >= 0; --i) {
        const int64_t j = rem % g.kernel[i];
        rem /= g.kernel[i];
        const int64_t o = pos[i] * g.stride[i] - g.pad_begin[i] + j * g.dilation[i];
        inside &= o >= 0 && o < g.out[i];
        flat += o * stride;
        stride *= g.out[i];
      }
      if (!inside) continue;
      for (int64_t n = 0; n < g.N; ++n)
        for (int64_t c = 0; c < g.C; ++c) {
          const float xv = x[(n * g.C + c) * in_sp + p];
          const int64_t gr = c / cg;
          for (int64_t m = 0; m < mg; ++m)
            y[(n * g.M + gr * mg + m) * out_sp + flat] += xv * w[(c * mg + m) * taps + t];
        }
    }
  }
  if (b)
    for (int64_t n = 0; n < g.N; ++n)
      for (int64_t m = 0; m < g.M; ++m)
        for (int64_t o = 0; o < out_sp; ++o) y[(n * g.M + m) * out_sp + o] += b[m];
}

}  // namespace hetnet
