// hetnet::Predictor (core/predictor.h), bound when that header is part of the tree.
#include <pybind11/stl.h>

#include "bindings.h"

#if __has_include("core/predictor.h")
#define HETNET_PYTHON_HAS_PREDICTOR 1
#include "core/predictor.h"
#include "core/reduced_precision.h"
#endif

namespace hetnet_python {

#ifdef HETNET_PYTHON_HAS_PREDICTOR
namespace {

std::unique_ptr<hetnet::Predictor> MakePredictor(const py::bytes& init_net, const py::bytes& predict_net,
                                                 bool outputs_to_cpu, const std::string& precision) {
  auto init = ParseProto<caffe2::NetDef>(init_net, "init NetDef");
  auto predict = ParseProto<caffe2::NetDef>(predict_net, "predict NetDef");
  if (!precision.empty()) hetnet::SetNetPrecision(&predict, hetnet::ParsePrecision(precision));
  hetnet::PredictorOptions options;
  options.outputs_to_cpu = outputs_to_cpu;
  py::gil_scoped_release release;
  return std::make_unique<hetnet::Predictor>(init, predict, options);
}

// Inputs: a list (by position in positional_input_names) or a dict {name: array}, read in place (the
// Predictor copies what its net writes); outputs: list of
// arrays in output_names order (over the outputs' own memory where nothing else holds it).
py::list Run(const hetnet::Predictor& predictor, const py::object& inputs) {
  std::vector<hetnet::Tensor> outputs;
  if (py::isinstance<py::dict>(inputs)) {
    hetnet::Predictor::TensorMap named;
    for (auto item : py::reinterpret_borrow<py::dict>(inputs))
      named[py::cast<std::string>(item.first)] = TensorOverArray(py::reinterpret_borrow<py::array>(item.second));
    hetnet::Predictor::TensorMap out;
    {
      py::gil_scoped_release release;
      out = predictor.Run(named);
    }
    for (const auto& name : predictor.output_names()) outputs.push_back(std::move(out.at(name)));
  } else {
    std::vector<hetnet::Tensor> values;
    for (auto v : py::list(inputs)) values.push_back(TensorOverArray(py::reinterpret_borrow<py::array>(v)));
    py::gil_scoped_release release;
    outputs = predictor.Run(values);  // checks the count (core/predictor.h)
  }
  py::list result;
  for (auto& t : outputs) result.append(ArrayTakingTensor(std::move(t)));  // Fetch handed the storage over
  outputs.clear();
  return result;
}

}  // namespace
#endif

void InitPredictor(py::module_& m) {
#ifdef HETNET_PYTHON_HAS_PREDICTOR
  m.attr("has_predictor") = true;
  py::class_<hetnet::Predictor>(m, "Predictor")
      .def(py::init(&MakePredictor), py::arg("init_net"), py::arg("predict_net"),
           py::arg("outputs_to_cpu") = true, py::arg("precision") = "")
      .def("run", &Run, py::arg("inputs"))
      .def_property_readonly("input_names", &hetnet::Predictor::input_names)
      .def_property_readonly("output_names", &hetnet::Predictor::output_names)
      .def_property_readonly("filled_input_names", &hetnet::Predictor::filled_input_names)
      .def_property_readonly("positional_input_names", &hetnet::Predictor::positional_input_names)
      .def("num_instances", &hetnet::Predictor::NumInstances)
      .def_property_readonly("narrowed_weights", &hetnet::Predictor::narrowed_weights)
      // What the predict net's executor did besides running its ops: with predict_net.type =
      // "cuda_graph", which GPU operators it replays as CUDA graphs and why not the others.
      .def("executor_notes", &hetnet::Predictor::ExecutorNotes);
#else
  m.attr("has_predictor") = false;
#endif
}

}  // namespace hetnet_python
