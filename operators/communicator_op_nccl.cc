// Run on one GPU only (H100, 2026-11-27); see communicator_op_nccl.h.
#include "operators/communicator_op_nccl.h"

#include <algorithm>
#include <climits>

namespace hetnet {

ncclDataType_t NcclTypeOrUnhandled(const OperatorBase& op, DataType t) {
  switch (t) {
    case DataType::Float: return ncclFloat32;
    case DataType::Float16: return ncclFloat16;
    case DataType::Double: return ncclFloat64;
    case DataType::Int32: return ncclInt32;
    case DataType::Int64: return ncclInt64;
    default: ThrowUnhandledType(op, t);
  }
}

NCCLCommonWorld& NcclCollectiveOp::World() {
  const CommonWorldPtr& w = CommonWorldInput(*this);
  auto* n = dynamic_cast<NCCLCommonWorld*>(w.get());
  HN_ENFORCE(n, type(), " with engine NCCL needs an NCCL common world, but input 0 ('", def().input(0), "') is ",
             w->Describe());
  HN_ENFORCE(n->device() == context_.device_id(), type(), " runs on ", device().str(), " but its common world ('",
             def().input(0), "') is ", n->Describe(), "; place the op on the world's GPU");
  return *n;
}

std::vector<void*> NcclCollectiveOp::InPlaceTensors(int n, int outputs) {
  HN_ENFORCE(n >= 1, type(), " takes [comm_world, X1..Xn] with n >= 1, got ", InputSize(), " input(s)");
  CheckInPlaceTensors(*this, 1, n, outputs);  // InputTensor also checks each is on this op's GPU
  std::vector<void*> ptrs;
  const DataType t = Input(1).dtype();
  for (int i = 0; i < n; ++i) ptrs.push_back(Output(i)->raw_mutable_data(t));
  return ptrs;
}

void NcclCollectiveOp::SumLocally(const std::vector<void*>& ptrs, int64_t numel, DataType t) {
  if (ptrs.size() < 2 || numel == 0) return;
  cudaDataType_t data, compute;
  switch (t) {
    case DataType::Float: data = compute = CUDA_R_32F; break;
    case DataType::Float16: data = CUDA_R_16F, compute = CUDA_R_32F; break;
    case DataType::Double: data = compute = CUDA_R_64F; break;
    default:
      HN_THROW(kInvalidArgument, "Unhandled type: ", DataTypeName(t), " (", type(),
               " with engine NCCL sums several local tensors only for float32, float16 and float64)");
  }
  const float one_f = 1.f;
  const double one_d = 1.0;
  const void* one = compute == CUDA_R_64F ? static_cast<const void*>(&one_d) : static_cast<const void*>(&one_f);
  const size_t item = ItemSize(t);
  cublasHandle_t h = context_.cublas_handle();
  for (size_t k = 1; k < ptrs.size(); ++k)
    for (int64_t off = 0; off < numel; off += INT_MAX) {  // cuBLAS counts in int
      const int len = static_cast<int>(std::min<int64_t>(INT_MAX, numel - off));
      HN_CUBLAS_CHECK(cublasAxpyEx(h, len, one, compute, static_cast<const char*>(ptrs[k]) + off * item, data, 1,
                                   static_cast<char*>(ptrs[0]) + off * item, data, 1, compute));
    }
}

void NcclCollectiveOp::CopyFirstToOthers(const std::vector<void*>& ptrs, size_t offset, size_t nbytes) {
  if (nbytes == 0) return;
  for (size_t k = 1; k < ptrs.size(); ++k)
    HN_CUDA_CHECK(cudaMemcpyAsync(static_cast<char*>(ptrs[k]) + offset, static_cast<const char*>(ptrs[0]) + offset,
                                  nbytes, cudaMemcpyDeviceToDevice, context_.stream()));
}

}  // namespace hetnet
