"""Behaviour that Caffe2's own unit tests of workspace, core, core_gradients, brew and model_helper
rely on (docs/caffe2_upstream_tests.md, "Core API"): workspace objects (C.Workspace), plans,
immediate mode, the blobs dict, serialized protos, autodiff's naming and checks, and the
ModelHelper/brew helpers those tests use."""
import numpy as np
import pytest

import hetnet
from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.SwitchWorkspace("default", True)
    workspace.ResetWorkspace()
    yield
    workspace.SwitchWorkspace("default", True)
    workspace.ResetWorkspace()


def _fill_net(name, blob, value, shape=(2, 3)):
    net = core.Net(name)
    net.ConstantFill([], blob, shape=list(shape), value=value)
    return net


# ---- workspace ----

def test_serialized_protos_run_and_blobs_dict():
    net = _fill_net("ser", "a", 2.5)
    assert workspace.RunNetOnce(net.Proto().SerializeToString())
    np.testing.assert_array_equal(workspace.blobs["a"], np.full((2, 3), 2.5, np.float32))
    op = core.CreateOperator("Scale", ["a"], ["b"], scale=-2.0)
    assert workspace.RunOperatorOnce(workspace.StringifyProto(op))
    np.testing.assert_array_equal(workspace.FetchBlob("b"), np.full((2, 3), -5.0, np.float32))
    workspace.blobs["c"] = np.arange(4, dtype=np.int64)
    assert sorted(workspace.blobs) == ["a", "b", "c"] and len(workspace.blobs) == 3
    assert "c" in workspace.blobs and "zzz" not in workspace.blobs
    np.testing.assert_array_equal(workspace.blobs["c"], np.arange(4))


def test_root_folder_follows_reset_per_workspace():
    assert workspace.RootFolder() == "."
    workspace.ResetWorkspace("/tmp/somewhere")
    assert workspace.RootFolder() == "/tmp/somewhere"
    workspace.SwitchWorkspace("other_root", True)
    assert workspace.RootFolder() == "."
    workspace.SwitchWorkspace("default")
    workspace.ResetWorkspace()
    assert workspace.RootFolder() == "."


def test_net_with_empty_name_is_kept():
    # Caffe2 required the name field, not a non-empty name
    proto = _fill_net("x", "e", 1.0).Proto()
    proto.name = ""
    workspace.CreateNet(proto)
    assert "" in workspace.Nets()
    workspace.RunNet("")
    assert workspace.FetchBlob("e").sum() == 6.0


def test_workspace_objects_are_independent():
    workspace.FeedBlob("outside", np.ones(1, np.float32))
    ws = workspace.C.Workspace()
    assert ws.blobs == {} and ws.nets == {}
    value = np.random.RandomState(0).randn(3, 4).astype(np.float32)
    ws.create_blob("v").feed(value)
    assert set(ws.blobs) == {"v"}
    np.testing.assert_array_equal(ws.blobs["v"].fetch(), value)
    assert not workspace.HasBlob("v") and workspace.HasBlob("outside")
    assert "outside" not in ws.blobs
    # serialize / deserialize round trip, under a new name
    ws.create_blob("copy").deserialize(ws.blobs["v"].serialize("copy"))
    np.testing.assert_array_equal(ws.blobs["copy"].fetch(), value)
    ws.create_blob("s").feed(b"text\0bytes")
    assert ws.blobs["s"].fetch() == b"text\0bytes"
    current = workspace.C.Workspace.current
    assert "outside" in current.blobs and "v" not in current.blobs


def test_workspace_object_nets_ops_and_plans():
    ws = workspace.C.Workspace()
    net = _fill_net("wsnet", "w", 3.0)
    handle = ws.create_net(net)
    with pytest.raises(RuntimeError):
        ws.create_net(net)
    ws.create_net(net, overwrite=True)
    with pytest.raises(TypeError):
        ws.create_net("not a net")
    assert list(ws.nets) == [net.Name()] and "w" in ws.blobs  # creating made its output blob
    handle.run()
    np.testing.assert_array_equal(ws.blobs["w"].fetch(), np.full((2, 3), 3.0, np.float32))
    ws.run(core.CreateOperator("Scale", ["w"], ["w2"], scale=2.0))
    np.testing.assert_array_equal(ws.blobs["w2"].fetch(), np.full((2, 3), 6.0, np.float32))
    once = _fill_net("once", "o", 1.0)
    ws.run(once)  # runs without keeping the net
    assert "o" in ws.blobs and once.Name() not in ws.nets
    plan = core.Plan("p")
    planned = _fill_net("planned", "pb", 4.0)
    plan.AddStep(core.ExecutionStep("s", planned))
    ws.run(plan)  # a plan creates its nets
    assert planned.Name() in ws.nets and ws.blobs["pb"].fetch()[0, 0] == 4.0
    assert not workspace.HasBlob("w")
    with pytest.raises(NotImplementedError):
        ws.blobs["w"].tensor()


def test_dropped_workspace_object_frees_its_blobs():
    ws = workspace.C.Workspace()
    ws.create_blob("big").feed(np.zeros(1000, np.float32))
    name = ws._name
    del ws
    workspace.SwitchWorkspace(name)
    assert workspace.Blobs() == []


