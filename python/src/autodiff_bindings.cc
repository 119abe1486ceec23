// Training bindings: the backward pass (core/autodiff.h) and the memory report
// (core/memory_report.h) for hetnet.core / hetnet.workspace.
#include <pybind11/stl.h>

#include <map>
#include <set>

#include "bindings.h"
#include "core/autodiff.h"
#include "core/gradient.h"
#include "core/memory_report.h"
#include "core/op_schema.h"

namespace hetnet_python {

namespace {

// A gradient maker written in Python (caffe2.python.core.GradientRegistry.RegisterGradient): the
// callable gets (serialized OperatorDef, [output gradient name or None]) and returns
// ([serialized gradient OperatorDef], [input gradient name or None]).
class PythonGradientMaker : public hetnet::GradientMakerBase {
 public:
  PythonGradientMaker(const caffe2::OperatorDef& def, const std::vector<std::string>& g, PyObject* fn)
      : GradientMakerBase(def, g), fn_(fn) {}
  std::vector<caffe2::OperatorDef> GetGradientDefs() override {
    py::gil_scoped_acquire gil;
    std::vector<caffe2::OperatorDef> defs;
    try {
      py::list g_out;
      for (const auto& g : g_output_) g_out.append(g.empty() ? py::object(py::none()) : py::object(py::str(g)));
      py::object result = py::reinterpret_borrow<py::object>(fn_)(SerializeProto(def_), g_out);
      auto pair = result.cast<py::tuple>();
      for (auto item : pair[0].cast<py::list>()) defs.push_back(ParseProto<caffe2::OperatorDef>(item.cast<py::bytes>(), "OperatorDef"));
      g_input_.assign(def_.input_size(), "");
      int j = 0;
      for (auto item : pair[1].cast<py::list>()) {
        if (j >= def_.input_size()) break;
        if (!item.is_none()) g_input_[j] = item.cast<std::string>();
        ++j;
      }
    } catch (py::error_already_set& e) {
      std::string what = e.what();
      HN_THROW(kInvalidArgument, "the Python gradient of '", def_.type(), "' failed: ", what);
    } catch (py::cast_error& e) {
      HN_THROW(kInvalidArgument, "the Python gradient of '", def_.type(),
               "' must return (list of OperatorDefs, list of input gradient names or None): ", e.what());
    }
    return defs;
  }

 private:
  PyObject* fn_;
};

}  // namespace

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

  // (op type, callable) -> registers a Python gradient maker; it replaces any C++ one for the type
  // (Caffe2 consulted its Python registry first). The callable is kept for the process's lifetime.
  m.def("register_python_gradient", [](const std::string& type, py::function fn) {
    PyObject* held = fn.ptr();
    Py_INCREF(held);  // never released: the registry outlives the interpreter's teardown
    hetnet::GradientRegistry::Register(type, [held](const caffe2::OperatorDef& d, const std::vector<std::string>& g) {
      return std::unique_ptr<hetnet::GradientMakerBase>(new PythonGradientMaker(d, g, held));
    });
  }, py::arg("type"), py::arg("fn"));

  // (serialized OperatorDef, [output gradient or ""]) -> ([serialized gradient ops], [input gradient or ""])
  // from the registered gradient maker (C++ or Python), as Caffe2's C.get_gradient_defs.
  m.def("get_gradient_defs", [](const py::bytes& op_bytes, const std::vector<std::string>& g_output) -> py::tuple {
    auto op = ParseProto<caffe2::OperatorDef>(op_bytes, "OperatorDef");
    if (hetnet::GradientRegistry::HasNoGradient(op.type()))
      return py::make_tuple(py::list(), std::vector<std::string>(op.input_size(), ""));
    const hetnet::GradientMakerFn* fn = hetnet::GradientRegistry::Find(op.type());
    if (!fn) HN_THROW(kNotFound, "no gradient maker is registered for operator type '", op.type(), "'");
    std::unique_ptr<hetnet::GradientMakerBase> maker = (*fn)(op, g_output);
    maker->set_input_grads_size(op.input_size());
    auto defs = maker->GetGradientDefs();
    std::vector<std::string> gin = maker->input_grads();
    gin.resize(op.input_size());
    py::list ops;
    for (const auto& d : defs) ops.append(SerializeProto(d));
    return py::make_tuple(ops, gin);
  }, py::arg("op"), py::arg("g_output"));

  m.def("has_gradient_maker", [](const std::string& type) {
    return hetnet::GradientRegistry::Find(type) != nullptr;
  });
  m.def("has_no_gradient", [](const std::string& type) { return hetnet::GradientRegistry::HasNoGradient(type); });

  // (serialized OperatorDef) -> ([(device_type, id)] of inputs, [(device_type, id)] of outputs):
  // the schema's device inference for the op on its own device option (no schema: all on it).
  m.def("infer_op_blob_devices", [](const py::bytes& op_bytes) -> py::tuple {
    auto op = ParseProto<caffe2::OperatorDef>(op_bytes, "OperatorDef");
    const hetnet::Device device = op.has_device_option() ? hetnet::DeviceFromOption(op.device_option())
                                                         : hetnet::Device::CPU();
    std::pair<std::vector<hetnet::Device>, std::vector<hetnet::Device>> devices;
    if (const hetnet::OpSchema* schema = hetnet::OpSchemaRegistry::Find(op.type()))
      devices = schema->InferDevices(op, device);
    else
      devices = {std::vector<hetnet::Device>(op.input_size(), device), std::vector<hetnet::Device>(op.output_size(), device)};
    py::list ins, outs;
    for (const auto& d : devices.first) ins.append(DeviceToTuple(d));
    for (const auto& d : devices.second) outs.append(DeviceToTuple(d));
    return py::make_tuple(ins, outs);
  }, py::arg("op"));

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
    py::dict params_by_device, data_by_device, prepared_by_device;
    for (const auto& [dev, n] : r.param_bytes) params_by_device[DeviceToTuple(dev)] = n;
    for (const auto& [dev, n] : r.data_bytes) data_by_device[DeviceToTuple(dev)] = n;
    for (const auto& [dev, n] : r.prepared_bytes) prepared_by_device[DeviceToTuple(dev)] = n;
    py::dict out;
    out["net_name"] = r.net_name;
    out["blobs"] = blobs;
    out["param_bytes"] = params_by_device;
    out["data_bytes"] = data_by_device;
    out["param_total"] = r.param_total;
    out["data_total"] = r.data_total;
    out["unknown"] = r.unknown;
    out["prepared_bytes"] = prepared_by_device;
    out["prepared_total"] = r.prepared_total;
    out["text"] = r.ToText();
    return out;
  }, py::arg("net"), py::arg("shapes"), py::arg("params"), py::arg("from_workspace"));
}

}  // namespace hetnet_python
