"""The process's workspaces, blobs and nets, as in caffe2.python.workspace.

Memory: ``FeedBlob`` always copies the array into a new tensor (on the device of the given option,
else the current DeviceScope, else CPU); later changes to the array are not seen by the blob.
``FetchBlob`` always copies the tensor into a new, writable numpy array (GPU tensors through the
host); changing it does not change the blob. Non-contiguous and non-native-byte-order arrays are
converted before the copy. Strings: str/bytes/object arrays feed string tensors (str is stored
as UTF-8); fetched string tensors are object arrays of bytes, as in Caffe2.
"""
import collections
import sys
import time
import types

import numpy as np

from hetnet import _C, core, scope
from hetnet.proto import caffe2_pb2
from hetnet._net import NetProtoForRuntime

# As Caffe2 (PyTorch 1.x): GPU support is a CUDA build *and* at least one CUDA device; a CUDA build
# on a machine without a GPU or driver reports False, so GPU tests skip. GpuDeviceType is CUDA
# either way (scripts build GPU nets on CPU-only machines).
GpuDeviceType = caffe2_pb2.CUDA
has_cuda_support = bool(_C.has_cuda_support()) and _C.num_cuda_devices() > 0
has_gpu_support = has_cuda_support
has_hip_support = False
is_asan = False
has_mkldnn = False
use_mkldnn = False


def NumCudaDevices():
    return _C.num_cuda_devices() if has_cuda_support else 0


def NumGpuDevices():
    return NumCudaDevices()


def _no_gpu_binding(name):
    def missing(*args, **kwargs):
        raise NotImplementedError("workspace.{} is not provided by hetnet (no binding for it)".format(name))
    missing.__name__ = name
    return missing


if has_gpu_support:
    GetCUDAVersion = _no_gpu_binding("GetCUDAVersion")
    GetCuDNNVersion = _no_gpu_binding("GetCuDNNVersion")
    GetDeviceProperties = _no_gpu_binding("GetDeviceProperties")
    GetGpuPeerAccessPattern = _no_gpu_binding("GetGpuPeerAccessPattern")
    GetGPUMemoryInfo = _no_gpu_binding("GetGPUMemoryInfo")
else:  # Caffe2's values without GPU support
    def GetCUDAVersion():
        return 0

    def GetCuDNNVersion():
        return 0

    def GetDeviceProperties(device_id):
        return None

    def GetGpuPeerAccessPattern():
        return np.array([])

    def GetGPUMemoryInfo():
        return None


# ---- process setup ----

_global_init_args = None


def GlobalInit(args):
    """Caffe2's process setup from a flags list such as ['caffe2', '--caffe2_log_level=0'].

    The first entry is the program name. Flags are accepted in '--name=value', '--name value' and
    '--name' forms; hetnet has no gflags, so every flag is recorded (see GlobalInitArgs) and
    otherwise ignored without error, as Caffe2 ignored the many flags its build did not define.
    May be called more than once."""
    global _global_init_args
    if isinstance(args, (str, bytes)):
        raise TypeError("GlobalInit takes a list of strings, e.g. ['caffe2', '--caffe2_log_level=0']")
    args = [a.decode("utf-8") if isinstance(a, bytes) else str(a) for a in args]
    flags = collections.OrderedDict()
    i = 1
    while i < len(args):
        arg = args[i]
        if arg.startswith("-"):
            name = arg.lstrip("-")
            if "=" in name:
                name, value = name.split("=", 1)
            elif i + 1 < len(args) and not args[i + 1].startswith("-"):
                value = args[i + 1]
                i += 1
            else:
                value = "true"
            flags[name] = value
        i += 1
    _global_init_args = flags
    return True


def GlobalInitArgs():
    """The flags given to the last GlobalInit call ({name: value string}), or None before one."""
    return None if _global_init_args is None else dict(_global_init_args)


# ---- workspaces ----

def SwitchWorkspace(name, create_if_missing=False):
    _C.switch_workspace(str(name), bool(create_if_missing))


def CurrentWorkspace():
    return _C.current_workspace()


def Workspaces():
    return _C.workspaces()


