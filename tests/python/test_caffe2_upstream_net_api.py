"""Net, ModelHelper and brew behaviour that Caffe2's core_test.py, brew_test.py and
model_helper_test.py rely on (docs/caffe2_upstream_tests.md, "Core API"): name scopes in
CreateOperator, Caffe2's NextBlob naming, Clone with update_external_list, ClonePartial,
reroute_tensor, PopulateProtoWithFileName, schema records, device_option_equal,
ModelHelper.Validate / GetCompleteNet / ExtractPredictorNet and brew registration."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, schema, workspace
from caffe2.python.model_helper import ExtractPredictorNet, ModelHelper


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def test_create_operator_scopes_names_but_not_blob_references():
    with core.NameScope("foo"):
        op = core.CreateOperator("Relu", "x", core.BlobReference("y"))
        outer = core.CreateOperator("Relu", ["a", core.BlobReference("b")], [])
    assert list(op.input) == ["foo/x"] and list(op.output) == ["y"]
    assert list(outer.input) == ["foo/a", "b"] and list(outer.output) == []
    assert list(core.CreateOperator("Relu", op.input, op.output).input) == ["foo/x"]


def test_next_blob_names_do_not_depend_on_the_net():
    def make():
        net = core.Net("upstream_same")
        with core.NameScope("s"):
            net.Add(["a", "b"], net.NextScopedBlob("ab"))
        net.Add(["c", "d"], net.NextBlob("cd"))
        return net
    a, b = make(), make()
    assert a.Name() != b.Name()
    assert [list(op.output) for op in a.Proto().op] == [["s/ab"], ["cd"]]
    assert [list(op.output) for op in b.Proto().op] == [["s/ab"], ["cd"]]
    assert [str(a.NextBlob("cd")), str(a.NextBlob("cd"))] == ["cd_auto_0", "cd_auto_1"]
    a._CheckLookupTables()


def _chain():
    n = core.Net("chain")
    a1, a2 = n.AddExternalInput("a1", "a2")
    x, _ = n.Concat([a1, a2], ["x", "info"], axis=0)
    b1, b2 = n.Split(x, ["b1", "b2"], axis=0)  # one op makes both halves
    c1 = n.Sum([b1, "p1"], ["c1"])
    c2 = n.Sum([b2], ["c2"])
    d = n.Sum([c1, c2], ["d"])
    return n, (a1, a2, b1, b2, c1, c2, d)


def test_external_lists_are_properties_and_clone_recomputes_them():
    n, _ = _chain()
    assert [str(b) for b in n.external_inputs] == ["a1", "a2", "p1"]
    assert [str(b) for b in n.external_inputs()] == ["a1", "a2", "p1"]  # hetnet's older spelling
    head = n.Clone("head", op_id_mask=[0, 1, 2], update_external_list=True)
    assert [str(b) for b in head.external_inputs] == ["a1", "a2", "p1"]
    assert sorted(str(b) for b in head.external_outputs) == ["b2", "c1", "info"]
    tail = n.Clone("tail", op_id_mask=[3, 4], update_external_list=True)
    assert sorted(map(str, tail.external_inputs)) == ["b2", "c1"]
    assert [str(b) for b in tail.external_outputs] == ["d"]
    tail._CheckLookupTables()


def test_clone_partial_keeps_the_path_and_renames_internals():
    n, (a1, a2, b1, b2, c1, c2, d) = _chain()
    part, (d2,) = n.ClonePartial("f", {a1: "x1", a2: "x2"}, [d])
    assert [op.type for op in part.Proto().op] == ["Concat", "Split", "Sum", "Sum", "Sum"]
    assert set(part.Proto().external_input) == {"x1", "x2", "p1"}
    assert list(part.Proto().external_output) == ["f/d"] and str(d2) == "f/d" and d2.Net() is part
    only_c1, (c1b,) = n.ClonePartial("g", [b1], [c1])
    assert len(only_c1.Proto().op) == 1 and set(only_c1.Proto().external_input) == {"b1", "p1"}
    with pytest.raises(AssertionError):
        n.ClonePartial("h", [a1, a2, c2], [d])  # c2 would need the ops that make the input
    # the partial net computes what the original does
    x1, x2, p1 = np.arange(2, dtype=np.float32), np.full(2, 3.0, np.float32), np.array([0.5, -1], np.float32)
    for name, value in (("x1", x1), ("x2", x2), ("p1", p1)):
        workspace.FeedBlob(name, value)
    workspace.RunNetOnce(part)
    np.testing.assert_allclose(workspace.FetchBlob("f/d"), x1 + p1 + x2)
    assert not workspace.HasBlob("d") and workspace.HasBlob("f/x")


def test_reroute_tensor_and_file_names():
    net = core.Net("reroute")
    net.Relu(["inp"], "r1")
    net.Sigmoid(["r1"], "r2")
    new_op = core.CreateOperator("Tanh", ["r1"], ["r1_t"])
    assert net.reroute_tensor("r1", new_op, [net.Proto().op[1]]) == 1
    assert [op.type for op in net.Proto().op] == ["Relu", "Tanh", "Sigmoid"]
    assert list(net.Proto().op[2].input) == ["r1_t"]
    workspace.FeedBlob("inp", np.array([-1.0, 2.0], np.float32))
    workspace.RunNetOnce(net)
    np.testing.assert_allclose(workspace.FetchBlob("r2"), 1 / (1 + np.exp(-np.tanh([0.0, 2.0]))), rtol=1e-6)
    net.PopulateProtoWithFileName()
    first, third = net.Proto().op[0].name, net.Proto().op[2].name
    assert first.endswith(":test_reroute_tensor_and_file_names") and __file__.rstrip("c") in first
    assert int(third.split(":")[-2]) == int(first.split(":")[-2]) + 1  # follows its op past the insertion


def test_schema_records_and_input_record():
    net = core.Net("records")
    rec = schema.NewRecord(net, schema.Struct(("x", schema.Scalar(np.float32)),
                                              ("y", schema.Struct(("z", schema.Scalar(np.int64))))))
    assert rec.field_names() == ["x", "y:z"] and [str(b) for b in rec.field_blobs()] == ["x", "y:z"]
    assert net.set_input_record(rec) is rec and "x" in net.external_inputs
    fresh = core.Net("fresh")
    got = fresh.set_input_record(schema.Struct(("x", schema.Scalar(np.float32))))
    assert str(got.x()) == fresh.Name() + "/x" and fresh.BlobIsDefined(got.x())
    assert got.x() in fresh.external_inputs
    schema.FeedRecord(got, [np.ones(2, np.float32)])
    np.testing.assert_array_equal(schema.FetchRecord(got).x(), np.ones(2, np.float32))


def test_device_option_equal_and_default_engine():
    cpu_a, cpu_b = core.DeviceOption(caffe2_pb2.CPU), caffe2_pb2.DeviceOption()
    cpu_a.device_id = 5  # ignored on CPU
    assert core.device_option_equal(cpu_a, cpu_b)
    cpu_b.node_name = "n"
    assert core.device_option_equal(cpu_a, cpu_b)
    assert not core.device_option_equal(cpu_a, cpu_b, ignore_node_name=False)
    assert not core.device_option_equal(cpu_a, core.DeviceOption(caffe2_pb2.CUDA, 5))
    assert core.device_option_equal(core.DeviceOption(caffe2_pb2.CUDA, 1), core.DeviceOption(caffe2_pb2.CUDA, 1))
    assert core.IsOperatorWithEngine("Relu", "DEFAULT")
    assert not core.IsOperatorWithEngine("Relu", "NOEXIST")


def _conv_model():
    model = ModelHelper("cm")
    conv = brew.conv(model, "data", "conv", dim_in=3, dim_out=4, kernel=3, weight_init=("MSRAFill", {}))
    conv = brew.spatial_bn(model, conv, "bn", 4, epsilon=1e-3, is_test=False)
    brew.fc(model, brew.relu(model, conv, "relu"), "pred", dim_in=4 * 2 * 2, dim_out=2)
    return model


def test_complete_net_splits_back_and_runs_the_same():
    model = _conv_model()
    model.net.Proto().type = "dag"
    complete = model.GetCompleteNet()
    assert complete.Proto().type == "dag"
    assert len(complete.Proto().op) == len(model.param_init_net.Proto().op) + len(model.net.Proto().op)
    again = ModelHelper("again")
    again.ConstructInitTrainNetfromNet(complete)
    assert [op.type for op in again.param_init_net.Proto().op] == [op.type for op in model.param_init_net.Proto().op]
    assert list(again.net.Proto().op) == list(model.net.Proto().op)
    assert sorted(map(str, again.net.external_inputs)) == sorted(map(str, model.net.external_inputs))
    data = np.random.RandomState(1).randn(2, 3, 4, 4).astype(np.float32)
    results = []
    for m in (model, again):
        workspace.ResetWorkspace()
        workspace.FeedBlob("data", data)
        np.random.seed(0)
        workspace.RunNetOnce(m.param_init_net)
        for p in ("conv_w",):  # the random init differs per run: use the same weights
            workspace.FeedBlob(p, np.full(workspace.FetchBlob(p).shape, 0.1, np.float32))
        workspace.FeedBlob("pred_w", np.full((2, 16), 0.05, np.float32))
        workspace.RunNetOnce(m.net)
        results.append(workspace.FetchBlob("pred"))
    np.testing.assert_allclose(results[0], results[1], rtol=1e-6)


def test_validate_reports_duplicate_params():
    model = ModelHelper("dups")
    model.params.extend(["a", "b", "c", "b", "a", "b"])
    assert model._Validate() == ["a", "b"]
    with pytest.raises(AssertionError, match="Duplicate params"):
        model.Validate()
    model.params[:] = ["a", "b"]
    model.Validate()


def test_extract_predictor_net_drops_reader_and_loss():
    model = ModelHelper("train", arg_scope={"order": "NCHW"})
    data, label = brew.image_input(model, "reader", ["xx/data", "label"], is_test=1)
    assert [op.type for op in model.net.Proto().op] == ["ImageInput", "NHWC2NCHW"]
    a = brew.fc(model, data, "a", 12, 5)
    pred = brew.fc(model, a, "pred", 5, 3)
    brew.softmax(model, [pred, label], "softmax")
    predict, export = ExtractPredictorNet(model.net.Proto(), ["xx/data"], ["pred"], renames={"xx/data": "image"})
    assert [op.type for op in predict.Proto().op] == ["FC", "FC"]
    assert predict.Proto().op[0].input[0] == "image" and list(predict.Proto().external_output) == ["pred"]
    assert set(export) == {str(p) for p in model.params} and "image" in predict.Proto().external_input
    bad = ModelHelper("bad")
    brew.spatial_bn(bad, "x", "bn", 2, is_test=False)
    with pytest.raises(ValueError, match="is_test=0"):
        ExtractPredictorNet(bad.net.Proto(), ["x"], ["bn"])


def test_brew_register_twice_is_refused():
    def upstream_api_helper(model, val=-1):
        return val

    if not brew.has_helper(upstream_api_helper):
        brew.Register(upstream_api_helper)
    with brew.arg_scope([upstream_api_helper], val=7):
        assert brew.upstream_api_helper(ModelHelper("h")) == 7
    with pytest.raises(AttributeError, match="already exists"):
        brew.Register(upstream_api_helper)

    def conv(model):  # a built-in helper's name is taken too
        return None

    with pytest.raises(AttributeError, match="conv"):
        brew.Register(conv)


# ---- If / While (brew.cond, brew.loop) ----

def _feed_ints(**values):
    for name, value in values.items():
        workspace.FeedBlob(name, np.array(value))


def test_brew_cond_picks_the_branch_each_run():
    _feed_ints(c=True, a=3, b=5)
    then_m, else_m, model = ModelHelper("then_m"), ModelHelper("else_m"), ModelHelper("cond_m")
    then_m.net.Add(["a", "b"], "out")
    else_m.net.Mul(["a", "b"], "out")
    brew.cond(model, "c", ["a", "b", "out"], then_m, else_m)
    op = model.net.Proto().op[0]
    assert op.type == "If" and list(op.input) == ["c", "a", "b"] and list(op.output) == ["out"]
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("out") == 3 + 5
    workspace.FeedBlob("c", np.array(False))
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("out") == 3 * 5


def test_brew_loop_runs_while_the_condition_net_says_so():
    for limit in (0, 1, 7):
        _feed_ints(go=True, one=1, step=3, limit=limit, i=0, acc=0)
        body, check, model = ModelHelper("body"), ModelHelper("check"), ModelHelper("loop_m")
        body.net.Add(["acc", "step"], "acc")
        check.net.Add(["i", "one"], "i")
        check.net.Copy(check.net.LE(["i", "limit"]), "go")
        brew.loop(model, "go", ["go", "one", "step", "limit", "i", "acc"], body, check)
        workspace.RunNetOnce(model.net)
        expected_acc, i = 0, 0
        while True:  # the same loop in Python
            i += 1
            if not i <= limit:
                break
            expected_acc += 3
        assert workspace.FetchBlob("acc") == expected_acc and workspace.FetchBlob("i") == i
    # without a condition net, a false condition runs the body zero times
    _feed_ints(stop=False, acc=4, step=3)
    body, model = ModelHelper("body0"), ModelHelper("loop0")
    body.net.Add(["acc", "step"], "acc")
    brew.loop(model, "stop", ["stop", "acc", "step"], body)
    workspace.RunNetOnce(model.net)
    assert workspace.FetchBlob("acc") == 4


def test_control_ops_refuse_bad_conditions_and_name_failing_branches():
    import hetnet
    _feed_ints(notbool=1, a=1, flag=True)
    then_m, model = ModelHelper("then_bad"), ModelHelper("if_bad")
    then_m.net.Add(["a", "a"], "x")
    brew.cond(model, "notbool", ["a", "x"], then_m)
    with pytest.raises(hetnet.InvalidArgumentError, match="If: the condition 'notbool' must be a bool"):
        workspace.RunNetOnce(model.net)
    failing, model2 = ModelHelper("then_fail"), ModelHelper("if_fail")
    failing.net.Add(["a", "a"], "y")
    brew.cond(model2, "flag", ["a", "y"], failing)
    workspace.FeedBlob("a", np.ones(3, np.float32))
    workspace.FeedBlob("y", np.ones(2, np.float32))
    ok = workspace.RunNetOnce(model2.net)  # the branch runs: y = a + a
    assert ok and workspace.FetchBlob("y").tolist() == [2.0, 2.0, 2.0]
    workspace.FeedBlob("a", np.ones(3, np.int64))
    workspace.FeedBlob("b3", np.ones(2, np.int64))
    bad_branch, model3 = ModelHelper("then_err"), ModelHelper("if_err")
    bad_branch.net.Add(["a", "b3"], "z")
    brew.cond(model3, "flag", ["a", "b3", "z"], bad_branch)
    with pytest.raises(hetnet.HetnetError, match="then_net"):
        workspace.RunNetOnce(model3.net)
    with pytest.raises(hetnet.HetnetError, match="then_net"):
        workspace.RunOperatorOnce(core.CreateOperator("If", ["flag"], []))
    check = ModelHelper("check_twice")
    check.net.Copy("flag", "flag2")
    with pytest.raises(AssertionError, match="condition"):
        brew.loop(ModelHelper("loop_bad"), "flag", ["flag", "flag2"], ModelHelper("b"), check)
