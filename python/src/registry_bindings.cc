// Operator registry and schemas, device facts of this build.
#include <pybind11/stl.h>

#include <algorithm>
#include <set>

#include "bindings.h"
#include "core/op_schema.h"
#include "core/operator.h"

namespace hetnet_python {

using hetnet::Device;
using hetnet::DeviceType;

Device DeviceFromBytes(const py::object& option_bytes) {
  if (option_bytes.is_none()) return Device::CPU();
  auto opt = ParseProto<caffe2::DeviceOption>(py::reinterpret_borrow<py::bytes>(option_bytes), "DeviceOption");
  return hetnet::DeviceFromOption(opt);
}

py::tuple DeviceToTuple(const Device& d) { return py::make_tuple(static_cast<int>(d.type), d.id); }

Device DeviceFromTuple(const py::handle& t) {
  auto pair = py::cast<std::pair<int, int>>(t);
  if (pair.first == 0) return Device::CPU();
  if (pair.first == 1) return Device::CUDA(pair.second);
  HN_THROW(kUnsupported, "device type ", pair.first, " (", hetnet::DeviceTypeName(pair.first),
           ") is not supported by hetnet");
}

namespace {

std::vector<std::string> RegisteredOperators() {
  std::set<std::string> all;
  for (auto dt : {DeviceType::CPU, DeviceType::CUDA})
    for (auto& t : hetnet::OperatorRegistry::Types(dt)) all.insert(t);
  return {all.begin(), all.end()};
}

std::vector<std::string> Schemas() {
  std::vector<std::string> out;
  for (const auto& kv : hetnet::OpSchemaRegistry::Map()) out.push_back(kv.first);
  return out;
}

}  // namespace

void InitRegistry(py::module_& m) {
  m.def("registered_operators", &RegisteredOperators, "Operator types with a kernel on some device.");
  m.def("operator_schemas", &Schemas, "Operator types with a schema.");
  m.def("has_kernel", [](const std::string& type, int device_type) {
    return hetnet::OperatorRegistry::Has(type, static_cast<DeviceType>(device_type));
  });
  m.def("operator_engines", [](const std::string& type, int device_type) {
    return hetnet::OperatorRegistry::Engines(type, static_cast<DeviceType>(device_type));
  });
  m.def("nearby_opnames", [](const std::string& name, size_t limit) {
    return hetnet::NearestOperatorNames(name, limit);
  }, py::arg("name"), py::arg("limit") = 3);
  m.def("schema_doc", [](const std::string& type) -> py::object {
    const hetnet::OpSchema* s = hetnet::OpSchemaRegistry::Find(type);
    if (!s) return py::none();
    return py::str(s->doc());
  });
  // Checks input/output counts and in-place rules of a serialized OperatorDef against its schema.
  m.def("verify_operator", [](const py::bytes& op_bytes) {
    auto op = ParseProto<caffe2::OperatorDef>(op_bytes, "OperatorDef");
    if (const hetnet::OpSchema* s = hetnet::OpSchemaRegistry::Find(op.type())) s->Verify(op);
  });
  m.def("has_cuda_support", &hetnet::HasCudaSupport);
  m.def("num_cuda_devices", &hetnet::NumCudaDevices);
}

}  // namespace hetnet_python