def ResetWorkspace(root_folder=None):
    """Drops every blob and net of the current workspace; records root_folder (RootFolder())."""
    _C.reset_workspace()
    _workspace_compat.SetRootFolder(root_folder)
    return True


# ---- blobs ----

def Blobs():
    return _C.blobs()


def HasBlob(name):
    return _C.has_blob(str(name))


def CreateBlob(name):
    _C.create_blob(str(name))
    return True


def _DeviceOptionBytes(device_option):
    option = device_option if device_option is not None else scope.CurrentDeviceScope()
    return None if option is None else option.SerializeToString()


def _AsFeedableArray(value):
    arr = np.asarray(value)
    if arr.dtype.kind in "SU":
        arr = arr.astype(object)
    if arr.dtype.kind != "O" and not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr if arr.flags.c_contiguous else arr.copy(order="C")  # keeps 0-d arrays 0-d


def _IsArraySequence(value):
    return isinstance(value, (list, tuple)) and bool(value) and all(isinstance(v, np.ndarray) for v in value)


def FeedBlob(name, arr, device_option=None):
    """Copies arr into blob `name`. A protobuf message or a str/bytes value is stored serialized.
    A list/tuple of numpy arrays is an ONNX sequence (a list of numbers is still one array); None
    an empty ONNX optional."""
    if arr is None:
        _C.feed_blob(str(name), None, _DeviceOptionBytes(device_option))
        return True
    if _IsArraySequence(arr):
        _C.feed_blob(str(name), [_AsFeedableArray(v) for v in arr], _DeviceOptionBytes(device_option))
        return True
    if isinstance(arr, caffe2_pb2.TensorProto):
        raise TypeError("feeding a TensorProto is not supported; feed a numpy array")
    if hasattr(arr, "SerializeToString") and not isinstance(arr, np.ndarray):
        arr = arr.SerializeToString()
    if isinstance(arr, str):
        arr = arr.encode("utf-8")
    if not isinstance(arr, bytes):
        arr = _AsFeedableArray(arr)
    _C.feed_blob(str(name), arr, _DeviceOptionBytes(device_option))
    return True


def FetchBlob(name):
    """A new numpy array with the contents of blob `name` (bytes for a blob holding a string, a list
    of arrays for an ONNX sequence, None for an empty ONNX optional)."""
    return _C.fetch_blob(str(name))


def FetchBlobs(names):
    return [FetchBlob(name) for name in names]


def SerializeBlob(name):
    """The blob serialized as a BlobProto (bytes): tensors and string blobs (Caffe2's SerializeBlob)."""
    return _C.serialize_blob(str(name))


def DeserializeBlob(name, serialized):
    """Sets the blob from SerializeBlob's bytes (Caffe2's DeserializeBlob)."""
    _C.deserialize_blob(str(name), serialized)


def BlobInfo(name):
    """{'type', 'shape', 'dtype', 'device': (device_type, device_id)} of a blob."""
    return _C.blob_info(str(name))


# ---- nets and operators ----

def _NetProtoBytes(net):
    if isinstance(net, (bytes, bytearray)):  # Caffe2 also took serialized NetDefs
        return bytes(net)
    return NetProtoForRuntime(net).SerializeToString()


def _NetName(net):
    if isinstance(net, (bytes, bytearray)):
        proto = caffe2_pb2.NetDef()
        proto.ParseFromString(bytes(net))
        return proto.name
    if isinstance(net, core.Net):
        return net.Name()
    if isinstance(net, caffe2_pb2.NetDef):
        return net.name
    return str(net)


def CreateNet(net, overwrite=False, input_blobs=None):
    """Creates net (a Net or NetDef) in the current workspace; its external inputs get blobs."""
    for blob in input_blobs or []:
        CreateBlob(blob)
    return _C.create_net(_NetProtoBytes(net), bool(overwrite))


def RunNet(name, num_iter=1, allow_fail=False):
    """Runs a net created before (by name, Net or NetDef) num_iter times."""
    _C.run_net(_NetName(name), int(num_iter))
    return True


