// CalibrateToRunTime (core/run_time_calibration.h) on synthetic profiles: after the fit the cost
// model predicts the measured run time of the net it measured; only that net's entries on its one
// device change; nets on two devices and misfits past the bounds are said, not forced.
#include <catch2/catch.hpp>

#include "core/op_cost.h"
#include "core/run_time_calibration.h"
#include "test_auto_placement_util.h"

using namespace hetnet;
using namespace auto_placement_test;

namespace {

// x -> FC -> Relu -> FC on `device`, every op pinned; its measured entries (20, 5, 20 us) in
// *profile and their keys in *keys.
caffe2::NetDef MeasuredMlp(const Device& device, DeviceProfile* profile, std::set<std::string>* keys,
                           std::map<std::string, TensorInfo>* shapes) {
  caffe2::NetDef net;
  net.set_name("mlp_on_" + device.str());
  net.add_external_input("x");
  (*shapes)["x"] = TensorInfo::Of({8, 128}, DataType::Float);
  AddFC(&net, shapes, "x", "h", 128, 128);
  Op(&net, "Relu", {"h"}, {"r"});
  AddFC(&net, shapes, "r", "y", 128, 128);
  net.add_external_output("y");
  const TensorInfo act = TensorInfo::Of({8, 128}, DataType::Float);
  const std::vector<TensorInfo> fc_in{act, shapes->at("h_w"), shapes->at("h_b")};
  const std::string fc = device.str() + "|" + OpSignature(net.op(0), fc_in);
  const std::string relu = device.str() + "|" + OpSignature(net.op(1), {act});
  profile->measured_op_us[fc] = 20;
  profile->measured_op_us[relu] = 5;
  keys->insert({fc, relu});
  for (auto& op : *net.mutable_op()) DeviceToOption(device, op.mutable_device_option());
  return net;
}

double Predict(const caffe2::NetDef& net, const std::map<std::string, TensorInfo>& shapes,
               const DeviceProfile& profile) {
  return AutoPlace(net, shapes, profile).predicted_us;
}

}  // namespace

TEST_CASE("run time calibration: the model then predicts the measured run, on the CPU and on a GPU",
          "[auto_placement]") {
  for (const Device device : {Device::CPU(), Device::CUDA(0)}) {
    DeviceProfile profile = SyntheticProfile();
    profile.measured_op_us["cpu|Tanh(unrelated)"] = 7;  // another net's entry stays
    std::set<std::string> keys;
    std::map<std::string, TensorInfo> shapes;
    const auto net = MeasuredMlp(device, &profile, &keys, &shapes);
    INFO(device.str());
    const double before = Predict(net, shapes, profile);
    for (double measured : {0.7 * before, 1.6 * before}) {
      DeviceProfile p = profile;
      const auto fit = CalibrateToRunTime(&p, net, shapes, {}, keys, measured);
      CHECK(fit.device == device.str());
      CHECK(fit.note.empty());
      CHECK(fit.entries == 2);
      CHECK(fit.predicted_us == Approx(before).epsilon(1e-9));
      CHECK(fit.calibrated_us == Approx(measured).epsilon(1e-3));
      CHECK(Predict(net, shapes, p) == Approx(measured).epsilon(1e-3));
      CHECK((measured < before ? fit.scale < 1 : fit.scale > 1));
      for (const auto& k : keys) CHECK(p.measured_op_us.at(k) == Approx(profile.measured_op_us.at(k) * fit.scale));
      CHECK(p.measured_op_us.at("cpu|Tanh(unrelated)") == 7);
      CHECK(p.run_time_scales.at(device.str() + "|" + net.name()) == fit.scale);
      // Measured again (the entries overwritten with the raw times) and fitted again: one factor.
      DeviceProfile again = p;
      for (const auto& k : keys) again.measured_op_us[k] = profile.measured_op_us.at(k);
      CHECK(CalibrateToRunTime(&again, net, shapes, {}, keys, measured).scale == Approx(fit.scale).epsilon(1e-6));
      // The profile file keeps the record.
      CHECK(DeviceProfile::FromJson(p.ToJson()).run_time_scales == p.run_time_scales);
    }
  }
}

TEST_CASE("run time calibration: two devices, no entries, another net's entries and misfits past 5x are said, not forced",
          "[auto_placement]") {
  DeviceProfile profile = SyntheticProfile();
  std::set<std::string> keys;
  std::map<std::string, TensorInfo> shapes;
  auto net = MeasuredMlp(Device::CPU(), &profile, &keys, &shapes);
  const double before = Predict(net, shapes, profile);

  auto mixed = net;
  DeviceToOption(Device::CUDA(0), mixed.mutable_op(1)->mutable_device_option());
  DeviceProfile p = profile;
  auto fit = CalibrateToRunTime(&p, mixed, shapes, {}, keys, before / 2);
  CHECK(fit.device.empty());
  CHECK(fit.note.find("more than one device") != std::string::npos);
  CHECK(p.measured_op_us == profile.measured_op_us);
  CHECK(p.run_time_scales.empty());

  fit = CalibrateToRunTime(&p, net, shapes, {}, {}, before / 2);
  CHECK(fit.note == "no measured entries of the net");
  CHECK(p.measured_op_us == profile.measured_op_us);

  // Entries of another net (a NetDef other than the one measured): nothing to fit, nothing scaled.
  p.measured_op_us["cpu|Tanh(unrelated)"] = 7;
  fit = CalibrateToRunTime(&p, net, shapes, {}, {"cpu|Tanh(unrelated)"}, before / 2);
  CHECK(fit.note.find("do not enter its prediction") != std::string::npos);
  CHECK(p.measured_op_us.at("cpu|Tanh(unrelated)") == 7);
  CHECK(p.run_time_scales.empty());

  fit = CalibrateToRunTime(&p, net, shapes, {}, keys, before * 100);
  CHECK(fit.scale == Approx(5));
  CHECK(fit.note.find("even with its times at 5x") != std::string::npos);
  CHECK(fit.calibrated_us < before * 100);
}
