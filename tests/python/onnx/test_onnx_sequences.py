"""ONNX sequence and optional values (onnx/convert_sequence.cc, operators/onnx_sequence_ops.h): the
sequence operators on lists fed and fetched through the ONNX backend and FeedBlob / FetchBlob,
compared with onnx's reference evaluator on the same model; and the refusals (a position out of
range, a dtype other than the sequence's, shapes that do not concatenate, an empty optional read, a
list fed where a tensor is expected) are hetnet errors naming the operator and the blob."""
import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto
from onnx.reference import ReferenceEvaluator

import hetnet
from hetnet import workspace
from hetnet.onnx.backend import HetnetBackend

F, I64 = TensorProto.FLOAT, TensorProto.INT64


def _Seq(name, elem=F):
    return oh.make_tensor_sequence_value_info(name, elem, None)


def _Opt(name, inner):
    return oh.make_value_info(name, oh.make_optional_type_proto(inner))


def _T(name, elem=F, shape=None):
    return oh.make_tensor_value_info(name, elem, shape)


def _Model(nodes, inputs, outputs, opset=18):
    model = oh.make_model(oh.make_graph(nodes, "g", inputs, outputs), opset_imports=[oh.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _Same(got, want):
    if want is None:
        assert got is None
    elif isinstance(want, list):
        assert isinstance(got, list) and len(got) == len(want)
        for g, w in zip(got, want):
            _Same(g, w)
    else:
        got = np.asarray(got)
        assert got.dtype == np.asarray(want).dtype and got.shape == np.shape(want)
        np.testing.assert_allclose(got, want)


def _Check(model, feeds, from_optional=()):
    """from_optional: indexes of outputs made through an Optional node, which the reference
    evaluator wraps in a one-element list (its Optional returns [x])."""
    want = ReferenceEvaluator(model).run(None, feeds)
    for i in from_optional:
        assert isinstance(want[i], list) and len(want[i]) == 1
        want[i] = want[i][0]
    got = HetnetBackend.prepare(model).run(feeds)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        _Same(g, w)
    return got


def _C(value, dtype=np.int64):
    return oh.make_node("Constant", [], [value[0]], value=onnx.numpy_helper.from_array(np.array(value[1], dtype)))


RNG = np.random.default_rng(7)
X, Y, Z = (RNG.standard_normal((2, 3)).astype(np.float32) for _ in range(3))


def test_construct_insert_erase_at_length():
    nodes = [oh.make_node("SequenceConstruct", ["x", "y"], ["s"]), _C(("p", -1)), _C(("q", 0)),
             oh.make_node("SequenceInsert", ["s", "z", "p"], ["s2"]),  # before the last
             oh.make_node("SequenceInsert", ["s2", "x"], ["s3"]),       # at the end
             oh.make_node("SequenceErase", ["s3", "q"], ["s4"]),
             oh.make_node("SequenceAt", ["s4", "p"], ["last"]),
             oh.make_node("SequenceLength", ["s4"], ["n"])]
    model = _Model(nodes, [_T("x"), _T("y"), _T("z")], [_Seq("s4"), _T("last"), _T("n", I64)])
    got = _Check(model, {"x": X, "y": Y, "z": Z})
    assert len(got[0]) == 3 and int(got[2]) == 3


@pytest.mark.parametrize("split,keepdims,axis", [(None, 0, 1), (None, 1, -1), (2, 1, 1), ([1, 1], 1, 0)])
def test_split_then_concat(split, keepdims, axis):
    nodes, inputs = [], ["x"]
    if split is not None:
        nodes.append(_C(("split", split)))
        inputs.append("split")
    squeezed = split is None and keepdims == 0
    nodes += [oh.make_node("SplitToSequence", inputs, ["s"], axis=axis, keepdims=keepdims),
              oh.make_node("ConcatFromSequence", ["s"], ["cat"], axis=axis, new_axis=int(squeezed))]
    outputs = [_Seq("s"), _T("cat")]
    if split != 2:  # equal parts: they stack too
        nodes.append(oh.make_node("ConcatFromSequence", ["s"], ["stack"], axis=0, new_axis=1))
        outputs.append(_T("stack"))
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    got = _Check(_Model(nodes, [_T("x")], outputs), {"x": x})
    np.testing.assert_array_equal(got[1], x)  # split then joined again


def test_sequence_input_and_output_lists_and_empty():
    nodes = [oh.make_node("SequenceEmpty", [], ["e"], dtype=I64),
             oh.make_node("Identity", ["seq"], ["same"]),
             oh.make_node("SequenceLength", ["seq"], ["n"]),
             oh.make_node("SequenceInsert", ["e", "n"], ["ns"])]
    model = _Model(nodes, [_Seq("seq")], [_Seq("same"), _Seq("ns", I64), _Seq("e", I64)])
    for items in ([X, Y, Z], [np.zeros((0, 4), np.float32)], []):
        _Check(model, {"seq": items})


def test_optionals():
    nodes = [oh.make_node("Optional", ["x"], ["ox"]), oh.make_node("OptionalHasElement", ["ox"], ["has"]),
             oh.make_node("OptionalGetElement", ["ox"], ["got"]),
             oh.make_node("OptionalHasElement", ["maybe"], ["maybe_has"]),
             oh.make_node("Optional", [], ["none"], type=oh.make_tensor_type_proto(F, None))]
    opt_f = oh.make_tensor_type_proto(F, None)
    model = _Model(nodes, [_T("x"), _Opt("maybe", opt_f)],
                   [_T("has", TensorProto.BOOL), _T("got"), _T("maybe_has", TensorProto.BOOL),
                    _Opt("none", opt_f)])
    for maybe in (Y, None):
        got = _Check(model, {"x": X, "maybe": maybe}, from_optional=(1, 3))
        assert bool(got[2]) == (maybe is not None) and got[3] is None


def test_optional_sequence_get_element():
    seq_type = oh.make_sequence_type_proto(oh.make_tensor_type_proto(F, None))
    nodes = [oh.make_node("OptionalGetElement", ["o"], ["s"]), oh.make_node("Identity", ["s"], ["s2"]),
             oh.make_node("ConcatFromSequence", ["s2"], ["cat"], axis=0)]
    model = _Model(nodes, [_Opt("o", seq_type)], [_Seq("s2"), _T("cat")])
    _Check(model, {"o": [X, Y]})


def test_feed_fetch_sequence_and_none():
    workspace.FeedBlob("seq_blob", [X, Y])
    got = workspace.FetchBlob("seq_blob")
    _Same(got, [X, Y])
    workspace.FeedBlob("none_blob", None)
    assert workspace.FetchBlob("none_blob") is None
    workspace.FeedBlob("numbers", [1.5, 2.5])  # a list of numbers is still one array
    assert workspace.FetchBlob("numbers").shape == (2,)
    with pytest.raises(hetnet.HetnetError, match="element 1 of the sequence is int64"):
        workspace.FeedBlob("mixed", [X, np.arange(3)])


def _Fails(model, feeds, *parts):
    rep = HetnetBackend.prepare(model)
    with pytest.raises(hetnet.HetnetError) as info:
        rep.run(feeds)
    for p in parts:
        assert p in str(info.value), str(info.value)


def test_position_out_of_range_names_op_and_blob():
    model = _Model([oh.make_node("SequenceAt", ["seq", "pos"], ["y"], name="at")],
                   [_Seq("seq"), _T("pos", I64, [])], [_T("y")])
    with pytest.raises(Exception):  # the reference refuses too
        ReferenceEvaluator(model).run(None, {"seq": [X], "pos": np.array(1)})
    _Fails(model, {"seq": [X], "pos": np.array(1)}, "SequenceAt", "'pos'", "out of range")
    _Fails(model, {"seq": [X], "pos": np.array(-2)}, "SequenceAt", "'pos'", "out of range")
    erase = _Model([oh.make_node("SequenceErase", ["seq", "pos"], ["y"])], [_Seq("seq"), _T("pos", I64, [])],
                   [_Seq("y")])
    _Fails(erase, {"seq": [X, Y], "pos": np.array(2)}, "SequenceErase", "'pos'", "out of range")
    insert = _Model([oh.make_node("SequenceInsert", ["seq", "x", "pos"], ["y"])],
                    [_Seq("seq"), _T("x"), _T("pos", I64, [])], [_Seq("y")])
    _Fails(insert, {"seq": [X], "x": Y, "pos": np.array(3)}, "SequenceInsert", "'pos'", "out of range")


def test_dtype_shape_and_kind_mismatches():
    insert = _Model([oh.make_node("SequenceInsert", ["seq", "x"], ["y"])], [_Seq("seq"), _T("x", I64)],
                    [_Seq("y")])
    _Fails(insert, {"seq": [X], "x": np.arange(3)}, "SequenceInsert", "'x'", "int64", "float32")
    concat = _Model([oh.make_node("ConcatFromSequence", ["seq"], ["y"], axis=0)], [_Seq("seq")], [_T("y")])
    _Fails(concat, {"seq": [X, np.zeros((2, 4), np.float32)]}, "ConcatFromSequence", "'seq'", "[2, 4]")
    get = _Model([oh.make_node("OptionalGetElement", ["o"], ["y"])],
                 [_Opt("o", oh.make_tensor_type_proto(F, None))], [_T("y")])
    with pytest.raises(Exception):
        ReferenceEvaluator(get).run(None, {"o": None})
    _Fails(get, {"o": None}, "OptionalGetElement", "'o'", "empty")
    # A list fed where a tensor is expected (Relu reads 'x'); and a tensor where a sequence is.
    mixed = _Model([oh.make_node("Relu", ["x"], ["r"]), oh.make_node("SequenceLength", ["seq"], ["n"])],
                   [_T("x"), _Seq("seq")], [_T("r"), _T("n", I64)])
    _Fails(mixed, {"x": [X, Y], "seq": [X]}, "'x'", "not a tensor")
    _Fails(mixed, {"x": X, "seq": X}, "SequenceLength", "'seq'", "not a sequence")
    plain = _Model([oh.make_node("Relu", ["x"], ["r"])], [_T("x")], [_T("r")])
    with pytest.raises(hetnet.HetnetError, match="'x' is a tensor"):
        HetnetBackend.prepare(plain).run({"x": [X, Y]})


def _MapModel(second_is_sequence):
    """SequenceMap over (seq a, seq b) or (seq a, tensor b): per element a * b and Shape(a) (onnx's
    reference evaluator maps two sequences or one sequence and tensors)."""
    body = oh.make_graph([oh.make_node("Mul", ["ai", "bi"], ["m"]), oh.make_node("Shape", ["ai"], ["shape"])], "body",
                         [_T("ai"), _T("bi")], [_T("m"), _T("shape", I64)])
    node = oh.make_node("SequenceMap", ["a", "b"], ["prods", "shapes"], body=body)
    b = _Seq("b") if second_is_sequence else _T("b")
    return _Model([node], [_Seq("a"), b], [_Seq("prods"), _Seq("shapes", I64)])


def test_sequence_map_sequences_and_a_tensor():
    a = [RNG.standard_normal((2, k)).astype(np.float32) for k in (1, 3, 2)]
    b = [RNG.standard_normal((2, k)).astype(np.float32) for k in (1, 3, 2)]
    w = np.array(0.5, np.float32)
    _Check(_MapModel(True), {"a": a, "b": b})
    _Check(_MapModel(False), {"a": a, "b": w})
    got = HetnetBackend.prepare(_MapModel(False)).run({"a": [], "b": w})  # no element: no body run
    assert got[0] == [] and got[1] == []
    _Fails(_MapModel(True), {"a": a, "b": b[:2]}, "OnnxSequenceMap", "'b'", "2 elements")


def test_loop_carries_a_sequence_and_if_returns_one():
    """A Loop whose carried value is a sequence (SequenceInsert per iteration, then Identity on it in
    the body), then an If whose branches make a sequence or take the loop's one."""
    body = oh.make_graph(
        [oh.make_node("Identity", ["cond_in"], ["cond_out"]), oh.make_node("Cast", ["i"], ["fi"], to=F),
         oh.make_node("Mul", ["x", "fi"], ["xi"]), oh.make_node("SequenceInsert", ["seq_in", "xi"], ["grown"]),
         oh.make_node("Identity", ["grown"], ["seq_out"])], "body",
        [_T("i", I64, []), _T("cond_in", TensorProto.BOOL, []), _Seq("seq_in")],
        [_T("cond_out", TensorProto.BOOL, []), _Seq("seq_out")])
    then_g = oh.make_graph([oh.make_node("Identity", ["looped"], ["t"])], "then", [], [_Seq("t")])
    else_g = oh.make_graph([oh.make_node("SequenceConstruct", ["x", "x"], ["e"])], "else", [], [_Seq("e")])
    nodes = [oh.make_node("SequenceEmpty", [], ["empty"]), _C(("go", True), np.bool_),
             oh.make_node("Loop", ["m", "go", "empty"], ["looped"], body=body),
             oh.make_node("If", ["c"], ["picked"], then_branch=then_g, else_branch=else_g),
             oh.make_node("ConcatFromSequence", ["picked"], ["cat"], axis=0)]
    model = _Model(nodes, [_T("x"), _T("m", I64, []), _T("c", TensorProto.BOOL, [])],
                   [_Seq("looped"), _Seq("picked"), _T("cat")])
    for m, c in ((3, True), (0, False), (2, False)):
        _Check(model, {"x": X, "m": np.array(m, np.int64), "c": np.array(c)})


def test_run_node_takes_and_returns_lists():
    node = oh.make_node("SequenceInsert", ["s", "x"], ["y"])
    got = HetnetBackend.run_node(node, [[X, Y], Z])
    want = ReferenceEvaluator(_Model([node], [_Seq("s"), _T("x")], [_Seq("y")])).run(None, {"s": [X, Y], "x": Z})
    _Same(got["y"], want[0])
    has = HetnetBackend.run_node(oh.make_node("OptionalHasElement", ["o"], ["h"]), [None])
    assert has["h"].dtype == np.bool_ and not bool(has["h"])
    split = HetnetBackend.run_node(oh.make_node("SplitToSequence", ["x"], ["parts"], axis=0), [X])
    _Same(split["parts"], [X[:1], X[1:]])


def _CudaCount():
    return workspace.NumCudaDevices() if workspace.has_gpu_support else 0


def test_cuda_import_keeps_sequence_ops_on_cpu():
    """Imported for CUDA, the sequence / optional operators stay on CPU (the tensor ops around them go
    to the GPU; the runtime copies the tensors between them): no sequence blob crosses devices."""
    nodes = [oh.make_node("Relu", ["x"], ["r"]), oh.make_node("SplitToSequence", ["r"], ["s"], axis=0),
             oh.make_node("SequenceInsert", ["s", "y"], ["s2"]), _C(("p", -1)),
             oh.make_node("SequenceAt", ["s2", "p"], ["last"]), oh.make_node("Neg", ["last"], ["out"]),
             oh.make_node("Optional", ["s2"], ["o"]), oh.make_node("OptionalGetElement", ["o"], ["back"])]
    model = _Model(nodes, [_T("x"), _T("y")], [_T("out"), _Seq("back")])
    _, predict = HetnetBackend.onnx_graph_to_caffe2_net(model, device="CUDA")
    devices = {op.type: op.device_option.device_type for op in predict.op}
    for op_type in ("SplitToSequence", "SequenceInsert", "SequenceAt", "OnnxOptional", "OptionalGetElement"):
        assert devices[op_type] == 0, op_type  # CPU
    assert devices["Relu"] == devices["Negative"] == 1  # CUDA
    if _CudaCount() == 0:
        pytest.skip("no CUDA device here: the run on CUDA is not checked")
    feeds = {"x": X, "y": Y}
    want = ReferenceEvaluator(model).run(None, feeds)
    want[1] = want[1][0]  # the reference's Optional wraps its value in a list
    got = HetnetBackend.prepare(model, device="CUDA").run(feeds)
    _Same(got[0], want[0])
    _Same(got[1], want[1])
