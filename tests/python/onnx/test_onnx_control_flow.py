"""ONNX control flow (If, Loop, Scan; onnx/convert_control_flow.cc, operators/onnx_{if,loop,scan}_op)
beyond ONNX's own node cases: a small recurrent decoder (Loop with an early exit, a nested If, a Scan,
weights read from the outer graph), Scan's axes and directions, and the refusals: every malformed
control-flow node or run-time value gives a hetnet error naming the node and the blob, never a crash
or a hang. Expected values come from onnx's reference evaluator on the same model (onnxruntime where a
Scan runs in reverse, which the reference evaluator does not implement)."""
import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime
import pytest
from onnx import TensorProto, numpy_helper
from onnx.reference import ReferenceEvaluator

import hetnet
from hetnet import workspace
from hetnet._predictor import Predictor
from hetnet.onnx.backend import HetnetBackend
from hetnet.proto import caffe2_pb2

F, I64, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.BOOL
NUM_GPUS = workspace.NumCudaDevices() if workspace.has_gpu_support else 0


def _Info(name, elem=None, shape=None):
    return onnx.ValueInfoProto(name=name) if elem is None else oh.make_tensor_value_info(name, elem, shape)


def _Model(nodes, inputs, outputs, inits=None, opset=18):
    graph = oh.make_graph(nodes, "g", inputs, outputs,
                          initializer=[numpy_helper.from_array(v, k) for k, v in (inits or {}).items()])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])
    model.ir_version = 8  # onnxruntime here reads IR <= 13
    return model


def _Graph(name, nodes, inputs, outputs):
    return oh.make_graph(nodes, name, inputs, outputs)


def _CheckAgainstReference(model, feeds, rtol=1e-5, atol=1e-6, ort=False):
    if ort:
        want = onnxruntime.InferenceSession(model.SerializeToString(),
                                            providers=["CPUExecutionProvider"]).run(None, feeds)
    else:
        want = ReferenceEvaluator(model).run(None, feeds)
    got = HetnetBackend.prepare(model).run(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = np.asarray(w)
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, g.shape, w.dtype, w.shape)
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    return got


def _Decoder(max_steps):
    """h_{t+1} = tanh(h_t W + x_{t mod T} U), with h doubled on even steps (a nested If), stopping
    when sum(h) > 1.5 or after max_steps; emits every h (scan output); then a reverse Scan over the
    emitted states accumulates a running max along axis 0, output on axis 1."""
    body = _Graph("step", [
        oh.make_node("Shape", ["xs"], ["xs_shape"], start=0, end=1),
        oh.make_node("ReduceSum", ["xs_shape"], ["T"], keepdims=0),
        oh.make_node("Mod", ["i", "T"], ["t"]),
        oh.make_node("Gather", ["xs", "t"], ["x_t"], axis=0),
        oh.make_node("MatMul", ["h_in", "W"], ["hw"]),
        oh.make_node("MatMul", ["x_t", "U"], ["xu"]),
        oh.make_node("Add", ["hw", "xu"], ["pre"]),
        oh.make_node("Tanh", ["pre"], ["h_new"]),
        oh.make_node("Mod", ["i", "two"], ["parity"]),
        oh.make_node("Equal", ["parity", "zero"], ["even_v"]),
        oh.make_node("Squeeze", ["even_v"], ["even"]),
        oh.make_node("If", ["even"], ["h_out"],
                     then_branch=_Graph("double", [oh.make_node("Add", ["h_new", "h_new"], ["h2"])], [], [_Info("h2")]),
                     else_branch=_Graph("keep", [oh.make_node("Identity", ["h_new"], ["h1"])], [], [_Info("h1")])),
        oh.make_node("ReduceSum", ["h_out"], ["total"], keepdims=0),
        oh.make_node("Less", ["total", "limit"], ["go_on"]),
        oh.make_node("Identity", ["h_out"], ["h_emit"]),
    ], [_Info("i", I64, []), _Info("c", B, []), _Info("h_in", F, [1, 3])],
        [_Info("go_on", B, []), _Info("h_out", F, [1, 3]), _Info("h_emit", F, [1, 3])])
    scan_body = _Graph("runmax", [
        oh.make_node("Max", ["acc_in", "row"], ["acc_out"]),
        oh.make_node("Identity", ["acc_out"], ["acc_emit"]),
    ], [_Info("acc_in", F, [1, 3]), _Info("row", F, [1, 3])], [_Info("acc_out", F, [1, 3]), _Info("acc_emit", F, [1, 3])])
    rng = np.random.default_rng(3)
    inits = {"W": rng.normal(size=(3, 3)).astype(np.float32) * 0.5, "U": rng.normal(size=(2, 3)).astype(np.float32),
             "two": np.array([2], np.int64), "zero": np.array([0], np.int64), "limit": np.array(1.5, np.float32),
             "M": np.array(max_steps, np.int64), "go": np.array(True), "floor": np.full((1, 3), -5, np.float32)}
    nodes = [
        oh.make_node("Loop", ["M", "go", "h0"], ["h_final", "hs"], body=body),
        oh.make_node("Scan", ["floor", "hs"], ["best", "running"], num_scan_inputs=1, body=scan_body,
                     scan_input_directions=[1], scan_output_axes=[1]),
    ]
    return _Model(nodes, [_Info("xs", F, [4, 1, 2]), _Info("h0", F, [1, 3])],
                  [_Info("h_final"), _Info("hs"), _Info("best"), _Info("running")], inits)


