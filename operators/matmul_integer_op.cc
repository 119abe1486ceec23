#include "operators/matmul_integer_op.h"

#include <vector>

#include "core/checked_size.h"
#include "core/gradient.h"
#include "core/op_schema.h"
#include "operators/matmul_ops.h"

namespace hetnet {

namespace {

bool IsInt8Like(DataType t) { return t == DataType::Int8 || t == DataType::UInt8; }

// Tensor t (int8 / uint8) widened to int32.
std::vector<int32_t> Widen(const Tensor& t) {
  std::vector<int32_t> v(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::Int8) std::copy(t.data<int8_t>(), t.data<int8_t>() + t.numel(), v.begin());
  else std::copy(t.data<uint8_t>(), t.data<uint8_t>() + t.numel(), v.begin());
  return v;
}

// The zero point of operand `which` (0: A, per row; 1: B, per column) as one value per row/column of every batch
// of the operand: zp[batch * count + j], or a single value (size 1). Empty when the input is absent.
std::vector<int32_t> ZeroPoints(const OperatorBase& op, int input, int which, const Tensor& operand, int64_t count) {
  if (input < 0) return {0};
  HN_ENFORCE(input < op.InputSize(), op.type(), ": ", which ? "b" : "a", "_zero_point_input ", input,
             " is not an input (the op has ", op.InputSize(), ")");
  const Tensor& z = op.InputTensor(input);
  const std::string name = op.def().input(input);
  HN_ENFORCE(z.dtype() == operand.dtype(), op.type(), ": zero point '", name, "' is ", DataTypeName(z.dtype()),
             " but input ", which, " ('", op.def().input(which), "') is ", DataTypeName(operand.dtype()));
  if (z.numel() == 1) return Widen(z);
  if (z.ndim() == 1 && z.dim(0) == count && operand.ndim() >= 2) return Widen(z);  // per row / column, every batch
  std::vector<int64_t> want = operand.shape();  // A [..., M, 1]; B [..., 1, N]
  if (want.size() >= 2) want[want.size() - 1 - which] = 1;
  HN_ENFORCE(want.size() >= 2 && z.shape() == want, op.type(), ": zero point '", name, "' has shape ", z.ShapeString(),
             "; one value, [", count, "] or ", ShapeToString(want), " (per ", which ? "column" : "row",
             " of input ", which, " '", op.def().input(which), "' ", operand.ShapeString(), ") is required");
  return Widen(z);
}

}  // namespace

void MatMulIntegerOp::RunOnDevice() {
  const Tensor &A = Input(0), &B = Input(1);
  for (int i : {0, 1})
    HN_ENFORCE(IsInt8Like(Input(i).dtype()) && Input(i).ndim() >= 1, type(), ": input ", i, " ('", def().input(i),
               "') is ", DataTypeName(Input(i).dtype()), " ", Input(i).ShapeString(),
               "; uint8 or int8 of rank >= 1 is required");
  const BatchMatMulPlan p = ComputeBatchMatMulPlan(def(), A.shape(), B.shape(), false, false, true);
  const int azp_in = GetSingleArgument<int>("a_zero_point_input", InputSize() > 2 ? 2 : -1),
            bzp_in = GetSingleArgument<int>("b_zero_point_input", InputSize() > 3 ? 3 : -1);
  const std::vector<int32_t> azp = ZeroPoints(*this, azp_in, 0, A, p.M), bzp = ZeroPoints(*this, bzp_in, 1, B, p.N);
  const std::vector<int32_t> a = Widen(A), b = Widen(B);
  CheckedNumel(p.y_shape, "MatMulInteger output");
  const bool dot = A.ndim() == 1 && B.ndim() == 1;  // numpy: two vectors give a 0-D result
  int32_t* y = Output(0, dot ? std::vector<int64_t>{} : p.y_shape, DataType::Int32)->mutable_data<int32_t>();
  const int64_t M = p.M, N = p.N, K = p.K;
  const bool a_rows_per_batch = static_cast<int64_t>(azp.size()) > M;
  const bool b_cols_per_batch = static_cast<int64_t>(bzp.size()) > N;
  std::vector<int64_t> col(static_cast<size_t>(N));
  for (int64_t t = 0; t < p.batches; ++t) {
    const int64_t ab = p.a_at(t), bb = p.b_at(t);
    const int32_t* at = a.data() + ab * M * K;
    const int32_t* bt = b.data() + bb * K * N;
    for (int64_t m = 0; m < M; ++m) {
      const int64_t za = azp.size() == 1 ? azp[0] : azp[(a_rows_per_batch ? ab * M : 0) + m];
      std::fill(col.begin(), col.end(), 0);
      for (int64_t k = 0; k < K; ++k) {
        const int64_t av = at[m * K + k] - za;
        for (int64_t n = 0; n < N; ++n) {
          const int64_t zb = bzp.size() == 1 ? bzp[0] : bzp[(b_cols_per_batch ? bb * N : 0) + n];
          col[n] += av * (bt[k * N + n] - zb);
        }
      }
      for (int64_t n = 0; n < N; ++n)
        y[(t * M + m) * N + n] = static_cast<int32_t>(static_cast<uint32_t>(static_cast<uint64_t>(col[n])));
    }
  }
}

OPERATOR_SCHEMA(MatMulInteger).NumInputs(2, 4).NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      if (!in[0].known || !in[1].known) return std::vector<TensorInfo>{TensorInfo::Unknown()};
      return std::vector<TensorInfo>{TensorInfo::Of(
          in[0].dims.size() == 1 && in[1].dims.size() == 1
              ? std::vector<int64_t>{}
              : ComputeBatchMatMulPlan(def, in[0].dims, in[1].dims, false, false, true).y_shape,
          DataType::Int32)};
    })
    .SetDoc("ONNX's MatMulInteger: uint8/int8 matrix product minus zero points (per tensor, per row of A, per column "
            "of B), numpy matmul broadcasting; int32 output. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(MatMulInteger, MatMulIntegerOp);
NO_GRADIENT(MatMulInteger);

}  // namespace hetnet
