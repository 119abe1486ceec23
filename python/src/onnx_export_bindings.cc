// hetnet._C.onnx_export: the C++ ONNX exporter (onnx/onnx_export.h) for hetnet.onnx.frontend.
// Built only where the extension links the onnx/ room (HETNET_WITH_ONNX); else has_onnx_export is False.
#include <pybind11/stl.h>

#include "bindings.h"

#ifdef HETNET_WITH_ONNX
#include "onnx/onnx_export.h"
#endif

namespace hetnet_python {

void InitOnnxExport(py::module_& m) {
#ifdef HETNET_WITH_ONNX
  m.attr("has_onnx_export") = true;
  m.def(
      "onnx_export",
      [](const py::bytes& predict_net, const py::bytes& init_net, const py::dict& value_info, int64_t opset) {
        auto predict = ParseProto<caffe2::NetDef>(predict_net, "predict NetDef");
        auto init = ParseProto<caffe2::NetDef>(init_net, "init NetDef");
        // value_info: {name: (elem_type, dims)}, Caffe2's frontend form.
        std::map<std::string, hetnet::onnxio::OnnxExportValueInfo> infos;
        for (auto item : value_info) {
          const auto name = py::cast<std::string>(item.first);
          const auto pair = py::reinterpret_borrow<py::sequence>(item.second);
          HN_CHECK_KIND(kInvalidArgument, pair.size() == 2, "value_info['", name,
                        "'] must be (elem_type, dims), got ", py::cast<std::string>(py::repr(item.second)));
          infos[name] = {py::cast<int32_t>(pair[0]), py::cast<std::vector<int64_t>>(pair[1])};
        }
        hetnet::onnxio::OnnxExportOptions options;
        options.opset = opset;
        std::string model;
        {
          py::gil_scoped_release release;
          model = hetnet::onnxio::ExportOnnxModel(predict, init, infos, options);
        }
        return py::bytes(model);
      },
      py::arg("predict_net"), py::arg("init_net"), py::arg("value_info"), py::arg("opset") = 17,
      "Serialized predict and init NetDefs + {name: (onnx elem_type, dims)} -> serialized ONNX ModelProto.");
#else
  m.attr("has_onnx_export") = false;
#endif
}

}  // namespace hetnet_python
