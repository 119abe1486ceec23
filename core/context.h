// Per-operator execution context: where an operator's work is queued. CPUContext runs inline;
// device/cuda's CUDAContext queues on a stream. Operators are templates over the context class
// so shape logic is written once and only the math differs per device.
#pragma once

#include <cstdint>
#include <random>

#include "core/device.h"

namespace caffe2 { class DeviceOption; }

namespace hetnet {

class DeviceContext {
 public:
  virtual ~DeviceContext() = default;
  virtual Device device() const = 0;
  virtual void SwitchToDevice() {}
  // Blocks until work queued by this context has finished.
  virtual void FinishDeviceComputation() {}
  // Copy queued on this context (asynchronous on GPU streams).
  virtual void CopyBytes(size_t nbytes, const void* src, Device src_dev, void* dst, Device dst_dev) = 0;
  virtual Allocator* allocator() = 0;
};

class CPUContext final : public DeviceContext {
 public:
  CPUContext();
  explicit CPUContext(const caffe2::DeviceOption& opt);
  Device device() const override { return Device::CPU(); }
  void CopyBytes(size_t nbytes, const void* src, Device src_dev, void* dst, Device dst_dev) override;
  Allocator* allocator() override;
  std::mt19937& RandGenerator() { return rng_; }
  static constexpr DeviceType kDeviceType = DeviceType::CPU;

 private:
  std::mt19937 rng_;
};

// The 64-byte aligned CPU allocator.
Allocator* GetCPUAllocator();

}  // namespace hetnet
