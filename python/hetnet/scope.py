"""Name and device scopes, thread-local, as in caffe2.python.scope.

``DeviceScope(opt)`` replaces the enclosing device option (innermost wins). Only ``node_name`` is
inherited from the outer scope when the inner one has none, and ``extra_info`` entries of outer
scopes are added to the inner one's (sorted). ``NameScope(prefix)`` prepends ``prefix/`` to blob
names made by net builders. Leaving a scope restores the previous one, also on exceptions.
"""
import contextlib
import threading

from hetnet.proto import caffe2_pb2

_NAMESCOPE_SEPARATOR = "/"

_threadlocal_scope = threading.local()


def CurrentNameScope():
    """The current name scope with its trailing separator ("" at top level)."""
    if not hasattr(_threadlocal_scope, "namescope"):
        _threadlocal_scope.namescope = ""
    return _threadlocal_scope.namescope


def CurrentDeviceScope():
    """The current DeviceOption, or None outside any DeviceScope."""
    return getattr(_threadlocal_scope, "devicescope", None)


@contextlib.contextmanager
def NameScope(prefix, reset=False):
    assert prefix is None or isinstance(prefix, str), "NameScope takes in a string as its argument."
    old_scope = CurrentNameScope()
    prefix = prefix + _NAMESCOPE_SEPARATOR if prefix else ""
    _threadlocal_scope.namescope = prefix if reset else old_scope + prefix
    try:
        yield
    finally:
        _threadlocal_scope.namescope = old_scope


@contextlib.contextmanager
def DeviceScope(scope, node_name=None):
    new_scope = caffe2_pb2.DeviceOption()
    if scope:
        assert isinstance(scope, caffe2_pb2.DeviceOption), \
            "DeviceScope takes in a caffe2_pb2.DeviceOption as its argument."
        new_scope.CopyFrom(scope)
    else:
        assert node_name, "At least one argument should be non-null in DeviceScope"
    if node_name:
        new_scope.node_name = node_name
    old_scope = CurrentDeviceScope()
    if old_scope is not None:
        if old_scope.HasField("node_name") and not new_scope.HasField("node_name"):
            new_scope.node_name = old_scope.node_name
        if old_scope.extra_info:
            merged = sorted(list(new_scope.extra_info) + list(old_scope.extra_info))
            del new_scope.extra_info[:]
            new_scope.extra_info.extend(merged)
    _threadlocal_scope.devicescope = new_scope
    try:
        yield
    finally:
        _threadlocal_scope.devicescope = old_scope


@contextlib.contextmanager
def EmptyDeviceScope():
    """Clears the device scope inside it (ops get no device option from the scope)."""
    old_scope = CurrentDeviceScope()
    _threadlocal_scope.devicescope = None
    try:
        yield
    finally:
        _threadlocal_scope.devicescope = old_scope