@pytest.mark.parametrize("max_steps", [1, 6, 40])
def test_recurrent_decoder_matches_reference(max_steps):
    rng = np.random.default_rng(max_steps)
    feeds = {"xs": rng.normal(size=(4, 1, 2)).astype(np.float32), "h0": rng.normal(size=(1, 3)).astype(np.float32) * 0.1}
    got = _CheckAgainstReference(_Decoder(max_steps), feeds, ort=True)
    assert 1 <= got[1].shape[0] <= max_steps  # the loop ran, and stopped by its own test or M


def _ScanModel(in_axes, in_dirs, out_axes, out_dirs, shapes):
    body = _Graph("body", [
        oh.make_node("Add", ["s_in", "a"], ["s1"]),
        oh.make_node("Mul", ["s1", "b"], ["s_out"]),
        oh.make_node("Sub", ["a", "b"], ["d"]),
        oh.make_node("Identity", ["s_out"], ["e"]),
    ], [_Info("s_in", F, [3]), _Info("a", F, [3]), _Info("b", F, [3])],
        [_Info("s_out", F, [3]), _Info("d", F, [3]), _Info("e", F, [3])])
    node = oh.make_node("Scan", ["s0", "A", "Bx"], ["s", "D", "E"], num_scan_inputs=2, body=body,
                        scan_input_axes=in_axes, scan_input_directions=in_dirs, scan_output_axes=out_axes,
                        scan_output_directions=out_dirs)
    return _Model([node], [_Info("s0", F, [3]), _Info("A", F, shapes[0]), _Info("Bx", F, shapes[1])],
                  [_Info("s"), _Info("D"), _Info("E")])


@pytest.mark.parametrize("in_axes,in_dirs,out_axes,out_dirs,shapes", [
    ([0, 0], [0, 0], [0, 0], [0, 0], ([5, 3], [5, 3])),
    ([1, 0], [1, 0], [1, -1], [0, 1], ([3, 5], [5, 3])),
    ([-1, -2], [0, 1], [-2, 0], [1, 1], ([3, 5], [5, 3])),
])
def test_scan_axes_and_directions_match_reference(in_axes, in_dirs, out_axes, out_dirs, shapes):
    rng = np.random.default_rng(len(str(in_axes + out_axes)))
    feeds = {"s0": rng.normal(size=3).astype(np.float32), "A": rng.normal(size=shapes[0]).astype(np.float32),
             "Bx": rng.uniform(0.5, 1.0, size=shapes[1]).astype(np.float32)}
    _CheckAgainstReference(_ScanModel(in_axes, in_dirs, out_axes, out_dirs, shapes), feeds, ort=True)


