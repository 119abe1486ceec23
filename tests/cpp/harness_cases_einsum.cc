// Harness cases for Det (operators/einsum_op.*; reference: cofactor expansion) and Einsum: each
// equation's reference is its own hand-written loop (matmul, batched matmul, diagonal, trace,
// transpose, row sums, inner product, a broadcast "..."), not a general einsum. The [einsum] TEST_CASE checks refusals of bad equations and shapes.
#include <catch2/catch.hpp>

#include <string>

#include "core/operator.h"
#include "core/workspace.h"
#include "tests/cpp/op_harness.h"

namespace hetnet {
namespace harness {
namespace {

caffe2::OperatorDef Einsum(const std::string& eq, int inputs) {
  std::vector<std::string> ins;
  for (int i = 0; i < inputs; ++i) ins.push_back("X" + std::to_string(i));
  return Op("Einsum", ins, {"Y"}, {Arg("equation", eq)});
}

RefTensors MatMulRef(const caffe2::OperatorDef&, const RefTensors& in) {  // "bij,bjk->bik" (b optional)
  const RefTensor &A = in[0], &B = in[1];
  const bool batched = A.shape.size() == 3;
  const int64_t b = batched ? A.shape[0] : 1, m = A.dim(-2), k = A.dim(-1), n = B.dim(-1);
  RefTensor Y(batched ? std::vector<int64_t>{b, m, n} : std::vector<int64_t>{m, n}, A.dtype);
  for (int64_t q = 0; q < b; ++q)
    for (int64_t i = 0; i < m; ++i)
      for (int64_t j = 0; j < n; ++j)
        for (int64_t t = 0; t < k; ++t) Y[(q * m + i) * n + j] += A[(q * m + i) * k + t] * B[(q * k + t) * n + j];
  return {Y};
}

// Determinant by cofactor expansion along the first row (not elimination).
double Cofactor(const std::vector<double>& a, int64_t m) {
  if (m == 1) return a[0];
  double det = 0;
  for (int64_t j = 0; j < m; ++j) {
    std::vector<double> minor;
    for (int64_t r = 1; r < m; ++r)
      for (int64_t c = 0; c < m; ++c)
        if (c != j) minor.push_back(a[r * m + c]);
    det += (j % 2 ? -1 : 1) * a[j] * Cofactor(minor, m - 1);
  }
  return det;
}

RefTensors DetRef(const caffe2::OperatorDef&, const RefTensors& in) {
  const int64_t m = in[0].shape.back();
  RefTensor Y(std::vector<int64_t>(in[0].shape.begin(), in[0].shape.end() - 2), in[0].dtype);
  for (int64_t b = 0; b < Y.numel(); ++b)
    Y[b] = Cofactor(std::vector<double>(in[0].data.begin() + b * m * m, in[0].data.begin() + (b + 1) * m * m), m);
  return {Y};
}

}  // namespace

HN_OP_CASES(Det) {
  std::vector<Case> c = {
      Case("batch of 4x4").Def(Op("Det", {"X"}, {"Y"})).Inputs({In({2, 3, 4, 4})}).Ref(DetRef),
      Case("3x3 double").Def(Op("Det", {"X"}, {"Y"})).Inputs({In({3, 3}, DataType::Double)}).Ref(DetRef),
      Case("singular (repeated row)").Def(Op("Det", {"X"}, {"Y"})).Inputs({In({3, 3}).Values({1, 2, 3, 4, 5, 6, 1, 2, 3})})
          .Ref(DetRef),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

HN_OP_CASES(Einsum) {
  std::vector<Case> c = {
      Case("matmul").Def(Einsum("ij,jk->ik", 2)).Inputs({In({3, 4}), In({4, 5})}).Ref(MatMulRef),
      Case("batched matmul, double").Def(Einsum("bij, bjk -> bik", 2)).Inputs({In({2, 3, 4}, DataType::Double), In({2, 4, 2}, DataType::Double)})
          .Ref(MatMulRef),
      Case("implicit matmul, int64").Def(Einsum("ij,jk", 2))
          .Inputs({In({2, 3}, DataType::Int64).Range(-9, 9), In({3, 2}, DataType::Int64).Range(-9, 9)}).Ref(MatMulRef),
      Case("batch diagonal").Def(Einsum("...ii->...i", 1)).Inputs({In({2, 3, 4, 4})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor Y({2, 3, 4});
            for (int64_t p = 0; p < 6; ++p)
              for (int64_t i = 0; i < 4; ++i) Y[p * 4 + i] = in[0][(p * 4 + i) * 4 + i];
            return RefTensors{Y};
          }),
      Case("trace (implicit)").Def(Einsum("ii", 1)).Inputs({In({5, 5})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor Y(std::vector<int64_t>{});
            for (int64_t i = 0; i < 5; ++i) Y[0] += in[0][i * 5 + i];
            return RefTensors{Y};
          }),
      Case("transpose").Def(Einsum("ij->ji", 1)).Inputs({In({3, 5})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor Y({5, 3});
            for (int64_t i = 0; i < 3; ++i)
              for (int64_t j = 0; j < 5; ++j) Y[j * 3 + i] = in[0][i * 5 + j];
            return RefTensors{Y};
          }),
      Case("row sums").Def(Einsum("ij->i", 1)).Inputs({In({4, 6}, DataType::Int32).Range(-50, 50)})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor Y({4}, DataType::Int32);
            for (int64_t i = 0; i < 24; ++i) Y[i / 6] += in[0][i];
            return RefTensors{Y};
          }),
      Case("inner product").Def(Einsum("i,i", 2)).Inputs({In({7}), In({7})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor Y(std::vector<int64_t>{});
            for (int64_t i = 0; i < 7; ++i) Y[0] += in[0][i] * in[1][i];
            return RefTensors{Y};
          }),
      Case("broadcast ... against a vector").Def(Einsum("...j,j->...", 2)).Inputs({In({2, 1, 3}), In({3})})
          .Ref([](const caffe2::OperatorDef&, const RefTensors& in) {
            RefTensor Y({2, 1});
            for (int64_t p = 0; p < 2; ++p)
              for (int64_t j = 0; j < 3; ++j) Y[p] += in[0][p * 3 + j] * in[1][j];
            return RefTensors{Y};
          }),
  };
  for (auto& k : c) k.NoGrad().CpuOnly();
  return c;
}

namespace {
std::string RunError(const caffe2::OperatorDef& def, const std::vector<std::vector<int64_t>>& shapes,
                     DataType t = DataType::Float) {
  Workspace ws;
  for (size_t i = 0; i < shapes.size(); ++i) {
    Tensor x(shapes[i], t);
    x.raw_mutable_data(t);
    *ws.CreateBlob(def.input(i))->GetMutable<Tensor>() = x;
  }
  try {
    CreateOperator(def, &ws)->Run();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "";
}
}  // namespace

TEST_CASE("Einsum refuses bad equations, shapes and sizes, naming op and blob", "[einsum]") {
  CHECK_THAT(RunError(Einsum("ij,jk->ik", 2), {{2, 3}, {4, 5}}), Catch::Contains("Einsum") && Catch::Contains("'X1'"));
  CHECK_THAT(RunError(Einsum("ij->ik", 1), {{2, 3}}), Catch::Contains("output label 'k'"));
  CHECK_THAT(RunError(Einsum("ij", 1), {{2, 3, 4}}), Catch::Contains("does not fit"));
  CHECK_THAT(RunError(Einsum("i1->i", 1), {{2, 3}}), Catch::Contains("letters"));
  CHECK_THAT(RunError(Einsum("ij,jk->ik", 1), {{2, 3}}), Catch::Contains("2 input terms for 1"));
  CHECK_THAT(RunError(Einsum("ij->i", 1), {{2, 3}}, DataType::Bool), Catch::Contains("'X0'") && Catch::Contains("bool"));
  CHECK_THAT(RunError(Einsum("ab,cd,ef->abcdef", 3), {{2000, 2000}, {2000, 2000}, {2000, 2000}}),
             Catch::Contains("2^32") || Catch::Contains("too many"));
}

}  // namespace harness
}  // namespace hetnet
