#include "core/device_scope.h"

#include <algorithm>
#include <string>
#include <vector>

namespace hetnet {

namespace {
thread_local const caffe2::DeviceOption* g_current = nullptr;
}

DeviceScope::DeviceScope(const caffe2::DeviceOption& opt) : prev_(g_current), current_(opt) {
  if (prev_) {
    if (!current_.has_node_name() && prev_->has_node_name()) current_.set_node_name(prev_->node_name());
    // Outer entries accumulate into the inner scope, sorted (as Caffe2's Python scope does).
    std::vector<std::string> info(current_.extra_info().begin(), current_.extra_info().end());
    info.insert(info.end(), prev_->extra_info().begin(), prev_->extra_info().end());
    std::sort(info.begin(), info.end());
    current_.clear_extra_info();
    for (const auto& e : info) current_.add_extra_info(e);
  }
  g_current = &current_;
}

DeviceScope::~DeviceScope() { g_current = prev_; }

const caffe2::DeviceOption* CurrentDeviceScope() { return g_current; }

void ApplyDeviceScope(caffe2::OperatorDef* op) {
  if (g_current && !op->has_device_option()) *op->mutable_device_option() = *g_current;
}

}  // namespace hetnet
