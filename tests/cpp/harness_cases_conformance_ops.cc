// Harness cases for the forms ONNX's conformance cases needed (issue 15): ConvTranspose with dilations (2-D, every
// device, gradient checked) and over 3 spatial dims (CPU only), BatchMatMul whose batch dims broadcast by stretching
// size-1 dims, MatMulInteger (operators/matmul_integer_op.*) and EQ / NE / LT on string tensors. The references are
// float64 loops written from ONNX's definitions in the "gather" direction (each output element sums the inputs that
// reach it), not the kernels' scatter. The [conformance_ops] TEST_CASEs check the refusals.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstring>
#include <string>

#include "core/gradient.h"
#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"
#include "tests/cpp/op_test_util.h"

namespace hetnet {
namespace harness {
namespace {

// Row-major coordinates of flat index i in shape s.
std::vector<int64_t> Coords(int64_t i, const std::vector<int64_t>& s) {
  std::vector<int64_t> c(s.size());
  for (size_t d = s.size(); d-- > 0;) c[d] = i % s[d], i /= s[d];
  return c;
}

struct CT {  // ConvTranspose geometry per spatial dim
  std::vector<int64_t> stride, dilation, pad_begin, pad_end, adj;
  int64_t group = 1;
};

// ONNX ConvTranspose: Y[n, m, o] = b[m] + sum_{c in m's group, t} X[n, c, i] W[c, m % Mg, t] over the i with
// i * stride - pad_begin + t * dilation == o (per dim).
RefFn ConvTransposeNdRef(CT g) {
  return [g](const caffe2::OperatorDef&, const RefTensors& in) {
    const RefTensor &X = in[0], &W = in[1];
    const size_t k = X.shape.size() - 2;
    const int64_t N = X.dim(0), C = X.dim(1), Mg = W.dim(1), M = Mg * g.group, Cg = C / g.group;
    std::vector<int64_t> ys{N, M}, xs(X.shape.begin() + 2, X.shape.end()), ks(W.shape.begin() + 2, W.shape.end());
    for (size_t d = 0; d < k; ++d)
      ys.push_back((xs[d] - 1) * g.stride[d] + g.dilation[d] * (ks[d] - 1) + 1 + g.adj[d] - g.pad_begin[d] -
                   g.pad_end[d]);
    RefTensor Y(ys);
    int64_t in_sp = 1, taps = 1;
    for (size_t d = 0; d < k; ++d) in_sp *= xs[d], taps *= ks[d];
    for (int64_t e = 0; e < Y.numel(); ++e) {
      const auto yc = Coords(e, ys);
      const int64_t n = yc[0], m = yc[1];
      double acc = in.size() > 2 ? in[2][m] : 0.0;
      for (int64_t t = 0; t < taps; ++t) {
        const auto tc = Coords(t, ks);
        int64_t flat = 0;
        bool hit = true;
        for (size_t d = 0; d < k && hit; ++d) {
          const int64_t num = yc[d + 2] + g.pad_begin[d] - tc[d] * g.dilation[d];
          hit = num >= 0 && num % g.stride[d] == 0 && num / g.stride[d] < xs[d];
          flat = flat * xs[d] + (hit ? num / g.stride[d] : 0);
        }
        if (!hit) continue;
        for (int64_t c = (m / Mg) * Cg; c < (m / Mg + 1) * Cg; ++c)
          acc += X[(n * C + c) * in_sp + flat] * W[(c * Mg + m % Mg) * taps + t];
      }
      Y[e] = acc;
    }
    return RefTensors{Y};
  };
}

// numpy matmul of A [..., M, K] (or [K]) and B [..., K, N] (or [K]); batch dims broadcast. zp(a or b, batch index of
// that operand, row or column) is subtracted from the operand's elements (0 for a float product).
using ZeroPointFn = std::function<double(int which, int64_t batch, int64_t j)>;
RefTensor NumpyMatMul(const RefTensor& A0, const RefTensor& B0, DataType out, const ZeroPointFn& zp) {
  std::vector<int64_t> a = A0.shape, b = B0.shape;
  const bool av = a.size() == 1, bv = b.size() == 1;
  if (av) a.insert(a.begin(), 1);
  if (bv) b.push_back(1);
  const size_t ra = a.size(), rb = b.size(), r = std::max(ra, rb);
  const int64_t M = a[ra - 2], K = a[ra - 1], N = b[rb - 1];
  std::vector<int64_t> batch(r - 2);
  for (size_t d = 0; d + 2 < r; ++d)  // right-aligned: dim d of the result is a's d - (r - ra), where that exists
    batch[d] = std::max(d + ra >= r ? a[d + ra - r] : 1, d + rb >= r ? b[d + rb - r] : 1);
  std::vector<int64_t> ys = batch;
  if (!av) ys.push_back(M);
  if (!bv) ys.push_back(N);
  if (av && bv && out != DataType::Float) ys.clear();  // MatMulInteger as numpy: 0-D (BatchMatMul gives [1])
  if (av && bv && out == DataType::Float) ys = {1};
  RefTensor Y(ys, out);
  int64_t nb = 1;
  for (int64_t x : batch) nb *= x;
  for (int64_t t = 0; t < nb; ++t) {
    const auto bc = Coords(t, batch);
    int64_t ia = 0, ib = 0;
    for (size_t d = 0; d < batch.size(); ++d) {
      if (d + ra >= r) { const int64_t s = a[d + ra - r]; ia = ia * s + (s == 1 ? 0 : bc[d]); }
      if (d + rb >= r) { const int64_t s = b[d + rb - r]; ib = ib * s + (s == 1 ? 0 : bc[d]); }
    }
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        double acc = 0;
        for (int64_t kk = 0; kk < K; ++kk)
          acc += (A0[(ia * M + m) * K + kk] - zp(0, ia, m)) * (B0[(ib * K + kk) * N + n] - zp(1, ib, n));
        Y[(t * M + m) * N + n] = acc;
      }
  }
  return Y;
}

// MatMulInteger's zero points: input 2 (A's: one, [M] or per batch and row) and 3 (B's: one, [N] or per batch and
// column), as the def's position args say.
RefTensors MatMulIntegerRef(const caffe2::OperatorDef& def, const RefTensors& in) {
  ArgumentHelper h(def);
  const int at[2] = {h.GetSingleArgument<int>("a_zero_point_input", in.size() > 2 ? 2 : -1),
                     h.GetSingleArgument<int>("b_zero_point_input", in.size() > 3 ? 3 : -1)};
  const int64_t count[2] = {in[0].shape.size() > 1 ? in[0].dim(-2) : 1, in[1].shape.size() > 1 ? in[1].dim(-1) : 1};
  auto zp = [&](int which, int64_t batch, int64_t j) {
    if (at[which] < 0) return 0.0;
    const RefTensor& z = in[at[which]];
    if (z.numel() == 1) return z[0];
    return z.numel() == count[which] ? z[j] : z[batch * count[which] + j];
  };
  return {NumpyMatMul(in[0], in[1], DataType::Int32, zp)};
}

InputSpec Bytes(std::vector<int64_t> s, DataType t) {
  return In(std::move(s), t).Range(t == DataType::Int8 ? -128 : 0, t == DataType::Int8 ? 127 : 255);
}

}  // namespace

HN_OP_CASES(ConformanceConvTranspose) {
  auto ct2 = [](const std::string& label, std::vector<int64_t> x, int64_t mg, std::vector<int64_t> kern, CT g,
                std::vector<caffe2::Argument> args) {
    return Case(label)
        .Def(Op("ConvTranspose", {"X", "W", "b"}, {"Y"}, args))
        .Inputs({In(x), In({x[1], mg, kern[0], kern[1]}), In({mg * g.group})})
        .Ref(ConvTransposeNdRef(g));
  };
  std::vector<Case> c = {
      ct2("dilation 2", {1, 2, 3, 3}, 2, {2, 2}, CT{{1, 1}, {2, 2}, {0, 0}, {0, 0}, {0, 0}},
          {Arg("kernel", 2), Arg("dilation", 2)}),
      ct2("dilation 2x3 stride 2 pads 1,0,2,1 adj 1", {2, 2, 3, 4}, 1, {3, 2},
          CT{{2, 2}, {2, 3}, {1, 0}, {2, 1}, {1, 1}},
          {Ints("kernels", {3, 2}), Ints("strides", {2, 2}), Ints("dilations", {2, 3}), Ints("pads", {1, 0, 2, 1}),
           Arg("adj", 1)}),
      ct2("dilation 3 group 2", {1, 4, 3, 3}, 1, {2, 2}, CT{{1, 1}, {3, 3}, {0, 0}, {0, 0}, {0, 0}, 2},
          {Arg("kernel", 2), Arg("dilation", 3), Arg("group", 2)}),
  };
  // 3-D (the N-D kernel, CPU only, no gradient): pads are [begins..., ends...].
  c.push_back(Case("3-D k3x2x2 stride 2,1,2 dilation 1,2,1 pads 1,0,0,0,1,1 adjs 1,0,1")
                  .Def(Op("ConvTranspose", {"X", "W", "b"}, {"Y"},
                          {Ints("kernels", {3, 2, 2}), Ints("strides", {2, 1, 2}), Ints("dilations", {1, 2, 1}),
                           Ints("pads", {1, 0, 0, 0, 1, 1}), Ints("adjs", {1, 0, 1})}))
                  .Inputs({In({2, 2, 3, 4, 2}), In({2, 3, 3, 2, 2}), In({3})})
                  .Ref(ConvTransposeNdRef(CT{{2, 1, 2}, {1, 2, 1}, {1, 0, 0}, {0, 1, 1}, {1, 0, 1}}))
                  .NoGrad()
                  .CpuOnly());
  c.push_back(Case("3-D group 2, no bias")
                  .Def(Op("ConvTranspose", {"X", "W"}, {"Y"}, {Ints("kernels", {2, 2, 2}), Arg("group", 2)}))
                  .Inputs({In({1, 4, 2, 3, 2}), In({4, 1, 2, 2, 2})})
                  .Ref(ConvTransposeNdRef(CT{{1, 1, 1}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, 2}))
                  .NoGrad()
                  .CpuOnly());
  return c;
}

HN_OP_CASES(ConformanceMatMul) {
  auto bmm = [](const std::string& label, std::vector<int64_t> a, std::vector<int64_t> b) {
    return Case(label)
        .Def(Op("BatchMatMul", {"A", "B"}, {"Y"}, {Arg("broadcast", 1)}))
        .Inputs({In(a), In(b)})
        .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
          return RefTensors{NumpyMatMul(in[0], in[1], DataType::Float, [](int, int64_t, int64_t) { return 0.0; })};
        })
        .NoGrad();  // BatchMatMul's gradient refuses broadcast=1 (as Caffe2's)
  };
  const auto u8 = DataType::UInt8, i8 = DataType::Int8;
  auto mmi = [](const std::string& label, std::vector<InputSpec> in, std::vector<caffe2::Argument> args = {}) {
    std::vector<std::string> names{"A", "B", "Za", "Zb"};
    names.resize(in.size());
    return Case(label).Def(Op("MatMulInteger", names, {"Y"}, args)).Inputs(in).Ref(MatMulIntegerRef).NoGrad().CpuOnly();
  };
  return {
      bmm("stretch [2, 1, 3, 4] x [1, 5, 4, 2]", {2, 1, 3, 4}, {1, 5, 4, 2}),
      bmm("stretch and rank [3, 1, 2, 4] x [2, 4, 5]", {3, 1, 2, 4}, {2, 4, 5}),
      bmm("[2, 1, 3, 4] x vector [4]", {2, 1, 3, 4}, {4}),
      bmm("vector x vector: [1]", {5}, {5}),
      bmm("stretch both ways [1, 3, 1, 2, 4] x [2, 1, 5, 4, 3]", {1, 3, 1, 2, 4}, {2, 1, 5, 4, 3}),
      mmi("uint8, scalar zero points", {Bytes({4, 3}, u8), Bytes({3, 2}, u8), In({}, u8).Values({12}),
                                        In({1}, u8).Values({0})}),
      mmi("uint8, no zero points", {Bytes({2, 5}, u8), Bytes({5, 3}, u8)}),
      mmi("int8 x uint8, per-row and per-column zero points", {Bytes({3, 4}, i8), Bytes({4, 5}, u8),
                                                               Bytes({3}, i8), Bytes({5}, u8)}),
      mmi("int8, batch broadcast with stretching, per-batch rows", {Bytes({2, 1, 3, 4}, i8), Bytes({1, 2, 4, 2}, i8),
                                                                    Bytes({2, 1, 3, 1}, i8), In({}, i8).Values({-5})}),
      mmi("two vectors: a 0-D result",
          {Bytes({6}, i8), Bytes({6}, i8), In({}, i8).Values({3}), In({}, i8).Values({-2})}),
      mmi("1-D A, only b's zero point (position args)", {Bytes({4}, u8), Bytes({2, 4, 3}, u8), Bytes({2, 1, 3}, u8)},
          {Arg("a_zero_point_input", -1), Arg("b_zero_point_input", 2)}),
  };
}