def test_opset8_batched_scan_matches_onnxruntime():
    """Scan-8: a batch axis 0 on every input and output, the scan along axis 1, per-input directions."""
    body = _Graph("body", [oh.make_node("Add", ["s_in", "a"], ["s_out"]), oh.make_node("Mul", ["s_out", "b"], ["e"])],
                  [_Info("s_in", F, [2]), _Info("a", F, [2]), _Info("b", F, [2])], [_Info("s_out", F, [2]), _Info("e", F, [2])])
    node = oh.make_node("Scan", ["", "s0", "A", "Bx"], ["s", "E"], num_scan_inputs=2, directions=[0, 1], body=body)
    model = _Model([node], [_Info("s0", F, [3, 2]), _Info("A", F, [3, 4, 2]), _Info("Bx", F, [3, 4, 2])],
                   [_Info("s"), _Info("E")], opset=8)
    rng = np.random.default_rng(8)
    feeds = {k: rng.normal(size=v).astype(np.float32) for k, v in [("s0", (3, 2)), ("A", (3, 4, 2)), ("Bx", (3, 4, 2))]}
    _CheckAgainstReference(model, feeds, ort=True)
    with_lens = _Model([oh.make_node("Scan", ["lens", "s0", "A", "Bx"], ["s", "E"], num_scan_inputs=2, body=body)],
                       [_Info("lens", I64, [3]), _Info("s0", F, [3, 2]), _Info("A", F, [3, 4, 2]), _Info("Bx", F, [3, 4, 2])],
                       [_Info("s"), _Info("E")], opset=8)
    _Expect(hetnet.UnsupportedError, with_lens, ["Scan (opset 8)", "sequence_lens"])


def test_an_outer_input_the_runtime_renames_is_still_what_the_subgraph_reads():
    """Cross-device copies rename an operator's inputs; the subgraph keeps reading the outer name, and
    must see the renamed blob's value (here a Scale(x, 10) standing in for the copy)."""
    imported, _ = HetnetBackend._Import(_If(_Info("c", B, [])), "CPU", None)
    net = caffe2_pb2.NetDef.FromString(imported["predict_net"])
    (op,) = [o for o in net.op if o.type == "OnnxIf"]
    assert list(op.input) == ["c", "x"]
    scale = caffe2_pb2.OperatorDef(type="Scale", input=["x"], output=["x_moved"])
    arg = scale.arg.add()
    arg.name, arg.f = "scale", 10.0
    op.input[1] = "x_moved"
    net.op.insert(0, scale)
    predictor = Predictor(imported["init_net"], net.SerializeToString())
    (y,) = predictor.run({"c": np.array(True), "x": np.array([1, -2], np.float32)})
    np.testing.assert_array_equal(y, [20, -40])


def _If(cond_info, then_branch=True, else_branch=True, cond="c"):
    attrs = {}
    if then_branch:
        attrs["then_branch"] = _Graph("t", [oh.make_node("Add", ["x", "x"], ["y_t"])], [], [_Info("y_t")])
    if else_branch:
        attrs["else_branch"] = _Graph("e", [oh.make_node("Neg", ["x"], ["y_e"])], [], [_Info("y_e")])
    return _Model([oh.make_node("If", [cond], ["y"], name="choose", **attrs)], [cond_info, _Info("x", F, [2])],
                  [_Info("y")])


def _Branch(model, name):
    return next(a.g for a in model.graph.node[0].attribute if a.name == name)


@pytest.mark.parametrize("flag", [True, False])
def test_if_reads_outer_values_and_matches_reference(flag):
    x = np.array([1.5, -2.0], np.float32)
    _CheckAgainstReference(_If(_Info("c", B, [])), {"c": np.array(flag), "x": x})


