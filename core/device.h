// Devices, allocators and the per-device backend interface. Device-specific code (CUDA) lives in
// device/ and registers a DeviceBackend at load time; core/ only sees this interface.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

namespace caffe2 { class DeviceOption; }

namespace hetnet {

// Values equal caffe2.DeviceTypeProto.
enum class DeviceType : int { CPU = 0, CUDA = 1 };

struct Device {
  DeviceType type = DeviceType::CPU;
  int id = 0;  // always 0 for CPU: Caffe2's CPU ids -1 and 0 name the same CPU

  Device() = default;
  Device(DeviceType t, int i) : type(t), id(t == DeviceType::CPU ? 0 : i) {}
  static Device CPU() { return Device(); }
  static Device CUDA(int id) { return Device(DeviceType::CUDA, id); }
  bool is_cpu() const { return type == DeviceType::CPU; }
  bool operator==(const Device& o) const { return type == o.type && id == o.id; }
  bool operator!=(const Device& o) const { return !(*this == o); }
  bool operator<(const Device& o) const {
    return type != o.type ? type < o.type : id < o.id;
  }
  std::string str() const;  // "cpu", "cuda:1"
};

// Device of a DeviceOption; throws kUnsupported for device types hetnet does not run.
Device DeviceFromOption(const caffe2::DeviceOption& opt);
void DeviceToOption(const Device& d, caffe2::DeviceOption* opt);
const char* DeviceTypeName(int device_type);  // "CPU", "CUDA", "MKLDNN", ... for messages

class Allocator {
 public:
  virtual ~Allocator() = default;
  // Returns memory for nbytes (nbytes may be 0) released through the returned pointer's deleter.
  virtual std::shared_ptr<void> Allocate(size_t nbytes) = 0;
};

// Everything core/ needs from a device type. Registered by device/ code.
class DeviceBackend {
 public:
  virtual ~DeviceBackend() = default;
  virtual int DeviceCount() const = 0;
  virtual Allocator* DeviceAllocator(int device_id) = 0;
  // Page-locked host memory for staging copies; nullptr where the backend has none.
  virtual Allocator* PinnedHostAllocator() { return nullptr; }
  // Blocking copy between any two devices of which at least one belongs to this backend.
  virtual void CopyBytesSync(size_t nbytes, const void* src, Device src_dev, void* dst,
                             Device dst_dev) = 0;
  virtual void SynchronizeDevice(int device_id) = 0;
};

void RegisterDeviceBackend(DeviceType type, DeviceBackend* backend);
// nullptr when this build has no such backend.
DeviceBackend* FindDeviceBackend(DeviceType type);
// Throws a kUnsupported error naming the device when it is not available in this build or machine.
DeviceBackend* GetDeviceBackend(const Device& device);
// Number of CUDA devices; 0 (not an error) without a driver, without a GPU, or in a CPU-only build.
int NumCudaDevices();
bool HasCudaSupport();  // built with CUDA

// Blocking copy between devices through the right backend (used by feeding, fetching, Clone).
void CopyBytesSync(size_t nbytes, const void* src, Device src_dev, void* dst, Device dst_dev);

}  // namespace hetnet
