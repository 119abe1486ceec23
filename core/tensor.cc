#include "core/tensor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <numeric>

#include "core/checked_size.h"
#include "core/context.h"
#include "core/workspace_memory.h"

namespace hetnet {

std::string ShapeToString(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

uint64_t NextStorageId() {
  static std::atomic<uint64_t> next{1};  // 0 means "no storage"
  return next.fetch_add(1, std::memory_order_relaxed);
}

static int64_t Product(const std::vector<int64_t>& s, size_t b, size_t e) {
  int64_t n = 1;
  for (size_t i = b; i < e; ++i) n *= s[i];
  return n;
}

Tensor::Tensor(std::vector<int64_t> shape, DataType dtype, Device device) : device_(device) {
  Resize(std::move(shape));
  raw_mutable_data(dtype);
}

int Tensor::canonical_axis(int axis) const {
  const int n = ndim();
  HN_ENFORCE(axis >= -n && axis < std::max(n, 1), "axis ", axis, " is out of range for a tensor of shape ",
             ShapeString());
  return axis < 0 ? axis + n : axis;
}

int64_t Tensor::dim(int i) const { return shape_[canonical_axis(i)]; }
int64_t Tensor::size_from_dim(int start) const { return Product(shape_, start, shape_.size()); }
int64_t Tensor::size_to_dim(int end) const { return Product(shape_, 0, end); }

// Every shape goes through the checked element count: no dim negative, and the product of the
// nonzero dims at most kMaxElements, so numel * itemsize and every product of dims stay exact.
void Tensor::Resize(std::vector<int64_t> shape) {
  const int64_t n = CheckedNumel(shape, "tensor");
  shape_ = std::move(shape);
  numel_ = n;
}

void Tensor::SetDevice(Device d) {
  if (d != device_) storage_.reset();
  device_ = d;
}

namespace {
// Page-locked memory is a hint: when the host has no more to lock, pageable memory does the job.
std::shared_ptr<void> AllocatePinnedOrNull(Allocator* pinned, size_t nbytes) {
  try {
    return pinned->Allocate(nbytes);
  } catch (const Error&) {
    return nullptr;
  }
}
// The deleter of memory charged to a workspace account: frees it, then releases the charge.
struct AccountedMemory {
  std::shared_ptr<void> memory;
  std::shared_ptr<MemoryAccount> account;
  int64_t bytes;
  void operator()(void*) {
    memory.reset();
    ReleaseWorkspaceBytes(account.get(), bytes);
    account.reset();
  }
};

// Bytes of `old` charged to `account` that replacing it frees (none when a view shares it).
int64_t ReleasedByReplacing(const std::shared_ptr<Storage>& old, MemoryAccount* account) {
  if (!old || old.use_count() != 1 || old->data.use_count() != 1) return 0;
  const auto* d = std::get_deleter<AccountedMemory>(old->data);
  return d && d->account.get() == account ? d->bytes : 0;
}
}  // namespace

void* Tensor::raw_mutable_data(DataType dtype) {
  HN_ENFORCE(dtype != DataType::Undefined, "cannot allocate a tensor of undefined dtype");
  const size_t need = CheckedByteSize(numel_, ItemSize(dtype), "tensor byte size");
  const bool string_change = (dtype == DataType::String) != (dtype_ == DataType::String);
  const bool fits = storage_ && storage_->device == device_ && storage_->capacity >= need && !string_change &&
                    (dtype != DataType::String || storage_->capacity == need);
  // The cap before any allocation; on an error the tensor keeps its old storage and dtype.
  if (!fits)
    CheckLimit(Limit::kMaxTensorBytes, static_cast<int64_t>(need),
               MakeString("allocating ", DataTypeName(dtype), ShapeString(), " on ", device_.str()));
  std::shared_ptr<void> locked;  // page-locked memory for a CPU tensor that asked for it
  // Moving storage that a view shares would split the two: such a tensor stays where it is.
  if (pinned_host_ && device_.is_cpu() && dtype != DataType::String && need > 0 &&
      !(fits && (storage_->pinned || storage_.use_count() > 1))) {
    DeviceBackend* cuda = FindDeviceBackend(DeviceType::CUDA);
    if (cuda && cuda->PinnedHostAllocator()) locked = AllocatePinnedOrNull(cuda->PinnedHostAllocator(), need);
    if (!locked) pinned_host_ = false;  // none to be had (no GPU, or none left): stop asking
  }
  if (fits && !locked) {
    dtype_ = dtype;
    storage_->dtype = dtype;
    ++storage_->generation;  // the caller may write
    return storage_->data.get();
  }
  MaybeInjectAllocationFailure(need);
  // The total-workspace-bytes cap: charged to the workspace whose net (or feed) allocates.
  MemoryAccount* account = need > 0 ? CurrentMemoryAccount() : nullptr;
  if (account)
    ChargeWorkspaceBytes(account, static_cast<int64_t>(need), ReleasedByReplacing(storage_, account),
                         MakeString("allocating ", DataTypeName(dtype), ShapeString(), " on ", device_.str(), " (",
                                    need, " bytes)"));
  struct Uncharge {
    MemoryAccount* account;
    int64_t bytes;
    ~Uncharge() {
      if (account) ReleaseWorkspaceBytes(account, bytes);
    }
  } uncharge{account, static_cast<int64_t>(need)};  // until the memory carries the charge
  auto st = std::make_shared<Storage>();
  st->device = device_;
  st->dtype = dtype;
  st->capacity = need;
  try {
    if (dtype == DataType::String) {
      HN_CHECK_KIND(kUnsupported, device_.is_cpu(), "string tensors live on CPU only, not ", device_.str());
      st->data = std::shared_ptr<void>(new std::string[std::max<int64_t>(numel_, 1)],
                                       [](void* p) { delete[] static_cast<std::string*>(p); });
    } else if (locked) {
      st->data = std::move(locked);
      st->pinned = true;
      // Only the kind of memory changes: keep the contents (an in-place writer reads what it overwrites).
      if (fits) std::memcpy(st->data.get(), storage_->data.get(), need);
    } else if (device_.is_cpu()) {
      st->data = GetCPUAllocator()->Allocate(need);
    } else {
      st->data = GetDeviceBackend(device_)->DeviceAllocator(device_.id)->Allocate(need);
    }
  } catch (const std::bad_alloc&) {
    HN_THROW(kOutOfMemory, "out of ", device_.is_cpu() ? "host" : "device", " memory allocating ",
             DataTypeName(dtype), ShapeString(), " (", need, " bytes) on ", device_.str());
  }
  if (account) {
    void* p = st->data.get();
    uncharge.account = nullptr;  // the deleter releases the charge (also if wrapping throws)
    st->data = std::shared_ptr<void>(
        p, AccountedMemory{std::move(st->data), account->shared_from_this(), static_cast<int64_t>(need)});
  }
  storage_ = std::move(st);
  dtype_ = dtype;
  return storage_->data.get();
}

const void* Tensor::raw_data() const {
  HN_ENFORCE(initialized(), "tensor has no data (dtype ", DataTypeName(dtype_), ", shape ", ShapeString(),
             ")");
  return storage_ ? storage_->data.get() : nullptr;
}

void Tensor::CheckType(DataType t) const {
  HN_ENFORCE(dtype_ == t || (t == DataType::UInt8 && dtype_ == DataType::Byte), "tensor holds ",
             DataTypeName(dtype_), " but ", DataTypeName(t), " was requested");
}

// A view never asks for page-locked memory itself: moving its storage would split it from the
// tensor it views.
void Tensor::ShareData(const Tensor& other) {
  *this = other;
  pinned_host_ = false;
}

Tensor Tensor::View(std::vector<int64_t> shape) const {
  Tensor t = *this;
  t.pinned_host_ = false;
  t.Resize(std::move(shape));
  HN_ENFORCE(t.numel() == numel_, "cannot view ", ShapeString(), " as ", t.ShapeString());
  return t;
}

void Tensor::CopyFrom(const Tensor& src, DeviceContext* ctx) {
  if (&src == this) return;
  HN_ENFORCE(src.initialized(), "cannot copy from a tensor with no data");
  Resize(src.shape());
  void* dst = raw_mutable_data(src.dtype());
  if (src.dtype() == DataType::String) {
    const auto* s = static_cast<const std::string*>(src.raw_data());
    std::copy(s, s + numel_, static_cast<std::string*>(dst));
    return;
  }
  if (ctx) {
    ctx->CopyBytes(nbytes(), src.raw_data(), src.device(), dst, device_);
  } else {
    CopyBytesSync(nbytes(), src.raw_data(), src.device(), dst, device_);
  }
}

Tensor Tensor::To(Device d) const {
  Tensor t(d);
  t.CopyFrom(*this);
  return t;
}

void Tensor::SetExternalData(std::shared_ptr<void> holder, size_t nbytes, DataType dtype, Device d) {
  HN_ENFORCE(nbytes >= static_cast<size_t>(numel_) * ItemSize(dtype), "external buffer of ", nbytes,
             " bytes is too small for ", ShapeString());
  auto st = std::make_shared<Storage>();
  st->data = std::move(holder);
  st->capacity = nbytes;
  st->device = d;
  st->dtype = dtype;
  st->external = true;
  storage_ = std::move(st);
  device_ = d;
  dtype_ = dtype;
}

std::string Tensor::ShapeString() const { return ShapeToString(shape_); }

std::string Tensor::DebugString() const {
  return MakeString(DataTypeName(dtype_), ShapeString(), " on ", device_.str());
}

}  // namespace hetnet
