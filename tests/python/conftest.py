"""Shared fixtures for the hetnet Python tests (run with PYTHONPATH=<build>/python)."""
import os
import sys

import pytest

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SHARED_DIR = os.environ.get("HETNET_SHARED_DIR", os.path.join(os.path.dirname(REPO_ROOT), "shared"))


@pytest.fixture
def ws():
    """The hetnet.workspace module with a clean 'default' workspace."""
    from hetnet import workspace
    workspace.SwitchWorkspace("default")
    workspace.ResetWorkspace()
    yield workspace
    workspace.SwitchWorkspace("default")
    workspace.ResetWorkspace()


def missing_operators(*op_types):
    from hetnet import _C
    have = set(_C.registered_operators())
    return [t for t in op_types if t not in have]


def require_operators(*op_types):
    """Fails (never skips) when a test needs C++ kernels this build lacks."""
    missing = missing_operators(*op_types)
    assert not missing, "libhetnet lacks operator kernels: " + ", ".join(missing)


def subprocess_env():
    """Environment for child Pythons: the same hetnet package first on PYTHONPATH."""
    import hetnet
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(hetnet.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    return env
