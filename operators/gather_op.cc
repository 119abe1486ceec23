#include "operators/gather_op.h"

#include <cstring>

#include "core/argument.h"
#include "core/gradient.h"
#include "operators/index_read.h"

namespace hetnet {

GatherGeom MakeGatherGeom(const caffe2::OperatorDef& def, const std::vector<int64_t>& data, int64_t num_indices,
                          int axis) {
  const int nd = static_cast<int>(data.size());
  HN_ENFORCE(axis >= -nd && axis < nd, def.type(), ": axis ", axis, " is out of range for input 0 ('",
             def.input(0), "') of shape ", ShapeToString(data));
  if (axis < 0) axis += nd;
  GatherGeom g;
  for (int d = 0; d < axis; ++d) g.outer *= data[d];
  g.n = data[axis];
  for (int d = axis + 1; d < nd; ++d) g.inner *= data[d];
  g.k = num_indices;
  return g;
}

std::vector<int64_t> GatherOutputShape(const caffe2::OperatorDef& def, const std::vector<int64_t>& data,
                                       const std::vector<int64_t>& indices, int axis) {
  const int nd = static_cast<int>(data.size());
  HN_ENFORCE(axis >= -nd && axis < nd, def.type(), ": axis ", axis, " is out of range for input 0 ('",
             def.input(0), "') of shape ", ShapeToString(data));
  if (axis < 0) axis += nd;
  std::vector<int64_t> out(data.begin(), data.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), data.begin() + axis + 1, data.end());
  return out;
}

void ThrowBadGatherIndex(const caffe2::OperatorDef& def, const Tensor& indices, int64_t pos, int64_t n,
                         DeviceContext* ctx) {
  const int64_t value = ReadIndexToHost(indices, pos, ctx);
  HN_THROW(kInvalidArgument, def.type(), ": index ", value, " at position ", pos, " of input 1 ('", def.input(1),
           "') is out of range for a dim of size ", n, " (valid: ", -n, " to ", n - 1, ")");
}

template <typename I, class Context>
int64_t GatherRows(const GatherGeom& g, size_t itemsize, const void* data, const I* indices, void* out, Context*) {
  std::vector<int64_t> idx(static_cast<size_t>(g.k));
  for (int64_t j = 0; j < g.k; ++j)
    if (!WrapGatherIndex(indices[j], g.n, &idx[j])) return j;
  const size_t row = static_cast<size_t>(g.inner) * itemsize;
  const char* src = static_cast<const char*>(data);
  char* dst = static_cast<char*>(out);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t j = 0; j < g.k; ++j)
      std::memcpy(dst + (o * g.k + j) * row, src + (o * g.n + idx[j]) * row, row);
  return -1;
}

template <typename I, class Context>
void GatherRowsGradient(const GatherGeom& g, const float* dout, const I* indices, float* ddata, Context*) {
  std::fill(ddata, ddata + g.outer * g.n * g.inner, 0.f);
  for (int64_t o = 0; o < g.outer; ++o)
    for (int64_t j = 0; j < g.k; ++j) {
      int64_t i = 0;
      HN_ENFORCE(WrapGatherIndex(indices[j], g.n, &i), "GatherGradient: index ", static_cast<int64_t>(indices[j]),
                 " at position ", j, " is out of range for a dim of size ", g.n);
      const float* s = dout + (o * g.k + j) * g.inner;
      float* d = ddata + (o * g.n + i) * g.inner;
      for (int64_t q = 0; q < g.inner; ++q) d[q] += s[q];
    }
}

template int64_t GatherRows<int32_t, CPUContext>(const GatherGeom&, size_t, const void*, const int32_t*, void*,
                                                 CPUContext*);
template int64_t GatherRows<int64_t, CPUContext>(const GatherGeom&, size_t, const void*, const int64_t*, void*,
                                                 CPUContext*);
template void GatherRowsGradient<int32_t, CPUContext>(const GatherGeom&, const float*, const int32_t*, float*,
                                                      CPUContext*);
template void GatherRowsGradient<int64_t, CPUContext>(const GatherGeom&, const float*, const int64_t*, float*,
                                                      CPUContext*);

OPERATOR_SCHEMA(Gather)
    .NumInputs(2)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const int axis = ArgumentHelper(def).GetSingleArgument<int>("axis", 0);
      return std::vector<TensorInfo>{TensorInfo::Of(GatherOutputShape(def, in[0].dims, in[1].dims, axis), in[0].dtype)};
    })
    .SetDoc("Gather(DATA, INDICES) -> OUTPUT: DATA's entries along arg `axis` (default 0) at INDICES (int32 or "
            "int64, any shape; negative counts from the end; outside [-n, n) is an error). OUTPUT's shape: "
            "DATA's dims before axis, INDICES' dims, DATA's dims after axis. Gradient: GatherGradient (dense "
            "scatter-add into DATA's shape, float32).");
OPERATOR_SCHEMA(GatherGradient)
    .NumInputs(3)
    .NumOutputs(1)
    .TensorInference([](const caffe2::OperatorDef&, const std::vector<TensorInfo>& in) {
      return std::vector<TensorInfo>{TensorInfo::Of(in[0].dims, DataType::Float)};
    });
REGISTER_CPU_OPERATOR(Gather, GatherOp<CPUContext>);
REGISTER_CPU_OPERATOR(GatherGradient, GatherGradientOp<CPUContext>);

// GatherGradient(DATA, INDICES, dOUTPUT) -> dDATA, with the forward op's axis. Caffe2 emits a sparse
// gradient (indices, values) for axis 0; here it is dense, which every consumer accepts.
class GetGatherGradient final : public GradientMakerBase {
 public:
  using GradientMakerBase::GradientMakerBase;
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    auto op = GradientOp("GatherGradient", {I(0), I(1), GO(0)}, {GI(0)});
    for (const auto& a : Def().arg()) *op.add_arg() = a;
    return {op};
  }
};
REGISTER_GRADIENT(Gather, GetGatherGradient);

}  // namespace hetnet
