"""Parts of caffe2.python.workspace that sit above the bindings: the ``blobs`` dict view, root
folders, StringifyProto, plans, immediate mode and ``C.Workspace`` objects.

``C.Workspace()`` objects are Python handles on hetnet's named workspaces: each new one owns a
workspace named ``_hetnet_ws_<n>``; a call on it switches to that workspace for the call and
back. Dropping the handle empties its workspace (the empty name stays). ``C.Workspace.current``
is a handle on the current workspace (not owned, never emptied). Blob handles fetch and feed
copies, as ``FetchBlob``/``FeedBlob`` do; ``Blob.tensor()`` (Caffe2's in-place tensor view) is
not provided (see docs/caffe2_differences.md).
"""
import contextlib
import itertools
import shutil
import tempfile
import threading

from hetnet import _C, _plan
from hetnet.proto import caffe2_pb2

_ws = None  # hetnet.workspace, set by Install()


def StringifyProto(obj):
    """Bytes of a protobuf message (or of an object with Proto()); bytes and str pass through."""
    if isinstance(obj, (bytes, str)):
        return obj
    if hasattr(obj, "SerializeToString"):
        return obj.SerializeToString()
    if hasattr(obj, "Proto"):
        return obj.Proto().SerializeToString()
    raise ValueError("Unexpected argument to StringifyProto of type " + type(obj).__name__)


# ---- root folders ----

_root_folders = {}


def SetRootFolder(root_folder):
    _root_folders[_C.current_workspace()] = "." if root_folder is None else str(root_folder)


def RootFolder():
    """The root folder given to the last ResetWorkspace of the current workspace ('.' by default).
    hetnet's operators do not read it; it is kept for scripts that ask."""
    return _root_folders.get(_C.current_workspace(), ".")


# ---- the blobs dict ----

class _BlobsDict(object):
    """``workspace.blobs``: the current workspace's blobs as a dict (values are fetched copies)."""

    def __getitem__(self, key):
        return _ws.FetchBlob(key)

    def __setitem__(self, key, value):
        return _ws.FeedBlob(key, value)

    def __len__(self):
        return len(_C.blobs())

    def __iter__(self):
        return iter(_C.blobs())

    def __contains__(self, key):
        return _C.has_blob(str(key))

    def keys(self):
        return list(_C.blobs())


blobs = _BlobsDict()


# ---- plans ----

def _PlanProto(plan_or_step):
    if isinstance(plan_or_step, _plan.ExecutionStep):
        plan_or_step = _plan.Plan(plan_or_step)
    if isinstance(plan_or_step, _plan.Plan):
        return plan_or_step.Proto()
    if isinstance(plan_or_step, caffe2_pb2.PlanDef):
        return plan_or_step
    if isinstance(plan_or_step, (bytes, bytearray)):
        proto = caffe2_pb2.PlanDef()
        proto.ParseFromString(bytes(plan_or_step))
        return proto
    raise TypeError("RunPlan takes a Plan, ExecutionStep, PlanDef or its serialized bytes, not "
                    + type(plan_or_step).__name__)


def RunPlan(plan_or_step):
    """Runs a plan (see hetnet/_plan.py for what the Python plan runner supports)."""
    return _plan.RunPlanProto(_PlanProto(plan_or_step))


def RunPlanInBackground(plan_or_step):
    """Starts the plan on a background thread; returns a handle with is_done()/is_succeeded()."""
    return _plan.BackgroundPlan(_PlanProto(plan_or_step))


# ---- immediate mode ----

_immediate_mode = False
_immediate_workspace_name = "_CAFFE2_IMMEDIATE"
_immediate_root_folder = ""


@contextlib.contextmanager
def WorkspaceGuard(workspace_name):
    """Switches to workspace_name (created if missing) inside the block, then back."""
    current = _C.current_workspace()
    _C.switch_workspace(str(workspace_name), True)
    try:
        yield
    finally:
        _C.switch_workspace(current, True)


def IsImmediate():
    return _immediate_mode


def StartImmediate(i_know=False):
    """Ops added to any core.Net also run at once in a workspace of their own (Caffe2's debugging
    aid); read their blobs with FetchImmediate."""
    global _immediate_mode, _immediate_root_folder
    if IsImmediate():
        StopImmediate()
    _immediate_mode = True
    with WorkspaceGuard(_immediate_workspace_name):
        _immediate_root_folder = tempfile.mkdtemp()
        SetRootFolder(_immediate_root_folder)
        _C.reset_workspace()
    _ws._immediate_root_folder = _immediate_root_folder  # Caffe2 tests read it there
    if not i_know:
        print("Enabling immediate mode: every operator added to a net also runs in the "
              "'{}' workspace; StopImmediate() ends it.".format(_immediate_workspace_name))


def StopImmediate():
    global _immediate_mode, _immediate_root_folder
    if not IsImmediate():
        return
    with WorkspaceGuard(_immediate_workspace_name):
        _C.reset_workspace()
        SetRootFolder(None)
    shutil.rmtree(_immediate_root_folder, ignore_errors=True)
    _immediate_root_folder = ""
    _ws._immediate_root_folder = ""
    _immediate_mode = False


def ImmediateBlobs():
    with WorkspaceGuard(_immediate_workspace_name):
        return _C.blobs()


def RunOperatorImmediate(op):
    with WorkspaceGuard(_immediate_workspace_name):
        _ws.RunOperatorOnce(op)


