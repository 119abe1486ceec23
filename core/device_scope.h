// C++ DeviceScope for code that builds NetDefs: RAII, nestable, thread-local; the innermost
// scope replaces outer ones (only node_name is inherited, and extra_info entries accumulate,
// sorted), as in Caffe2's Python scope: both give the same DeviceOption.
#pragma once

#include "proto/caffe2.pb.h"

namespace hetnet {

class DeviceScope {
 public:
  explicit DeviceScope(const caffe2::DeviceOption& opt);
  ~DeviceScope();
  DeviceScope(const DeviceScope&) = delete;
  DeviceScope& operator=(const DeviceScope&) = delete;

 private:
  const caffe2::DeviceOption* prev_;
  caffe2::DeviceOption current_;
};

// The innermost scope's option on this thread, or nullptr at top level.
const caffe2::DeviceOption* CurrentDeviceScope();
// Gives `op` the current scope's device option unless it has its own.
void ApplyDeviceScope(caffe2::OperatorDef* op);

}  // namespace hetnet
