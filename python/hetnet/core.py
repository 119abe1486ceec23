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
    where = CallerFrame()
    return "{}:{}".format(where[0], where[1]) if where else ""


def CallerFrame():
    """(file, line, function) of the innermost caller outside the hetnet/caffe2 packages and
    contextlib, or None."""
    frame = sys._getframe(1)
    package_root = os.path.dirname(_PACKAGE_DIRS[0].rstrip(os.sep)) + os.sep
    while frame is not None:
        filename = os.path.abspath(frame.f_code.co_filename)
        inside = (filename.startswith(package_root + "hetnet" + os.sep)
                  or filename.startswith(package_root + "caffe2" + os.sep)
                  or os.path.basename(filename) == "contextlib.py")
        if not inside:
            return (frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name)
        frame = frame.f_back
    return None


def _ToStringList(blobs):
    if blobs is None:
        return []
    if isinstance(blobs, (str, bytes, BlobReference)):
        blobs = [blobs]
    return [b.decode("utf-8") if isinstance(b, bytes) else str(b) for b in blobs]


def _AsBlobList(blobs):
    """None -> []; a name or BlobReference, list or tuple as given; other iterables (a proto's
    repeated field, a generator) -> list."""
    if blobs is None:
        return []
    if isinstance(blobs, (str, bytes, BlobReference, list, tuple)):
        return blobs
    return list(blobs)


def CreateOperator(operator_type, inputs, outputs, name="", control_input=None, device_option=None,
                   arg=None, engine=None, debug_info=None, **kwargs):
    """An OperatorDef. The device option is the given one, else the current DeviceScope, else unset.
    Blob names given as str get the current NameScope prefix; BlobReferences are kept as named.
    kwargs become arguments (see MakeArgument); None values are skipped."""
    operator = caffe2_pb2.OperatorDef()
    operator.type = operator_type
    operator.name = name
    # As Caffe2: str names get the current name scope, BlobReferences are used as they are.
    operator.input.extend(str(b) for b in _RectifyInputOutput(_AsBlobList(inputs)))
    operator.output.extend(str(b) for b in _RectifyInputOutput(_AsBlobList(outputs)))
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


def InjectCrossDeviceCopies(net, blob_to_device=None, blob_remap=None, placeHolderOps=None):
    """Runs the C++ cross-device copy pass (hetnet::CrossDeviceCopyPass) on a Net or NetDef.

    blob_to_device maps external inputs to DeviceOptions (default: the net's device option, else
    CPU). Returns (new Net, {blob: DeviceOption}) where the dict gives every blob's device.
    placeHolderOps (op types without a schema, e.g. send/receive stand-ins) are accepted as in
    Caffe2: like any op without a schema, their blobs are taken to live on the op's device.
    blob_remap (Caffe2's renaming of copies) is not supported."""
    if blob_remap:
        raise NotImplementedError("InjectCrossDeviceCopies: blob_remap is not supported by hetnet")
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


# ---- data types ----

# TensorProto's DataType enum, as Caffe2's core exposed it: core.DataType.FLOAT == 1, ...
DataType = caffe2_pb2.TensorProto.DataType


# ---- device inference ----

def _InferredDeviceOption(op, device):
    """Caffe2's form of an inferred blob device: the op's own device option when the blob lives
    where the op runs, an empty DeviceOption (CPU) for CPU, else type and id set."""
    device_type, device_id = device
    own = op.device_option
    own_type = own.device_type if op.HasField("device_option") else caffe2_pb2.CPU
    own_id = own.device_id if own_type != caffe2_pb2.CPU else 0
    if (device_type, device_id) == (own_type, own_id):
        option = caffe2_pb2.DeviceOption()
        option.CopyFrom(own)
        return option
    if device_type == caffe2_pb2.CPU:
        return caffe2_pb2.DeviceOption()
    return DeviceOption(device_type, device_id)


def InferOpBlobDevices(op):
    """([DeviceOption of each input], [DeviceOption of each output]) of an OperatorDef, from the
    operator schema's device inference (e.g. CopyGPUToCPU's output lives on CPU); ops without a
    schema keep every blob on the op's device."""
    ins, outs = _C.infer_op_blob_devices(op.SerializeToString())
    return ([_InferredDeviceOption(op, d) for d in ins], [_InferredDeviceOption(op, d) for d in outs])


