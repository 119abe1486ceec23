#include "core/device.h"

#include <array>
#include <cstring>

#include "core/error.h"
#include "proto/caffe2.pb.h"

namespace hetnet {

namespace {
std::array<DeviceBackend*, 2>& Backends() {
  static std::array<DeviceBackend*, 2> backends{};
  return backends;
}
}  // namespace

std::string Device::str() const {
  return type == DeviceType::CPU ? std::string("cpu") : MakeString("cuda:", id);
}

const char* DeviceTypeName(int t) {
  static const char* names[] = {"CPU", "CUDA", "MKLDNN", "OPENGL", "OPENCL", "IDEEP", "HIP"};
  return (t >= 0 && t < 7) ? names[t] : "UNKNOWN";
}

Device DeviceFromOption(const caffe2::DeviceOption& opt) {
  const int t = opt.device_type();
  if (t == 0) return Device::CPU();
  if (t == 1) {
    HN_CHECK_KIND(kInvalidArgument, opt.device_id() >= 0, "invalid CUDA device id ",
                  opt.device_id());
    return Device::CUDA(opt.device_id());
  }
  HN_THROW(kUnsupported, "device type ", t, " (", DeviceTypeName(t),
           ") is not supported by hetnet; supported: 0 (CPU), 1 (CUDA)");
}

void DeviceToOption(const Device& d, caffe2::DeviceOption* opt) {
  opt->set_device_type(static_cast<int>(d.type));
  opt->set_device_id(d.is_cpu() ? 0 : d.id);
}

void RegisterDeviceBackend(DeviceType type, DeviceBackend* backend) {
  Backends()[static_cast<int>(type)] = backend;
}

DeviceBackend* FindDeviceBackend(DeviceType type) {
  return Backends()[static_cast<int>(type)];
}

DeviceBackend* GetDeviceBackend(const Device& device) {
  DeviceBackend* b = FindDeviceBackend(device.type);
  if (!b) HN_THROW(kUnsupported, "device ", device.str(), " is not available: hetnet was built without CUDA");
  if (!device.is_cpu()) {
    const int n = b->DeviceCount();
    HN_CHECK_KIND(kUnsupported, device.id < n, "device ", device.str(), " does not exist: this machine has ",
                  n, " CUDA device(s)");
  }
  return b;
}

int NumCudaDevices() {
  DeviceBackend* b = FindDeviceBackend(DeviceType::CUDA);
  return b ? b->DeviceCount() : 0;
}

bool HasCudaSupport() { return FindDeviceBackend(DeviceType::CUDA) != nullptr; }

void CopyBytesSync(size_t nbytes, const void* src, Device src_dev, void* dst, Device dst_dev) {
  if (nbytes == 0) return;
  if (src_dev.is_cpu() && dst_dev.is_cpu()) {
    std::memcpy(dst, src, nbytes);
    return;
  }
  GetDeviceBackend(src_dev.is_cpu() ? dst_dev : src_dev)->CopyBytesSync(nbytes, src, src_dev, dst, dst_dev);
}

}  // namespace hetnet
