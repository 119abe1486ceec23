// Harness cases for OnnxPool (operators/onnx_pool_op.*) and OnnxConv (operators/onnx_conv_op.*, by
// the convolution's definition, explicit pads). OnnxPool: 1-D, 2-D and 3-D max / avg / lp pools with
// dilations, strides, asymmetric pads, ceil_mode, count_include_pad, auto_pad, and the Indices
// output. The reference follows ONNX's reference implementation's formulation, not the kernel's: pad
// X explicitly (NaN marks padding), grow the end pads so that every output window fits, then pool
// each window of the padded array keeping the taps before D + the declared pads.
#include <catch2/catch.hpp>

#include <cmath>
#include <limits>
#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

std::vector<int64_t> IntsArg(const caffe2::OperatorDef& def, const std::string& name, std::vector<int64_t> dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
  return dflt;
}
int64_t IntArg(const caffe2::OperatorDef& def, const std::string& name, int64_t dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.i();
  return dflt;
}
std::string StrArg(const caffe2::OperatorDef& def, const std::string& name, const std::string& dflt) {
  for (const auto& a : def.arg())
    if (a.name() == name) return a.s();
  return dflt;
}

RefTensors PoolRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor& X = in[0];
  const std::vector<int64_t> kernel = IntsArg(def, "kernel_shape", {});
  const size_t k = kernel.size();
  const auto strides = IntsArg(def, "strides", std::vector<int64_t>(k, 1)),
             dil = IntsArg(def, "dilations", std::vector<int64_t>(k, 1));
  auto pads = IntsArg(def, "pads", std::vector<int64_t>(2 * k, 0));
  const std::string mode = StrArg(def, "mode", "max"), auto_pad = StrArg(def, "auto_pad", "NOTSET");
  const bool ceil = IntArg(def, "ceil_mode", 0) != 0, include = IntArg(def, "count_include_pad", 0) != 0;
  std::vector<int64_t> out(k), extra(2 * k);
  for (size_t i = 0; i < k; ++i) {
    const int64_t d = X.shape[i + 2], sw = dil[i] * (kernel[i] - 1) + 1;
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      out[i] = static_cast<int64_t>(std::floor((d - 1.0) / strides[i])) + 1;
      const int64_t total = std::max<int64_t>(0, (out[i] - 1) * strides[i] + sw - d);
      pads[i] = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      pads[k + i] = total - pads[i];
    } else {
      if (auto_pad == "VALID") pads[i] = pads[k + i] = 0;
      const double size = static_cast<double>(d + pads[i] + pads[k + i] - sw) / strides[i] + 1;
      out[i] = static_cast<int64_t>(ceil ? std::ceil(size) : std::floor(size));
      if (ceil && (out[i] - 1) * strides[i] >= d + pads[i]) --out[i];
    }
    const int64_t need = (out[i] - 1) * strides[i] + sw, have = d + pads[i] + pads[k + i];
    extra[i] = pads[i];
    extra[k + i] = pads[k + i] + std::max<int64_t>(0, need - have);
  }
  std::vector<int64_t> shape = {X.shape[0], X.shape[1]};
  shape.insert(shape.end(), out.begin(), out.end());
  RefTensor Y(shape, X.dtype), I(shape, DataType::Int64);
  const double p = mode == "lp" ? 2.0 : 1.0;  // the cases use p = 2
  for (int64_t e = 0; e < Y.numel(); ++e) {
    int64_t rem = e;
    std::vector<int64_t> oc(k);
    for (int i = static_cast<int>(k) - 1; i >= 0; --i) oc[i] = rem % out[i], rem /= out[i];
    const int64_t plane = rem;
    int64_t taps = 1;
    for (auto kk : kernel) taps *= kk;
    double best = -std::numeric_limits<double>::infinity(), sum = 0;
    int64_t n = 0, best_at = -1;
    for (int64_t t = 0; t < taps; ++t) {
      int64_t r = t, flat = 0;
      bool keep = true, pad = false;
      for (int i = static_cast<int>(k) - 1; i >= 0; --i) {
        const int64_t j = r % kernel[i];
        r /= kernel[i];
        const int64_t padded = oc[i] * strides[i] + j * dil[i];  // coordinate in the padded array
        keep &= padded < X.shape[i + 2] + pads[i] + pads[k + i];
        const int64_t c = padded - extra[i];
        pad |= c < 0 || c >= X.shape[i + 2];
      }
      if (!keep) continue;
      r = t;
      std::vector<int64_t> xc(k);
      for (int i = static_cast<int>(k) - 1; i >= 0; --i) xc[i] = oc[i] * strides[i] + (r % kernel[i]) * dil[i] - extra[i], r /= kernel[i];
      if (pad) {
        if (include) ++n;
        continue;
      }
      for (size_t i = 0; i < k; ++i) flat = flat * X.shape[i + 2] + xc[i];
      const double v = X[plane * (X.numel() / (X.shape[0] * X.shape[1])) + flat];
      ++n;
      if (v > best) best = v, best_at = flat;
      sum += mode == "lp" ? std::pow(std::abs(v), p) : v;
    }
    Y[e] = mode == "max" ? best : mode == "avg" ? sum / n : std::pow(sum, 1 / p);
    I[e] = static_cast<double>(plane * (X.numel() / (X.shape[0] * X.shape[1])) + best_at);
  }
  return def.output_size() > 1 ? RefTensors{Y, I} : RefTensors{Y};
}

