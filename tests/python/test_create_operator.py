"""CreateOperator: kwarg -> Argument rules, device options, text output."""
import numpy as np
import pytest

from hetnet import core
from hetnet.proto import caffe2_pb2


def _arg(op, name):
    return [a for a in op.arg if a.name == name][0]


def test_kwarg_rules():
    net = caffe2_pb2.NetDef(name="sub")
    op = core.CreateOperator(
        "Relu", ["x"], ["y"], f=1.5, i=3, b=True, s="text", by=b"raw", n=net, fl=[1.0, 2.0],
        il=[1, 2, 3], sl=["a", b"b"], skipped=None, npf=np.float32(0.5), npi=np.int64(4),
        arr=np.array([1.0, 2.0], dtype=np.float32), empty=[])
    assert _arg(op, "f").f == 1.5 and not _arg(op, "f").HasField("i")
    assert _arg(op, "i").i == 3
    assert _arg(op, "b").i == 1
    assert _arg(op, "s").s == b"text"
    assert _arg(op, "by").s == b"raw"
    assert _arg(op, "n").n.name == "sub"
    assert list(_arg(op, "fl").floats) == [1.0, 2.0]
    assert list(_arg(op, "il").ints) == [1, 2, 3]
    assert list(_arg(op, "sl").strings) == [b"a", b"b"]
    assert _arg(op, "npf").f == 0.5
    assert _arg(op, "npi").i == 4
    assert list(_arg(op, "arr").floats) == [1.0, 2.0]
    assert "skipped" not in [a.name for a in op.arg]
    assert [a.name for a in op.arg][:3] == ["f", "i", "b"]  # keyword order kept


def test_bad_kwargs_raise_value_error():
    with pytest.raises(ValueError):
        core.CreateOperator("Relu", "x", "y", mixed=[1, "a"])
    with pytest.raises(ValueError):
        core.CreateOperator("Relu", "x", "y", obj=object())


def test_text_output_has_empty_name_and_device_option():
    op = core.CreateOperator("Relu", "x", "y", device_option=core.DeviceOption(caffe2_pb2.CUDA, 1),
                             debug_info="")
    assert str(op) == ('input: "x"\noutput: "y"\nname: ""\ntype: "Relu"\n'
                       'device_option {\n  device_type: 1\n  device_id: 1\n}\n')


def test_device_option_from_scope_unless_explicit():
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 2)):
        scoped = core.CreateOperator("Relu", "x", "y")
        explicit = core.CreateOperator("Relu", "x", "y", device_option=core.DeviceOption(caffe2_pb2.CPU))
    unset = core.CreateOperator("Relu", "x", "y")
    assert scoped.device_option.device_id == 2
    assert explicit.device_option.device_type == caffe2_pb2.CPU
    assert not unset.HasField("device_option")


def test_engine_random_seed_control_input_and_blob_references():
    op = core.CreateOperator("Relu", core.BlobReference("x"), [core.BlobReference("y")],
                             engine="CUDNN", random_seed=9, control_input=["c"], name="r")
    assert op.engine == "CUDNN" and op.name == "r"
    assert op.device_option.random_seed == 9
    assert list(op.control_input) == ["c"]
    assert list(op.input) == ["x"] and list(op.output) == ["y"]


def test_debug_info_records_this_file_and_line():
    op = core.CreateOperator("Relu", "x", "y")
    assert op.debug_info.startswith(__file__ + ":")
    assert int(op.debug_info.rsplit(":", 1)[1]) > 0