def InferOpBlobDevicesAsDict(op):
    """As InferOpBlobDevices, keyed by blob name: ({input: DeviceOption}, {output: DeviceOption})."""
    input_devices, output_devices = InferOpBlobDevices(op)
    return (dict(zip(op.input, input_devices)), dict(zip(op.output, output_devices)))


# ---- gradients ----

class GradientSlice(tuple):
    """Caffe2's sparse gradient (indices, values). hetnet's autodiff makes dense gradients only;
    this exists so code that tests for it imports."""

    def __new__(cls, indices, values):
        return tuple.__new__(cls, (indices, values))

    @property
    def indices(self):
        return self[0]

    @property
    def values(self):
        return self[1]


def _GradientName(g):
    if g is None:
        return None
    if isinstance(g, GradientSlice):
        raise TypeError("sparse gradients (GradientSlice) are not supported by hetnet's autodiff")
    return g.decode("utf-8") if isinstance(g, bytes) else str(g)


def _NormalizeGradient(op, result):
    """A Python gradient function's (ops, g_input) as ([OperatorDef], [name or None])."""
    if not isinstance(result, (tuple, list)) or len(result) != 2:
        raise TypeError("the gradient of {} must return (gradient ops, input gradients), got {!r}".format(
            op.type, result))
    gradient_ops, g_input = result
    if gradient_ops is None:
        gradient_ops = []
    elif isinstance(gradient_ops, caffe2_pb2.OperatorDef):
        gradient_ops = [gradient_ops]
    else:
        gradient_ops = list(gradient_ops)
    g_input = [_GradientName(g) for g in (g_input or [])]
    if len(g_input) != len(op.input):
        raise ValueError("the gradient of {} gives {} input gradients; the op has {} inputs".format(
            op.type, len(g_input), len(op.input)))
    return gradient_ops, g_input


class GradientRegistry(object):
    """Gradient makers by operator type, as Caffe2's core.GradientRegistry.

    ``@GradientRegistry.RegisterGradient('MyOp')`` registers ``f(op, g_output) -> (gradient ops,
    g_input)``: op is the forward OperatorDef, g_output the gradient blob names of its outputs (None
    where none flows), g_input the gradient names of its inputs (None for none). The function is
    handed to the C++ registry that ``Net.AddGradientOperators`` / ``GetBackwardPass`` use, so it is
    used by autodiff; it replaces a C++ gradient registered for the same type (see
    docs/caffe2_differences.md)."""

    gradient_registry_ = {}

    @classmethod
    def RegisterGradient(cls, op_type):
        def Wrapper(func):
            def maker(op_bytes, g_output):
                op = caffe2_pb2.OperatorDef()
                op.ParseFromString(op_bytes)
                ops, g_input = _NormalizeGradient(op, func(op, list(g_output)))
                return [o.SerializeToString() for o in ops], g_input
            cls.gradient_registry_[op_type] = func
            _C.register_python_gradient(op_type, maker)
            return func
        return Wrapper

    @classmethod
    def _GetGradientForOpCC(cls, op_def, g_output):
        ops, g_input = _C.get_gradient_defs(op_def.SerializeToString(),
                                            ["" if g is None else _GradientName(g) for g in g_output])
        parsed = []
        for b in ops:
            grad_op = caffe2_pb2.OperatorDef()
            grad_op.ParseFromString(b)
            parsed.append(grad_op)
        return parsed, [g if g else None for g in g_input]

    @classmethod
    def GetGradientForOp(cls, op, g_output):
        """([gradient OperatorDefs], [input gradient name or None]) for one forward op."""
        if op.type in cls.gradient_registry_:
            return _NormalizeGradient(op, cls.gradient_registry_[op.type](op, list(g_output)))
        return cls._GetGradientForOpCC(op, g_output)

    @classmethod
    def GetBackwardPass(cls, operators, ys, ys_generate_gradient=False):
        """The backward pass of a list of forward OperatorDefs (hetnet::GetBackwardPass).

        ys: a list of loss blobs or a dict {blob: given gradient blob or None}. A loss without a
        given gradient is seeded, as in Caffe2, with ConstantFill(loss) -> '<loss>_autogen_grad'
        (value 1.0, on the device of the op that produced the loss). Returns ([gradient
        OperatorDefs], {blob: gradient blob name})."""
        return _BackwardPass(list(operators), ys, "")


