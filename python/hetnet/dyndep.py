"""caffe2.python.dyndep: loading operator libraries at run time.

hetnet's operators are all in libhetnet, so Caffe2's "@/caffe2/caffe2/contrib/gloo:gloo_ops"
style targets have nothing to load: like Caffe2 for a path that is not a file, InitOpsLibrary prints
"Ignoring <name> as it is not a valid file." and returns. A real shared library is loaded with
ctypes (RTLD_GLOBAL), and its static registrations add to hetnet's registries.
"""
import ctypes
import os

_loaded = set()


def InitOpsLibrary(name, trigger_lazy=True):
    """Loads the shared library `name` unless it is not a file (then prints and returns)."""
    if not os.path.exists(name):
        print("Ignoring {} as it is not a valid file.".format(name))
        return
    _init_dynamic_library(name)


def _init_dynamic_library(name):
    path = os.path.realpath(name)
    if path in _loaded:
        return
    ctypes.CDLL(path, ctypes.RTLD_GLOBAL)
    _loaded.add(path)
    from hetnet import core
    core._known_operator_types = None  # the registry may have grown


def GetImportedOpsLibraries():
    return set(_loaded)
