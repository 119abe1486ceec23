"""hetnet as an ONNX backend (``onnx.backend.base.Backend``), as Caffe2's ``caffe2.python.onnx.backend``.

    from hetnet.onnx import backend
    rep = backend.prepare(onnx.load("model.onnx"), device="CUDA:0")
    outputs = rep.run([x])          # or rep.run({"input": x}); outputs[0] or outputs["name"]

The C++ importer (onnx/onnx_import.h) turns the ModelProto into an init NetDef and a predict NetDef
of hetnet operators; a model with unsupported operators is refused with one
``hetnet.UnsupportedError`` listing them all. ``device`` places every operator; ``node_devices``
({ONNX node name, or first output for an unnamed node: device}) places single nodes elsewhere, and
the runtime inserts the copies between devices.
"""
import os

import numpy as np
import onnx
import onnx.defs
import onnx.helper
from onnx.backend.base import Backend, namedtupledict

from hetnet import _C, workspace
from hetnet._errors import UnsupportedError
from hetnet.proto import caffe2_pb2
from hetnet.onnx.backend_rep import HetnetBackendRep

_DEVICE_TYPES = {"CPU": caffe2_pb2.CPU, "CUDA": caffe2_pb2.CUDA}


def _ParseDevice(device):
    """'CPU' | 'CUDA' | 'CUDA:<n>' (ONNX's device strings) -> (type name, id); ValueError otherwise."""
    if isinstance(device, caffe2_pb2.DeviceOption):
        names = {v: k for k, v in _DEVICE_TYPES.items()}
        if device.device_type not in names:
            raise ValueError("device option of type %d is not CPU or CUDA" % device.device_type)
        return names[device.device_type], device.device_id
    text = str(device).strip()
    kind, _, index = text.partition(":")
    kind = kind.upper()
    if kind not in _DEVICE_TYPES or (index and not index.isdigit()) or (kind == "CPU" and index not in ("", "0")):
        raise ValueError("unknown device %r: hetnet's ONNX backend takes 'CPU', 'CUDA' or 'CUDA:<n>'"
                         % (device,))
    return kind, int(index or 0)


def DeviceOption(device):
    """An ONNX device string ('CPU', 'CUDA', 'CUDA:1') -> caffe2_pb2.DeviceOption."""
    kind, device_id = _ParseDevice(device)
    option = caffe2_pb2.DeviceOption()
    option.device_type = _DEVICE_TYPES[kind]
    if kind == "CUDA":
        option.device_id = device_id
    return option


def _DeviceAvailable(device):
    kind, device_id = _ParseDevice(device)
    if kind == "CPU":
        return True
    return workspace.has_gpu_support and device_id < workspace.NumCudaDevices()


def _CheckAvailable(device, what):
    if not _DeviceAvailable(device):
        raise UnsupportedError(
            "%s %r is not available here: hetnet %s, %d CUDA device(s) present" %
            (what, device, "has CUDA support" if _C.has_cuda_support() else "was built without CUDA",
             workspace.NumCudaDevices()))


def _OnnxElemType(dtype):
    if dtype.kind in "SUO":
        return onnx.TensorProto.STRING
    return onnx.helper.np_dtype_to_tensor_dtype(dtype)


def _ModelBytes(model):
    """A ModelProto, its serialized bytes, or a path to a .onnx file -> (bytes, base_dir, ModelProto)."""
    if isinstance(model, onnx.ModelProto):
        return model.SerializeToString(), "", model
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        return data, "", onnx.ModelProto.FromString(data)
    if isinstance(model, (str, os.PathLike)):
        path = os.fspath(model)
        with open(path, "rb") as f:
            data = f.read()
        return data, os.path.dirname(os.path.abspath(path)), onnx.ModelProto.FromString(data)
    raise TypeError("model must be an onnx.ModelProto, its serialized bytes or a path, not %s"
                    % type(model).__name__)


def _InputInfo(name, value):
    """A graph input for run_node: a list of arrays is a sequence, None an empty optional (of float
    tensors: its element type is not known), anything else a tensor."""
    if value is None:
        tensor = onnx.helper.make_tensor_type_proto(onnx.TensorProto.FLOAT, None)
        return onnx.helper.make_value_info(name, onnx.helper.make_optional_type_proto(tensor))
    if isinstance(value, list):
        elem = _OnnxElemType(np.asarray(value[0]).dtype) if value else onnx.TensorProto.FLOAT
        return onnx.helper.make_tensor_sequence_value_info(name, elem, None)
    arr = np.asarray(value)
    return onnx.helper.make_tensor_value_info(name, _OnnxElemType(arr.dtype), arr.shape)


