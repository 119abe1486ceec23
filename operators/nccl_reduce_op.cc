// Run on one GPU only (H100, 2026-11-27); see nccl_reduce_op.h.
#include "operators/nccl_reduce_op.h"

#include "core/gradient.h"

namespace hetnet {

NCCLReduceOp::NCCLReduceOp(const caffe2::OperatorDef& def, Workspace* ws) : NCCLOpBase(def, ws) {
  // Caffe2's schema lets any input share the output; only the root's may, since the sum lands on
  // the root's GPU and moving another GPU's input there would destroy it.
  for (int i = 0; i < InputSize(); ++i)
    HN_ENFORCE(i == root_ || !IsInputOutputAlias(i, 0), who(), ": output 0 ('", def.output(0),
               "') may share only the blob of input root=", root_, ", not input ", i);
}

void NCCLReduceOp::RunOnDevice() {
  auto el = Inputs();
  Element& r = el[root_];
  r.dst = OutputOn(0, r.device, r.src->shape(), r.src->dtype());
  if (InputSize() == 1) return CopyIfDistinct(*r.src, r.dst);
  const size_t count = static_cast<size_t>(r.src->numel());
  if (count == 0) return;
  const DataType dtype = r.src->dtype();
  const ncclDataType_t type = NcclDataType(dtype, who());
  const int root = root_;
  Collective(el, [&](size_t, const Element& e, ncclComm_t comm, cudaStream_t stream) {
    void* recv = e.dst ? e.dst->raw_mutable_data(dtype) : nullptr;  // only the root receives
    HN_NCCL_CHECK(ncclReduce(e.src->raw_data(), recv, count, type, ncclSum, root, comm, stream));
  });
}

namespace {
std::set<std::pair<int, int>> AnyInputToOutput0() {
  std::set<std::pair<int, int>> s;
  for (int i = 0; i < kMaxNcclInputs; ++i) s.insert({i, 0});
  return s;
}
}  // namespace

OPERATOR_SCHEMA(NCCLReduce)
    .NumInputs(1, kMaxNcclInputs)
    .NumOutputs(1)
    .AllowInplace(AnyInputToOutput0())
    .TensorInference([](const caffe2::OperatorDef& def, const std::vector<TensorInfo>& in) {
      const int root = NcclRootArg(def);
      return std::vector<TensorInfo>{root >= 0 && root < static_cast<int>(in.size()) ? in[root] : TensorInfo::Unknown()};
    })
    .DeviceInference(NcclOpDevices)
    .NoCPUFallback()
    .SetDoc("Sum of one tensor per GPU, written to the GPU of input `root` (a list index) (NCCL, one process).");
REGISTER_CUDA_OPERATOR(NCCLReduce, NCCLReduceOp);
NO_GRADIENT(NCCLReduce);

}  // namespace hetnet
