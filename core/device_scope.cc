#include "core/device_scope.h"

namespace hetnet {

namespace {
thread_local const caffe2::DeviceOption* g_current = nullptr;
}

DeviceScope::DeviceScope(const caffe2::DeviceOption& opt) : prev_(g_current), current_(opt) {
  if (prev_) {
    if (!current_.has_node_name() && prev_->has_node_name()) current_.set_node_name(prev_->node_name());
    caffe2::DeviceOption merged = current_;
    merged.clear_extra_info();
    for (const auto& e : prev_->extra_info()) merged.add_extra_info(e);
    for (const auto& e : current_.extra_info()) merged.add_extra_info(e);
    current_ = merged;
  }
  g_current = &current_;
}

DeviceScope::~DeviceScope() { g_current = prev_; }

const caffe2::DeviceOption* CurrentDeviceScope() { return g_current; }

void ApplyDeviceScope(caffe2::OperatorDef* op) {
  if (g_current && !op->has_device_option()) *op->mutable_device_option() = *g_current;
}

}  // namespace hetnet
