// The cross-device copy pass, placement options and placement reports (core/placement.h).
#include <pybind11/stl.h>

#include "bindings.h"
#include "core/auto_placement.h"
#include "core/placement.h"

namespace hetnet_python {

namespace {


py::dict ReportToDict(const hetnet::PlacementReport& r) {
  py::list ops, copies;
  for (const auto& op : r.ops) {
    py::dict d;
    d["index"] = op.index;
    d["type"] = op.type;
    d["device"] = DeviceToTuple(op.device);
    d["engine"] = op.engine;
    d["reason"] = op.reason;
    ops.append(d);
  }
  for (const auto& c : r.copies) {
    py::dict d;
    d["op_index"] = c.op_index;
    d["type"] = c.type;
    d["src_blob"] = c.src_blob;
    d["dst_blob"] = c.dst_blob;
    d["from"] = DeviceToTuple(c.from);
    d["to"] = DeviceToTuple(c.to);
    d["bytes"] = c.bytes;
    copies.append(d);
  }
  py::dict out;
  out["net_name"] = r.net_name;
  out["text"] = r.ToText();  // the same text as C++ and `hetnet inspect --placement`
  out["dot"] = r.ToDot();
  out["ops"] = ops;
  out["copies"] = copies;
  return out;
}

py::tuple ResultToTuple(const hetnet::CopyPassResult& r) {
  py::dict devices;
  for (const auto& [blob, dev] : r.blob_devices) devices[py::str(blob)] = DeviceToTuple(dev);
  return py::make_tuple(SerializeProto(r.net), devices, ReportToDict(r.report));
}

}  // namespace

void InitPlacement(py::module_& m) {
  // (net_bytes, {blob: (type, id)}) -> (net_bytes, {blob: (type, id)}, report dict)
  m.def("cross_device_copy_pass", [](const py::bytes& net_bytes, const py::dict& input_devices) {
    auto net = ParseProto<caffe2::NetDef>(net_bytes, "NetDef");
    std::map<std::string, hetnet::Device> devices;
    for (auto item : input_devices) devices[py::cast<std::string>(item.first)] = DeviceFromTuple(item.second);
    return ResultToTuple(hetnet::CrossDeviceCopyPass(net, devices, {}));
  });
  // Placement of a net against the current workspace, as net creation would do it.
  m.def("place_net", [](const py::bytes& net_bytes, bool strict, bool soft_placement) {
    auto net = ParseProto<caffe2::NetDef>(net_bytes, "NetDef");
    hetnet::PlacementOptions opts;
    opts.strict = strict;
    opts.soft_placement = soft_placement;
    return ResultToTuple(hetnet::PlaceNet(net, *CurrentWorkspace(), opts));
  });
  // Offline plan for a machine with `devices` ("cpu", "cuda:N"): external inputs' devices and shapes
  // from the current workspace (if from_workspace), then the init net planned on the same devices
  // (not run; b"" for none), then `shapes` ({blob: (dims, TensorProto dtype)}).
  m.def("plan_placement", [](const py::bytes& net_bytes, const std::vector<std::string>& devices, bool strict,
                             bool soft_placement, const py::bytes& init_bytes,
                             const std::map<std::string, std::pair<std::vector<int64_t>, int>>& shapes,
                             bool from_workspace) {
    auto net = ParseProto<caffe2::NetDef>(net_bytes, "NetDef");
    hetnet::PlacementOptions opts;
    opts.strict = strict;
    opts.soft_placement = soft_placement;
    std::map<std::string, hetnet::Device> input_devices;
    std::map<std::string, hetnet::TensorInfo> input_shapes;
    if (from_workspace) hetnet::ExternalInputsFromWorkspace(net, *CurrentWorkspace(), &input_devices, &input_shapes);
    if (py::len(init_bytes) > 0) {
      auto init = ParseProto<caffe2::NetDef>(init_bytes, "NetDef");
      hetnet::CopyPassResult planned;
      try {
        planned = hetnet::PlanPlacement(init, devices, {}, {}, opts);
      } catch (hetnet::Error& e) {
        throw e.AddContext("in the init net '" + init.name() + "'");
      }
      for (const auto& op : init.op())
        for (const auto& name : op.output()) {
          auto d = planned.blob_devices.find(name);
          if (d != planned.blob_devices.end()) input_devices[name] = d->second;
          auto sh = planned.blob_shapes.find(name);
          if (sh != planned.blob_shapes.end()) input_shapes[name] = sh->second;
        }
    }
    for (const auto& [name, info] : shapes)
      input_shapes[name] = hetnet::TensorInfo::Of(info.first, static_cast<hetnet::DataType>(info.second));
    // A placement="auto" net: what net creation on that machine would do, AutoPlace first (the
    // profile of $HETNET_DEVICE_PROFILE, else built-in constants for the list).
    bool automatic = false;
    for (const auto& arg : net.arg()) automatic |= arg.name() == "placement" && arg.s() == "auto";
    if (automatic) {
      const hetnet::DeviceProfile profile = hetnet::ProfileFromEnvironment(hetnet::PlannedGpuCount(devices));
      hetnet::AutoPlacementOptions options;
      options.devices = hetnet::ParseDeviceList(devices);
      for (const auto& [name, d] : input_devices) options.input_devices[name] = d;
      const auto planned = hetnet::AutoPlace(net, input_shapes, profile, options);
      return ResultToTuple(hetnet::PlanAutoPlaced(planned, devices, input_shapes, opts));
    }
    return ResultToTuple(hetnet::PlanPlacement(net, devices, input_devices, input_shapes, opts));
  });
  m.def("get_placement_options", [] {
    const auto& o = hetnet::DefaultPlacementOptions();
    return py::make_tuple(o.strict, o.soft_placement);
  });
  m.def("set_placement_options", [](bool strict, bool soft_placement) {
    auto& o = hetnet::DefaultPlacementOptions();
    o.strict = strict;
    o.soft_placement = soft_placement;
  });
}

}  // namespace hetnet_python
