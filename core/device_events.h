// Device streams and events for executor and profiler code, which is compiled without CUDA headers.
// The CUDA backend (device/cuda/cuda_backend.cc) registers the implementation at load time; in a
// CPU-only build GetDeviceEvents() is nullptr, and no GPU operator can exist to need it.
#pragma once

#include <utility>

namespace hetnet {

class DeviceContext;
using StreamHandle = void*;
using EventHandle = void*;

class DeviceEvents {
 public:
  virtual ~DeviceEvents() = default;
  // The stream `ctx` queues on when used from the calling thread (streams are per thread).
  virtual StreamHandle CurrentStream(DeviceContext* ctx) = 0;
  virtual EventHandle CreateEvent(int device, bool timing) = 0;
  virtual void DestroyEvent(int device, EventHandle e) = 0;
  virtual void Record(EventHandle e, StreamHandle s, int device) = 0;
  // Records `e` on a private idle stream of `device`: it completes (and timestamps) about now.
  virtual void RecordNow(EventHandle e, int device) = 0;
  // Later work on `s` waits for `e` on the device; the host does not block.
  virtual void StreamWait(StreamHandle s, EventHandle e) = 0;
  // Blocks the calling thread until `e` has completed (a driver wait, not a spin).
  virtual void HostWait(EventHandle e) = 0;
  // Whether `e` has completed, without blocking (throws on a device error).
  virtual bool Query(EventHandle e) = 0;
  virtual float ElapsedMs(EventHandle from, EventHandle to) = 0;
};

void RegisterDeviceEvents(DeviceEvents* impl);
DeviceEvents* GetDeviceEvents();  // nullptr without a GPU backend

// One event, created lazily on its device and destroyed with its owner.
class DeviceEvent {
 public:
  DeviceEvent() = default;
  DeviceEvent(const DeviceEvent&) = delete;
  DeviceEvent& operator=(const DeviceEvent&) = delete;
  DeviceEvent(DeviceEvent&& o) noexcept { *this = std::move(o); }
  DeviceEvent& operator=(DeviceEvent&& o) noexcept {
    Reset();
    device_ = o.device_, timing_ = o.timing_, handle_ = o.handle_;
    o.handle_ = nullptr;
    return *this;
  }
  ~DeviceEvent() { Reset(); }
  // The handle, created on first use for (device, timing).
  EventHandle Get(int device, bool timing) {
    if (!handle_) {
      device_ = device, timing_ = timing;
      handle_ = GetDeviceEvents()->CreateEvent(device, timing);
    }
    return handle_;
  }
  EventHandle handle() const { return handle_; }

 private:
  void Reset() {
    if (handle_ && GetDeviceEvents()) GetDeviceEvents()->DestroyEvent(device_, handle_);
    handle_ = nullptr;
  }
  int device_ = 0;
  bool timing_ = false;
  EventHandle handle_ = nullptr;
};

}  // namespace hetnet