// Conv by the definition: y[n, m, o] = b[m] + sum over channels c of m's group and taps j of
// x[n, c, o * s - pad + j * d] * w[m, c, j], zero outside X; explicit pads only.
RefTensors ConvRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  const RefTensor &X = in[0], &W = in[1];
  const size_t k = X.shape.size() - 2;
  const auto strides = IntsArg(def, "strides", std::vector<int64_t>(k, 1)),
             dil = IntsArg(def, "dilations", std::vector<int64_t>(k, 1)),
             pads = IntsArg(def, "pads", std::vector<int64_t>(2 * k, 0));
  const int64_t group = IntArg(def, "group", 1), N = X.shape[0], C = X.shape[1], M = W.shape[0], cg = C / group;
  std::vector<int64_t> shape = {N, M}, kern(W.shape.begin() + 2, W.shape.end());
  for (size_t i = 0; i < k; ++i)
    shape.push_back((X.shape[i + 2] + pads[i] + pads[k + i] - dil[i] * (kern[i] - 1) - 1) / strides[i] + 1);
  RefTensor Y(shape, X.dtype);
  std::vector<int64_t> xs(X.shape.begin() + 2, X.shape.end());
  int64_t taps = 1, in_sp = 1;
  for (size_t i = 0; i < k; ++i) taps *= kern[i], in_sp *= xs[i];
  for (int64_t e = 0; e < Y.numel(); ++e) {
    std::vector<int64_t> c(shape.size());
    for (int64_t r = e, d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) c[d] = r % shape[d], r /= shape[d];
    const int64_t n = c[0], m = c[1];
    double acc = in.size() > 2 ? in[2][m] : 0.0;
    for (int64_t ci = 0; ci < cg; ++ci)
      for (int64_t t = 0; t < taps; ++t) {
        int64_t r = t, flat = 0, stride = 1;
        bool ok = true;
        for (int64_t i = static_cast<int64_t>(k) - 1; i >= 0; --i) {
          const int64_t j = r % kern[i], x = c[i + 2] * strides[i] - pads[i] + j * dil[i];
          r /= kern[i];
          ok &= x >= 0 && x < xs[i];
          flat += x * stride, stride *= xs[i];
        }
        if (ok) acc += X[(n * C + (m / (M / group)) * cg + ci) * in_sp + flat] * W[(m * cg + ci) * taps + t];
      }
    Y[e] = acc;
  }
  return {Y};
}

caffe2::OperatorDef Pool(const std::string& mode, std::vector<int64_t> kernel, std::vector<caffe2::Argument> more,
                         int outputs = 1) {
  more.push_back(Arg("mode", mode));
  more.push_back(harness::Ints("kernel_shape", kernel));
  return Op("OnnxPool", {"X"}, outputs > 1 ? std::vector<std::string>{"Y", "I"} : std::vector<std::string>{"Y"}, more);
}

}  // namespace

