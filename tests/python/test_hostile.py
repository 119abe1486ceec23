"""Hostile input through Python (issue 18): sizes that used to wrap, truncated integer arguments,
caps, and resetting the workspace or deleting a net while another thread runs it. Each test checks
the error and that the workspace still works afterwards. Rows of docs/bad_input.md."""
import threading
import time

import numpy as np
import pytest

import hetnet
from hetnet import _C, core


def _works(ws):
    ws.FeedBlob("ok_in", np.array([-1.0, 2.0], np.float32))
    net = core.Net("ok")
    net.Relu("ok_in", "ok_out")
    ws.RunNetOnce(net)
    assert ws.FetchBlob("ok_out").tolist() == [0.0, 2.0]


def test_fill_shapes_that_overflow_or_exceed_the_cap(ws):
    net = core.Net("huge_fill")
    net.ConstantFill([], "y", shape=[2 ** 62])
    with pytest.raises(hetnet.InvalidArgumentError, match="too many elements"):
        ws.RunNetOnce(net)
    _works(ws)
    net = core.Net("capped_fill")
    net.ConstantFill([], "y", shape=[2 ** 40])
    with pytest.raises(hetnet.OutOfMemoryError) as info:
        ws.RunNetOnce(net)
    assert "largest-tensor cap" in str(info.value) and "HETNET_MAX_TENSOR_BYTES" in str(info.value)
    assert "'y'" in str(info.value)
    _works(ws)


def test_given_fill_shape_wrapping_to_the_value_count(ws):
    net = core.Net("given_wrap")
    net.GivenTensorFill([], "x", shape=[2 ** 62 + 1, 4], values=[1.0, 2.0, 3.0, 4.0])
    net.Softmax("x", "p")
    with pytest.raises(hetnet.InvalidArgumentError, match="too many elements"):
        ws.RunNetOnce(net)
    _works(ws)


def test_int_argument_out_of_range_is_not_truncated(ws):
    ws.FeedBlob("x", np.ones((1, 1, 4, 4), np.float32))
    net = core.Net("stride_trunc")
    net.MaxPool("x", "y", kernel=2, stride=2 ** 32 + 2)
    with pytest.raises(hetnet.InvalidArgumentError) as info:
        ws.RunNetOnce(net)
    assert "argument 'stride'" in str(info.value) and "4294967298" in str(info.value)
    _works(ws)


def _start_long_run(ws, name):
    ws.FeedBlob("big", np.ones((512, 512), np.float32))
    net = core.Net(name)
    for _ in range(200):
        net.Relu("big", "big")
    ws.CreateNet(net)
    errors = []

    def run():
        try:
            ws.RunNet(name, num_iter=30)
        except Exception as e:  # noqa: BLE001 - reported by the test
            errors.append(e)

    t = threading.Thread(target=run)
    t.start()
    deadline = time.time() + 30
    while _C.runs_in_flight() == 0 and t.is_alive() and time.time() < deadline:
        time.sleep(0.001)
    return t, errors


def test_reset_workspace_delete_net_feed_and_remove_blob_while_running_are_refused(ws):
    t, errors = _start_long_run(ws, "long")
    try:
        assert _C.runs_in_flight() > 0
        with pytest.raises(hetnet.HetnetError, match="cannot reset workspace 'default'.*in flight"):
            ws.ResetWorkspace()
        with pytest.raises(hetnet.HetnetError, match="cannot delete net 'long'"):
            _C.delete_net("long")
        with pytest.raises(hetnet.HetnetError, match="cannot feed blob 'big'"):
            ws.FeedBlob("big", np.zeros((2, 2), np.float32))
        with pytest.raises(hetnet.HetnetError, match="cannot remove blob 'big'"):
            _C.remove_blob("big")
    finally:
        t.join()
    assert not errors
    assert _C.runs_in_flight() == 0
    _C.delete_net("long")
    ws.ResetWorkspace()
    _works(ws)


def test_load_of_a_tiny_minidb_claiming_huge_records(ws, tmp_path):
    path = tmp_path / "evil.minidb"
    path.write_bytes(b"\xff\xff\xff\x7f" * 2 + b"x" * 432)  # two 2 GiB lengths, 440 bytes in all
    net = core.Net("evil_load")
    net.Load([], ["w"], db=str(path), db_type="minidb")
    t0 = time.time()
    with pytest.raises(hetnet.InvalidArgumentError, match="truncated.*432 bytes are left"):
        ws.RunNetOnce(net)
    assert time.time() - t0 < 2
    _works(ws)


def test_blob_names_with_nul_are_refused(ws):
    with pytest.raises(hetnet.InvalidArgumentError, match="NUL"):
        ws.FeedBlob("a\0b", np.ones(2, np.float32))
    net = core.Net("nul_net")
    net.Relu("x", "y\0z")
    ws.FeedBlob("x", np.ones(2, np.float32))
    with pytest.raises(hetnet.InvalidArgumentError, match=r"y\\x00z"):
        ws.RunNetOnce(net)
    _works(ws)


def test_caps_are_read_from_the_environment_and_errors_name_the_blob():
    import subprocess
    import sys
    from conftest import subprocess_env
    env = subprocess_env()
    env["HETNET_MAX_TENSOR_BYTES"] = "4000"
    code = (
        "import numpy as np, hetnet\n"
        "from hetnet import workspace as ws\n"
        "ws.FeedBlob('small', np.ones((20, 30), np.float32))\n"
        "try:\n"
        "    ws.FeedBlob('big', np.ones((40, 30), np.float32))\n"
        "except hetnet.OutOfMemoryError as e:\n"
        "    print(e)\n"
        "ws.FeedBlob('small2', np.ones((10,), np.float32))\n"
        "print('usable', ws.FetchBlob('small2').sum())\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "largest-tensor cap of 4000 bytes" in out.stdout
    assert "HETNET_MAX_TENSOR_BYTES" in out.stdout and "while feeding blob 'big'" in out.stdout
    assert "usable 10.0" in out.stdout


def test_total_workspace_bytes_cap_from_the_environment_counts_feeds_and_nets():
    import subprocess
    import sys
    from conftest import subprocess_env
    env = subprocess_env()
    env["HETNET_MAX_WORKSPACE_BYTES"] = "10000"
    code = (
        "import numpy as np, hetnet\n"
        "from hetnet import core, workspace as ws\n"
        "ws.FeedBlob('a', np.ones((1000,), np.float32))\n"  # 4000 bytes
        "ws.FeedBlob('b', np.ones((1000,), np.float32))\n"  # 8000
        "try:\n"
        "    ws.FeedBlob('c', np.ones((1000,), np.float32))\n"
        "except hetnet.OutOfMemoryError as e:\n"
        "    print('feed:', e)\n"
        "net = core.Net('over')\n"
        "net.ConstantFill([], ['d'], shape=[1000], value=1.0)\n"
        "try:\n"
        "    ws.RunNetOnce(net)\n"
        "except hetnet.OutOfMemoryError as e:\n"
        "    print('net:', e)\n"
        "ws.ResetWorkspace()\n"  # frees a and b
        "ws.RunNetOnce(net)\n"
        "print('usable', ws.FetchBlob('d').sum())\n")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "total-workspace-bytes cap of 10000 bytes" in out.stdout
    assert out.stdout.count("HETNET_MAX_WORKSPACE_BYTES") == 2
    assert "while feeding blob 'c'" in out.stdout and "while allocating output 'd'" in out.stdout
    assert "usable 1000.0" in out.stdout