class HetnetBackend(Backend):
    """ONNX's Backend API over hetnet. ``Caffe2Backend`` (caffe2.python.onnx.backend) is this class."""

    @classmethod
    def _Import(cls, model, device, node_devices, net_name=""):
        data, base_dir, proto = _ModelBytes(model)
        node_options = {str(name): DeviceOption(dev).SerializeToString()
                        for name, dev in (node_devices or {}).items()}
        imported = _C.onnx_import(data, DeviceOption(device).SerializeToString(), node_options,
                                  base_dir, net_name)
        return imported, proto

    @classmethod
    def prepare(cls, model, device="CPU", node_devices=None, **kwargs):
        """model: ModelProto, serialized bytes or a .onnx path. device: 'CPU', 'CUDA', 'CUDA:<n>'.
        node_devices: {node name: device} for nodes placed elsewhere. Returns a HetnetBackendRep."""
        _CheckAvailable(device, "device")
        for name, dev in (node_devices or {}).items():
            _CheckAvailable(dev, "device of node %r:" % name)
        imported, proto = cls._Import(model, device, node_devices)
        values = [v.name for v in list(proto.graph.input) + list(proto.graph.output)
                  if v.type.HasField("sequence_type") or v.type.HasField("optional_type")]
        if kwargs.get("_any_value_outputs"):  # run_node: an output may be a sequence / optional
            values += [v.name for v in proto.graph.output]
        return HetnetBackendRep(imported, [v.name for v in proto.graph.input], device, values)

    @classmethod
    def run_model(cls, model, inputs, device="CPU", **kwargs):
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node, inputs, device="CPU", outputs_info=None, opset_version=None, **kwargs):
        """Runs one NodeProto on inputs (a list in node-input order, or {name: array}); input types
        come from the arrays, output types from outputs_info [(numpy dtype, shape)] if given.
        Returns the outputs as a namedtupledict keyed by the node's output names."""
        model = cls._OneNodeModel(node, inputs, outputs_info, opset_version)
        rep = cls.prepare(model, device, _any_value_outputs=True, **kwargs)
        feeds = inputs if isinstance(inputs, dict) else \
            {name: value for name, value in zip([n for n in node.input if n], inputs)}
        results = rep.run(feeds)
        outputs = [n for n in node.output if n]
        return namedtupledict("Outputs", outputs)(*[results[n] for n in outputs])

    @classmethod
    def _OneNodeModel(cls, node, inputs, outputs_info, opset_version):
        input_names = [n for n in node.input if n]
        if isinstance(inputs, dict):
            values = {name: inputs[name] for name in input_names}
        else:
            inputs = list(inputs)
            if len(inputs) != len(input_names):
                raise ValueError("run_node: node %r takes %d inputs, %d given"
                                 % (node.op_type, len(input_names), len(inputs)))
            values = dict(zip(input_names, inputs))
        graph_inputs = [_InputInfo(name, value) for name, value in values.items()]
        output_names = [n for n in node.output if n]
        if outputs_info:
            graph_outputs = [onnx.helper.make_tensor_value_info(
                name, _OnnxElemType(np.dtype(dtype)), shape)
                for name, (dtype, shape) in zip(output_names, outputs_info)]
        else:
            graph_outputs = [onnx.helper.make_empty_tensor_value_info(name) for name in output_names]
        graph = onnx.helper.make_graph([node], "run_node_" + (node.op_type or "node"),
                                       graph_inputs, graph_outputs)
        domain_version = opset_version or onnx.defs.onnx_opset_version()
        opsets = [onnx.helper.make_opsetid(node.domain or "", domain_version)]
        return onnx.helper.make_model(graph, opset_imports=opsets, producer_name="hetnet.run_node")

    @classmethod
    def supports_device(cls, device):
        """True for 'CPU'; for 'CUDA' / 'CUDA:<n>' only when hetnet has CUDA and that GPU is here."""
        try:
            return _DeviceAvailable(device)
        except ValueError:
            return False

    @classmethod
    def onnx_graph_to_caffe2_net(cls, model, device="CPU", opset_version=None, node_devices=None):
        """Caffe2's converter entry: (init_net, predict_net) NetDefs, without running anything
        (a CUDA device needs no GPU here). opset_version is taken from the model (kept for Caffe2's
        signature)."""
        imported, _ = cls._Import(model, device, node_devices)
        return (caffe2_pb2.NetDef.FromString(imported["init_net"]),
                caffe2_pb2.NetDef.FromString(imported["predict_net"]))


prepare = HetnetBackend.prepare
run_model = HetnetBackend.run_model
run_node = HetnetBackend.run_node
supports_device = HetnetBackend.supports_device
onnx_graph_to_caffe2_net = HetnetBackend.onnx_graph_to_caffe2_net
