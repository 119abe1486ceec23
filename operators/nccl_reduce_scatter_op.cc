// Run on one GPU only (H100, 2026-11-27); see nccl_reduce_scatter_op.h.
#include "operators/nccl_reduce_scatter_op.h"

#include "core/gradient.h"

namespace hetnet {

NCCLReduceScatterOp::NCCLReduceScatterOp(const caffe2::OperatorDef& def, Workspace* ws) : NCCLOpBase(def, ws) {
  HN_ENFORCE(OutputSize() == InputSize(), who(), " produces one output per input (", InputSize(),
             "), but was given ", OutputSize());
}

void NCCLReduceScatterOp::RunOnDevice() {
  auto el = Inputs();
  const int n = InputSize();
  const Tensor& first = *el[0].src;
  HN_ENFORCE(first.ndim() >= 1 && first.dim(0) == n, who(), ": each input must have shape [", n,
             ", ...] (one slice per GPU), but input 0 ('", def_.input(0), "') has shape ", first.ShapeString());
  for (int i = 0; i < n; ++i) {
    const auto& s = el[i].src->shape();
    HN_ENFORCE(s == first.shape(), who(), ": input ", i, " ('", def_.input(i), "') has shape ",
               el[i].src->ShapeString(), " but input 0 has ", first.ShapeString());
    el[i].dst = OutputOn(i, el[i].device, std::vector<int64_t>(s.begin() + 1, s.end()), el[i].src->dtype());
    CheckDistinct(el[i], i);
  }
  const size_t count = static_cast<size_t>(first.numel() / n);  // per GPU
  if (count == 0) return;
  const DataType dtype = first.dtype();
  const ncclDataType_t type = NcclDataType(dtype, who());
  Collective(el, [&](size_t, const Element& e, ncclComm_t comm, cudaStream_t stream) {
    HN_NCCL_CHECK(ncclReduceScatter(e.src->raw_data(), e.dst->raw_mutable_data(dtype), count, type, ncclSum, comm,
                                    stream));
  });
}

OPERATOR_SCHEMA(NCCLReduceScatter)
    .NumInputs(1, kMaxNcclInputs)
    .NumOutputs(1, kMaxNcclInputs)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out(def.output_size());
      for (size_t i = 0; i < out.size() && i < in.size(); ++i)
        if (!in[i].dims.empty())
          out[i] = TensorInfo::Of(std::vector<int64_t>(in[i].dims.begin() + 1, in[i].dims.end()), in[i].dtype);
      return out;
    })
    .DeviceInference(NcclOpDevices)
    .NoCPUFallback()
    .SetDoc("Sums one [n, ...] tensor per GPU; GPU i gets slice i, shape [...] (NCCL, one process).");
REGISTER_CUDA_OPERATOR(NCCLReduceScatter, NCCLReduceScatterOp);
NO_GRADIENT(NCCLReduceScatter);

}  // namespace hetnet