# ---- plans ----

def _counter_net(name, counter, one):
    net = core.Net(name)
    net.Add([counter, one], counter)
    return net


def _feed_counter():
    workspace.FeedBlob("counter", np.zeros(1, np.float32))
    workspace.FeedBlob("one", np.ones(1, np.float32))


def test_plan_num_iter_substeps_and_only_once():
    _feed_counter()
    workspace.FeedBlob("k", np.zeros(1, np.float32))
    inner = core.ExecutionStep("inner", _counter_net("inc", "counter", "one"), num_iter=3)
    first = core.ExecutionStep("first", _counter_net("inc_k", "k", "one"))
    first.SetOnlyOnce(True)
    outer = core.ExecutionStep("outer")
    outer.AddSubstep(first)
    outer.AddSubstep(inner)
    outer.SetIter(4)
    assert workspace.RunPlan(core.Plan(outer))
    assert workspace.FetchBlob("counter")[0] == 12.0  # 4 outer x 3 inner
    assert workspace.FetchBlob("k")[0] == 1.0  # only on the first outer iteration
    with pytest.raises(AssertionError):
        outer.SetIter(1)  # used in a plan: frozen, as Caffe2


def test_plan_should_stop_blob_and_background():
    _feed_counter()
    workspace.FeedBlob("ten", np.full(1, 10.0, np.float32))
    net = _counter_net("count_to_ten", "counter", "one")
    stop = net.GE(["counter", "ten"], "stop")
    step = core.ExecutionStep("until", net)
    step.SetShouldStopBlob(stop)
    workspace.FeedBlob("stop", np.zeros(1, bool))
    background = workspace.RunPlanInBackground(step)
    background.wait(60)
    assert background.is_done() and background.is_succeeded(), background.error
    assert workspace.FetchBlob("counter")[0] == 10.0


def test_plan_failure_is_reported_and_unsupported_fields_refused():
    bad = core.ExecutionStep("bad", _fill_net("needs_input", "x", 1.0))
    bad.Proto().network.append("no_such_net")
    background = workspace.RunPlanInBackground(bad)
    background.wait(60)
    assert not background.is_succeeded() and isinstance(background.error, RuntimeError)
    step = core.ExecutionStep("ws_step", _fill_net("n_ws", "y", 1.0))
    step.SetCreateWorkspace(True)
    with pytest.raises(hetnet.UnsupportedError, match="ws_step.*create_workspace"):
        workspace.RunPlan(step)


# ---- immediate mode ----

def test_immediate_mode_runs_ops_in_its_own_workspace():
    import os
    workspace.StartImmediate(i_know=True)
    try:
        root = workspace._immediate_root_folder
        assert os.path.isdir(root)
        net = core.Net("imm")
        out = net.ConstantFill([], "im", shape=[2], value=3.0)
        net.Scale(out, "im2", scale=2.0)
        assert sorted(workspace.ImmediateBlobs()) == ["im", "im2"]
        np.testing.assert_array_equal(workspace.FetchImmediate("im2"), [6.0, 6.0])
        assert not workspace.HasBlob("im")
    finally:
        workspace.StopImmediate()
    assert not workspace.IsImmediate() and not os.path.exists(root)
    with pytest.raises(RuntimeError):
        workspace.FetchImmediate("im")


# ---- autodiff ----

def test_list_losses_are_seeded_as_autogen_grad_and_sum_in_place_first():
    net = core.Net("two_grads")
    x, two, three = net.AddExternalInput("x", "two", "three")
    m1 = net.Mul([x, two], "m1")
    m2 = net.Mul([m1, three], "m2")
    grad_map = net.AddGradientOperators([m2, m1])
    seeds = [op for op in net.Proto().op if op.type == "ConstantFill"]
    assert [list(op.output) for op in seeds] == [["m2_autogen_grad"], ["m1_autogen_grad"]]
    sums = [op for op in net.Proto().op if op.type == "Sum"]
    assert len(sums) == 1 and sums[0].input[0] == sums[0].output[0] == "m1_grad"
    xv = np.array([1.5], np.float32)
    workspace.FeedBlob("x", xv)
    workspace.FeedBlob("two", np.array([2.0], np.float32))
    workspace.FeedBlob("three", np.array([3.0], np.float32))
    workspace.RunNetOnce(net)
    # d(m2 + m1)/dx = two * three + two
    np.testing.assert_allclose(workspace.FetchBlob(grad_map["x"]), [2.0 * 3.0 + 2.0])
    assert str(grad_map["m2"]) == "m2_autogen_grad"


def test_orphan_stop_gradient_is_refused():
    ops = [core.CreateOperator("Relu", "a", "h"), core.CreateOperator("StopGradient", "h", "orphan"),
           core.CreateOperator("Relu", "h", "out")]
    with pytest.raises(ValueError, match="orphan"):
        core.GradientRegistry.GetBackwardPass(ops, {"out": "out_grad"})
    ops[1] = core.CreateOperator("StopGradient", "h", "h")
    grad_ops, _ = core.GradientRegistry.GetBackwardPass(ops, {"out": "out_grad"})
    assert [op.type for op in grad_ops] == ["ReluGradient"]


