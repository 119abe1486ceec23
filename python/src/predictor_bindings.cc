// hetnet::Predictor (core/predictor.h), bound when that header is part of the tree.
#include <pybind11/stl.h>

#include "bindings.h"

#if __has_include("core/predictor.h")
#define HETNET_PYTHON_HAS_PREDICTOR 1
#include "core/predictor.h"
#endif

namespace hetnet_python {

#ifdef HETNET_PYTHON_HAS_PREDICTOR
namespace {

std::unique_ptr<hetnet::Predictor> MakePredictor(const py::bytes& init_net, const py::bytes& predict_net,
                                                 bool outputs_to_cpu) {
  auto init = ParseProto<caffe2::NetDef>(init_net, "init NetDef");
  auto predict = ParseProto<caffe2::NetDef>(predict_net, "predict NetDef");
  hetnet::PredictorOptions options;
  options.outputs_to_cpu = outputs_to_cpu;
  py::gil_scoped_release release;
  return std::make_unique<hetnet::Predictor>(init, predict, options);
}

// Inputs: a list (by position in input_names) or a dict {name: array}; outputs: list of arrays in
// output_names order (copies).
py::list Run(const hetnet::Predictor& predictor, const py::object& inputs) {
  hetnet::Predictor::TensorMap named;
  if (py::isinstance<py::dict>(inputs)) {
    for (auto item : py::reinterpret_borrow<py::dict>(inputs))
      named[py::cast<std::string>(item.first)] = TensorFromArray(py::reinterpret_borrow<py::array>(item.second));
  } else {
    const auto& names = predictor.input_names();
    py::list values(inputs);
    HN_ENFORCE(values.size() == names.size(), "Predictor.run got ", values.size(), " inputs; the net takes ",
               names.size());
    for (size_t i = 0; i < names.size(); ++i)
      named[names[i]] = TensorFromArray(py::reinterpret_borrow<py::array>(values[i]));
  }
  hetnet::Predictor::TensorMap outputs;
  {
    py::gil_scoped_release release;
    outputs = predictor.Run(named);
  }
  py::list result;
  for (const auto& name : predictor.output_names()) result.append(ArrayFromTensor(outputs.at(name)));
  return result;
}

}  // namespace
#endif

void InitPredictor(py::module_& m) {
#ifdef HETNET_PYTHON_HAS_PREDICTOR
  m.attr("has_predictor") = true;
  py::class_<hetnet::Predictor>(m, "Predictor")
      .def(py::init(&MakePredictor), py::arg("init_net"), py::arg("predict_net"),
           py::arg("outputs_to_cpu") = true)
      .def("run", &Run, py::arg("inputs"))
      .def_property_readonly("input_names", &hetnet::Predictor::input_names)
      .def_property_readonly("output_names", &hetnet::Predictor::output_names)
      .def("num_instances", &hetnet::Predictor::NumInstances);
#else
  m.attr("has_predictor") = false;
#endif
}

}  // namespace hetnet_python
