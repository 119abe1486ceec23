// hetnet._C.onnx_import: an ONNX model (bytes) -> the init and predict NetDefs (serialized) and the
// graph's inputs and outputs, for hetnet.onnx.backend and tests. Built only with hetnet_onnx
// (HETNET_WITH_ONNX); without it the function raises hetnet's unsupported error.
#include <pybind11/stl.h>

#include "bindings.h"

#ifdef HETNET_WITH_ONNX
#include "onnx/onnx_import.h"
#endif

namespace hetnet_python {

#ifdef HETNET_WITH_ONNX
namespace {

py::list ValueInfos(const std::vector<hetnet::onnxio::OnnxValueInfo>& infos) {
  py::list out;
  for (const auto& v : infos) {
    py::object dims = py::none();
    if (v.known_rank) dims = py::cast(v.dims);
    out.append(py::make_tuple(v.name, static_cast<int>(v.dtype), dims));
  }
  return out;
}

py::dict OnnxImport(const py::bytes& model_bytes, const py::bytes& device_option, const py::dict& node_devices,
                    const std::string& base_dir, const std::string& net_name) {
  hetnet::onnxio::OnnxImportOptions options;
  if (!std::string(device_option).empty())
    options.device = ParseProto<caffe2::DeviceOption>(device_option, "DeviceOption (device_option)");
  for (const auto& [key, value] : node_devices)
    options.node_devices[py::cast<std::string>(key)] =
        ParseProto<caffe2::DeviceOption>(py::cast<py::bytes>(value), "DeviceOption (node_devices)");
  options.base_dir = base_dir;
  options.net_name = net_name;
  const std::string bytes = model_bytes;
  hetnet::onnxio::ImportedOnnxModel m;
  {
    py::gil_scoped_release release;
    m = hetnet::onnxio::ImportOnnxModel(bytes, options);
  }
  py::dict out;
  out["init_net"] = SerializeProto(m.init_net);
  out["predict_net"] = SerializeProto(m.predict_net);
  out["inputs"] = ValueInfos(m.inputs);
  out["outputs"] = ValueInfos(m.outputs);
  py::dict opsets;
  for (const auto& [domain, version] : m.opsets) opsets[py::str(domain)] = version;
  out["opsets"] = opsets;
  out["ir_version"] = m.ir_version;
  return out;
}

}  // namespace
#endif

void InitOnnx(py::module_& m) {
#ifdef HETNET_WITH_ONNX
  m.def("onnx_import", &OnnxImport, py::arg("model_bytes"), py::arg("device_option") = py::bytes(""),
        py::arg("node_devices") = py::dict(), py::arg("base_dir") = "", py::arg("net_name") = "",
        "Imports an ONNX ModelProto (bytes): dict with init_net, predict_net (serialized NetDefs), inputs and "
        "outputs ((name, caffe2 dtype, dims or None)), opsets (domain -> version) and ir_version. "
        "device_option / node_devices values are serialized caffe2 DeviceOptions; base_dir is where "
        "external-data files are (empty: refused).");
#else
  m.def("onnx_import", [](const py::args&, const py::kwargs&) -> py::dict {
    HN_THROW(kUnsupported, "this hetnet was built without ONNX support (HETNET_BUILD_ONNX=OFF)");
  });
#endif
}

}  // namespace hetnet_python
