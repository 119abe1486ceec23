// A type-erased, named-by-the-workspace holder. Usually a Tensor; any C++ object can live in one.
#pragma once

#include <memory>
#include <string>
#include <typeindex>
#include <typeinfo>

#include "core/error.h"
#include "core/tensor.h"

namespace hetnet {

std::string DemangleTypeName(const char* mangled);

class Blob {
 public:
  bool empty() const { return !ptr_; }
  template <typename T>
  bool IsType() const { return ptr_ && type_ == std::type_index(typeid(T)); }
  bool IsTensor() const { return IsType<Tensor>(); }
  std::string TypeName() const { return ptr_ ? DemangleTypeName(type_.name()) : "nothing"; }

  template <typename T>
  const T& Get() const {
    if (!IsType<T>()) {
      HN_THROW(kInvalidArgument, "blob holds ", TypeName(), ", not ", DemangleTypeName(typeid(T).name()));
    }
    return *static_cast<const T*>(ptr_.get());
  }
  // Returns the held T, replacing whatever else the blob held by a default T.
  template <typename T>
  T* GetMutable() {
    if (!IsType<T>()) Reset(std::make_shared<T>());
    return static_cast<T*>(ptr_.get());
  }
  template <typename T>
  void Reset(std::shared_ptr<T> value) {
    ptr_ = std::move(value);
    type_ = std::type_index(typeid(T));
  }
  void Reset() { ptr_.reset(); }

  // The tensor in this blob, on `device` (a new empty one if the blob held something else or a
  // tensor elsewhere; the old memory is freed when no view holds it).
  Tensor* GetMutableTensor(Device device) {
    Tensor* t = GetMutable<Tensor>();
    t->SetDevice(device);
    return t;
  }
  const Tensor& GetTensor() const { return Get<Tensor>(); }

 private:
  std::shared_ptr<void> ptr_;
  std::type_index type_ = std::type_index(typeid(void));
};

}  // namespace hetnet
