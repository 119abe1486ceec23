// hetnet::Error → the Python exception class for its kind (classes defined in hetnet/_errors.py,
// all subclasses of hetnet.HetnetError(RuntimeError)).
#include "bindings.h"

namespace hetnet_python {

namespace {

const char* KindName(hetnet::ErrorKind kind) {
  switch (kind) {
    case hetnet::ErrorKind::kRuntime: return "runtime";
    case hetnet::ErrorKind::kInvalidArgument: return "invalid_argument";
    case hetnet::ErrorKind::kNotFound: return "not_found";
    case hetnet::ErrorKind::kUnsupported: return "unsupported";
    case hetnet::ErrorKind::kOutOfMemory: return "out_of_memory";
    case hetnet::ErrorKind::kUnavailable: return "unavailable";
    case hetnet::ErrorKind::kTimeout: return "timeout";
    case hetnet::ErrorKind::kIo: return "io";
  }
  return "runtime";
}

void RaiseHetnetError(const hetnet::Error& e) {
  const std::string text = e.what();
  py::object message = py::reinterpret_steal<py::object>(
      PyUnicode_DecodeUTF8(text.data(), static_cast<Py_ssize_t>(text.size()), "replace"));
  py::object cls = py::module_::import("hetnet._errors").attr("error_class_for_kind")(KindName(e.kind()));
  py::list context;
  for (const auto& line : e.context()) context.append(py::str(line));
  py::object exc = cls(message, py::str(e.message()), context);
  PyErr_SetObject(cls.ptr(), exc.ptr());
}

}  // namespace

void InitErrors(py::module_& m) {
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const hetnet::Error& e) {
      RaiseHetnetError(e);
    }
  });
  // Raises a C++ hetnet::Error of the given kind (tests of the mapping).
  m.def("_raise_error", [](const std::string& kind, const std::string& message) {
    static const std::pair<const char*, hetnet::ErrorKind> kinds[] = {
        {"runtime", hetnet::ErrorKind::kRuntime},
        {"invalid_argument", hetnet::ErrorKind::kInvalidArgument},
        {"not_found", hetnet::ErrorKind::kNotFound},
        {"unsupported", hetnet::ErrorKind::kUnsupported},
        {"out_of_memory", hetnet::ErrorKind::kOutOfMemory},
        {"unavailable", hetnet::ErrorKind::kUnavailable},
        {"timeout", hetnet::ErrorKind::kTimeout},
        {"io", hetnet::ErrorKind::kIo}};
    for (const auto& [name, k] : kinds)
      if (kind == name) throw hetnet::Error(k, message);
    throw py::value_error("unknown error kind " + kind);
  });
}

}  // namespace hetnet_python