namespace {
Tensor Bytes0(std::vector<int64_t> sh, DataType t) {
  Tensor x(sh, t);
  std::memset(x.raw_mutable_data(t), 0, x.nbytes());
  return x;
}
Tensor Strings(std::vector<int64_t> sh, const std::vector<std::string>& v) {
  Tensor x(sh, DataType::String);
  for (size_t i = 0; i < v.size(); ++i) x.mutable_data<std::string>()[i] = v[i];
  return x;
}
}  // namespace

TEST_CASE("MatMulInteger and N-D ConvTranspose refuse bad inputs, naming op and blob", "[conformance_ops]") {
  using optest::RunError;
  const auto u8 = DataType::UInt8, i8 = DataType::Int8;
  const auto mmi = Op("MatMulInteger", {"A", "B", "Za", "Zb"}, {"Y"});
  CHECK_THAT(RunError(mmi, {Bytes0({2, 3}, u8), Bytes0({4, 2}, u8), Bytes0({}, u8), Bytes0({}, u8)}),
             Catch::Contains("MatMulInteger") && Catch::Contains("inner dims"));
  CHECK_THAT(RunError(mmi, {Bytes0({2, 3}, DataType::Float), Bytes0({3, 2}, u8), Bytes0({}, u8), Bytes0({}, u8)}),
             Catch::Contains("'A'") && Catch::Contains("uint8 or int8"));
  CHECK_THAT(RunError(mmi, {Bytes0({2, 3}, u8), Bytes0({3, 2}, u8), Bytes0({}, i8), Bytes0({}, u8)}),
             Catch::Contains("'Za'") && Catch::Contains("int8"));
  CHECK_THAT(RunError(mmi, {Bytes0({2, 3}, u8), Bytes0({3, 2}, u8), Bytes0({}, u8), Bytes0({3}, u8)}),
             Catch::Contains("'Zb'") && Catch::Contains("per column"));
  CHECK_THAT(RunError(mmi, {Bytes0({2, 2, 3}, u8), Bytes0({3, 3, 2}, u8), Bytes0({}, u8), Bytes0({}, u8)}),
             Catch::Contains("batch dims differ"));
  CHECK_THAT(RunError(Op("MatMulInteger", {"A", "B"}, {"Y"}, {Arg("b_zero_point_input", 5)}),
                      {Bytes0({2, 3}, u8), Bytes0({3, 2}, u8)}),
             Catch::Contains("b_zero_point_input 5"));

  const auto ct3 = Op("ConvTranspose", {"X", "W"}, {"Y"}, {Ints("kernels", {2, 2, 2})});
  auto zeros = [](std::vector<int64_t> s) { return Bytes0(std::move(s), DataType::Float); };
  CHECK_THAT(RunError(ct3, {zeros({1, 2, 3, 3, 3}), zeros({2, 1, 3, 2, 2})}),
             Catch::Contains("'W'") && Catch::Contains("differs from argument kernels"));
  CHECK_THAT(RunError(ct3, {zeros({1, 2, 3, 3}), zeros({2, 1, 2, 2, 2})}),
             Catch::Contains("'X'") && Catch::Contains("rank 5"));
  CHECK_THAT(RunError(Op("ConvTranspose", {"X", "W"}, {"Y"}, {Ints("kernels", {2, 2, 2}), Ints("pads", {1, 1})}),
                      {zeros({1, 2, 3, 3, 3}), zeros({2, 1, 2, 2, 2})}),
             Catch::Contains("'pads' has 2 values"));
  // Every other kernel (the gradient, the 2-D parsers of other engines) refuses the N-D form as kUnsupported.
  auto m = (*GradientRegistry::Find("ConvTranspose"))(ct3, {"Y_grad"});
  const auto gdefs = m->GetGradientDefs();
  REQUIRE(!gdefs.empty());
  Workspace ws;
  for (const char* b : {"X", "W", "Y_grad"}) *ws.CreateBlob(b)->GetMutable<Tensor>() = zeros({1, 2, 2, 2, 2});
  try {
    CreateOperator(gdefs[0], &ws)->Run();
    FAIL("the N-D ConvTransposeGradient ran");
  } catch (const Error& e) {
    CHECK(e.kind() == ErrorKind::kUnsupported);
    CHECK_THAT(e.what(), Catch::Contains("ConvTransposeGradient") &&
                             Catch::Contains("N-D form runs only in ConvTranspose's CPU"));
  }
}

