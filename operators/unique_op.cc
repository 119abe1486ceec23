#include "operators/unique_op.h"

#include <cstring>
#include <map>

#include "core/argument.h"
#include "operators/cnn_op_utils.h"
#include "operators/elementwise_ops.h"
#include "operators/onnx_op_util.h"

namespace hetnet {

void UniqueOp::RunOnDevice() {
  const Tensor& X = Input(0);
  const bool has_axis = ArgumentHelper(def()).HasArgument("axis");
  int axis = 0;
  int64_t outer = 1, n = X.numel(), inner = 1;
  if (has_axis) {
    HN_ENFORCE(X.ndim() >= 1, type(), ": input 0 ('", def().input(0), "') must have a dim for arg axis");
    axis = CanonicalAxisFor(def(), GetSingleArgument<int>("axis", 0), X.ndim(), 0);
    outer = ProdDims(X.shape(), 0, axis);
    n = X.dim(axis);
    inner = ProdDims(X.shape(), axis + 1, X.shape().size());
  }
  const bool sorted = GetSingleArgument<int>("sorted", 1) != 0;
  std::vector<int64_t> first, inverse(n), counts, order;  // order: unique ids in output order
  // float16 / bfloat16 are keyed by their float32 values (exact); Y copies X's own elements.
  const Tensor widened = IsSixteenBitFloat(X.dtype()) ? WidenToFloat(X) : Tensor();
  const Tensor& K = widened.initialized() ? widened : X;
  DispatchArithmetic(*this, K.dtype(), 0, [&](auto zero) {
    using T = decltype(zero);
    const T* x = K.template data<T>();
    std::map<std::vector<T>, int64_t> ids;  // slice -> id (ids in order of first occurrence)
    std::vector<T> key(outer * inner);
    for (int64_t j = 0; j < n; ++j) {
      for (int64_t o = 0; o < outer; ++o)
        for (int64_t i = 0; i < inner; ++i) key[o * inner + i] = x[(o * n + j) * inner + i];
      auto it = ids.emplace(key, static_cast<int64_t>(first.size())).first;
      if (it->second == static_cast<int64_t>(first.size())) first.push_back(j), counts.push_back(0);
      inverse[j] = it->second;
      ++counts[it->second];
    }
    if (sorted)
      for (const auto& kv : ids) order.push_back(kv.second);
    else
      for (int64_t u = 0; u < static_cast<int64_t>(first.size()); ++u) order.push_back(u);
  });
  const int64_t u = static_cast<int64_t>(order.size());
  std::vector<int64_t> position(u);  // id -> output position
  for (int64_t p = 0; p < u; ++p) position[order[p]] = p;
  std::vector<int64_t> shape = {u};
  if (has_axis) {
    shape = X.shape();
    shape[axis] = u;
  }
  Tensor* Y = Output(0, shape, X.dtype());
  const size_t item = X.itemsize();
  const char* x = static_cast<const char*>(X.raw_data());
  char* y = static_cast<char*>(Y->raw_mutable_data(X.dtype()));
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t p = 0; p < u; ++p)
      std::memcpy(y + (o * u + p) * inner * item, x + (o * n + first[order[p]]) * inner * item, inner * item);
  if (OutputSize() > 1) {
    int64_t* ix = Output(1, {u}, DataType::Int64)->mutable_data<int64_t>();
    for (int64_t p = 0; p < u; ++p) ix[p] = first[order[p]];
  }
  if (OutputSize() > 2) {
    int64_t* inv = Output(2, {n}, DataType::Int64)->mutable_data<int64_t>();
    for (int64_t j = 0; j < n; ++j) inv[j] = position[inverse[j]];
  }
  if (OutputSize() > 3) {
    int64_t* cnt = Output(3, {u}, DataType::Int64)->mutable_data<int64_t>();
    for (int64_t p = 0; p < u; ++p) cnt[p] = counts[order[p]];
  }
}

OPERATOR_SCHEMA(Unique).NumInputs(1).NumOutputs(1, 4)
    .SetDoc("ONNX's Unique(X) -> Y, indices, inverse_indices, counts: distinct elements (or slices along arg axis), "
            "sorted (arg sorted, default 1) or in order of first occurrence; numeric dtypes, float16 and bfloat16. CPU "
            "only; no gradient.");
REGISTER_CPU_OPERATOR(Unique, UniqueOp);

}  // namespace hetnet