def test_if_with_a_constant_condition_imports_only_the_branch_taken():
    model = _If(_Info("c", B, []))
    model.graph.input.remove(model.graph.input[0])
    model.graph.initializer.append(numpy_helper.from_array(np.array(False), "c"))
    _Branch(model, "then_branch").node[0].op_type = "NoSuchOp"  # never imported
    rep = HetnetBackend.prepare(model)
    assert "OnnxIf" not in [op.type for op in rep.predict_net.op]
    np.testing.assert_array_equal(rep.run({"x": np.array([1, 2], np.float32)})[0], [-1, -2])


def test_nested_subgraphs_read_values_of_every_enclosing_graph():
    """Scan body -> Loop body -> If branch: the branch reads a top-level weight (w), the Scan body's
    slice (row) and the Loop body's counter (i); the Loop body has an initializer of its own."""
    branch_then = _Graph("then", [oh.make_node("Mul", ["row", "w"], ["rw"]), oh.make_node("Add", ["rw", "acc_in"], ["t"])],
                         [], [_Info("t")])
    branch_else = _Graph("else", [oh.make_node("Cast", ["i"], ["fi"], to=F), oh.make_node("Sub", ["acc_in", "fi"], ["e"])],
                         [], [_Info("e")])
    loop_body = oh.make_graph([
        oh.make_node("Identity", ["c_in"], ["c_out"]),
        oh.make_node("Mod", ["i", "two"], ["parity"]),
        oh.make_node("Equal", ["parity", "zero"], ["even"]),
        oh.make_node("If", ["even"], ["acc_out"], then_branch=branch_then, else_branch=branch_else),
    ], "inner", [_Info("i", I64, []), _Info("c_in", B, []), _Info("acc_in", F, [2])],
        [_Info("c_out", B, []), _Info("acc_out", F, [2])],
        initializer=[numpy_helper.from_array(np.array(2, np.int64), "two"),
                     numpy_helper.from_array(np.array(0, np.int64), "zero")])
    scan_body = _Graph("outer", [
        oh.make_node("Loop", ["M", "", "s_in"], ["s_out"], body=loop_body),
        oh.make_node("Identity", ["s_out"], ["emit"]),
    ], [_Info("s_in", F, [2]), _Info("row", F, [2])], [_Info("s_out", F, [2]), _Info("emit", F, [2])])
    model = _Model([oh.make_node("Scan", ["s0", "X"], ["s", "trace"], num_scan_inputs=1, body=scan_body)],
                   [_Info("s0", F, [2]), _Info("X", F, [4, 2])], [_Info("s"), _Info("trace")],
                   {"w": np.array([0.5, -2.0], np.float32), "M": np.array(3, np.int64)})
    rng = np.random.default_rng(5)
    feeds = {"s0": rng.normal(size=2).astype(np.float32), "X": rng.normal(size=(4, 2)).astype(np.float32)}
    _CheckAgainstReference(model, feeds, ort=True)


def _Expect(error, model, words, feeds=None):
    with pytest.raises(error) as info:
        rep = HetnetBackend.prepare(model)
        rep.run(feeds or {})
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_if_refusals_name_the_node_and_the_blob():
    _Expect(hetnet.InvalidArgumentError, _If(_Info("c", B, []), else_branch=False), ["If 'choose'", "else_branch", "missing"])
    _Expect(hetnet.InvalidArgumentError, _If(_Info("c", F, [])), ["If 'choose'", "condition 'c'", "FLOAT", "BOOL"])
    _Expect(hetnet.InvalidArgumentError, _If(_Info("c", B, [2])), ["If 'choose'", "condition 'c'", "one value"])
    # A shape the model leaves open is checked when it runs.
    x = np.ones(2, np.float32)
    _Expect(hetnet.InvalidArgumentError, _If(_Info("c", B, ["n"])), ["OnnxIf 'choose'", "condition 'c'", "one value"],
            {"c": np.array([True, False]), "x": x})
    bad = _If(_Info("c", B, []))
    _Branch(bad, "else_branch").node[0].op_type = "NoSuchOp"
    _Expect(hetnet.UnsupportedError, bad, ["subgraph", "If 'choose'", "NoSuchOp"])
    stray = _If(_Info("c", B, []))
    _Branch(stray, "then_branch").node[0].input[1] = "nowhere"
    _Expect(hetnet.InvalidArgumentError, stray, ["If 'choose'", "'nowhere'"])


