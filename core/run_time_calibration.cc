#include "core/run_time_calibration.h"

#include <algorithm>
#include <cmath>
#include <vector>

#include "core/error.h"
#include "core/net.h"
#include "core/profiler.h"
#include "core/workspace.h"

namespace hetnet {

namespace {

constexpr double kMinScale = 0.2, kMaxScale = 5.0;

// The one device every op of `net` runs on; false when there are several.
bool OneDevice(const caffe2::NetDef& net, Device* device) {
  const Device net_dev = net.has_device_option() ? DeviceFromOption(net.device_option()) : Device::CPU();
  bool first = true;
  for (const auto& op : net.op()) {
    const Device d = op.has_device_option() ? DeviceFromOption(op.device_option()) : net_dev;
    if (!first && d != *device) return false;
    *device = d;
    first = false;
  }
  return !first;
}

}  // namespace

RunTimeCalibration CalibrateToRunTime(DeviceProfile* profile, const caffe2::NetDef& placed,
                                      const std::map<std::string, TensorInfo>& input_shapes,
                                      const AutoPlacementOptions& options, const std::set<std::string>& keys,
                                      double measured_us) {
  HN_ENFORCE(profile != nullptr, "CalibrateToRunTime: no profile");
  RunTimeCalibration c;
  c.measured_us = measured_us;
  Device device = Device::CPU();
  if (!OneDevice(placed, &device)) {
    c.note = "the net runs on more than one device: its times are kept as measured";
    return c;
  }
  const std::string prefix = device.str() + "|";
  std::vector<std::string> own;  // this net's entries on its device
  for (const auto& k : keys)
    if (k.compare(0, prefix.size(), prefix) == 0 && profile->measured_op_us.count(k)) own.push_back(k);
  if (own.empty() || !(measured_us > 0)) {
    c.note = own.empty() ? "no measured entries of the net" : "no measured run time";
    return c;
  }
  AutoPlacementOptions opts = options;
  opts.devices = {Device::CPU(), device};
  opts.override_pinned = false;
  auto predict = [&](double scale) {
    DeviceProfile p = *profile;
    for (const auto& k : own) {
      p.measured_op_us[k] *= scale;
      for (auto* split : {&p.measured_launch_us, &p.measured_device_us}) {
        auto it = split->find(k);
        if (it != split->end()) it->second *= scale;
      }
    }
    return std::make_pair(AutoPlace(placed, input_shapes, p, opts).predicted_us, p);
  };
  c.predicted_us = predict(1).first;
  const double at_min = predict(kMinScale).first, at_max = predict(kMaxScale).first;
  if (!(at_max - at_min > 1e-9 * std::max(1.0, at_max))) {  // a NetDef other than the measured net's
    c.note = "the net's measured entries do not enter its prediction (is it the NetDef the net was created from?)";
    return c;
  }
  // The prediction grows with the factor: bisect its logarithm.
  double lo = std::log(kMinScale), hi = std::log(kMaxScale);
  if (at_min >= measured_us) {
    hi = lo;
    c.note = "the model predicts more than the measured time even with its times at 1/5";
  } else if (at_max <= measured_us) {
    lo = hi;
    c.note = "the model predicts less than the measured time even with its times at 5x";
  }
  for (int i = 0; i < 40 && hi - lo > 1e-4; ++i) {
    const double mid = 0.5 * (lo + hi);
    (predict(std::exp(mid)).first < measured_us ? lo : hi) = mid;
  }
  c.scale = std::exp(0.5 * (lo + hi));
  auto [calibrated_us, scaled] = predict(c.scale);
  c.calibrated_us = calibrated_us;
  c.device = device.str();
  c.entries = static_cast<int>(own.size());
  scaled.run_time_scales[prefix + placed.name()] = c.scale;
  *profile = std::move(scaled);
  return c;
}

double MedianRunUs(NetBase* net, const Workspace& ws, int runs) {
  HN_ENFORCE(net != nullptr && runs > 0, "MedianRunUs: needs a net and at least one run");
  std::vector<double> us;
  for (int i = 0; i < runs; ++i) {
    const double t0 = ProfilerNowUs();
    net->Run();
    for (const auto& name : net->def().external_output()) {
      const Blob* b = ws.GetBlob(name);
      if (b && b->IsTensor() && !b->GetTensor().device().is_cpu()) b->GetTensor().To(Device::CPU());
    }
    us.push_back(ProfilerNowUs() - t0);
  }
  std::nth_element(us.begin(), us.begin() + us.size() / 2, us.end());
  return us[us.size() / 2];
}

}  // namespace hetnet
