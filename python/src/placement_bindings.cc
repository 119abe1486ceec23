// The cross-device copy pass, placement options and placement reports (core/placement.h).
#include <pybind11/stl.h>

#include "bindings.h"
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
