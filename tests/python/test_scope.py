"""DeviceScope / NameScope semantics (caffe2.python.scope)."""
import threading

import pytest

from hetnet import core, scope
from hetnet.proto import caffe2_pb2


def test_top_level_defaults():
    assert scope.CurrentNameScope() == ""
    assert scope.CurrentDeviceScope() is None


def test_nested_device_scope_replaces():
    gpu = core.DeviceOption(caffe2_pb2.CUDA, 1)
    cpu = core.DeviceOption(caffe2_pb2.CPU, -1)
    with core.DeviceScope(gpu):
        assert scope.CurrentDeviceScope() == gpu
        with core.DeviceScope(cpu):
            assert scope.CurrentDeviceScope() == cpu
            assert scope.CurrentDeviceScope().device_id == -1
        assert scope.CurrentDeviceScope() == gpu
    assert scope.CurrentDeviceScope() is None


def test_node_name_is_inherited_unless_set():
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0, node_name="host1")):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
            assert scope.CurrentDeviceScope().node_name == "host1"
            assert scope.CurrentDeviceScope().device_type == caffe2_pb2.CPU
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, node_name="host2")):
            assert scope.CurrentDeviceScope().node_name == "host2"
        with core.DeviceScope(None, node_name="host3"):
            assert scope.CurrentDeviceScope().node_name == "host3"


def test_extra_info_accumulates():
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, extra_info=["b"])):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, extra_info=["a"])):
            assert list(scope.CurrentDeviceScope().extra_info) == ["a", "b"]


def test_scopes_restored_on_exception():
    with pytest.raises(ValueError):
        with core.NameScope("outer"):
            with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 3)):
                raise ValueError("boom")
    assert scope.CurrentNameScope() == ""
    assert scope.CurrentDeviceScope() is None


def test_empty_device_scope():
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 2)):
        with scope.EmptyDeviceScope():
            assert scope.CurrentDeviceScope() is None
            op = core.CreateOperator("Relu", "x", "y")
            assert not op.HasField("device_option")
        assert scope.CurrentDeviceScope().device_id == 2


def test_name_scope_prefixes_and_reset():
    with core.NameScope("a"):
        assert scope.CurrentNameScope() == "a/"
        with core.NameScope("b"):
            assert scope.CurrentNameScope() == "a/b/"
            assert str(core.ScopedBlobReference("w")) == "a/b/w"
            with core.NameScope("c", reset=True):
                assert scope.CurrentNameScope() == "c/"
        with core.NameScope(None):
            assert scope.CurrentNameScope() == "a/"
    assert scope.CurrentNameScope() == ""


def test_name_scope_applies_to_net_blobs_not_blob_references():
    net = core.Net("scoped")
    with core.NameScope("gpu_0"):
        out = net.Relu("x", "y")
        out2 = net.Relu(core.BlobReference("raw"), "z")
    assert str(out) == "gpu_0/y"
    assert list(net.Proto().op[0].input) == ["gpu_0/x"]
    assert list(net.Proto().op[1].input) == ["raw"]
    assert str(out2) == "gpu_0/z"


def test_scopes_are_thread_local():
    seen = {}
    started = threading.Event()
    release = threading.Event()

    def other_thread():
        seen["device_before"] = scope.CurrentDeviceScope()
        seen["name_before"] = scope.CurrentNameScope()
        with core.NameScope("t"), core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 5)):
            started.set()
            release.wait(5)
            seen["device_inside"] = scope.CurrentDeviceScope().device_id

    with core.NameScope("main"), core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 1)):
        t = threading.Thread(target=other_thread)
        t.start()
        assert started.wait(5)
        assert scope.CurrentDeviceScope().device_id == 1
        assert scope.CurrentNameScope() == "main/"
        release.set()
        t.join()
    assert seen == {"device_before": None, "name_before": "", "device_inside": 5}


def test_device_option_always_sets_type_and_id():
    opt = core.DeviceOption(caffe2_pb2.CPU)
    assert opt.HasField("device_type") and opt.HasField("device_id")
    assert str(opt) == "device_type: 0\ndevice_id: 0\n"
    opt = core.DeviceOption(caffe2_pb2.CUDA, 1, random_seed=7, node_name="n", extra_info=["k:v"])
    assert (opt.random_seed, opt.node_name, list(opt.extra_info)) == (7, "n", ["k:v"])
    assert core.DeviceOption(caffe2_pb2.CPU, numa_node_id=1).numa_node_id == 1
