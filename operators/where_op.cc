#include "operators/where_op.h"

#include "core/gradient.h"

namespace hetnet {

std::vector<int64_t> WhereOutputShape(const caffe2::OperatorDef& def, const std::vector<std::vector<int64_t>>& shapes) {
  std::vector<int64_t> out;
  HN_ENFORCE(math::NumpyBroadcastShape(shapes, &out), def.type(), ": ",
             math::DescribeShapes({def.input(0), def.input(1), def.input(2)}, shapes),
             " do not broadcast (numpy rule: aligned from the last dim, each dim equal or 1)");
  return out;
}

namespace {
template <typename U>
void SelectLoop(const math::BroadcastIndex& ix, int64_t total, const bool* c, const void* x, const void* y, void* z) {
  for (int64_t i = 0; i < total; ++i)
    WhereAt(ix, i, c, static_cast<const U*>(x), static_cast<const U*>(y), static_cast<U*>(z));
}
}  // namespace

template <>
void WhereSelect<CPUContext>(const math::BroadcastIndex& ix, int64_t total, size_t itemsize, const bool* c,
                             const void* x, const void* y, void* z, CPUContext*) {
  switch (itemsize) {
    case 1: return SelectLoop<uint8_t>(ix, total, c, x, y, z);
    case 2: return SelectLoop<uint16_t>(ix, total, c, x, y, z);
    case 4: return SelectLoop<uint32_t>(ix, total, c, x, y, z);
    case 8: return SelectLoop<uint64_t>(ix, total, c, x, y, z);
    default: HN_THROW(kUnsupported, "Where: ", itemsize, "-byte elements are not supported");
  }
}

OPERATOR_SCHEMA(Where)
    .NumInputs(3)
    .NumOutputs(1)
    .AllowInplace({{1, 0}, {2, 0}})
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{
          TensorInfo::Of(WhereOutputShape(def, {in[0].dims, in[1].dims, in[2].dims}), in[1].dtype)};
    })
    .SetDoc("Where(C, X, Y) -> Z = C ? X : Y elementwise. C bool; X, Y of one dtype; numpy broadcasting of "
            "the three (Z has the broadcast shape). broadcast_on_rows is not implemented. No gradient.");
NO_GRADIENT(Where);
REGISTER_CPU_OPERATOR(Where, WhereOp<CPUContext>);

}  // namespace hetnet