def RunNetOnce(net):
    _C.run_net_once(_NetProtoBytes(net))
    return True


def RunOperatorOnce(operator):
    """Runs an OperatorDef (or its serialized bytes) once in the current workspace."""
    _C.run_operator_once(bytes(operator) if isinstance(operator, (bytes, bytearray))
                         else operator.SerializeToString())
    return True


def RunOperatorsOnce(operators):
    for op in operators:
        RunOperatorOnce(op)
    return True


def Nets():
    return _C.nets()


def GetNetDef(name):
    """The NetDef of a created net as it runs: devices resolved, cross-device copies inserted."""
    proto = caffe2_pb2.NetDef()
    proto.ParseFromString(_C.net_def(_NetName(name)))
    return proto


# ---- placement ----

def SetPlacementOptions(strict=None, soft_placement=None):
    """Process-wide defaults of hetnet::PlacementOptions (a net's arguments still override)."""
    cur_strict, cur_soft = _C.get_placement_options()
    _C.set_placement_options(cur_strict if strict is None else bool(strict),
                             cur_soft if soft_placement is None else bool(soft_placement))


def GetPlacementOptions():
    strict, soft = _C.get_placement_options()
    return {"strict": strict, "soft_placement": soft}


def PlacementReport(net, strict=None, soft_placement=None, devices=None, init_net=None, input_shapes=None):
    """Where each op of net would run against the current workspace, and the copies inserted:
    {'net_name', 'ops': [{'index','type','device','engine','reason'}], 'copies': [...],
    'text': the C++ report text, 'dot': Graphviz}.

    devices: plan offline for a machine with these devices instead of this one (as
    `hetnet inspect --placement --devices`): a list such as ['cpu', 'cuda:0', 'cuda:1'] (or the
    string 'cpu,cuda:0'; the CPU is always there, GPUs are numbered from 0). Nothing runs and no
    GPU is needed. External inputs' devices and shapes come from the current workspace, then from
    init_net (planned on the same devices, not run), then from input_shapes ({blob: shape or
    (shape, TensorProto dtype)}); copy bytes are known where shape inference knows the shape.
    A net op on a GPU the list lacks raises hetnet.UnsupportedError naming it, unless soft
    placement. init_net and input_shapes need devices. A net with the argument placement="auto" is
    planned as net creation on that machine would: AutoPlace first ($HETNET_DEVICE_PROFILE, else
    built-in constants for the list), the reasons AutoPlace's."""
    opts = GetPlacementOptions()
    strict = opts["strict"] if strict is None else bool(strict)
    soft = opts["soft_placement"] if soft_placement is None else bool(soft_placement)
    if devices is None:
        if init_net is not None or input_shapes is not None:
            raise ValueError("PlacementReport: init_net and input_shapes are for offline planning; "
                             "give devices=[...] too")
        _, _, report = _C.place_net(_NetProtoBytes(net), strict, soft)
        return report
    if isinstance(devices, str):
        devices = devices.split(",")
    names = []
    for d in devices:
        if isinstance(d, caffe2_pb2.DeviceOption):
            d = "cpu" if d.device_type == caffe2_pb2.CPU else \
                "cuda:{}".format(d.device_id) if d.device_type == caffe2_pb2.CUDA else \
                "device_type {}:{}".format(d.device_type, d.device_id)
        if not isinstance(d, str):
            raise TypeError("PlacementReport: devices holds names such as 'cpu' and 'cuda:0', got {!r}"
                            .format(d))
        names.append(d.strip())
    shapes = _ShapesArg(input_shapes)
    init_bytes = b"" if init_net is None else _NetProtoBytes(init_net)
    _, _, report = _C.plan_placement(_NetProtoBytes(net), names, strict, soft, init_bytes, shapes, True)
    report["devices"] = names
    return report


def _ShapesArg(input_shapes):
    """{name: shape or (shape, TensorProto dtype)} -> {name: (shape list, dtype)}; float32 by default."""
    shapes = {}
    for name, value in (input_shapes or {}).items():
        if isinstance(value, tuple) and len(value) == 2 and isinstance(value[1], int) \
                and isinstance(value[0], (list, tuple)):
            shapes[str(name)] = (list(value[0]), value[1])
        else:
            shapes[str(name)] = (list(value), caffe2_pb2.TensorProto.FLOAT)
    return shapes


