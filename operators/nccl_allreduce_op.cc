// Run on one GPU only (H100, 2026-11-27); see nccl_allreduce_op.h.
#include "operators/nccl_allreduce_op.h"

#include "core/gradient.h"

namespace hetnet {

NCCLAllreduceOp::NCCLAllreduceOp(const caffe2::OperatorDef& def, Workspace* ws) : NCCLOpBase(def, ws) {
  HN_ENFORCE(OutputSize() == InputSize(), who(), " produces one output per input (", InputSize(),
             "), but was given ", OutputSize());
}

void NCCLAllreduceOp::RunOnDevice() {
  auto el = Inputs();
  for (int i = 0; i < InputSize(); ++i) el[i].dst = OutputOn(i, el[i].device, el[i].src->shape(), el[i].src->dtype());
  if (InputSize() == 1) return CopyIfDistinct(*el[0].src, el[0].dst);
  const size_t count = static_cast<size_t>(el[0].src->numel());
  if (count == 0) return;
  const ncclDataType_t type = NcclDataType(el[0].src->dtype(), who());
  Collective(el, [&](size_t, const Element& e, ncclComm_t comm, cudaStream_t stream) {
    HN_NCCL_CHECK(ncclAllReduce(e.src->raw_data(), e.dst->raw_mutable_data(e.src->dtype()), count, type, ncclSum,
                                comm, stream));
  });
}

OPERATOR_SCHEMA(NCCLAllreduce)
    .NumInputs(1, kMaxNcclInputs)
    .NumOutputs(1, kMaxNcclInputs)
    .IdenticalTypeAndShape()
    .AllowOneToOneInplace()
    .DeviceInference(NcclOpDevices)
    .NoCPUFallback()
    .SetDoc("Sum of one tensor per GPU, written to every GPU (NCCL, one process). Inputs may live on any GPU.");
REGISTER_CUDA_OPERATOR(NCCLAllreduce, NCCLAllreduceOp);
NO_GRADIENT(NCCLAllreduce);

}  // namespace hetnet
