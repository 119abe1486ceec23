// EQ, NE, GT, GE, LT, LE: schemas and CPU kernels (see comparison_ops.h).
#include "operators/comparison_ops.h"

#include "core/argument.h"
#include "core/gradient.h"

namespace hetnet {

namespace {
template <CompareOp Op, typename T>
void CompareLoop(int64_t pre, int64_t n, int64_t post, const T* a, const T* b, bool* c) {
  const int64_t total = pre * n * post;
  for (int64_t i = 0; i < total; ++i) c[i] = CompareValues<Op, T>(a[i], b[(i / post) % n]);
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
  }
HN_COMPARE_CPU(float)
HN_COMPARE_CPU(double)
HN_COMPARE_CPU(int32_t)
HN_COMPARE_CPU(int64_t)
HN_COMPARE_CPU(bool)
#undef HN_COMPARE_CPU

namespace {
// Output: BOOL of A's shape, after the broadcast check the kernel does.
std::vector<TensorInfo> ComparisonShape(const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
  ArgumentHelper args(def);
  ComputeBroadcastPlan(def, in[0].dims, in[1].dims, args.GetSingleArgument<int>("broadcast", 0) != 0,
                       args.GetSingleArgument<int>("axis", -1));
  return {TensorInfo::Of(in[0].dims, DataType::Bool)};
}
}  // namespace

#define HN_COMPARISON_OP(Name, Symbol, Words)                                                                    \
  OPERATOR_SCHEMA(Name).NumInputs(2).NumOutputs(1).TensorInference(ComparisonShape)                            \
      .SetDoc("C = (A " Symbol " B) elementwise (Caffe2's " #Name ": " Words "). Inputs A, B of one dtype: "   \
              "float32, float64, int32, int64 or bool; output C: BOOL of A's shape. Legacy broadcast: with "    \
              "broadcast=1, B's shape (leading and trailing 1s stripped) matches a contiguous run of A's dims " \
              "starting at axis (default: A's trailing dims); a one-element B broadcasts everywhere; with "     \
              "broadcast=0 (default) the shapes must be equal. IEEE: a comparison with NaN is false, except "   \
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