def FormatPlacementReport(report):
    """The report as text: the same text C++ (PlacementReport::ToText) and `hetnet inspect
    --placement` print."""
    return report["text"]


def PlacementDot(report):
    """The placed net as Graphviz DOT: ops coloured by device, copies as red boundary edges."""
    return report["dot"]


# ---- memory report ----

def MemoryReport(net, input_shapes=None, params=None):
    """Each blob's shape and bytes, parameters per device and the memory required for data, as
    Caffe's net assembly log counted it (an in-place output adds nothing); see
    core/memory_report.h. With input_shapes ({external input: shape or (shape, TensorProto
    dtype)}) shapes come from shape inference; without, from the current workspace (after a run).
    params: parameter blobs (default: a ModelHelper's params, else none). Returns a dict with
    'blobs', 'param_bytes'/'data_bytes' ({(device_type, id): bytes}), 'param_total',
    'data_total', 'unknown', 'prepared_bytes'/'prepared_total' (from the workspace only: the
    copies of the net's blobs that kernels hold in their own layout, e.g. packed FC weights) and
    'text'."""
    if params is None:
        params = getattr(net, "params", [])
    net = getattr(net, "net", net)  # a ModelHelper's forward net
    shapes = _ShapesArg(input_shapes)
    return _C.memory_report(_NetProtoBytes(net), shapes, [str(p) for p in params], input_shapes is None)


def FormatMemoryReport(report):
    return report["text"]


# ---- benchmarking ----

def BenchmarkNet(name, warmup_runs, main_runs, run_individual):
    """As Caffe2: [ms per run of the whole net] + (with run_individual) [ms per operator, in order].
    Per-operator times come from the C++ profiler (host clock on CPU, CUDA events on GPU) while the
    net's own executor runs it; with run_individual the per-op-type summary is printed."""
    return _C.benchmark_net(_NetName(name), int(warmup_runs), int(main_runs), bool(run_individual))


def ProfileNet(name, warmup_runs=1, main_runs=10, trace_file=None):
    """Profiles main_runs runs of a created net: {'text' (markdown per-op-type table and copies'
    share), 'type_ms', 'op_ms', 'copy_share', 'wall_ms', 'unprofiled_ms'}; with trace_file, writes
    a Chrome trace (one lane per worker thread / GPU stream) of the profiled runs."""
    return _C.profile_net(_NetName(name), int(warmup_runs), int(main_runs), trace_file or "")


def BenchmarkNetByOpType(name, warmup_runs=1, main_runs=10):
    """{op type: ms per run summed over the ops of that type} for a created net."""
    times = BenchmarkNet(name, warmup_runs, main_runs, True)[1:]
    per_type = collections.OrderedDict()
    for op, ms in zip(GetNetDef(name).op, times):
        per_type[op.type] = per_type.get(op.type, 0.0) + ms
    return per_type


def TimeRuns(name, runs=10):
    """Wall-clock seconds per RunNet call, measured from Python."""
    start = time.perf_counter()
    RunNet(name, runs)
    return (time.perf_counter() - start) / runs


# ---- workspace.C: the binding module's names that Caffe2 code touches ----

