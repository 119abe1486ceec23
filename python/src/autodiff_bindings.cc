// Training bindings: the backward pass (core/autodiff.h) and the memory report
// (core/memory_report.h) for hetnet.core / hetnet.workspace.
#include <pybind11/stl.h>

#include <map>
#include <set>

#include "bindings.h"
#include "core/autodiff.h"
#include "core/memory_report.h"

namespace hetnet_python {

void InitAutodiff(py::module_& m) {
  // (serialized NetDef, [(loss, given grad or "")]) -> ([serialized gradient OperatorDef], {blob: grad})
  m.def("get_backward_pass", [](const py::bytes& net_bytes, const std::vector<std::pair<std::string, std::string>>& losses) {
    auto net = ParseProto<caffe2::NetDef>(net_bytes, "NetDef");
    hetnet::BackwardPass pass;
    {
      py::gil_scoped_release release;
      pass = hetnet::GetBackwardPass(net, losses);
    }
    py::list ops;
    for (const auto& op : pass.ops) ops.append(SerializeProto(op));
    return py::make_tuple(ops, pass.blob_to_grad);
  }, py::arg("net"), py::arg("losses"));

  // (serialized NetDef, {blob: (dims, dtype)}, [params], from_workspace) -> report dict
  m.def("memory_report", [](const py::bytes& net_bytes, const std::map<std::string, std::pair<std::vector<int64_t>, int>>& shapes,
                            const std::vector<std::string>& params, bool from_workspace) {
    auto net = ParseProto<caffe2::NetDef>(net_bytes, "NetDef");
    std::set<std::string> p(params.begin(), params.end());
    hetnet::MemoryReport r;
    if (from_workspace) {
      r = hetnet::MemoryReportFromWorkspace(net, *CurrentWorkspace(), p);
    } else {
      std::map<std::string, hetnet::TensorInfo> s;
      for (const auto& [name, info] : shapes)
        s[name] = hetnet::TensorInfo::Of(info.first, static_cast<hetnet::DataType>(info.second));
      r = hetnet::MemoryReportFromShapes(net, s, p);
    }
    py::list blobs;
    for (const auto& b : r.blobs) {
      py::dict d;
      d["name"] = b.name;
      d["shape"] = b.info.known ? py::object(py::cast(b.info.dims)) : py::object(py::none());
      d["dtype"] = static_cast<int>(b.info.dtype);
      d["device"] = DeviceToTuple(b.device);
      d["bytes"] = b.bytes;
      d["param"] = b.param;
      d["producer"] = b.producer;
      blobs.append(d);
    }
    py::dict params_by_device, data_by_device;
    for (const auto& [dev, n] : r.param_bytes) params_by_device[DeviceToTuple(dev)] = n;
    for (const auto& [dev, n] : r.data_bytes) data_by_device[DeviceToTuple(dev)] = n;
    py::dict out;
    out["net_name"] = r.net_name;
    out["blobs"] = blobs;
    out["param_bytes"] = params_by_device;
    out["data_bytes"] = data_by_device;
    out["param_total"] = r.param_total;
    out["data_total"] = r.data_total;
    out["unknown"] = r.unknown;
    out["text"] = r.ToText();
    return out;
  }, py::arg("net"), py::arg("shapes"), py::arg("params"), py::arg("from_workspace"));
}

}  // namespace hetnet_python