def _Counter(m_info=_Info("M", I64, []), cond="", body_outputs=2, cond_body="c_in"):
    """Loop over a running sum: s_out = s_in + 1; optional extra outputs make it malformed."""
    outs = [_Info("c_out", B, []), _Info("s_out", F, [1])] + [_Info("s_out", F, [1])] * (body_outputs - 2)
    body = _Graph("count", [oh.make_node("Identity", [cond_body], ["c_out"]),
                            oh.make_node("Add", ["s_in", "one"], ["s_out"])],
                  [_Info("i", I64, []), _Info("c_in", B, []), _Info("s_in", F, [1])], outs)
    inputs = [m_info, _Info("s0", F, [1])] + ([_Info(cond, B, [])] if cond else [])
    return _Model([oh.make_node("Loop", [m_info.name, cond, "s0"], ["s"], name="count", body=body)], inputs,
                  [_Info("s")], {"one": np.ones(1, np.float32)})


def test_loop_counts_like_the_reference_and_zero_trips_keep_the_initial_value():
    s0 = np.array([0.5], np.float32)
    for m in (0, 1, 7):
        # onnxruntime: the reference evaluator reads an omitted cond as false (the spec: true).
        _CheckAgainstReference(_Counter(), {"M": np.array(m, np.int64), "s0": s0}, ort=True)


def test_a_carried_value_that_grows_keeps_its_shape_at_run_time():
    """v grows by one element per iteration; the body's Shape(v) must be read at run time, not
    fixed at import from the initial value's shape."""
    body = _Graph("grow", [
        oh.make_node("Identity", ["c_in"], ["c_out"]),
        oh.make_node("Cast", ["i"], ["fi"], to=F),
        oh.make_node("Unsqueeze", ["fi", "axis0"], ["fi1"]),
        oh.make_node("Concat", ["v_in", "fi1"], ["v_out"], axis=0),
        oh.make_node("Shape", ["v_in"], ["n"]),
    ], [_Info("i", I64, []), _Info("c_in", B, []), _Info("v_in", F, None)],
        [_Info("c_out", B, []), _Info("v_out"), _Info("n")])
    model = _Model([oh.make_node("Loop", ["M", "go", "v0"], ["v", "ns"], body=body)],
                   [_Info("M", I64, []), _Info("go", B, []), _Info("v0", F, [1])], [_Info("v"), _Info("ns")],
                   {"axis0": np.array([0], np.int64)})
    feeds = {"M": np.array(4, np.int64), "go": np.array(True), "v0": np.array([7], np.float32)}
    got = _CheckAgainstReference(model, feeds)
    np.testing.assert_array_equal(got[1].ravel(), [1, 2, 3, 4])
    # Emitting the growing value itself as a scan output: the slices cannot be stacked.
    body.output[2].CopyFrom(_Info("v_out"))
    model.graph.node[0].attribute[0].g.CopyFrom(body)
    _Expect(hetnet.InvalidArgumentError, model, ["OnnxLoop", "scan output 'ns'", "at iteration 1", "one shape"], feeds)
    # A body operator that fails names the subgraph and the loop.
    feeds["v0"] = np.ones((2, 2), np.float32)
    _Expect(hetnet.HetnetError, model, ["running subgraph 'body' of OnnxLoop", "Concat"], feeds)