def _BuildCModule():
    """A module object standing in for Caffe2's pybind11 module ``C``: the functions our binding
    has, under Caffe2's names and argument orders (nothing here that hetnet does not do)."""
    c = types.ModuleType("hetnet.workspace.C", "Caffe2's workspace.C: hetnet's bindings under Caffe2's names")
    c.has_cuda_support = has_cuda_support
    c.has_gpu_support = has_gpu_support
    c.has_hip_support = has_hip_support
    c.is_asan = is_asan
    c.has_mkldnn = has_mkldnn
    c.use_mkldnn = use_mkldnn
    c.num_cuda_devices = NumCudaDevices
    c.global_init = GlobalInit
    c.registered_operators = lambda: sorted(core._KnownOperatorTypes())
    c.nearby_opnames = lambda name: core.NearbyOperatorNames(name, 5)
    c.workspaces = _C.workspaces
    c.current_workspace = _C.current_workspace
    c.switch_workspace = lambda name, create_if_missing=False: _C.switch_workspace(
        str(name), bool(create_if_missing))
    c.reset_workspace = lambda root_folder=None: _C.reset_workspace()
    c.blobs = _C.blobs
    c.has_blob = lambda name: _C.has_blob(str(name))
    c.create_blob = lambda name: _C.create_blob(str(name))
    c.feed_blob = lambda name, arg, device_option=None: FeedBlob(name, arg, device_option)
    c.fetch_blob = lambda name: _C.fetch_blob(str(name))
    c.nets = _C.nets
    c.create_net = lambda net_bytes, overwrite=False: _C.create_net(net_bytes, bool(overwrite))
    c.run_net = lambda name, num_iter=1, allow_fail=False: _C.run_net(str(name), int(num_iter))
    c.run_net_once = _C.run_net_once
    c.run_operator_once = _C.run_operator_once
    c.delete_net = _C.delete_net
    c.benchmark_net = _C.benchmark_net
    c.get_gradient_defs = _C.get_gradient_defs

    def infer_op_input_output_device(op_bytes):
        ins, outs = _C.infer_op_blob_devices(op_bytes)
        return ([core.DeviceOption(t, i).SerializeToString() for t, i in ins],
                [core.DeviceOption(t, i).SerializeToString() for t, i in outs])
    c.infer_op_input_output_device = infer_op_input_output_device
    return c


C = _BuildCModule()

# blobs, RootFolder, StringifyProto, RunPlan, immediate mode, C.Workspace (hetnet/_workspace_compat.py)
from hetnet import _workspace_compat  # noqa: E402
_workspace_compat.Install(sys.modules[__name__])


if _C.has_predictor:  # bound when core/predictor.h is in the tree
    from hetnet._predictor import Predictor  # noqa: F401


# ---- cost-based automatic placement (core/auto_placement.h, docs/auto_placement.md) ----

def AutoPlace(net, devices=None, objective="latency", memory_caps=None, input_shapes=None, profile=None,
              override_pinned=False, data_inputs=None, exact_limit=14, min_mixed_gain=0.03):
    """Chooses a device for every operator of net that has no device option of its own, from
    predicted compute and copy times, and returns (placed NetDef, report).

    devices: candidate names such as ['cpu', 'cuda:0'] (or 'cpu,cuda:0'); None: the CPU and every
    device of the profile. objective: 'latency' (one run's predicted time) or 'throughput' (the
    busiest device or copy direction per run, a pipelined steady state). memory_caps: {device:
    bytes}; None: the profile's memory. input_shapes: {blob: shape or (shape, TensorProto dtype)},
    over the shapes of blobs the current workspace holds. profile: a path to a JSON device profile
    (`hetnet calibrate`), its JSON text, or a dict; None: $HETNET_DEVICE_PROFILE, else rough
    built-in constants for this machine. data_inputs: the blobs fed per run (copied from where
    they live every run); None: the net's first external input. Every other blob the net reads
    before writing it counts as a weight, loaded once onto each device that reads it.
    min_mixed_gain: a mixed placement must be predicted faster than the best one-device placement
    by this fraction, else that one is chosen (predictions err by 10-25%); 0: the search's optimum.

    The report is a dict: 'text' (the C++ report), 'ops' ([{op, type, predicted_us: {device: us},
    chosen, pinned, why}]), 'predicted_us', 'objective', 'objective_us', 'baselines_us'
    ({'all cpu': us, ...}), 'peak_bytes', 'caps', 'busy_us', 'exact', 'planner_ms',
    'placements_evaluated', 'profile_source'. No placement within the caps raises
    hetnet.InvalidArgumentError naming the device, the bytes needed and the cap."""
    if isinstance(devices, str):
        devices = devices.split(",")
    names = [str(d).strip() for d in (devices or [])]
    if objective not in ("latency", "throughput"):
        raise ValueError("AutoPlace: objective is 'latency' or 'throughput', got {!r}".format(objective))
    profile_json = _ProfileJson(profile, "AutoPlace")
    caps = {str(k): int(v) for k, v in (memory_caps or {}).items()}
    net_bytes, report = _C.auto_place(_NetProtoBytes(net), names, objective, caps, _ShapesArg(input_shapes),
                                      profile_json, bool(override_pinned), int(exact_limit),
                                      [str(b) for b in (data_inputs or [])], True, float(min_mixed_gain))
    placed = caffe2_pb2.NetDef()
    placed.ParseFromString(net_bytes)
    return placed, report


