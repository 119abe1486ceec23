#include "operators/qlinear_matmul_op.h"

#include <cmath>
#include <vector>

#include "core/checked_size.h"
#include "core/half.h"
#include "core/op_schema.h"
#include "device/broadcast.h"

namespace hetnet {

namespace {

// Element 0 of input i (int8/uint8 or float32/float16 scalar) as double.
double Scalar(const OperatorBase& op, int i, bool is_scale) {
  const Tensor& t = op.InputTensor(i);
  HN_ENFORCE(t.numel() == 1, op.type(), ": input ", i, " ('", op.def().input(i), "') has shape ", t.ShapeString(),
             "; one value (per-tensor quantization) is required");
  switch (t.dtype()) {
    case DataType::Float: return t.data<float>()[0];
    case DataType::Float16: return HalfToFloat(t.data<Half>()[0]);
    case DataType::Int8: if (!is_scale) return t.data<int8_t>()[0]; break;
    case DataType::UInt8: if (!is_scale) return t.data<uint8_t>()[0]; break;
    default: break;
  }
  HN_THROW(kInvalidArgument, op.type(), ": input ", i, " ('", op.def().input(i), "') is ", DataTypeName(t.dtype()), "; ",
           is_scale ? "float32 or float16" : "int8 or uint8", " is required");
}

int64_t Quantized(const Tensor& t, int64_t k) {
  return t.dtype() == DataType::Int8 ? t.data<int8_t>()[k] : t.data<uint8_t>()[k];
}

}  // namespace

void QLinearMatMulOp::RunOnDevice() {
  const Tensor &A = Input(0), &B = Input(3);
  for (int i : {0, 3})
    HN_ENFORCE((Input(i).dtype() == DataType::Int8 || Input(i).dtype() == DataType::UInt8) && Input(i).ndim() >= 2,
               type(), ": input ", i, " ('", def().input(i), "') is ", DataTypeName(Input(i).dtype()), " ",
               Input(i).ShapeString(), "; int8/uint8 of rank >= 2 is required");
  for (int z : {2, 5, 7}) Scalar(*this, z, false);
  const DataType st = Input(1).dtype(), yt = Input(7).dtype();
  for (int s : {4, 6})
    HN_ENFORCE(Input(s).dtype() == st, type(), ": the scales ('", def().input(1), "', '", def().input(4), "', '",
               def().input(6), "') must have one dtype");
  const int64_t M = A.dim(-2), K = A.dim(-1), N = B.dim(-1);
  HN_ENFORCE(B.dim(-2) == K, type(), ": a ('", def().input(0), "') ", A.ShapeString(), " and b ('", def().input(3),
             "') ", B.ShapeString(), " do not multiply (inner dims ", K, " and ", B.dim(-2), ")");
  const std::vector<int64_t> ab(A.sizes().begin(), A.sizes().end() - 2), bb(B.sizes().begin(), B.sizes().end() - 2);
  std::vector<int64_t> batch;
  HN_ENFORCE(math::NumpyBroadcastShape({ab, bb}, &batch), type(), ": batch dims of a ", A.ShapeString(), " and b ",
             B.ShapeString(), " do not broadcast");
  // The multiplier in the scales' dtype, rounded per step as the reference's numpy arithmetic.
  auto round = [&](double v) { return st == DataType::Float16 ? HalfToFloat(FloatToHalf(static_cast<float>(v)))
                                                              : static_cast<double>(static_cast<float>(v)); };
  const double mult = round(round(Scalar(*this, 1, true) * Scalar(*this, 4, true)) / Scalar(*this, 6, true));
  const double azp = Scalar(*this, 2, false), bzp = Scalar(*this, 5, false), yzp = Scalar(*this, 7, false);
  const double lo = yt == DataType::Int8 ? -128 : 0, hi = yt == DataType::Int8 ? 127 : 255;
  std::vector<int64_t> out = batch;
  out.push_back(M), out.push_back(N);
  Tensor* Y = Output(0, out, yt);
  const int64_t count = CheckedNumel(batch, "QLinearMatMul batch");
  CheckedNumel(out, "QLinearMatMul y");
  std::vector<int64_t> ai(static_cast<size_t>(count)), bi(static_cast<size_t>(count));
  for (int64_t q = 0; q < count; ++q) {  // batch q -> batch index of a and b (broadcast dims read 0)
    int64_t rem = q, oa = 0, ob = 0, sa = 1, sb = 1;
    for (int64_t d = static_cast<int64_t>(batch.size()) - 1; d >= 0; --d) {
      const int64_t i = rem % batch[d];
      rem /= batch[d];
      const int64_t da = d - (static_cast<int64_t>(batch.size()) - static_cast<int64_t>(ab.size()));
      const int64_t db = d - (static_cast<int64_t>(batch.size()) - static_cast<int64_t>(bb.size()));
      if (da >= 0) oa += (ab[da] == 1 ? 0 : i) * sa, sa *= ab[da];
      if (db >= 0) ob += (bb[db] == 1 ? 0 : i) * sb, sb *= bb[db];
    }
    ai[q] = oa, bi[q] = ob;
  }
  for (int64_t q = 0; q < count; ++q)
    for (int64_t m = 0; m < M; ++m)
      for (int64_t n = 0; n < N; ++n) {
        int64_t acc = 0;
        for (int64_t k = 0; k < K; ++k)
          acc += (Quantized(A, (ai[q] * M + m) * K + k) - static_cast<int64_t>(azp)) *
                 (Quantized(B, (bi[q] * K + k) * N + n) - static_cast<int64_t>(bzp));
        const double v = std::min(hi, std::max(lo, std::nearbyint(static_cast<double>(acc) * mult + yzp)));
        const int64_t at = (q * M + m) * N + n;
        if (yt == DataType::Int8) Y->mutable_data<int8_t>()[at] = static_cast<int8_t>(v);
        else Y->mutable_data<uint8_t>()[at] = static_cast<uint8_t>(v);
      }
}

OPERATOR_SCHEMA(QLinearMatMul).NumInputs(8).NumOutputs(1)
    .SetDoc("ONNX's QLinearMatMul: int8/uint8 matrix product (batch dims broadcast) requantized with per-tensor "
            "scales (float32/float16) and zero points; output in y_zero_point's dtype. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(QLinearMatMul, QLinearMatMulOp);

}  // namespace hetnet