def test_gradient_of_op_failing_its_schema_names_schema():
    net = core.Net("bad_mul")
    a, one = net.AddExternalInput("a", "one")
    m = net.Mul(a, "m")  # Mul needs two inputs
    s = net.Sub([m, one], "s")
    with pytest.raises(hetnet.HetnetError, match="schema") as info:
        net.AddGradientOperators([s])
    assert "Mul" in str(info.value) and "bad_mul" in str(info.value)


# ---- DotProduct (core_gradients_test's accumulation tests use it) ----

@pytest.mark.parametrize("shape", [(4, 5), (3,), (2, 3, 2), (0, 3)])
def test_dot_product_and_gradient_against_numpy(shape):
    r = np.random.RandomState(3)
    x, y = r.randn(*shape).astype(np.float32), r.randn(*shape).astype(np.float32)
    n = shape[0]
    workspace.FeedBlob("x", x)
    workspace.FeedBlob("y", y)
    workspace.RunOperatorOnce(core.CreateOperator("DotProduct", ["x", "y"], ["z"]))
    d = int(np.prod(shape[1:]))
    x2, y2 = x.reshape(n, d).astype(np.float64), y.reshape(n, d).astype(np.float64)
    np.testing.assert_allclose(workspace.FetchBlob("z"), (x2 * y2).sum(axis=1), rtol=1e-5, atol=1e-6)
    dz = r.randn(n).astype(np.float32)
    workspace.FeedBlob("dz", dz)
    workspace.RunOperatorOnce(core.CreateOperator("DotProductGradient", ["x", "y", "dz"], ["dx", "dy"]))
    np.testing.assert_allclose(workspace.FetchBlob("dx"), (y2 * dz[:, None]).reshape(shape), rtol=1e-6)
    np.testing.assert_allclose(workspace.FetchBlob("dy"), (x2 * dz[:, None]).reshape(shape), rtol=1e-6)


def test_dot_product_backward_pass_accumulates_and_refuses_bad_input():
    net = core.Net("dot_net")
    x1 = net.AddExternalInput("x1")
    x2 = net.Relu(x1, "x2")
    x3 = net.Softmax(x2, "x3")
    net.DotProduct([x2, x3], "x4")
    grad_map = net.AddGradientOperators(["x4"])
    sums = [op for op in net.Proto().op if op.type == "Sum"]
    assert len(sums) == 1 and list(sums[0].input) == ["x2_grad", "_x2_grad_autosplit_0"]
    v = np.random.RandomState(5).randn(2, 4).astype(np.float32)
    workspace.FeedBlob("x1", v)
    workspace.RunNetOnce(net)
    # finite differences of sum(relu(v) * softmax(relu(v))) in float64
    def f(a):
        h = np.maximum(a, 0)
        e = np.exp(h - h.max(axis=1, keepdims=True))
        return (h * e / e.sum(axis=1, keepdims=True)).sum()
    eps, v64, numeric = 1e-6, v.astype(np.float64), np.zeros(v.shape)
    for idx in np.ndindex(*v.shape):
        d = np.zeros(v.shape)
        d[idx] = eps
        numeric[idx] = (f(v64 + d) - f(v64 - d)) / (2 * eps)
    np.testing.assert_allclose(workspace.FetchBlob(grad_map["x1"]), numeric, rtol=1e-3, atol=1e-4)
    workspace.FeedBlob("y", np.ones((2, 3), np.float32))
    with pytest.raises(hetnet.InvalidArgumentError, match="DotProduct"):
        workspace.RunOperatorOnce(core.CreateOperator("DotProduct", ["x1", "y"], ["bad"]))
    with pytest.raises(hetnet.HetnetError, match="pad_value"):
        workspace.RunOperatorOnce(core.CreateOperator("DotProduct", ["x1", "x1"], ["bad"], pad_value=0.0))


def test_zero_gradient_supplies_a_zero_gradient_for_an_unused_output():
    net = core.Net("zero_grad")
    x = net.AddExternalInput("x")
    a, b = net.Split(x, ["a", "b"], axis=0)
    loss = net.AveragedLoss(a, "loss")
    with pytest.raises(hetnet.InvalidArgumentError, match=r"\('b'\) has no gradient"):
        net.Clone("without").AddGradientOperators([loss])
    net.ZeroGradient(b, [])
    grad_map = net.AddGradientOperators([loss])
    fills = [op for op in net.Proto().op if op.type == "ConstantFill" and op.output[0] == "b_grad"]
    assert len(fills) == 1 and list(fills[0].input) == ["b"] and fills[0].arg[0].f == 0.0
    xv = np.arange(6, dtype=np.float32).reshape(6, 1)
    workspace.FeedBlob("x", xv)
    workspace.RunNetOnce(net)
    # loss = mean of the first half: d/dx is 1/3 there and 0 on the unused half
    np.testing.assert_allclose(workspace.FetchBlob(grad_map["x"]).ravel(), [1 / 3.0] * 3 + [0.0] * 3, rtol=1e-6)
