"""Building blocks of nets, as in caffe2.python.core: DeviceOption, BlobReference, CreateOperator,
Net, scopes, and InjectCrossDeviceCopies.

Operators record the Python line that created them. ``CreateOperator`` puts it into
``OperatorDef.debug_info``; ops made through ``Net`` keep it beside the net (like Caffe2's
``operator_tracebacks``) so that printing a NetDef shows exactly what Caffe2 printed, and the
workspace copies it into ``debug_info`` when the net is handed to the C++ runtime, whose errors
then name that line.
"""
import os
import sys

import numpy as np
from google.protobuf.message import Message

from hetnet import _C
from hetnet.proto import caffe2_pb2
from hetnet import scope
from hetnet.scope import DeviceScope, NameScope, EmptyDeviceScope  # noqa: F401  (re-exported)
from hetnet.scope import CurrentNameScope, CurrentDeviceScope  # noqa: F401

_PACKAGE_DIRS = tuple(os.path.dirname(os.path.abspath(p)) + os.sep for p in (__file__,))


def DeviceOption(device_type, device_id=0, random_seed=None, node_name=None, numa_node_id=None,
                 extra_info=None):
    """A DeviceOption with device_type and device_id always set (both print in text format)."""
    option = caffe2_pb2.DeviceOption()
    option.device_type = device_type
    option.device_id = device_id
    if node_name is not None:
        option.node_name = node_name
    if random_seed is not None:
        option.random_seed = random_seed
    if numa_node_id is not None:
        assert device_type == caffe2_pb2.CPU, "numa_node_id is only meaningful for CPU"
        option.numa_node_id = numa_node_id
    if extra_info is not None:
        option.extra_info.extend(extra_info)
    return option


def IsGPUDeviceType(device_type):
    return device_type in (caffe2_pb2.CUDA, caffe2_pb2.HIP)


# ---- operator registry ----

_known_operator_types = None


def _KnownOperatorTypes():
    global _known_operator_types
    if _known_operator_types is None:
        _known_operator_types = frozenset(_C.registered_operators()) | frozenset(_C.operator_schemas())
    return _known_operator_types


def IsOperator(op_type):
    """True when hetnet has a kernel (on any device) or a schema for op_type."""
    return op_type in _KnownOperatorTypes()


def IsOperatorWithEngine(op_type, engine):
    return any(engine in _C.operator_engines(op_type, d) for d in (0, 1))


def NearbyOperatorNames(op_type, limit=3):
    return list(_C.nearby_opnames(op_type, limit))


# ---- blob references ----

class BlobReference(object):
    """A named blob, optionally tied to the net that produces it (for ``blob.Op(...)`` calls)."""

    def __init__(self, name, net=None):
        if isinstance(name, bytes):
            name = name.decode("utf-8")
        self._name = str(name)
        self._from_net = net
        self.meta = {}

    def __hash__(self):
        return hash(self._name)

    def __eq__(self, other):
        if isinstance(other, str):
            return self._name == other
        if isinstance(other, BlobReference):
            return self._name == other._name
        return False

    def __ne__(self, other):
        return not self == other

    def __str__(self):
        return self._name

    def __repr__(self):
        return 'BlobReference("{}")'.format(self._name)

    def __add__(self, other):
        if not isinstance(other, str):
            raise RuntimeError("Cannot add BlobReference to a non-string.")
        return BlobReference(self._name + other, self._from_net)

    def __radd__(self, other):
        if not isinstance(other, str):
            raise RuntimeError("Cannot add a non-string to BlobReference.")
        return BlobReference(other + self._name, self._from_net)

    def Net(self):
        return self._from_net

    def GetNameScope(self):
        return self._name[:self._name.rfind(scope._NAMESCOPE_SEPARATOR) + 1]

    def GetUnscopedName(self):
        return self._name[self._name.rfind(scope._NAMESCOPE_SEPARATOR) + 1:]

    def _CreateAndAddToNet(self, op_type, inputs=None, *args, **kwargs):
        inputs = [self] + (_RectifyInputOutput(inputs) if inputs else [])
        return self._from_net.__getattr__(op_type)(inputs, *args, **kwargs)

    def __getattr__(self, op_type):
        if op_type.startswith("__") or op_type in ("_name", "_from_net", "meta"):
            raise AttributeError(op_type)
        if self._from_net is None:
            raise AttributeError(
                "You cannot use a blob reference that does not have a net source to create "
                "operators. Create the operator from an explicit net object.")
        if not IsOperator(op_type):
            raise AttributeError("Method {} is not a registered operator. Did you mean: [{}]".format(
                op_type, ",".join(NearbyOperatorNames(op_type))))
        return lambda *args, **kwargs: self._CreateAndAddToNet(op_type, *args, **kwargs)

    def __dir__(self):
        return sorted(set(dir(type(self)) | set(self.__dict__)))


def ScopedName(name):
    """Prefixes name with the current name scope."""
    return scope.CurrentNameScope() + name


def ScopedBlobReference(name, *args, **kwargs):
    """A BlobReference whose name is prefixed with the current name scope."""
    return BlobReference(ScopedName(name), *args, **kwargs)


def _RectifyInputOutput(blobs, net=None):
    """Strings become scoped BlobReferences; BlobReferences are kept as given."""
    if isinstance(blobs, (str, bytes)):
        return [ScopedBlobReference(blobs.decode() if isinstance(blobs, bytes) else blobs, net=net)]
    if isinstance(blobs, BlobReference):
        return [blobs]
    if isinstance(blobs, (list, tuple)):
        rectified = []
        for blob in blobs:
            if isinstance(blob, (str, bytes)):
                rectified.append(ScopedBlobReference(blob.decode() if isinstance(blob, bytes) else blob,
                                                     net=net))
            elif isinstance(blob, BlobReference):
                rectified.append(blob)
            else:
                raise TypeError("I/O blob #{} of unsupported type: {} of type {}".format(
                    len(rectified), str(blob), type(blob)))
        return rectified
    raise TypeError("Unknown input/output type: %s of type %s." % (str(blobs), type(blobs)))


