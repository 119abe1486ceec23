"""The seed script (unchanged) and python/examples/mixed_devices_run.py, run as subprocesses."""
import os
import re
import subprocess
import sys

import pytest

from conftest import REPO_ROOT, SHARED_DIR, require_operators, subprocess_env

SEED = os.path.join(SHARED_DIR, "examples", "seed_mixed_devices.py")
MIXED = os.path.join(REPO_ROOT, "python", "examples", "mixed_devices_run.py")

EXPECTED_SEED_OUTPUT = '''name: "my first net"
op {
  input: "data"
  input: "fc_w"
  input: "fc_b"
  output: "fc1"
  name: ""
  type: "FC"
  device_option {
    device_type: 0
    device_id: -1
  }
}
op {
  input: "fc1"
  output: "pred"
  name: ""
  type: "Sigmoid"
  device_option {
    device_type: 1
    device_id: 1
  }
}
op {
  input: "pred"
  input: "label"
  output: "softmax"
  output: "loss"
  name: ""
  type: "SoftmaxWithLoss"
  device_option {
    device_type: 1
    device_id: 1
  }
}
external_input: "data"
external_input: "fc_w"
external_input: "fc_b"
external_input: "label"

'''


def _run(script):
    return subprocess.run([sys.executable, script], env=subprocess_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=120)


def test_seed_prints_caffe2_netdef():
    if not os.path.exists(SEED):
        pytest.skip("seed script not found at " + SEED + " (set HETNET_SHARED_DIR)")
    require_operators("FC", "Sigmoid", "SoftmaxWithLoss", "XavierFill", "ConstantFill")
    result = _run(SEED)
    assert result.returncode == 0, result.stderr
    assert result.stdout == EXPECTED_SEED_OUTPUT


def test_seed_output_parses_back_as_netdef():
    from google.protobuf import text_format
    from hetnet.proto import caffe2_pb2
    net = text_format.Parse(EXPECTED_SEED_OUTPUT, caffe2_pb2.NetDef())
    assert [op.type for op in net.op] == ["FC", "Sigmoid", "SoftmaxWithLoss"]


def test_mixed_devices_example_runs():
    require_operators("FC", "Sigmoid", "SoftmaxWithLoss", "XavierFill", "ConstantFill")
    result = _run(MIXED)
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    loss_lines = [l for l in lines if l.startswith("loss: ")]
    assert len(loss_lines) == 1
    loss = float(loss_lines[0].split()[1])
    assert 0.0 < loss < 10.0
    from hetnet import workspace
    if workspace.NumCudaDevices() == 0:
        assert "moved to CPU by soft placement: Sigmoid, SoftmaxWithLoss" in lines
    else:
        # The placement report: FC stays on CPU, Sigmoid runs on the GPU, copies were inserted.
        assert any(re.search(r"#0\s+FC\s+cpu\b", l) for l in lines), result.stdout
        assert any(re.search(r"#\d+\s+Sigmoid\s+cuda:0\b", l) for l in lines), result.stdout
        header = re.search(r"(\d+) inserted copies", result.stdout)
        assert header and int(header.group(1)) >= 1, result.stdout