def FetchImmediate(*args, **kwargs):
    with WorkspaceGuard(_immediate_workspace_name):
        return _ws.FetchBlob(*args, **kwargs)


def FeedImmediate(*args, **kwargs):
    with WorkspaceGuard(_immediate_workspace_name):
        return _ws.FeedBlob(*args, **kwargs)


def _OnOperatorAdded(op):
    """Called by core.Net for every operator it adds: runs it in immediate mode."""
    if _immediate_mode:
        RunOperatorImmediate(op)


# ---- C.Workspace objects ----

_workspace_ids = itertools.count()
_switch_lock = threading.RLock()


class _Blob(object):
    """Caffe2's C.Blob handle: a named blob of one workspace."""

    def __init__(self, workspace, name):
        self._workspace, self._name = workspace, name

    def fetch(self):
        with self._workspace._Active():
            return _ws.FetchBlob(self._name)

    def feed(self, value, device_option=None):
        with self._workspace._Active():
            return _ws.FeedBlob(self._name, value, device_option)

    def serialize(self, name):
        """The blob as a BlobProto (bytes) under `name`."""
        with self._workspace._Active():
            proto = caffe2_pb2.BlobProto()
            proto.ParseFromString(_ws.SerializeBlob(self._name))
        proto.name = str(name)
        return proto.SerializeToString()

    def deserialize(self, serialized):
        with self._workspace._Active():
            _ws.DeserializeBlob(self._name, serialized)

    def tensor(self):
        raise NotImplementedError("Blob.tensor() (an in-place view of the tensor's memory) is not "
                                  "provided by hetnet: fetch() and feed() copy")


class _NetHandle(object):
    def __init__(self, workspace, name):
        self._workspace, self._name = workspace, name

    def name(self):
        return self._name

    def run(self):
        with self._workspace._Active():
            _C.run_net(self._name, 1)
        return True


class _WorkspaceMeta(type):
    @property
    def current(cls):
        return cls(_name=_C.current_workspace())


class Workspace(object, metaclass=_WorkspaceMeta):
    """Caffe2's ``workspace.C.Workspace``: a workspace object, independent of the current one."""

    def __init__(self, _name=None):
        self._owned = _name is None
        self._name = "_hetnet_ws_{}".format(next(_workspace_ids)) if _name is None else _name
        if self._owned:
            with self._Active():
                _C.reset_workspace()

    @contextlib.contextmanager
    def _Active(self):
        with _switch_lock:
            current = _C.current_workspace()
            _C.switch_workspace(self._name, True)
            try:
                yield
            finally:
                _C.switch_workspace(current, True)

    def __del__(self):
        if getattr(self, "_owned", False):
            try:
                with self._Active():
                    _C.reset_workspace()
            except Exception:  # interpreter shutdown: nothing left to free
                pass

    @property
    def blobs(self):
        with self._Active():
            names = _C.blobs()
        return {name: _Blob(self, name) for name in names}

    @property
    def nets(self):
        with self._Active():
            names = _C.nets()
        return {name: _NetHandle(self, name) for name in names}

    def create_blob(self, name):
        with self._Active():
            _C.create_blob(str(name))
        return _Blob(self, str(name))

    def create_net(self, net, overwrite=False):
        """Creates a core.Net or NetDef here; returns a handle whose run() runs it."""
        from hetnet import core
        if not isinstance(net, (core.Net, caffe2_pb2.NetDef)):
            raise TypeError("create_net takes a core.Net or a NetDef, not " + type(net).__name__)
        with self._Active():
            _ws.CreateNet(net, overwrite)
        return _NetHandle(self, net.Proto().name if isinstance(net, core.Net) else net.name)

    def run(self, obj):
        """Runs an OperatorDef, a Net/NetDef (once, not kept) or a Plan/ExecutionStep/PlanDef."""
        from hetnet import core
        with self._Active():
            if isinstance(obj, caffe2_pb2.OperatorDef):
                return _ws.RunOperatorOnce(obj)
            if isinstance(obj, (core.Net, caffe2_pb2.NetDef)):
                return _ws.RunNetOnce(obj)
            if isinstance(obj, (_plan.Plan, _plan.ExecutionStep, caffe2_pb2.PlanDef)):
                return RunPlan(obj)
        raise TypeError("Workspace.run takes an OperatorDef, Net, NetDef, Plan or ExecutionStep, not "
                        + type(obj).__name__)

    def fetch_blob(self, name):
        with self._Active():
            return _ws.FetchBlob(name)

    def feed_blob(self, name, value, device_option=None):
        with self._Active():
            return _ws.FeedBlob(name, value, device_option)

    def has_blob(self, name):
        with self._Active():
            return _C.has_blob(str(name))

    def reset(self):
        with self._Active():
            _C.reset_workspace()


_EXPORTS = ("StringifyProto", "RootFolder", "blobs", "RunPlan", "RunPlanInBackground", "WorkspaceGuard",
            "IsImmediate", "StartImmediate", "StopImmediate", "ImmediateBlobs", "RunOperatorImmediate",
            "FetchImmediate", "FeedImmediate")


def Install(workspace_module):
    """Adds these names to hetnet.workspace (and Workspace/Blob to its C module)."""
    global _ws
    _ws = workspace_module
    for name in _EXPORTS:
        setattr(workspace_module, name, globals()[name])
    workspace_module.C.Workspace = Workspace
    workspace_module.C.Blob = _Blob
    workspace_module.C.BackgroundPlan = _plan.BackgroundPlan
    workspace_module._immediate_root_folder = _immediate_root_folder
