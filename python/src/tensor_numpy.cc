// numpy arrays <-> hetnet tensors in workspace blobs. Feeding copies the array into a tensor on the
// requested device; fetching copies the tensor (through the host for GPU tensors) into a new array.
#include <pybind11/numpy.h>
#include <pybind11/stl.h>

#include <cstring>

#include "bindings.h"
#include "core/blob_serialization.h"
#include "core/checked_size.h"
#include "core/narrow_types.h"
#include "core/run_guard.h"
#include "core/workspace_memory.h"
#include "operators/tensor_sequence.h"

namespace hetnet_python {

using hetnet::DataType;
using hetnet::Device;
using hetnet::Tensor;

namespace {

// ml_dtypes' dtype called `name` (numpy has no bfloat16, float8, int4, ...: onnx.numpy_helper uses these).
py::dtype MlDtype(const char* name) {
  py::object type;
  try {
    type = py::module_::import("ml_dtypes").attr(name);
  } catch (const py::error_already_set&) {
    HN_THROW(kUnsupported, "fetching a ", name, " tensor needs the ml_dtypes package (pip install ml_dtypes)");
  }
  return py::dtype::from_args(type);
}

DataType DataTypeOfArray(const py::array& arr) {
  const py::dtype dt = arr.dtype();
  const char kind = dt.kind();
  const auto size = dt.itemsize();
  if (kind == 'O') return DataType::String;
  if (kind == 'V' && size == 2 && std::string(py::str(dt)) == "bfloat16") return DataType::BFloat16;  // ml_dtypes
  if (size == 1 && (kind == 'V' || kind == 'f')) {  // ml_dtypes' narrow types (float8_e5m2 has kind 'f')
    const DataType narrow = hetnet::NarrowDataTypeNamed(py::str(dt));
    if (narrow != DataType::Undefined) return narrow;
  }
  if (kind == 'b') return DataType::Bool;
  if (kind == 'f') {
    if (size == 2) return DataType::Float16;
    if (size == 4) return DataType::Float;
    if (size == 8) return DataType::Double;
  }
  if (kind == 'i') {
    if (size == 1) return DataType::Int8;
    if (size == 2) return DataType::Int16;
    if (size == 4) return DataType::Int32;
    if (size == 8) return DataType::Int64;
  }
  if (kind == 'u') {
    if (size == 1) return DataType::UInt8;
    if (size == 2) return DataType::UInt16;
    if (size == 4) return DataType::UInt32;
    if (size == 8) return DataType::UInt64;
  }
  throw py::type_error("hetnet tensors cannot hold numpy dtype " + std::string(py::str(dt)) +
                       " (supported: float16/32/64, int8/16/32/64, uint8/16/32/64, bool, ml_dtypes' bfloat16, float8_*, "
                       "float4_e2m1fn, int4, uint4, int2, uint2, "
                       "str/bytes objects)");
}

py::dtype NumpyDtype(DataType t) {
  switch (t) {
    case DataType::Float: return py::dtype("float32");
    case DataType::Double: return py::dtype("float64");
    case DataType::Float16: return py::dtype("float16");
    case DataType::Int8: return py::dtype("int8");
    case DataType::Int16: return py::dtype("int16");
    case DataType::Int32: return py::dtype("int32");
    case DataType::Int64: return py::dtype("int64");
    case DataType::UInt8:
    case DataType::Byte: return py::dtype("uint8");
    case DataType::UInt16: return py::dtype("uint16");
    case DataType::UInt32: return py::dtype("uint32");
    case DataType::UInt64: return py::dtype("uint64");
    case DataType::BFloat16: return MlDtype("bfloat16");
    case DataType::Bool: return py::dtype("bool");
    case DataType::String: return py::dtype("O");
    default: break;
  }
  if (hetnet::IsNarrowDataType(t)) return MlDtype(hetnet::NarrowDataTypeName(t));
  HN_THROW(kInvalidArgument, "tensor dtype ", hetnet::DataTypeName(t), " has no numpy equivalent");
}

}  // namespace

Tensor TensorFromArray(const py::array& arr) {
  Tensor t(Device::CPU());
  FillTensorFromArray(arr, &t);
  return t;
}

void FillTensorFromArray(const py::array& arr, Tensor* out) {
  if (!(arr.flags() & py::array::c_style))
    throw py::value_error("FeedBlob expects a C-contiguous array (hetnet.workspace converts it)");
  if (arr.dtype().byteorder() == '>') throw py::value_error("FeedBlob expects native byte order");
  const DataType dtype = DataTypeOfArray(arr);
  Tensor& t = *out;
  t.Resize(std::vector<int64_t>(arr.shape(), arr.shape() + arr.ndim()));
  if (dtype == DataType::String) {
    auto* dst = t.mutable_data<std::string>();
    auto* src = static_cast<PyObject* const*>(arr.data());
    for (int64_t i = 0; i < t.numel(); ++i) {
      py::handle item(src[i]);
      if (py::isinstance<py::bytes>(item)) {
        dst[i] = std::string(py::reinterpret_borrow<py::bytes>(item));
      } else if (py::isinstance<py::str>(item)) {
        dst[i] = py::cast<std::string>(item);  // UTF-8
      } else {
        throw py::type_error("object arrays fed to hetnet must hold only str or bytes, found " +
                             std::string(py::str(py::type::of(item))));
      }
    }
  } else {
    void* dst = t.raw_mutable_data(dtype);
    if (t.nbytes() > 0) std::memcpy(dst, arr.data(), t.nbytes());
  }
}

py::array ArrayFromTensor(const Tensor& tensor) {
  if (!tensor.initialized())
    HN_THROW(kInvalidArgument, "tensor has no data yet (dtype ", hetnet::DataTypeName(tensor.dtype()),
             ", shape ", tensor.ShapeString(), ")");
  const Tensor host = tensor.device().is_cpu() ? tensor : tensor.To(Device::CPU());
  std::vector<py::ssize_t> shape(host.shape().begin(), host.shape().end());
  py::array out(NumpyDtype(host.dtype()), py::array::ShapeContainer(shape));
  if (host.dtype() == DataType::String) {
    const auto* src = host.data<std::string>();
    auto** dst = static_cast<PyObject**>(out.mutable_data());
    for (int64_t i = 0; i < host.numel(); ++i) {
      py::bytes b(src[i]);
      Py_XDECREF(dst[i]);
      dst[i] = b.release().ptr();
    }
  } else if (host.nbytes() > 0) {
    std::memcpy(out.mutable_data(), host.raw_data(), host.nbytes());
  }
  return out;
}

Tensor TensorOverArray(const py::array& arr) {
  const DataType dtype = DataTypeOfArray(arr);
  const bool direct = dtype != DataType::String && (arr.flags() & py::array::c_style) && arr.dtype().byteorder() != '>' &&
                      arr.size() > 0 && reinterpret_cast<uintptr_t>(arr.data()) % 16 == 0;
  if (!direct) return TensorFromArray(arr);
  Tensor t(Device::CPU());
  t.Resize(std::vector<int64_t>(arr.shape(), arr.shape() + arr.ndim()));
  PyObject* owner = arr.ptr();
  Py_INCREF(owner);  // released under the GIL, whichever thread drops the tensor's storage last
  std::shared_ptr<void> holder(const_cast<void*>(arr.data()), [owner](void*) {
    py::gil_scoped_acquire gil;
    Py_DECREF(owner);
  });
  t.SetExternalData(std::move(holder), static_cast<size_t>(t.numel()) * hetnet::ItemSize(dtype), dtype, Device::CPU());
  return t;
}

py::array ArrayTakingTensor(Tensor tensor) {
  const bool sole = tensor.initialized() && tensor.device().is_cpu() && tensor.dtype() != DataType::String &&
                    !tensor.external_storage() && tensor.storage().use_count() == 1 && tensor.nbytes() > 0;
  if (!sole) return ArrayFromTensor(tensor);
  // The array's base is a capsule holding the storage: numpy frees it through the capsule.
  auto* keep = new std::shared_ptr<hetnet::Storage>(tensor.storage());
  py::capsule owner(keep, [](void* p) { delete static_cast<std::shared_ptr<hetnet::Storage>*>(p); });
  std::vector<py::ssize_t> shape(tensor.shape().begin(), tensor.shape().end());
  return py::array(NumpyDtype(tensor.dtype()), py::array::ShapeContainer(shape), tensor.raw_data(), owner);
}

namespace {

void FeedBlobImpl(const std::string& name, const py::object& value, const py::object& option_bytes) {
  hetnet::Workspace* ws = CurrentWorkspace();
  // Replacing a blob under a run on another thread would free memory an operator reads.
  hetnet::RefuseWhileRunning(ws, "cannot feed blob '" + hetnet::PrintableName(name) + "'");
  hetnet::WorkspaceMemoryScope charge_to(ws);  // the fed tensor counts for the workspace
  const Device device = DeviceFromBytes(option_bytes);
  if (!device.is_cpu()) hetnet::GetDeviceBackend(device);  // clear error without that GPU
  if (py::isinstance<py::bytes>(value)) {  // a serialized proto or any byte string
    auto s = std::make_shared<std::string>(py::reinterpret_borrow<py::bytes>(value));
    ws->CreateBlob(name)->Reset(std::move(s));
    return;
  }
  if (value.is_none()) {  // an empty ONNX optional
    ws->CreateBlob(name)->Reset(std::make_shared<hetnet::OptionalNone>());
    return;
  }
  if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {  // an ONNX sequence (on CPU)
    HN_CHECK_KIND(kInvalidArgument, device.is_cpu(), "a sequence (a list of arrays) is fed on CPU only, not ",
                  device.str());
    auto seq = std::make_shared<hetnet::TensorSequence>();
    for (auto item : py::reinterpret_borrow<py::sequence>(value)) {
      if (!py::isinstance<py::array>(item))
        throw py::type_error("a sequence fed to hetnet holds numpy arrays only, found " +
                             std::string(py::str(py::type::of(item))));
      seq->items.push_back(TensorFromArray(py::reinterpret_borrow<py::array>(item)));
      const Tensor& t = seq->items.back();
      HN_CHECK_KIND(kInvalidArgument, t.dtype() == seq->items.front().dtype(), "element ", seq->items.size() - 1,
                    " of the sequence is ", hetnet::DataTypeName(t.dtype()), ", element 0 is ",
                    hetnet::DataTypeName(seq->items.front().dtype()), " (a sequence holds one dtype)");
    }
    if (!seq->items.empty()) seq->dtype = seq->items.front().dtype();
    ws->CreateBlob(name)->Reset(std::move(seq));
    return;
  }
  const auto arr = py::reinterpret_borrow<py::array>(value);
  const DataType dtype = DataTypeOfArray(arr);  // a bad dtype fails before the blob exists
  if (device.is_cpu() && dtype != DataType::String && ws->HasBlob(name)) {
    // A blob that a GPU copy reads keeps its page-locked memory (and the copy stays one DMA),
    // unless a view shares that memory.
    hetnet::Blob* blob = ws->CreateBlob(name);
    const Tensor* old = blob->IsTensor() ? &blob->GetTensor() : nullptr;
    if (old && old->device().is_cpu() && old->pinned_host() && (!old->storage() || old->storage().use_count() == 1)) {
      FillTensorFromArray(arr, blob->GetMutableTensor(device));
      return;
    }
  }
  Tensor host = TensorFromArray(arr);  // any other feed gets fresh memory: views of the old contents never change
  Tensor* t = ws->CreateBlob(name)->GetMutableTensor(device);
  if (device.is_cpu()) {
    *t = std::move(host);
  } else {
    t->CopyFrom(host);
  }
}

// Errors (a cap, out of memory, a bad dtype) name the blob being fed.
void FeedBlob(const std::string& name, const py::object& value, const py::object& option_bytes) {
  try {
    FeedBlobImpl(name, value, option_bytes);
  } catch (hetnet::Error& e) {
    throw e.AddContext("while feeding blob '" + hetnet::PrintableName(name) + "'");
  }
}

py::object FetchBlob(const std::string& name) {
  const hetnet::Blob& blob = CurrentWorkspace()->GetBlobOrThrow(name);
  if (blob.IsTensor()) return ArrayFromTensor(blob.GetTensor());
  if (blob.IsType<std::string>()) return py::bytes(blob.Get<std::string>());
  if (blob.IsType<hetnet::OptionalNone>()) return py::none();
  if (blob.IsType<hetnet::TensorSequence>()) {
    py::list items;
    for (const auto& t : blob.Get<hetnet::TensorSequence>().items) items.append(ArrayFromTensor(t));
    return std::move(items);
  }
  if (blob.empty()) HN_THROW(kInvalidArgument, "blob '", name, "' is empty (nothing was fed or computed into it)");
  HN_THROW(kInvalidArgument, "blob '", name, "' holds ", blob.TypeName(), ", which cannot be fetched to Python");
}

}  // namespace

void InitTensorConversion(py::module_& m) {
  m.def("feed_blob", &FeedBlob, py::arg("name"), py::arg("value"), py::arg("device_option") = py::none(),
        "Copies a C-contiguous numpy array (or bytes) into blob `name` of the current workspace; a list "
        "of arrays is an ONNX sequence, None an empty ONNX optional.");
  m.def("fetch_blob", &FetchBlob, py::arg("name"), "Copies blob `name` into a new numpy array (or bytes; a list for a sequence, None for an "
        "empty optional).");
  // Caffe2's workspace.SerializeBlob / DeserializeBlob: a serialized BlobProto (tensor or string blob).
  m.def("serialize_blob", [](const std::string& name) {
    return py::bytes(hetnet::SerializeBlob(CurrentWorkspace()->GetBlobOrThrow(name), name));
  }, py::arg("name"), "The blob as serialized caffe2.BlobProto bytes (tensors and string blobs).");
  m.def("deserialize_blob", [](const std::string& name, const py::bytes& bytes) {
    hetnet::Workspace* ws = CurrentWorkspace();
    hetnet::RefuseWhileRunning(ws, "cannot deserialize into blob '" + hetnet::PrintableName(name) + "'");
    hetnet::DeserializeBlob(std::string(bytes), ws->CreateBlob(name), "DeserializeBlob('" + name + "')");
  }, py::arg("name"), py::arg("serialized"), "Replaces blob `name` with a deserialized caffe2.BlobProto.");
  m.def("blob_info", [](const std::string& name) {
    const hetnet::Blob& blob = CurrentWorkspace()->GetBlobOrThrow(name);
    py::dict d;
    d["type"] = blob.TypeName();
    if (blob.IsTensor()) {
      const Tensor& t = blob.GetTensor();
      d["shape"] = py::cast(t.shape());
      d["dtype"] = hetnet::DataTypeName(t.dtype());
      d["device"] = DeviceToTuple(t.device());
    }
    return d;
  });
}

}  // namespace hetnet_python