# ---- arguments and operators ----

def MakeArgument(key, value):
    """A caffe2_pb2.Argument from a Python value, with Caffe2's type rules."""
    argument = caffe2_pb2.Argument()
    argument.name = key
    if isinstance(value, np.ndarray):
        if value.dtype.type is np.float32:
            argument.floats.extend(value.flatten().tolist())
            return argument
        value = value.flatten().tolist()
    elif isinstance(value, np.generic):
        value = value.item()
    iterable = isinstance(value, (list, tuple, set, frozenset))
    if type(value) is float:
        argument.f = value
    elif type(value) is int or type(value) is bool:
        argument.i = int(value)  # protobuf >= 6 refuses a bool for an int field
    elif isinstance(value, bytes):
        argument.s = value
    elif isinstance(value, str):
        argument.s = value.encode("utf-8")
    elif isinstance(value, caffe2_pb2.NetDef):
        argument.n.CopyFrom(value)
    elif isinstance(value, Message):
        argument.s = value.SerializeToString()
    elif iterable and all(type(v) in (float, np.float64, np.float32) for v in value):
        argument.floats.extend(float(v) for v in value)
    elif iterable and all(type(v) in (int, bool, np.int64, np.int32) for v in value):
        argument.ints.extend(int(v) for v in value)
    elif iterable and all(isinstance(v, (str, bytes)) for v in value):
        argument.strings.extend(v.encode("utf-8") if isinstance(v, str) else v for v in value)
    elif iterable and all(isinstance(v, caffe2_pb2.NetDef) for v in value):
        argument.nets.extend(value)
    elif iterable and all(isinstance(v, Message) for v in value):
        argument.strings.extend(v.SerializeToString() for v in value)
    elif iterable:
        raise ValueError("Unknown iterable argument type: key={} value={}, value type={}[{}]".format(
            key, value, type(value), set(type(v) for v in value)))
    else:
        raise ValueError("Unknown argument type: key={} value={}, value type={}".format(
            key, value, type(value)))
    return argument


def CallerLocation():
    """'file:line' of the innermost caller outside the hetnet/caffe2 packages and contextlib."""
    frame = sys._getframe(1)
    package_root = os.path.dirname(_PACKAGE_DIRS[0].rstrip(os.sep)) + os.sep
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        inside = (filename.startswith(package_root + "hetnet" + os.sep)
                  or filename.startswith(package_root + "caffe2" + os.sep)
                  or os.path.basename(filename) == "contextlib.py")
        if not inside:
            return "{}:{}".format(frame.f_code.co_filename, frame.f_lineno)
        frame = frame.f_back
    return ""


def _ToStringList(blobs):
    if blobs is None:
        return []
    if isinstance(blobs, (str, bytes, BlobReference)):
        blobs = [blobs]
    return [b.decode("utf-8") if isinstance(b, bytes) else str(b) for b in blobs]


def CreateOperator(operator_type, inputs, outputs, name="", control_input=None, device_option=None,
                   arg=None, engine=None, debug_info=None, **kwargs):
    """An OperatorDef. The device option is the given one, else the current DeviceScope, else unset.
    kwargs become arguments (see MakeArgument); None values are skipped."""
    operator = caffe2_pb2.OperatorDef()
    operator.type = operator_type
    operator.name = name
    operator.input.extend(_ToStringList(inputs))
    operator.output.extend(_ToStringList(outputs))
    if control_input:
        operator.control_input.extend(_ToStringList(control_input))
    if device_option is not None:
        operator.device_option.CopyFrom(device_option)
    elif scope.CurrentDeviceScope() is not None:
        operator.device_option.CopyFrom(scope.CurrentDeviceScope())
    if engine is not None:
        operator.engine = engine
    if debug_info is None:
        debug_info = CallerLocation()
    if debug_info:
        operator.debug_info = debug_info
    if "random_seed" in kwargs:
        operator.device_option.random_seed = kwargs.pop("random_seed")
    if arg is not None:
        operator.arg.extend(arg)
    for key, value in kwargs.items():
        if value is not None:
            operator.arg.add().CopyFrom(MakeArgument(key, value))
    return operator


def InjectCrossDeviceCopies(net, blob_to_device=None):
    """Runs the C++ cross-device copy pass (hetnet::CrossDeviceCopyPass) on a Net or NetDef.

    blob_to_device maps external inputs to DeviceOptions (default: the net's device option, else
    CPU). Returns (new Net, {blob: DeviceOption}) where the dict gives every blob's device."""
    proto = net.Proto() if isinstance(net, Net) else net
    devices = {}
    for blob, option in (blob_to_device or {}).items():
        devices[str(blob)] = (option.device_type, option.device_id)
    new_bytes, blob_devices, _report = _C.cross_device_copy_pass(proto.SerializeToString(), devices)
    new_proto = caffe2_pb2.NetDef()
    new_proto.ParseFromString(new_bytes)
    new_proto.name = proto.name + "_cross_device"  # as Caffe2 named the rewritten net
    result = {name: DeviceOption(t, i) for name, (t, i) in blob_devices.items()}
    return Net(new_proto), result


from hetnet._net import Net, NetProtoForRuntime  # noqa: E402,F401
