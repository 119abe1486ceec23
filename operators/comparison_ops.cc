// EQ, NE, GT, GE, LT, LE: schemas and CPU kernels (see comparison_ops.h).
#include "operators/comparison_ops.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

namespace {
// Loops over [pre, n, post] and over rows of the numpy plan: no division per element.
template <CompareOp Op, typename T>
void CompareLoop(int64_t pre, int64_t n, int64_t post, const T* a, const T* b, bool* c) {
  if (post == 1) {  // B along the innermost dim: rows of n
    for (int64_t p = 0; p < pre; ++p)
      for (int64_t j = 0; j < n; ++j) c[p * n + j] = CompareValues<Op, T>(a[p * n + j], b[j]);
    return;
  }
  for (int64_t p = 0; p < pre; ++p)
    for (int64_t j = 0; j < n; ++j) {
      const T bj = b[j];
      const int64_t off = (p * n + j) * post;
      for (int64_t q = 0; q < post; ++q) c[off + q] = CompareValues<Op, T>(a[off + q], bj);
    }
}
template <CompareOp Op, typename T>
void NumpyCompareLoop(const math::BroadcastIndex& ix, int64_t total, const T* a, const T* b, bool* c) {
  math::ForEachBroadcastRow(ix, total, [&](int64_t base, const int64_t* off, int64_t inner, const int64_t* step) {
    const T* ap = a + off[0];
    const T* bp = b + off[1];
    bool* cp = c + base;
    for (int64_t q = 0; q < inner; ++q) cp[q] = CompareValues<Op, T>(ap[q * step[0]], bp[q * step[1]]);
  });
}
}  // namespace

#define HN_COMPARE_CPU(T)                                                                                   \
  template <>                                                                                               \
  void BroadcastCompare<T, CPUContext>(CompareOp op, int64_t pre, int64_t n, int64_t post, const T* a,      \
                                       const T* b, bool* c, CPUContext*) {                                  \
    switch (op) {                                                                                           \
      case CompareOp::EQ: return CompareLoop<CompareOp::EQ, T>(pre, n, post, a, b, c);                       \
      case CompareOp::NE: return CompareLoop<CompareOp::NE, T>(pre, n, post, a, b, c);                       \
      case CompareOp::GT: return CompareLoop<CompareOp::GT, T>(pre, n, post, a, b, c);                       \
      case CompareOp::GE: return CompareLoop<CompareOp::GE, T>(pre, n, post, a, b, c);                       \
      case CompareOp::LT: return CompareLoop<CompareOp::LT, T>(pre, n, post, a, b, c);                       \
      case CompareOp::LE: return CompareLoop<CompareOp::LE, T>(pre, n, post, a, b, c);                       \
    }                                                                                                       \
  }                                                                                                         \
  template <>                                                                                               \
  void NumpyBroadcastCompare<T, CPUContext>(CompareOp op, const math::BroadcastIndex& ix, int64_t total,     \
                                            const T* a, const T* b, bool* c, CPUContext*) {                 \
    switch (op) {                                                                                           \
      case CompareOp::EQ: return NumpyCompareLoop<CompareOp::EQ, T>(ix, total, a, b, c);                     \
      case CompareOp::NE: return NumpyCompareLoop<CompareOp::NE, T>(ix, total, a, b, c);                     \
      case CompareOp::GT: return NumpyCompareLoop<CompareOp::GT, T>(ix, total, a, b, c);                     \
      case CompareOp::GE: return NumpyCompareLoop<CompareOp::GE, T>(ix, total, a, b, c);                     \
      case CompareOp::LT: return NumpyCompareLoop<CompareOp::LT, T>(ix, total, a, b, c);                     \
      case CompareOp::LE: return NumpyCompareLoop<CompareOp::LE, T>(ix, total, a, b, c);                     \
    }                                                                                                       \
  }
HN_COMPARE_CPU(float)
HN_COMPARE_CPU(double)
HN_COMPARE_CPU(int32_t)
HN_COMPARE_CPU(int64_t)
HN_COMPARE_CPU(bool)
HN_COMPARE_CPU(uint32_t)
HN_COMPARE_CPU(uint64_t)
HN_COMPARE_CPU(std::string)
#undef HN_COMPARE_CPU

namespace {
// Output: BOOL of the shape the kernel gives (A's, or the numpy broadcast shape).
std::vector<TensorInfo> ComparisonShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  return {TensorInfo::Of(BinaryOutputShape(def, in[0].dims, in[1].dims), DataType::Bool)};
}
}  // namespace

#define HN_COMPARISON_OP(Name, Symbol, Words)                                                                    \
  OPERATOR_SCHEMA(Name).NumInputs(2).NumOutputs(1).TensorInference(ComparisonShape)                            \
      .SetDoc("C = (A " Symbol " B) elementwise (Caffe2's " #Name ": " Words "). Inputs A, B of one dtype: "   \
              "float32, float64, int32, int64 or bool (uint32, uint64, float16, bfloat16, string on CPU); output C: BOOL. Legacy broadcast: with broadcast=1, B's "   \
              "shape (leading and trailing 1s stripped) matches a contiguous run of A's dims starting at axis " \
              "(default: A's trailing dims), a one-element B broadcasts everywhere, C has A's shape; without "  \
              "broadcast (or 0): equal shapes, or numpy broadcasting of both (C of the broadcast shape). IEEE: a comparison with NaN is false, except "   \
              "NE, which is true. Not in place (the output is BOOL). No gradient.");                            \
  NO_GRADIENT(Name);                                                                                           \
  REGISTER_CPU_OPERATOR(Name, ComparisonOp<CPUContext, CompareOp::Name>);

HN_COMPARISON_OP(EQ, "==", "equal")
HN_COMPARISON_OP(NE, "!=", "not equal")
HN_COMPARISON_OP(GT, ">", "greater than")
HN_COMPARISON_OP(GE, ">=", "greater than or equal")
HN_COMPARISON_OP(LT, "<", "less than")
HN_COMPARISON_OP(LE, "<=", "less than or equal")
#undef HN_COMPARISON_OP

}  // namespace hetnet
