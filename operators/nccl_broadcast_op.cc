// Run on one GPU only (H100, 2026-11-27); see nccl_broadcast_op.h.
#include "operators/nccl_broadcast_op.h"

#include "core/gradient.h"

namespace hetnet {

NCCLBroadcastOp::NCCLBroadcastOp(const caffe2::OperatorDef& def, Workspace* ws) : NCCLOpBase(def, ws) {
  HN_ENFORCE(OutputSize() == InputSize(), who(), " produces one output per input (", InputSize(),
             "), but was given ", OutputSize());
}

void NCCLBroadcastOp::RunOnDevice() {
  auto el = Inputs(/*same_numel=*/false);
  if (InputSize() == 1) return;
  const Tensor& from = *el[root_].src;
  const std::vector<int64_t> shape = from.shape();  // copied: resizing the others must not touch it
  const DataType dtype = from.dtype();
  for (int i = 0; i < InputSize(); ++i) el[i].dst = OutputOn(i, el[i].device, shape, dtype);  // in place
  const size_t count = static_cast<size_t>(from.numel());
  if (count == 0) return;
  const ncclDataType_t type = NcclDataType(dtype, who());
  const int root = root_;
  Collective(el, [&](size_t, const Element& e, ncclComm_t comm, cudaStream_t stream) {
    void* buf = e.dst->raw_mutable_data(dtype);
    HN_NCCL_CHECK(ncclBroadcast(buf, buf, count, type, root, comm, stream));
  });
}

namespace {
std::set<std::pair<int, int>> SameIndexPairs() {
  std::set<std::pair<int, int>> s;
  for (int i = 0; i < kMaxNcclInputs; ++i) s.insert({i, i});
  return s;
}
}  // namespace

OPERATOR_SCHEMA(NCCLBroadcast)
    .NumInputs(1, kMaxNcclInputs)
    .NumOutputs(1, kMaxNcclInputs)
    .EnforceInplace(SameIndexPairs())
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const int root = NcclRootArg(def);
      const TensorInfo from = root >= 0 && root < static_cast<int>(in.size()) ? in[root] : TensorInfo::Unknown();
      return std::vector<TensorInfo>(def.output_size(), from);
    })
    .DeviceInference(NcclOpDevices)
    .NoCPUFallback()
    .SetDoc("Copies input `root` (a list index) to every other GPU's input, in place (NCCL, one process).");
REGISTER_CUDA_OPERATOR(NCCLBroadcast, NCCLBroadcastOp);
NO_GRADIENT(NCCLBroadcast);

}  // namespace hetnet