def _CheckStopGradients(operators):
    """Caffe2's check: a StopGradient whose output no operator reads is a mistake (the gradient
    it was meant to stop flows through its input's other uses)."""
    used = set()
    for op in operators:
        used.update(op.input)
    for op in operators:
        if op.type == "StopGradient" and op.output and op.output[0] not in used:
            raise ValueError("StopGradient's output '{}' is orphan.\nYou typically want to specify "
                             "same input and output for StopGradient. Op:\n\n{}".format(op.output[0], op))


def _BackwardPass(operators, ys, net_name):
    """Seeds the losses without a given gradient (ConstantFill '<loss>_autogen_grad') and runs the
    C++ backward pass over operators: ([seed ops + gradient OperatorDefs], {blob: gradient})."""
    _CheckStopGradients(operators)
    if isinstance(ys, dict):
        items = [(str(k), None if v is None else _GradientName(v)) for k, v in ys.items()]
    else:
        items = [(str(y), None) for y in _ToStringList(ys)]
    seeds, pairs = [], []
    for y, given in items:
        if given is None:
            given = y + "_autogen_grad"
            fill = CreateOperator("ConstantFill", [y], [given], value=1.0, debug_info="")
            producer = next((op for op in reversed(operators) if y in op.output), None)
            if producer is not None and producer.HasField("device_option"):
                fill.device_option.CopyFrom(producer.device_option)
            seeds.append(fill)
        pairs.append((y, given))
    proto = caffe2_pb2.NetDef()
    proto.name = net_name
    proto.op.extend(operators)
    external = set(proto.external_input)
    for y, _ in pairs:  # a loss no op produces must be declared an external input
        if not any(y in op.output for op in operators) and y not in external:
            proto.external_input.append(y)
            external.add(y)
    op_bytes, grad_map = _C.get_backward_pass(proto.SerializeToString(), pairs)
    gradient_ops = list(seeds)
    for b in op_bytes:
        grad_op = caffe2_pb2.OperatorDef()
        grad_op.ParseFromString(b)
        gradient_ops.append(grad_op)
    return gradient_ops, dict(grad_map)


def get_ssa(net, blob_versions=None):
    """Caffe2's SSA view of a net: ([([(input, version)], [(output, version)]) per op],
    {blob: last version}); external inputs are version 0, each write adds one."""
    if isinstance(net, list):
        blob_versions = {} if blob_versions is None else blob_versions
        return [get_ssa(n, blob_versions)[0] for n in net], blob_versions
    proto = net.Proto() if isinstance(net, Net) else net
    assert isinstance(proto, caffe2_pb2.NetDef)
    if blob_versions is None:
        blob_versions = {}
    for i in proto.external_input:
        blob_versions.setdefault(str(i), 0)
    ssa = []
    for op in proto.op:
        if not proto.external_input:
            for i in op.input:
                blob_versions.setdefault(str(i), 0)
        inputs = [(str(i), blob_versions.get(str(i), 0)) for i in op.input]
        for o in op.output:
            blob_versions[str(o)] = blob_versions.get(str(o), 0) + 1
        outputs = [(str(o), blob_versions[str(o)]) for o in op.output]
        ssa.append((inputs, outputs))
    return ssa, blob_versions


def IsOperatorWithEngine(op_type, engine):
    """True when op_type has a kernel with that engine ('DEFAULT': the default engine)."""
    engine = "" if engine == "DEFAULT" else engine
    return any(engine in _C.operator_engines(op_type, d) for d in (0, 1))


def device_option_equal(opt1, opt2, ignore_node_name=True, ignore_random_seed=True):
    """Caffe2's comparison of DeviceOptions: CPU options are equal whatever their device_id;
    node_name and random_seed count only when not ignored."""
    if opt1 is None or opt2 is None:
        return opt1 is opt2
    if not ignore_node_name and opt1.node_name != opt2.node_name:
        return False
    if not ignore_random_seed and opt1.random_seed != opt2.random_seed:
        return False
    if not opt1.device_type or not opt2.device_type:
        return not opt1.device_type and not opt2.device_type
    return opt1.device_type == opt2.device_type and opt1.device_id == opt2.device_id


def CopyDeviceOption(op, src_op):
    """Copies src_op's device option into op (when src_op has one); returns op."""
    if src_op.HasField("device_option"):
        op.device_option.CopyFrom(src_op.device_option)
    return op


from hetnet._net import Net, NetProtoForRuntime  # noqa: E402,F401
from hetnet._plan import ExecutionStep, Plan  # noqa: E402,F401
from hetnet._ssa import get_undefined_blobs, get_output_producers, get_op_ids_in_path  # noqa: E402,F401
