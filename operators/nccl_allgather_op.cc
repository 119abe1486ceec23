// Run on one GPU only (H100, 2026-11-27); see nccl_allgather_op.h.
#include "operators/nccl_allgather_op.h"

#include "core/gradient.h"

namespace hetnet {

NCCLAllGatherOp::NCCLAllGatherOp(const caffe2::OperatorDef& def, Workspace* ws) : NCCLOpBase(def, ws) {
  HN_ENFORCE(OutputSize() == InputSize(), who(), " produces one output per input (", InputSize(),
             "), but was given ", OutputSize());
}

void NCCLAllGatherOp::RunOnDevice() {
  auto el = Inputs();
  const int n = InputSize();
  for (int i = 0; i < n; ++i) {
    std::vector<int64_t> shape{n};
    shape.insert(shape.end(), el[i].src->shape().begin(), el[i].src->shape().end());
    el[i].dst = OutputOn(i, el[i].device, std::move(shape), el[i].src->dtype());
    CheckDistinct(el[i], i);
  }
  if (n == 1) return CopyIfDistinct(*el[0].src, el[0].dst);  // same bytes, one more leading dim
  const size_t count = static_cast<size_t>(el[0].src->numel());
  if (count == 0) return;
  const DataType dtype = el[0].src->dtype();
  const ncclDataType_t type = NcclDataType(dtype, who());
  Collective(el, [&](size_t, const Element& e, ncclComm_t comm, cudaStream_t stream) {
    HN_NCCL_CHECK(ncclAllGather(e.src->raw_data(), e.dst->raw_mutable_data(dtype), count, type, comm, stream));
  });
}

OPERATOR_SCHEMA(NCCLAllGather)
    .NumInputs(1, kMaxNcclInputs)
    .NumOutputs(1, kMaxNcclInputs)
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      std::vector<TensorInfo> out(def.output_size());
      for (size_t i = 0; i < out.size() && i < in.size(); ++i) {
        std::vector<int64_t> dims{static_cast<int64_t>(in.size())};
        dims.insert(dims.end(), in[i].dims.begin(), in[i].dims.end());
        out[i] = TensorInfo::Of(std::move(dims), in[i].dtype);
      }
      return out;
    })
    .DeviceInference(NcclOpDevices)
    .NoCPUFallback()
    .SetDoc("Stacks one tensor per GPU into [n, ...] on every GPU, in input order (NCCL, one process).");
REGISTER_CUDA_OPERATOR(NCCLAllGather, NCCLAllGatherOp);
NO_GRADIENT(NCCLAllGather);

}  // namespace hetnet