TEST_CASE("EQ, NE and LT compare string tensors on CPU (legacy and numpy broadcast)", "[conformance_ops]") {
  Workspace ws;
  const std::vector<std::string> a{"apple", "", "pear", "fig", "kiwi", "apple"}, b{"apple", "kiwi", "Pear"};
  *ws.CreateBlob("A")->GetMutable<Tensor>() = Strings({2, 3}, a);
  *ws.CreateBlob("B")->GetMutable<Tensor>() = Strings({3}, b);
  *ws.CreateBlob("C")->GetMutable<Tensor>() = Strings({2, 1}, {"fig", "pear"});
  for (const char* type : {"EQ", "NE", "LT"}) {
    for (int legacy = 0; legacy < 2; ++legacy) {
      INFO(type << " legacy broadcast " << legacy);
      optest::RunOp(ws, Op(type, {"A", "B"}, {"Y"}, legacy ? std::vector<caffe2::Argument>{Arg("broadcast", 1)}
                                                            : std::vector<caffe2::Argument>{}));
      const Tensor& y = ws.GetBlobOrThrow("Y").GetTensor();
      REQUIRE(y.dtype() == DataType::Bool);
      REQUIRE(y.shape() == std::vector<int64_t>{2, 3});
      for (int i = 0; i < 6; ++i) {
        const std::string &x = a[i], &z = b[i % 3];
        const bool want = std::string(type) == "EQ" ? x == z : std::string(type) == "NE" ? x != z : x < z;
        CHECK(y.data<bool>()[i] == want);
      }
    }
  }
  optest::RunOp(ws, Op("EQ", {"C", "B"}, {"Z"}));  // [2, 1] vs [3] -> [2, 3]
  const Tensor& z = ws.GetBlobOrThrow("Z").GetTensor();
  REQUIRE(z.shape() == std::vector<int64_t>{2, 3});
  for (int i = 0; i < 6; ++i) CHECK(z.data<bool>()[i] == ((i < 3 ? "fig" : "pear") == b[i % 3]));
  CHECK_THAT(optest::RunError(Op("EQ", {"A", "F"}, {"Y"}), {Strings({2}, {"a", "b"}), Bytes0({2}, DataType::Float)}),
             Catch::Contains("EQ") && Catch::Contains("'F'"));
}

}  // namespace harness
}  // namespace hetnet
