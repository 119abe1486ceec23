// Shared helpers for the hetnet._C extension. Protos cross the Python/C++ boundary serialized
// (Python's protobuf runtime and libprotobuf are separate), so every binding that takes a NetDef,
// OperatorDef or DeviceOption takes its bytes.
#pragma once

#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>

#include <string>

#include "core/device.h"
#include "core/error.h"
#include "core/workspace.h"
#include "proto/caffe2.pb.h"

namespace hetnet_python {

namespace py = pybind11;

template <typename Proto>
Proto ParseProto(const py::bytes& data, const char* what) {
  Proto proto;
  if (!proto.ParseFromString(std::string(data)))
    HN_THROW(kInvalidArgument, "could not parse the serialized ", what);
  return proto;
}

template <typename Proto>
py::bytes SerializeProto(const Proto& proto) {
  std::string out;
  proto.SerializeToString(&out);
  return py::bytes(out);
}

// Device of a serialized DeviceOption; None means CPU.
hetnet::Device DeviceFromBytes(const py::object& option_bytes);
py::tuple DeviceToTuple(const hetnet::Device& d);  // (device_type, device_id)
hetnet::Device DeviceFromTuple(const py::handle& t);

// C-contiguous, native-order array -> new CPU tensor (copy); tensor -> new array (copy, via host).
hetnet::Tensor TensorFromArray(const py::array& arr);
// Resizes *out to the array's shape and copies the elements in (keeps *out's memory when it fits).
void FillTensorFromArray(const py::array& arr, hetnet::Tensor* out);
py::array ArrayFromTensor(const hetnet::Tensor& tensor);
// A CPU tensor over the array's own memory (no copy; the tensor keeps the array alive), for inputs
// nothing writes: a Predictor's (it copies the inputs its net writes, core/predictor.cc). Strings,
// non-contiguous, byte-swapped or not 16-byte aligned arrays are copied (TensorFromArray).
hetnet::Tensor TensorOverArray(const py::array& arr);
// A result nothing else holds (a Predictor's output, handed over) -> an array over its own memory,
// no copy; a CPU tensor whose storage anything else shares (or a string, or a GPU tensor) is copied.
py::array ArrayTakingTensor(hetnet::Tensor tensor);

// The current workspace of the process (Caffe2's SwitchWorkspace / CurrentWorkspace model).
hetnet::Workspace* CurrentWorkspace();

void InitErrors(py::module_& m);
void InitTensorConversion(py::module_& m);
void InitWorkspaces(py::module_& m);
void InitRegistry(py::module_& m);
void InitPlacement(py::module_& m);
void InitPredictor(py::module_& m);
void InitAutodiff(py::module_& m);  // autodiff_bindings.cc
void InitOnnx(py::module_& m);      // onnx_bindings.cc (hetnet._C.onnx_import)

}  // namespace hetnet_python
