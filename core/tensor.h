// N-d array on one device. Storage is shared between tensors that alias each other (views,
// ShareData); a tensor reallocates lazily when asked for more bytes than its storage holds.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/device.h"
#include "core/error.h"
#include "core/types.h"

namespace hetnet {

class DeviceContext;

// Process-unique, never reused (unlike an address): with the write generation it names one
// version of one storage, so a cache of data derived from a tensor (a reordered filter) can tell
// whether it is still fresh without reading the data.
uint64_t NextStorageId();

struct Storage {
  std::shared_ptr<void> data;
  size_t capacity = 0;  // bytes
  Device device;
  DataType dtype = DataType::Undefined;  // strings need their element type to destroy
  bool pinned = false;                     // page-locked host memory (see Tensor::set_pinned_host)
  // Memory owned elsewhere (SetExternalData): its owner may write it without going through Tensor,
  // so the write generation says nothing about its contents.
  bool external = false;
  const uint64_t id = NextStorageId();
  // Bumped each time Tensor hands out a writable pointer to this storage (see
  // Tensor::write_generation). A plain counter: like the data itself, a storage is never written by
  // one thread while another reads it, so the counter needs no atomics.
  uint64_t generation = 0;
};

class Tensor {
 public:
  Tensor() = default;
  explicit Tensor(Device device) : device_(device) {}
  Tensor(std::vector<int64_t> shape, DataType dtype, Device device = Device::CPU());

  const std::vector<int64_t>& shape() const { return shape_; }
  const std::vector<int64_t>& sizes() const { return shape_; }
  int ndim() const { return static_cast<int>(shape_.size()); }
  int64_t dim(int i) const;  // negative counts from the end
  int64_t numel() const { return numel_; }
  DataType dtype() const { return dtype_; }
  Device device() const { return device_; }
  size_t itemsize() const { return ItemSize(dtype_); }
  size_t nbytes() const { return static_cast<size_t>(numel_) * itemsize(); }
  // Has a dtype and memory for its elements (zero-element tensors count as initialized).
  bool initialized() const { return dtype_ != DataType::Undefined && (numel_ == 0 || storage_); }

  // Product of dims [start, end).
  int64_t size_from_dim(int start) const;
  int64_t size_to_dim(int end) const;
  int canonical_axis(int axis) const;

  void Resize(std::vector<int64_t> shape);
  // Changes the device; drops storage that lives elsewhere.
  void SetDevice(Device d);
  // Sets dtype and returns writable memory, allocating on the tensor's device when needed.
  void* raw_mutable_data(DataType dtype);
  template <typename T>
  T* mutable_data() { return static_cast<T*>(raw_mutable_data(DataTypeOf<T>::value)); }
  const void* raw_data() const;
  template <typename T>
  const T* data() const {
    CheckType(DataTypeOf<T>::value);
    return static_cast<const T*>(raw_data());
  }
  template <typename T>
  T* mutable_data_existing() {
    CheckType(DataTypeOf<T>::value);
    T* p = static_cast<T*>(const_cast<void*>(raw_data()));
    MarkWritten();
    return p;
  }

  // Write tracking, for caches of data derived from a tensor's contents (dnnl_util::PreparedWeight).
  // (storage_id(), write_generation()) changes whenever the contents may have changed through this
  // API: every writable pointer handed out (raw_mutable_data, mutable_data, mutable_data_existing,
  // CopyFrom, and so the feeds) bumps the generation first; new storage (an allocation, a
  // reallocation, SetExternalData, assigning another tensor) has another id. Views and ShareData
  // share the storage and so its counter. The rule for writers: ask for the pointer again for each
  // round of writes (every operator does, per run); a pointer kept and written later is not seen.
  // Storage owned elsewhere (external_storage()) can change behind our back: check its contents.
  uint64_t storage_id() const { return storage_ ? storage_->id : 0; }
  uint64_t write_generation() const { return storage_ ? storage_->generation : 0; }
  bool external_storage() const { return storage_ && storage_->external; }
  // Bumps the generation: for code that writes through a pointer it obtained otherwise.
  void MarkWritten() {
    if (storage_) ++storage_->generation;
  }

  // Shape, dtype and device of `other`, sharing its storage (a view; writes are seen by both).
  void ShareData(const Tensor& other);
  // A new tensor sharing this one's storage with another shape of equal element count.
  Tensor View(std::vector<int64_t> shape) const;
  // Deep copy of `src` into this tensor's device (keeps this device; the dtype and shape of src).
  // With a context, the copy is queued on it; without, it is blocking.
  void CopyFrom(const Tensor& src, DeviceContext* ctx = nullptr);
  // Deep copy onto another device, blocking.
  Tensor To(Device d) const;
  bool SharesStorageWith(const Tensor& o) const { return storage_ && storage_ == o.storage_; }
  const std::shared_ptr<Storage>& storage() const { return storage_; }
  // Uses memory owned elsewhere (numpy, pinned buffers); `holder` keeps it alive.
  void SetExternalData(std::shared_ptr<void> holder, size_t nbytes, DataType dtype, Device d);

  // A CPU tensor that a GPU copy reads asks for page-locked memory (CopyCPUToGPU sets this), so
  // the copy is one DMA on the stream instead of a staged memcpy. Takes effect at the next
  // raw_mutable_data (the writer's), which moves the contents over once; no effect without a GPU
  // backend or for strings.
  void set_pinned_host(bool on) { pinned_host_ = on; }
  bool pinned_host() const { return pinned_host_; }
  bool storage_pinned() const { return storage_ && storage_->pinned; }

  std::string ShapeString() const;  // "[16, 100]"
  std::string DebugString() const;  // "float32[16, 100] on cpu"
  void CheckType(DataType t) const;

 private:
  std::vector<int64_t> shape_;
  int64_t numel_ = 0;
  DataType dtype_ = DataType::Undefined;
  Device device_;
  std::shared_ptr<Storage> storage_;
  bool pinned_host_ = false;
};

std::string ShapeToString(const std::vector<int64_t>& shape);

}  // namespace hetnet
