"""C++ errors become hetnet exceptions naming the net, operator, blob and Python line."""
import numpy as np
import pytest

import hetnet
from hetnet import _C, core
from hetnet.proto import caffe2_pb2


@pytest.mark.parametrize("kind, cls", [
    ("runtime", hetnet.RunError), ("invalid_argument", hetnet.InvalidArgumentError),
    ("not_found", hetnet.NotFoundError), ("unsupported", hetnet.UnsupportedError),
    ("out_of_memory", hetnet.OutOfMemoryError)])
def test_kind_mapping(kind, cls):
    with pytest.raises(cls) as info:
        _C._raise_error(kind, "message for " + kind)
    assert isinstance(info.value, hetnet.HetnetError)
    assert isinstance(info.value, RuntimeError)
    assert info.value.kind == kind
    assert str(info.value) == "message for " + kind


def test_missing_input_blob_names_net_op_blob_and_line(ws):
    net = core.Net("needs_x")
    net.Relu("x", "y"); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
    with pytest.raises(hetnet.HetnetError) as info:  # the runtime reports it as an empty input
        ws.RunNetOnce(net)
    text = str(info.value)
    assert "'x'" in text
    assert "needs_x" in text and "operator #0 (Relu)" in text
    assert "{}:{}".format(__file__, line) in text


def test_unknown_operator_type_in_netdef(ws):
    proto = caffe2_pb2.NetDef(name="unknown_op")
    proto.op.add(type="NoSuchOperatorXyz", input=[], output=["y"])
    with pytest.raises(hetnet.NotFoundError) as info:
        ws.RunNetOnce(proto)
    assert "NoSuchOperatorXyz" in str(info.value)
    assert "unknown_op" in str(info.value)


def test_operator_error_from_run_operator_once_has_line(ws):
    op = core.CreateOperator("Relu", "missing_in", "out"); line = __import__("inspect").currentframe().f_lineno  # noqa: E501,E702
    with pytest.raises(hetnet.HetnetError) as info:
        ws.RunOperatorOnce(op)
    assert "missing_in" in str(info.value)
    assert "{}:{}".format(__file__, line) in str(info.value)


def test_bad_shapes_name_operator_and_line(ws):
    from conftest import require_operators
    require_operators("FC")
    ws.FeedBlob("X", np.ones((4, 3), np.float32))
    ws.FeedBlob("W", np.ones((5, 7), np.float32))  # K mismatch
    ws.FeedBlob("b", np.ones(5, np.float32))
    net = core.Net("bad_shapes")
    net.FC(["X", "W", "b"], "Y"); line = __import__("inspect").currentframe().f_lineno  # noqa: E702
    with pytest.raises(hetnet.HetnetError) as info:
        ws.RunNetOnce(net)
    text = str(info.value)
    assert "bad_shapes" in text and "FC" in text
    assert "{}:{}".format(__file__, line) in text
    assert info.value.context  # context lines travel with the exception


def test_missing_net(ws):
    with pytest.raises(hetnet.NotFoundError):
        ws.RunNet("no_such_net")