HN_OP_CASES(OnnxPool) {
  using harness::Ints;
  std::vector<Case> c = {
      Case("max 3-D").Def(Pool("max", {2, 2, 2}, {})).Inputs({In({1, 2, 4, 5, 4}).Distinct()}),
      Case("avg 3-D strides pads").Def(Pool("avg", {3, 2, 2}, {Ints("strides", {2, 1, 2}), Ints("pads", {1, 0, 1, 1, 1, 0})}))
          .Inputs({In({2, 1, 5, 4, 5})}),
      Case("avg 2-D include pad, ceil").Def(Pool("avg", {3, 3}, {Ints("strides", {2, 2}), Ints("pads", {1, 1, 1, 1}),
                                                              Arg("ceil_mode", 1), Arg("count_include_pad", 1)}))
          .Inputs({In({1, 2, 6, 6})}),
      Case("max 2-D dilations 2").Def(Pool("max", {2, 2}, {Ints("dilations", {2, 2})})).Inputs({In({1, 1, 5, 6}).Distinct()}),
      Case("max 1-D dilation, ceil, asymmetric pads").Def(Pool("max", {3}, {Ints("dilations", {2}), Ints("strides", {3}),
                                                                          Ints("pads", {2, 1}), Arg("ceil_mode", 1)}))
          .Inputs({In({2, 2, 11}).Distinct()}),
      Case("avg 2-D kernel smaller than stride, ceil").Def(Pool("avg", {1, 1}, {Ints("strides", {2, 2}), Arg("ceil_mode", 1)}))
          .Inputs({In({1, 1, 5, 5})}),
      Case("lp p 2 SAME_UPPER").Def(Pool("lp", {3, 2}, {Arg("auto_pad", "SAME_UPPER"), Ints("strides", {2, 1})}))
          .Inputs({In({1, 2, 5, 4})}),
      Case("max SAME_LOWER with Indices").Def(Pool("max", {2, 3}, {Arg("auto_pad", "SAME_LOWER")}, 2))
          .Inputs({In({2, 2, 4, 5}).Distinct()}),
      Case("avg VALID, double").Def(Pool("avg", {2, 2}, {Arg("auto_pad", "VALID"), Ints("strides", {2, 2})}))
          .Inputs({In({1, 1, 5, 6}, DataType::Double)}),
      Case("max uint8").Def(Pool("max", {2, 2}, {})).Inputs({In({1, 2, 3, 4}, DataType::UInt8).Range(0, 255)}),
  };
  for (auto& k : c) k.Ref(PoolRef).NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(OnnxConv) {
  using harness::Ints;
  std::vector<Case> c = {
      Case("3-D group 2, dilation, strides, pads, bias")
          .Def(Op("OnnxConv", {"X", "W", "B"}, {"Y"}, {Arg("group", 2), Ints("dilations", {1, 2, 1}),
                                                       Ints("strides", {2, 1, 1}), Ints("pads", {1, 0, 1, 0, 2, 1})}))
          .Inputs({In({2, 4, 5, 6, 4}), In({6, 2, 3, 2, 2}), In({6})}),
      Case("3-D no bias, double").Def(Op("OnnxConv", {"X", "W"}, {"Y"}))
          .Inputs({In({1, 3, 4, 4, 3}, DataType::Double), In({2, 3, 2, 3, 1}, DataType::Double)}),
      Case("1-D").Def(Op("OnnxConv", {"X", "W", "B"}, {"Y"}, {Ints("pads", {2, 1})}))
          .Inputs({In({2, 3, 9}), In({4, 3, 3}), In({4})}),
  };
  for (auto& k : c) k.Ref(ConvRef).NoGrad().CpuOnly().Tol(1e-4);
  return c;
}

namespace {
std::string RunError(const caffe2::OperatorDef& def, const Tensor& x) {
  Workspace ws;
  *ws.CreateBlob(def.input(0))->GetMutable<Tensor>() = x;
  try {
    CreateOperator(def, &ws)->Run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("OnnxPool refuses bad geometry and dtypes, naming op and blob", "[onnx_pool]") {
  Tensor x({1, 1, 4, 4}, DataType::Float);
  x.mutable_data<float>();
  CHECK_THAT(RunError(Pool("max", {2}, {}), x), Catch::Contains("OnnxPool") && Catch::Contains("'X'"));
  CHECK_THAT(RunError(Pool("max", {2, 2}, {harness::Ints("strides", {0, 1})}), x), Catch::Contains("strides"));
  CHECK_THAT(RunError(Pool("max", {2, 2}, {harness::Ints("pads", {0, 0})}), x), Catch::Contains("pads"));
  CHECK_THAT(RunError(Pool("avg", {9, 2}, {}), x), Catch::Contains("larger than padded dim"));
  CHECK_THAT(RunError(Pool("max", {2, 2}, {harness::Ints("kernel_shape", {int64_t{1} << 40, 2})}), x),
             !Catch::Equals(""));
  Tensor u({1, 1, 4, 4}, DataType::UInt8);
  u.mutable_data<uint8_t>();
  CHECK_THAT(RunError(Pool("avg", {2, 2}, {}), u), Catch::Contains("'X'") && Catch::Contains("uint8"));
  CHECK_THAT(RunError(Pool("avg", {2, 2}, {}, 2), x), Catch::Contains("Indices"));
  Workspace ws;
  *ws.CreateBlob("x")->GetMutable<Tensor>() = x;
  Tensor w({2, 3, 1, 1}, DataType::Float);
  w.mutable_data<float>();
  *ws.CreateBlob("w")->GetMutable<Tensor>() = w;
  CHECK_THROWS_WITH(CreateOperator(Op("OnnxConv", {"x", "w"}, {"y"}), &ws)->Run(),
                    Catch::Contains("OnnxConv") && Catch::Contains("'w'") && Catch::Contains("group"));
}

}  // namespace harness
}  // namespace hetnet