def _ProfileJson(profile, what):
    """A device profile argument as JSON text: "" for None ($HETNET_DEVICE_PROFILE or built-in)."""
    import json
    import os
    if profile is None:
        return ""
    if isinstance(profile, dict):
        return json.dumps(profile)
    if isinstance(profile, str) and profile.lstrip().startswith("{"):
        return profile
    if isinstance(profile, (str, os.PathLike)):
        with open(profile) as f:
            return f.read()
    raise TypeError("{}: profile is a JSON path, JSON text or dict, got {!r}".format(what, type(profile)))


def ComparePrediction(net, devices=None, profile=None, data_inputs=None, runs=5, warmup=1):
    """AutoPlace's prediction beside a measurement: plans net as AutoPlace(net, devices, profile,
    data_inputs=...) does (latency objective, shapes from this workspace), creates the placed net
    under the name '<net>_compare_prediction', profiles `runs` runs after `warmup` and deletes it.
    Returns {'text', 'ops': [{op, type, device, predicted_us, measured_us (None: fused away)}],
    'predicted_total_us', 'measured_wall_us', 'measured_copy_us', 'report' (AutoPlace's)}."""
    if isinstance(devices, str):
        devices = devices.split(",")
    names = [str(d).strip() for d in (devices or [])]
    return _C.compare_prediction(_NetProtoBytes(net), names, _ProfileJson(profile, "ComparePrediction"),
                                 [str(b) for b in (data_inputs or [])], int(warmup), int(runs))


def MeasureOpCosts(net, profile=None, runs=10, warmup=2, data_inputs=None, calibration=None):
    """Times every operator of the created net `net` over `runs` profiled runs after `warmup` plain
    ones, and returns the device profile (a dict; `profile` as for AutoPlace) with each operator's
    median time recorded under its signature (type, engine, input shapes and dtypes, arguments)
    and device, in 'measured_ops'. AutoPlace then uses those times instead of its FLOP estimates
    wherever an operator of the same signature could run on that device: measure a net placed all
    on the CPU and all on a GPU, then plan. Copies are not recorded (the profile's links cost
    them); a GPU operator counts the longer of its kernel time and its launch on the host, and its
    two parts are kept too ('measured_launch_us', 'measured_device_us'), which AutoPlace overlaps
    along a chain of GPU ops where the profile has 'overlap_gpu_launches': True.

    Operator times do not add up to a plain run (on a GPU the host issues the next op while the
    device runs this one; timing each op costs time). `net` given as the Net or NetDef it was
    created from (not only its name), and every op on one device, the net's entries on that device
    are then multiplied by the one factor with which AutoPlace predicts the net's own median plain
    run time (outputs brought to the host), recorded in 'run_time_scales' under
    '<device>|<net name>' (core/run_time_calibration.h). `data_inputs` as for AutoPlace. Pass a
    dict as `calibration` to receive that fit: device, scale, predicted_us (before), calibrated_us,
    measured_us, entries, note. Given only a name, the times are scaled by the net's plain wall time
    over its profiled one (when below 1), as before."""
    import json
    placed = b"" if isinstance(net, str) else _NetProtoBytes(net)
    profile_json, _, fit = _C.measure_op_costs(_NetName(net), _ProfileJson(profile, "MeasureOpCosts"), int(warmup),
                                               int(runs), placed, [str(b) for b in (data_inputs or [])])
    if calibration is not None:
        calibration.clear()
        calibration.update(fit)
    return json.loads(profile_json)
