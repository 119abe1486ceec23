#include "core/device_events.h"

#include <atomic>

namespace hetnet {

namespace {
std::atomic<DeviceEvents*>& Impl() {
  static std::atomic<DeviceEvents*> impl{nullptr};
  return impl;
}
}  // namespace

void RegisterDeviceEvents(DeviceEvents* impl) { Impl().store(impl); }
DeviceEvents* GetDeviceEvents() { return Impl().load(); }

}  // namespace hetnet