def test_loop_refusals_name_the_node_and_the_blob():
    s0 = np.array([0.5], np.float32)
    _Expect(hetnet.InvalidArgumentError, _Counter(), ["OnnxLoop 'count'", "trip count 'M'", "negative"],
            {"M": np.array(-3, np.int64), "s0": s0})
    _Expect(hetnet.InvalidArgumentError, _Counter(), ["OnnxLoop 'count'", "trip count 'M'", "max_iterations"],
            {"M": np.array(10 ** 15, np.int64), "s0": s0})
    _Expect(hetnet.InvalidArgumentError, _Counter(m_info=_Info("M", F, [])), ["Loop 'count'", "trip count M 'M'", "INT64"])
    _Expect(hetnet.InvalidArgumentError, _Counter(body_outputs=3), ["Loop 'count'", "subgraph 'body'", "3 outputs", "expected 2"])


def test_a_loop_whose_condition_never_fails_stops_at_the_iteration_cap():
    """No M and a condition the body keeps true: the loop must end with an error, not hang."""
    model = _Counter(m_info=_Info("M", I64, []), cond="go")
    model.graph.node[0].input[0] = ""
    model.graph.input.remove(model.graph.input[0])
    imported, _ = HetnetBackend._Import(model, "CPU", None)
    net = caffe2_pb2.NetDef.FromString(imported["predict_net"])
    (loop,) = [op for op in net.op if op.type == "OnnxLoop"]
    cap = loop.arg.add()
    cap.name, cap.i = "max_iterations", 50
    predictor = Predictor(imported["init_net"], net.SerializeToString())
    with pytest.raises(hetnet.InvalidArgumentError) as info:
        predictor.run({"go": np.array(True), "s0": np.zeros(1, np.float32)})
    assert "OnnxLoop 'count'" in str(info.value) and "max_iterations (50)" in str(info.value)


def test_scan_refusals_name_the_node_and_the_blob():
    model = _ScanModel([0, 0], [0, 0], [0, 0], [0, 0], (["n", 3], ["m", 3]))
    feeds = {"s0": np.zeros(3, np.float32), "A": np.zeros((4, 3), np.float32), "Bx": np.zeros((5, 3), np.float32)}
    _Expect(hetnet.InvalidArgumentError, model, ["OnnxScan", "scan input 'Bx'", "length 5", "'A' has 4"], feeds)
    bad_dirs = _ScanModel([0, 0], [0, 2], [0, 0], [0, 0], ([5, 3], [5, 3]))
    feeds["Bx"] = np.zeros((4, 3), np.float32)
    _Expect(hetnet.InvalidArgumentError, bad_dirs, ["OnnxScan", "scan_input_directions", "got 2"], feeds)
    few = _ScanModel([0], [0, 0], [0, 0], [0, 0], ([5, 3], [5, 3]))
    _Expect(hetnet.InvalidArgumentError, few, ["Scan", "scan_input_axes has 1 values, expected 2"])


@pytest.mark.skipif(NUM_GPUS < 1, reason="no CUDA device here")
def test_control_flow_imported_for_cuda_matches_cpu():
    """On CUDA the control-flow operators stay on the CPU and the runtime copies their inputs (the
    subgraphs read outer values through those copies): results equal the CPU import's."""
    rng = np.random.default_rng(11)
    cases = [(_Decoder(6), {"xs": rng.normal(size=(4, 1, 2)).astype(np.float32),
                            "h0": rng.normal(size=(1, 3)).astype(np.float32) * 0.1}),
             (_ScanModel([1, 0], [1, 0], [1, -1], [0, 1], ([3, 5], [5, 3])),
              {"s0": rng.normal(size=3).astype(np.float32), "A": rng.normal(size=(3, 5)).astype(np.float32),
               "Bx": rng.normal(size=(5, 3)).astype(np.float32)}),
             (_If(_Info("c", B, [])), {"c": np.array(False), "x": np.array([1.5, -2.0], np.float32)}),
             (_Counter(), {"M": np.array(5, np.int64), "s0": np.array([0.5], np.float32)})]
    for model, feeds in cases:
        want = HetnetBackend.prepare(model, "CPU").run(feeds)
        got = HetnetBackend.prepare(model, "CUDA").run(feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)
