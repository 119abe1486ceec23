"""core.Net: external inputs, auto-named outputs, registered-op checks, Clone, BlobReference ops."""
import pytest

from hetnet import core
from hetnet.proto import caffe2_pb2


def test_external_inputs_added_once_in_order():
    net = core.Net("ext")
    h = net.Relu(["a"], "h")
    net.Relu(h, "h2")
    net.Relu("a", "h3")
    net.Relu(["b"], "h4")
    assert list(net.Proto().external_input) == ["a", "b"]
    assert isinstance(h, core.BlobReference) and h.Net() is net


def test_auto_named_outputs():
    net = core.Net("auto")
    first = net.Relu("x")
    second = net.Relu("x")
    assert str(first) == "auto/Relu"
    assert str(second) == "auto/Relu_2"
    many = net.Relu("x", 2)
    assert isinstance(many, tuple) and [str(b) for b in many] == ["auto/Relu:0", "auto/Relu:1"]


def test_multiple_outputs_return_tuple():
    net = core.Net("multi")
    a, b = net.Relu("x", ["a", "b"])
    assert (str(a), str(b)) == ("a", "b")


def test_unknown_operator_attribute_error_with_near_names():
    net = core.Net("bad")
    with pytest.raises(AttributeError) as info:
        net.Rleu("x", "y")
    assert "Rleu is not a registered operator" in str(info.value)
    assert "Relu" in str(info.value)
    with pytest.raises(AttributeError):
        net.__nonexistent__


def test_net_names_are_unique_and_proto_name():
    a = core.Net("same")
    b = core.Net("same")
    assert a.Name() == "same" and b.Name() == "same_1"
    assert a.Proto().name == "same" and str(a) == "same"


def test_external_output_helpers():
    net = core.Net("outs")
    y = net.Relu("x", "y")
    net.AddExternalOutput(y)
    assert list(net.Proto().external_output) == ["y"]
    with pytest.raises(AssertionError):
        net.AddExternalOutput("never_made")
    net.AddExternalInput("extra")
    with pytest.raises(AssertionError):
        net.AddExternalInput("extra")
    assert [str(b) for b in net.external_inputs()] == ["x", "extra"]


def test_clone_renames_and_keeps_ops():
    net = core.Net("orig")
    net.Relu("x", "y")
    clone = net.Clone("copy", blob_remap={"x": "x2"})
    assert clone.Name() == "copy"
    assert list(clone.Proto().op[0].input) == ["x2"]
    assert list(clone.Proto().external_input) == ["x2"]
    assert list(net.Proto().op[0].input) == ["x"]


def test_blob_reference_creates_ops_on_its_net():
    net = core.Net("chain")
    y = net.Relu("x", "y")
    z = y.Relu([], "z")
    assert str(z) == "z"
    assert list(net.Proto().op[1].input) == ["y"]
    with pytest.raises(AttributeError):
        core.BlobReference("free").Relu([], "q")


def test_net_ops_do_not_print_debug_info_but_runtime_copy_has_it():
    net = core.Net("dbg")
    net.Relu("x", "y")
    assert "debug_info" not in str(net.Proto())
    runtime = core.NetProtoForRuntime(net)
    assert runtime.op[0].debug_info.startswith(__file__ + ":")


def test_net_from_proto_and_device_helpers():
    proto = caffe2_pb2.NetDef(name="from_proto")
    proto.op.add(type="Relu", input=["x"], output=["y"])
    proto.external_input.append("x")
    net = core.Net(proto)
    net.Relu("y", "z")
    assert list(net.Proto().external_input) == ["x"]
    net.RunAllOnGPU(1)
    assert net.Proto().device_option.device_id == 1
