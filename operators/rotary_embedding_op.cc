#include "operators/rotary_embedding_op.h"

#include "core/op_schema.h"
#include "operators/half_compute.h"

namespace hetnet {

RotaryEmbeddingOp::RotaryEmbeddingOp(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CPUContext>(def, ws),
      interleaved_(GetSingleArgument<int64_t>("interleaved", 0) != 0),
      has_position_ids_(GetSingleArgument<int64_t>("has_position_ids", 0) != 0),
      rotary_dim_(GetSingleArgument<int64_t>("rotary_embedding_dim", 0)),
      num_heads_(GetSingleArgument<int64_t>("num_heads", 0)) {
  HN_ENFORCE(def.input_size() == 3 + has_position_ids_, def.type(), ": has_position_ids says ", 3 + has_position_ids_,
             " inputs, the op has ", def.input_size());
  HN_ENFORCE(rotary_dim_ >= 0 && num_heads_ >= 0, def.type(), ": rotary_embedding_dim ", rotary_dim_, " and num_heads ",
             num_heads_, " must not be negative");
}

void RotaryEmbeddingOp::RunOnDevice() {
  // X and the caches; position ids (input 3) are integers.
  DispatchFloatCompute(*this, {1, 2}, [this](auto t, auto c) { Compute<decltype(t), decltype(c)>(); });
}

template <typename T, typename C>
void RotaryEmbeddingOp::Compute() {
  const Tensor &X = Input(0), &Cos = Input(1), &Sin = Input(2);
  auto blob = [&](int i) { return std::string(" ('") + def().input(i) + "')"; };
  HN_ENFORCE(X.ndim() == 3 || X.ndim() == 4, type(), ": X", blob(0), " has shape ", X.ShapeString(),
             "; 4-D [batch, heads, seq, head_size] or 3-D [batch, seq, heads * head_size] is required");
  const bool packed = X.ndim() == 3;
  HN_ENFORCE(!packed || (num_heads_ > 0 && X.dim(2) % num_heads_ == 0), type(), ": 3-D X", blob(0), " ",
             X.ShapeString(), " needs arg num_heads > 0 dividing its last dim (got ", num_heads_, ")");
  const int64_t B = X.dim(0), H = packed ? num_heads_ : X.dim(1), S = X.dim(packed ? 1 : 2);
  const int64_t D = packed ? X.dim(2) / H : X.dim(3), R = rotary_dim_ ? rotary_dim_ : D, half = R / 2;
  HN_ENFORCE(R % 2 == 0 && R <= D, type(), ": rotary_embedding_dim ", R, " must be even and at most the head size ", D);
  const int64_t* pos = nullptr;
  if (has_position_ids_) {
    const Tensor& P = Input(3);
    HN_ENFORCE(P.dtype() == DataType::Int64 && P.ndim() == 2 && P.dim(0) == B && P.dim(1) == S, type(),
               ": position_ids", blob(3), " is ", DataTypeName(P.dtype()), " ", P.ShapeString(), "; int64 [", B, ", ",
               S, "] is required");
    pos = P.data<int64_t>();
  }
  for (int i : {1, 2}) {
    const Tensor& Ct = Input(i);
    const bool ok = has_position_ids_ ? Ct.ndim() == 2 && Ct.dim(1) == half
                                      : Ct.ndim() == 3 && Ct.dim(0) == B && Ct.dim(1) == S && Ct.dim(2) == half;
    HN_ENFORCE(ok, type(), ": ", i == 1 ? "cos" : "sin", "_cache", blob(i), " has shape ", Ct.ShapeString(), "; ",
               has_position_ids_ ? "[max_position, " : "[" + std::to_string(B) + ", " + std::to_string(S) + ", ", half,
               "] is required (rotary_embedding_dim / 2 = ", half, ")");
  }
  const int64_t positions = has_position_ids_ ? Cos.dim(0) : 0;
  if (pos)
    for (int64_t k = 0; k < B * S; ++k)
      HN_ENFORCE(pos[k] >= 0 && pos[k] < positions, type(), ": position_ids", blob(3), " holds ", pos[k],
                 ", outside the caches' [0, ", positions, ")");
  const T *x = X.data<T>(), *cs = Cos.data<T>(), *sn = Sin.data<T>();
  T* y = Output(0, X.sizes(), X.dtype())->template mutable_data<T>();
  for (int64_t b = 0; b < B; ++b)
    for (int64_t s = 0; s < S; ++s) {
      const int64_t row = (pos ? pos[b * S + s] : b * S + s) * half;  // the cache row
      for (int64_t h = 0; h < H; ++h) {
        const int64_t base = packed ? (b * S + s) * H * D + h * D : ((b * H + h) * S + s) * D;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = base + (interleaved_ ? 2 * k : k), i2 = base + (interleaved_ ? 2 * k + 1 : k + half);
          const C c = ToCompute<C>(cs[row + k]), sv = ToCompute<C>(sn[row + k]);
          const C x1 = ToCompute<C>(x[i1]), x2 = ToCompute<C>(x[i2]);
          y[i1] = FromCompute<T, C>(c * x1 - sv * x2);
          y[i2] = FromCompute<T, C>(sv * x1 + c * x2);
        }
        for (int64_t e = R; e < D; ++e) y[base + e] = x[base + e];
      }
    }
}

OPERATOR_SCHEMA(RotaryEmbedding).NumInputs(3, 4).NumOutputs(1)
    .SetDoc("ONNX's RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim features of each head of "
            "X (4-D [B, H, S, D] or 3-D with num_heads) by cos/sin caches, halves or interleaved pairs; "
            "position_ids present when has_position_ids=1. float32/64/16, bfloat16. CPU only; no gradient.");
REGISTER_CPU_OPERATOR(RotaryEmbedding, RotaryEmbeddingOp);

}  // namespace hetnet
