// Run on one GPU only (H100, 2026-11-27); see nccl_op_common.h.
#include "operators/nccl_op_common.h"

namespace hetnet {

int NcclRootArg(const caffe2::OperatorDef& def) {
  for (const auto& a : def.arg())
    if (a.name() == "root" && a.has_i()) return static_cast<int>(a.i());
  return 0;
}

std::pair<std::vector<Device>, std::vector<Device>> NcclOpDevices(const caffe2::OperatorDef& def, Device) {
  std::vector<Device> in, out;
  for (int i = 0; i < def.input_size(); ++i) in.push_back(Device::CUDA(i));
  if (def.output_size() == 1 && def.input_size() > 1) {
    const int root = NcclRootArg(def);
    out.push_back(Device::CUDA(root >= 0 && root < def.input_size() ? root : 0));
  } else {
    for (int i = 0; i < def.output_size(); ++i) out.push_back(Device::CUDA(i));
  }
  return {in, out};
}

NCCLOpBase::NCCLOpBase(const caffe2::OperatorDef& def, Workspace* ws)
    : Operator<CUDAContext>(def, ws), root_(GetSingleArgument<int>("root", 0)) {
  HN_ENFORCE(root_ >= 0 && root_ < InputSize(), who(), ": root ", root_, " is not an index into its ", InputSize(),
             " input(s) (root is the position in the input list, not a GPU id)");
}

std::vector<NCCLOpBase::Element> NCCLOpBase::Inputs(bool same_numel) const {
  std::vector<Element> el(InputSize());
  for (int i = 0; i < InputSize(); ++i) {
    const Blob* b = InputBlob(i);
    const std::string& name = def_.input(i);
    HN_CHECK_KIND(kNotFound, !b->empty(), who(), ": input ", i, " ('", name, "') has no data");
    HN_ENFORCE(b->IsTensor(), who(), ": input ", i, " ('", name, "') holds ", b->TypeName(), ", not a tensor");
    const Tensor& t = b->GetTensor();
    HN_ENFORCE(t.initialized(), who(), ": input ", i, " ('", name, "') has no data");
    HN_ENFORCE(t.device().type == DeviceType::CUDA, who(), ": input ", i, " ('", name, "') is on ", t.device().str(),
               "; NCCL operators take one GPU tensor per GPU");
    NcclDataType(t.dtype(), who());  // float32 / float16, else a kUnsupported naming the op and dtype
    el[i].src = &t;
    el[i].device = t.device().id;
    for (int j = 0; j < i; ++j) {
      HN_ENFORCE(el[j].device != el[i].device, who(), ": inputs ", j, " ('", def_.input(j), "') and ", i, " ('",
                 name, "') are both on ", t.device().str(), "; NCCL operators take one tensor per GPU");
    }
    const Tensor& first = *el[0].src;
    HN_ENFORCE(t.dtype() == first.dtype(), who(), ": input ", i, " ('", name, "') is ", DataTypeName(t.dtype()),
               " but input 0 ('", def_.input(0), "') is ", DataTypeName(first.dtype()));
    HN_ENFORCE(!same_numel || t.numel() == first.numel(), who(), ": input ", i, " ('", name, "') has shape ",
               t.ShapeString(), " but input 0 ('", def_.input(0), "') has ", first.ShapeString(),
               "; every GPU must contribute the same number of elements");
  }
  return el;
}

Tensor* NCCLOpBase::OutputOn(int out, int device, std::vector<int64_t> shape, DataType dtype) {
  // The caching allocator ties blocks to the calling thread's current stream on their GPU: off
  // the op's GPU that is this thread's stream there, which the collective is fenced with.
  const bool other_gpu = device != context_.device_id();
  if (other_gpu) CUDAContext(device, 0).SwitchToDevice();
  Tensor* t = OutputBlob(out)->GetMutableTensor(Device::CUDA(device));
  try {
    t->Resize(std::move(shape));
    t->raw_mutable_data(dtype);
  } catch (Error& e) {
    if (other_gpu) context_.SwitchToDevice();
    throw e.AddContext(MakeString("while allocating output ", out, " ('", def_.output(out), "') of ", who()));
  }
  if (other_gpu) context_.SwitchToDevice();
  return t;
}

void NCCLOpBase::CheckDistinct(const Element& e, int index) const {
  HN_ENFORCE(!e.dst || e.src->nbytes() == 0 || e.src->raw_data() != e.dst->raw_data(), who(), ": input ", index,
             " ('", def_.input(index), "') and its output share memory; this operator cannot run in place");
}

std::vector<StreamFence> NCCLOpBase::Fences(const std::vector<int>& devices) {
  std::vector<StreamFence> f{{context_.device_id(), context_.stream()}};
  for (int d : devices) {
    cudaStream_t s = CUDAContext(d, 0).stream();
    if (s != f[0].stream) f.push_back({d, s});
  }
  return f;
}

void NCCLOpBase::CopyIfDistinct(const Tensor& src, Tensor* dst) {
  if (src.nbytes() == 0 || src.raw_data() == dst->raw_data()) return;
  const int d = src.device().id;  // the output is placed on the input's GPU
  const std::vector<StreamFence> f = Fences({d});
  void* to = dst->raw_mutable_data(src.dtype());
  if (f.size() == 1) {
    HN_CUDA_CHECK(cudaMemcpyAsync(to, src.raw_data(), src.nbytes(), cudaMemcpyDeviceToDevice, f[0].stream));
    return;
  }
  // On the GPU's own stream, fenced both ways with the op's.
  copy_in_.Record(f[0].stream, f[0].device);
  copy_in_.MakeWait(f[1].stream);
  {
    CUDADeviceGuard g(d);
    HN_CUDA_CHECK(cudaMemcpyAsync(to, src.raw_data(), src.nbytes(), cudaMemcpyDeviceToDevice, f[1].stream));
  }
  copy_out_.Record(f[1].stream, d);
  copy_out_.MakeWait(f[0].stream);
}

void NCCLOpBase::Collective(const std::vector<Element>& elements, const ElementLaunch& launch) {
  std::vector<int> devices;
  for (const auto& e : elements) devices.push_back(e.device);
  // Blobs may move between runs: the communicators follow the device list of this run.
  if (!comms_ || comms_->devices() != devices) {
    try {
      comms_ = NCCLCommunicators::Get(devices);
    } catch (Error& e) {
      throw e.AddContext(MakeString("in ", who()));
    }
  }
  comms_->Run(Fences(devices),
              [&](size_t rank, ncclComm_t comm, cudaStream_t stream) { launch(rank, elements[rank], comm, stream); });
}

}  // namespace hetnet
