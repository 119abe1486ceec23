// Entry point of hetnet._C: the bindings are split by topic (errors, tensors, workspaces,
// registries, placement, predictor).
#include "bindings.h"

namespace hetnet_python { void InitOnnxExport(py::module_& m); }  // onnx_export_bindings.cc
namespace hetnet_python { void InitAutoPlacement(py::module_& m); }  // auto_placement_bindings.cc

PYBIND11_MODULE(_C, m) {
  m.doc() = "hetnet C++ runtime bindings (use the hetnet.* Python modules instead of this one)";
  hetnet_python::InitErrors(m);
  hetnet_python::InitTensorConversion(m);
  hetnet_python::InitWorkspaces(m);
  hetnet_python::InitRegistry(m);
  hetnet_python::InitPlacement(m);
  hetnet_python::InitPredictor(m);
  hetnet_python::InitAutodiff(m);
  hetnet_python::InitOnnx(m);
  hetnet_python::InitOnnxExport(m);
  hetnet_python::InitAutoPlacement(m);
}
