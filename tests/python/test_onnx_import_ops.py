"""The ONNX importer's operator conversions, numerics against onnxruntime (CPU) within 1e-5:
models built with onnx.helper for every converter family (onnx/convert_*.cc)."""
import numpy as np
import pytest

onnx = pytest.importorskip("onnx")
pytest.importorskip("onnxruntime")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from onnx_import_util import check, make_model, out, predict_ops, rand, run_hetnet, run_ort  # noqa: E402,F401
from hetnet.proto import caffe2_pb2  # noqa: E402,F401


def test_mlp_gemm_variants():
    w1, b1 = rand(8, 4), rand(8)
    w2, b2 = rand(8, 6), rand(6)      # transB=0: folded into FC's [N, K] weight
    w3, c3 = rand(5, 6), rand(1, 5)   # transA=1 input, [1, N] bias scaled by beta
    model = make_model([
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h1"], transB=1),
        helper.make_node("Relu", ["h1"], ["r1"]),
        helper.make_node("Gemm", ["r1", "w2", "b2"], ["h2"], alpha=0.5, beta=2.0),
        helper.make_node("Transpose", ["h2"], ["h2t"], perm=[1, 0]),
        helper.make_node("Gemm", ["h2t", "w3", "c3"], ["h3"], transA=1, transB=1, beta=0.25),
        helper.make_node("Softmax", ["h3"], ["y"], axis=1),
    ], [("x", [3, 4])], [out("y", [3, 5])], {"w1": w1, "b1": b1, "w2": w2, "b2": b2, "w3": w3, "c3": c3},
        opset=11)
    info = check(model, {"x": rand(3, 4)})
    assert predict_ops(info).count("FC") == 3
    assert info["inputs"] == [("x", caffe2_pb2.TensorProto.FLOAT, [3, 4])]
    assert info["outputs"] == [("y", caffe2_pb2.TensorProto.FLOAT, [3, 5])]
    assert info["opsets"] == {"": 11}


def test_gemm_with_runtime_operands_uses_matmul():
    model = make_model([helper.make_node("Gemm", ["a", "b", "c"], ["y"], transA=1, alpha=2.0, beta=0.5)],
                       [("a", [4, 3]), ("b", [4, 5]), ("c", [3, 5])], [out("y", [3, 5])])
    info = check(model, {"a": rand(4, 3), "b": rand(4, 5), "c": rand(3, 5)})
    assert "MatMul" in predict_ops(info) and "FC" not in predict_ops(info)


def test_matmul_2d_and_batched():
    model = make_model([helper.make_node("MatMul", ["a", "w"], ["y"]),
                        helper.make_node("MatMul", ["p", "q"], ["z"])],
                       [("a", [3, 4]), ("p", [2, 3, 4]), ("q", [2, 4, 5])],
                       [out("y", [3, 6]), out("z", [2, 3, 5])], {"w": rand(4, 6)})
    check(model, {"a": rand(3, 4), "p": rand(2, 3, 4), "q": rand(2, 4, 5)})


def test_lenet_like_convnet():
    inits = {"c1w": rand(4, 1, 3, 3) * 0.5, "c1b": rand(4), "c2w": rand(8, 2, 3, 3) * 0.5, "c2b": rand(8),
             "fw": rand(10, 8 * 3 * 2) * 0.2, "fb": rand(10)}
    model = make_model([
        helper.make_node("Conv", ["x", "c1w", "c1b"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "c2w", "c2b"], ["c2"], group=2, dilations=[1, 1], strides=[1, 1],
                         pads=[1, 0, 1, 0]),
        helper.make_node("Tanh", ["c2"], ["r2"]),
        helper.make_node("AveragePool", ["r2"], ["p2"], kernel_shape=[2, 2], strides=[2, 2], pads=[1, 1, 0, 0]),
        helper.make_node("Flatten", ["p2"], ["f"], axis=1),
        helper.make_node("Gemm", ["f", "fw", "fb"], ["logits"], transB=1),
        helper.make_node("LogSoftmax", ["logits"], ["y"], axis=1),
    ], [("x", ["N", 1, 12, 12])], [out("y")], inits, opset=11)
    check(model, {"x": rand(2, 1, 12, 12)})


def test_conv_auto_pad_dilation_no_bias_and_conv_transpose():
    model = make_model([
        helper.make_node("Conv", ["x", "w"], ["a"], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("Conv", ["x", "w"], ["b"], auto_pad="VALID", dilations=[2, 2]),
        helper.make_node("ConvTranspose", ["x", "wt", "bt"], ["c"], strides=[2, 2], pads=[1, 1, 1, 1],
                         output_padding=[1, 1]),
    ], [("x", [1, 2, 9, 9])], [out("a"), out("b"), out("c")],
        {"w": rand(3, 2, 3, 3), "wt": rand(2, 3, 3, 3), "bt": rand(3)})
    check(model, {"x": rand(1, 2, 9, 9)})


def test_batchnorm_and_lrn():
    c = 3
    inits = {"s": rand(c), "b": rand(c), "m": rand(c), "v": np.abs(rand(c)) + 0.5}
    model = make_model([
        helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"], epsilon=1e-3),
        helper.make_node("LRN", ["bn"], ["y"], size=3, alpha=1e-3, beta=0.75, bias=2.0),
    ], [("x", [2, c, 4, 5])], [out("y")], inits, opset=15)
    check(model, {"x": rand(2, c, 4, 5)})


def test_pooling_modes():
    model = make_model([
        helper.make_node("MaxPool", ["x"], ["a"], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1],
                         ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["b"], kernel_shape=[3, 3], strides=[2, 2], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["c"], kernel_shape=[3, 3], pads=[1, 1, 1, 1], count_include_pad=1),
        helper.make_node("MaxPool", ["x"], ["d"], kernel_shape=[2, 2], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("GlobalAveragePool", ["x"], ["e"]),
        helper.make_node("GlobalMaxPool", ["x"], ["f"]),
    ], [("x", [2, 3, 8, 8])], [out(n) for n in "abcdef"])
    check(model, {"x": rand(2, 3, 8, 8)})


@pytest.mark.parametrize("opset", [11, 13])
@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_softmax_by_opset(opset, axis):
    attrs = {} if axis is None else {"axis": axis}
    model = make_model([helper.make_node("Softmax", ["x"], ["y"], **attrs),
                        helper.make_node("LogSoftmax", ["x"], ["z"], **attrs)],
                       [("x", [2, 3, 4])], [out("y", [2, 3, 4]), out("z", [2, 3, 4])], opset=opset)
    check(model, {"x": rand(2, 3, 4)})


@pytest.mark.parametrize("opset", [11, 13])
def test_shape_ops(opset):
    inits = {"shape": np.array([0, -1, 2], np.int64)}

    def with_list(op, inp, outs, name, values, **attrs):
        """axes / split: an attribute before opset 13, a constant input from 13 on."""
        if opset < 13:
            return helper.make_node(op, [inp], outs, **{name: values}, **attrs)
        inits[outs[0] + "_" + name] = np.array(values, np.int64)
        return helper.make_node(op, [inp, outs[0] + "_" + name], outs, **attrs)

    model = make_model([
        helper.make_node("Reshape", ["x", "shape"], ["r"]),              # [2, 6, 2]
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1]),     # [2, 2, 6]
        helper.make_node("Flatten", ["t"], ["f"], axis=-1),              # [4, 6]
        helper.make_node("Concat", ["x", "x"], ["c"], axis=-1),          # [2, 3, 8]
        with_list("Split", "c", ["c1", "c2", "c3"], "split", [2, 2, 4], axis=2),
        with_list("Squeeze", "y1", ["s"], "axes", [1]),                  # [2, 5]
        with_list("Unsqueeze", "s", ["u"], "axes", [0, -1]),             # [1, 2, 5, 1]
        helper.make_node("Transpose", ["u"], ["ut"]),                    # reversed dims
    ], [("x", [2, 3, 4]), ("y1", [2, 1, 5])],
        [out(n) for n in ["r", "f", "c1", "c2", "c3", "u", "ut"]], inits, opset=opset)
    check(model, {"x": rand(2, 3, 4), "y1": rand(2, 1, 5)})


def test_elementwise_and_activations():
    model = make_model([
        helper.make_node("Add", ["a", "b"], ["add"]),
        helper.make_node("Sub", ["add", "b"], ["sub"]),
        helper.make_node("Mul", ["sub", "half"], ["mul"]),          # scalar constant: Scale
        helper.make_node("Div", ["mul", "b2"], ["div"]),
        helper.make_node("Abs", ["div"], ["abs"]),
        helper.make_node("Sqrt", ["abs"], ["sqrt"]),
        helper.make_node("Pow", ["sqrt", "three"], ["pow"]),
        helper.make_node("Exp", ["a"], ["exp"]),
        helper.make_node("Log", ["exp"], ["log"]),
        helper.make_node("Neg", ["log"], ["neg"]),
        helper.make_node("Reciprocal", ["b2"], ["rec"]),
        helper.make_node("Sigmoid", ["a"], ["sig"]),
        helper.make_node("LeakyRelu", ["a"], ["lrelu"], alpha=0.2),
        helper.make_node("PRelu", ["a4", "slope"], ["prelu"]),
        helper.make_node("Sum", ["a", "b", "add"], ["sum"]),
        helper.make_node("Mean", ["a", "b"], ["mean"]),
        helper.make_node("Clip", ["a", "lo", "hi"], ["clip"]),
        helper.make_node("Clip", ["a", "", "hi"], ["clip_hi"]),
        helper.make_node("Greater", ["a", "b"], ["gt"]),
        helper.make_node("LessOrEqual", ["a", "b"], ["le"]),
        helper.make_node("Cast", ["gt"], ["gt_f"], to=TensorProto.FLOAT),
        helper.make_node("Sign", ["a"], ["sign"]),
        helper.make_node("Identity", ["a"], ["ident"]),
        helper.make_node("Dropout", ["a"], ["drop"]),
    ], [("a", [3, 4]), ("b", [3, 4]), ("a4", [2, 3, 2, 2])],
        [out(n) for n in ["pow", "neg", "rec", "sig", "lrelu", "prelu", "sum", "mean", "clip", "clip_hi",
                          "gt_f", "sign", "ident", "drop"]] + [out("le", None, TensorProto.BOOL)],
        {"half": np.array(0.5, np.float32), "three": np.array(3.0, np.float32),
         "b2": np.abs(rand(3, 4)) + 0.5, "slope": rand(3, 1, 1), "lo": np.array(-0.5, np.float32),
         "hi": np.array(0.7, np.float32)})
    info = check(model, {"a": rand(3, 4), "b": rand(3, 4), "a4": rand(2, 3, 2, 2)})
    assert "Scale" in predict_ops(info)


def test_clip_attributes_at_opset_6():
    model = make_model([helper.make_node("Clip", ["a"], ["y"], min=-0.3, max=0.4)], [("a", [5])], [out("y")],
                       opset=6)
    model.ir_version = 3
    check(model, {"a": rand(5)})


@pytest.mark.parametrize("opset", [13, 18])
def test_reductions(opset):
    def reduce(op, name, axes, keepdims):
        if op == "ReduceSum" or opset >= 18:
            return helper.make_node(op, ["x", "ax_" + name], [name], keepdims=keepdims), {
                "ax_" + name: np.array(axes, np.int64)}
        return helper.make_node(op, ["x"], [name], axes=axes, keepdims=keepdims), {}
    n1, i1 = reduce("ReduceMean", "m", [1, -1], 1)
    n2, i2 = reduce("ReduceSum", "s", [0], 0)
    model = make_model([n1, n2], [("x", [2, 3, 4])], [out("m"), out("s")], {**i1, **i2}, opset=opset)
    check(model, {"x": rand(2, 3, 4)})


def test_shape_folding_gather_slice_expand_where_argmax():
    i64 = lambda *v: np.array(v, np.int64)  # noqa: E731
    model = make_model([
        helper.make_node("Shape", ["x"], ["xs"]),                               # folded: [2, 3, 4]
        helper.make_node("Shape", ["n"], ["ns"]),                               # N symbolic: a Shape op
        helper.make_node("Shape", ["x"], ["xs_tail"], start=1),                 # [3, 4]
        helper.make_node("Gather", ["x", "idx"], ["g"], axis=1),
        helper.make_node("Gather", ["x", "idx0"], ["g0"], axis=-1),             # scalar index drops the axis
        helper.make_node("Slice", ["x", "st", "en", "ax"], ["sl"]),             # negative starts/ends, clamps
        helper.make_node("Slice", ["x", "st2", "en2"], ["sl2"]),                # leading axes, huge end
        helper.make_node("Expand", ["col", "eshape"], ["ex"]),
        helper.make_node("Greater", ["x", "zero"], ["pos"]),
        helper.make_node("Neg", ["x"], ["g_neg"]),
        helper.make_node("Where", ["pos", "x", "g_neg"], ["wh"]),
        helper.make_node("ArgMax", ["x"], ["am"], axis=2, keepdims=0),
        helper.make_node("ArgMin", ["x"], ["an"]),                              # ONNX default axis 0
        helper.make_node("ConstantOfShape", ["xs_tail"], ["ones"],
                         value=numpy_helper.from_array(np.array([1.5], np.float32))),
        helper.make_node("ConstantOfShape", ["ns"], ["zeros"],
                         value=numpy_helper.from_array(np.array([7], np.int64))),
    ], [("x", [2, 3, 4]), ("n", ["N", 2]), ("col", [3, 1])],
        [out("xs", None, TensorProto.INT64), out("ns", None, TensorProto.INT64), out("g"), out("g0"), out("sl"),
         out("sl2"), out("ex"), out("wh"), out("am", None, TensorProto.INT64), out("an", None, TensorProto.INT64),
         out("ones"), out("zeros", None, TensorProto.INT64)],
        {"idx": i64(2, 0, 2), "idx0": np.array(1, np.int64), "st": i64(-3, 1), "en": i64(-1, 100),
         "ax": i64(2, 1), "st2": i64(1), "en2": i64(1 << 62), "eshape": i64(2, 3, 4),
         "zero": np.array(0.0, np.float32)}, opset=18)
    info = check(model, {"x": rand(2, 3, 4), "n": rand(5, 2), "col": rand(3, 1)})
    ops = predict_ops(info)
    assert ops.count("Shape") == 1  # the Shapes of x are folded; the one of n is not


def test_dropout_mask_legacy_broadcast_matmul_vectors_uneven_split():
    model = make_model([
        helper.make_node("Dropout", ["x"], ["d", "mask"]),
        helper.make_node("MatMul", ["v", "v"], ["dot"]),
        helper.make_node("MatMul", ["v", "m"], ["vm"]),
        helper.make_node("Split", ["x"], ["p1", "p2", "p3"], axis=1, num_outputs=3),
    ], [("x", [2, 7]), ("v", [3]), ("m", [4, 3, 2])],
        [out("d"), out("mask", None, TensorProto.BOOL), out("dot"), out("vm"), out("p1"), out("p2"), out("p3")],
        opset=18)
    check(model, {"x": rand(2, 7), "v": rand(3), "m": rand(4, 3, 2)})
    legacy = make_model([helper.make_node("Add", ["a", "b"], ["y"], broadcast=1, axis=1),
                         helper.make_node("Mul", ["a", "c"], ["z"], broadcast=1)],
                        [("a", [2, 3, 4]), ("b", [3]), ("c", [4])], [out("y"), out("z")], opset=6)
    legacy.ir_version = 3
    a, b, c = rand(2, 3, 4), rand(3), rand(4)
    ours, _ = run_hetnet(legacy, {"a": a, "b": b, "c": c})
    np.testing.assert_allclose(ours["y"], a + b[None, :, None], rtol=1e-6)
    np.testing.assert_allclose(ours["z"], a * c, rtol=1e-6)


def test_conv_and_pool_1d_same_lower_output_shape():
    model = make_model([
        helper.make_node("Conv", ["x", "w", "b"], ["c"], pads=[2, 1], strides=[2], dilations=[2]),
        helper.make_node("MaxPool", ["c"], ["p"], kernel_shape=[3], strides=[2], pads=[1, 1], ceil_mode=1),
        helper.make_node("AveragePool", ["x"], ["a"], kernel_shape=[2], auto_pad="SAME_LOWER"),
        helper.make_node("GlobalAveragePool", ["x"], ["g"]),
        helper.make_node("ConvTranspose", ["x", "wt"], ["t"], strides=[2], output_shape=[24]),
        helper.make_node("Conv", ["x4", "w4"], ["s"], auto_pad="SAME_LOWER", strides=[2, 2]),
        helper.make_node("ConvTranspose", ["x4", "wt4"], ["u"], auto_pad="SAME_UPPER", strides=[2, 2]),
        helper.make_node("ConvTranspose", ["x4", "wt4"], ["v"], strides=[3, 2], output_shape=[22, 14]),
    ], [("x", [2, 3, 11]), ("x4", [1, 2, 7, 6])], [out(n) for n in "cpagtsuv"],
        {"w": rand(4, 3, 3), "b": rand(4), "wt": rand(3, 2, 4), "w4": rand(3, 2, 4, 3), "wt4": rand(2, 2, 3, 3)})
    check(model, {"x": rand(2, 3, 11), "x4": rand(1, 2, 7, 6)})


def test_prelu_slope_broadcast_beyond_channels():
    model = make_model([helper.make_node("PRelu", ["x", "last"], ["a"]),      # along the last axis
                        helper.make_node("PRelu", ["x", "s"], ["b"])],        # a runtime slope
                       [("x", [2, 3, 4]), ("s", [3, 1])], [out("a"), out("b")], {"last": rand(4)})
    info = check(model, {"x": rand(2, 3, 4), "s": rand(3, 1)})
    assert "PRelu" not in predict_ops(info)


def test_composed_activations():
    model = make_model([
        helper.make_node("HardSigmoid", ["x"], ["hs"], alpha=0.3, beta=0.4),
        helper.make_node("HardSwish", ["x"], ["hw"]),
        helper.make_node("Elu", ["x"], ["elu"], alpha=0.7),
        helper.make_node("Celu", ["x"], ["celu"], alpha=1.5),
        helper.make_node("Selu", ["x"], ["selu"]),
        helper.make_node("Softsign", ["x"], ["ss"]),
        helper.make_node("ThresholdedRelu", ["x"], ["tr"], alpha=0.5),
    ], [("x", [3, 5])], [out(n) for n in ["hs", "hw", "elu", "celu", "selu", "ss", "tr"]], opset=18)
    x = rand(3, 5) * 4
    x[0, 0] = 100.0  # exp overflows on the branch Where does not take
    check(model, {"x": x})


def test_variadic_logic_and_reduction_compositions():
    bshape = [("a", [2, 3, 4]), ("b", [3, 1]), ("c", [4])]
    model = make_model([
        helper.make_node("Sum", ["a", "b", "c"], ["sum"]),
        helper.make_node("Mean", ["a", "b"], ["mean"]),
        helper.make_node("Max", ["a", "b", "c"], ["max"]),
        helper.make_node("Min", ["a", "c"], ["min"]),
        helper.make_node("Greater", ["a", "b"], ["p"]),
        helper.make_node("Less", ["a", "c"], ["q"]),
        helper.make_node("Not", ["p"], ["not"]),
        helper.make_node("And", ["p", "q"], ["and"]),
        helper.make_node("Or", ["p", "q"], ["or"]),
        helper.make_node("Xor", ["p", "q"], ["xor"]),
        helper.make_node("ReduceSumSquare", ["a", "ax"], ["rss"]),
        helper.make_node("ReduceL1", ["a", "ax"], ["rl1"], keepdims=0),
        helper.make_node("ReduceL2", ["a"], ["rl2"]),
        helper.make_node("ReduceLogSum", ["ea", "ax"], ["rls"]),
        helper.make_node("Exp", ["a"], ["ea"]),
    ], bshape, [out(n) for n in ["sum", "mean", "max", "min", "rss", "rl1", "rl2", "rls"]] +
        [out(n, None, TensorProto.BOOL) for n in ["not", "and", "or", "xor"]],
        {"ax": np.array([0, -1], np.int64)}, opset=18)
    # topological order: Exp before ReduceLogSum
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes[:-2] + [nodes[-1], nodes[-2]])
    check(model, {"a": rand(2, 3, 4), "b": rand(3, 1), "c": rand(4)})


def test_castlike_takes_the_declared_type_of_its_target():
    graph = helper.make_graph(
        [helper.make_node("CastLike", ["x", "t"], ["y"])], "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("t", TensorProto.INT32, [1])],
        [helper.make_tensor_value_info("y", TensorProto.INT32, [3])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 19)])
    model.ir_version = 9
    feeds = {"x": np.array([1.7, -2.2, 3.0], np.float32), "t": np.array([0], np.int32)}
    ours, _ = run_hetnet(model, feeds)
    ref = run_ort(model, feeds)
    assert ours["y"].dtype == ref["y"].dtype == np.int32
    np.testing.assert_array_equal(ours["y"], ref["y"])


def test_dynamic_reshape_chain_as_pytorch_exports_it():
    # x.view(x.size(0), -1) with a symbolic batch: Shape -> Gather -> Unsqueeze -> Concat -> Reshape,
    # all at run time.
    model = make_model([
        helper.make_node("Shape", ["x"], ["s"]),
        helper.make_node("Gather", ["s", "zero"], ["n"], axis=0),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"]),
        helper.make_node("Concat", ["n1", "minus1"], ["shape"], axis=0),
        helper.make_node("Reshape", ["x", "shape"], ["flat"]),
        helper.make_node("Gemm", ["flat", "w", "b"], ["y"], transB=1),
    ], [("x", ["N", 2, 3, 3])], [out("y")],
        {"zero": np.array(0, np.int64), "axes0": np.array([0], np.int64), "minus1": np.array([-1], np.int64),
         "w": rand(5, 18), "b": rand(5)})
    info = check(model, {"x": rand(4, 2, 3, 3)})
    assert "Shape" in predict_ops(info) and "Gather" in predict_ops(info)
    check(model, {"x": rand(1, 2, 3, 3)})


def test_constant_subgraphs_fold_at_import():
    model = make_model([
        helper.make_node("Constant", [], ["e32"], value=numpy_helper.from_array(np.array([2, 3], np.int32))),
        helper.make_node("Cast", ["e32"], ["e64"], to=TensorProto.INT64),
        helper.make_node("Slice", ["x", "starts", "e64"], ["s"]),       # ends must be known at import
        helper.make_node("Transpose", ["w"], ["wt"], perm=[1, 0]),
        helper.make_node("MatMul", ["s", "wt"], ["y"]),
    ], [("x", [4, 5])], [out("y")], {"starts": np.array([0, 1], np.int64), "w": rand(3, 2)})
    info = check(model, {"x": rand(4, 5)})
    assert predict_ops(info) == ["Slice", "MatMul"]  # Cast and Transpose ran at import


def test_layer_and_rms_normalization_range_size():
    model = make_model([
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln"], epsilon=1e-3),
        helper.make_node("LayerNormalization", ["x", "g2"], ["ln2"], axis=1),
        helper.make_node("RMSNormalization", ["x", "g"], ["rms"]),
        helper.make_node("Range", ["r0", "r1", "r2"], ["rng"]),
        helper.make_node("Size", ["x"], ["size"]),
    ], [("x", [2, 3, 4])], [out("ln"), out("ln2"), out("rms"), out("rng", None, TensorProto.INT64),
                            out("size", None, TensorProto.INT64)],
        {"g": rand(4), "b": rand(4), "g2": rand(3, 4), "r0": np.array(1, np.int64), "r1": np.array(10, np.int64),
         "r2": np.array(3, np.int64)}, opset=23)
    model.ir_version = 10
    check(model, {"x": rand(2, 3, 4)})


def test_pad_and_resize_nearest():
    model = make_model([
        helper.make_node("Pad", ["x", "pads", "v"], ["pc"]),
        helper.make_node("Pad", ["x", "pads"], ["pr"], mode="reflect"),
        helper.make_node("Pad", ["x", "pads_hw", "", "axes"], ["pe"], mode="edge"),
        helper.make_node("Resize", ["x", "", "scales2"], ["r2"]),                      # half_pixel, 2x
        helper.make_node("Resize", ["x", "", "scales_f"], ["rf"], coordinate_transformation_mode="asymmetric",
                         nearest_mode="floor"),
        helper.make_node("Resize", ["x", "", "", "sizes"], ["rs"]),
    ], [("x", [1, 2, 3, 4])], [out(n) for n in ["pc", "pr", "pe", "r2", "rf", "rs"]],
        {"pads": np.array([0, 0, 1, 2, 0, 0, 2, 1], np.int64), "v": np.array(1.5, np.float32),
         "pads_hw": np.array([1, 0, 2, 2], np.int64), "axes": np.array([2, 3], np.int64),
         "scales2": np.array([1, 1, 2, 2], np.float32), "scales_f": np.array([1, 1, 1.5, 2.5], np.float32),
         "sizes": np.array([1, 2, 9, 8], np.int64)}, opset=18)
    check(model, {"x": rand(1, 2, 3, 4)})
    upsample = make_model([helper.make_node("Upsample", ["x", "s"], ["y"])], [("x", [1, 1, 2, 3])], [out("y")],
                          {"s": np.array([1, 1, 2, 3], np.float32)}, opset=9)
    check(upsample, {"x": rand(1, 1, 2, 3)})


def test_softplus_mish_swish_shrink():
    model = make_model([
        helper.make_node("Softplus", ["x"], ["sp"]),
        helper.make_node("Mish", ["x"], ["mish"]),
        helper.make_node("Swish", ["x"], ["sw"], alpha=0.7),
        helper.make_node("Shrink", ["x"], ["sh"], lambd=0.8, bias=0.3),
    ], [("x", [3, 5])], [out(n) for n in ["sp", "mish", "sw", "sh"]], opset=24)
    model.ir_version = 10
    check(model, {"x": rand(3, 5) * 3})


def test_instance_and_lp_normalization():
    model = make_model([
        helper.make_node("InstanceNormalization", ["x", "s", "b"], ["inorm"], epsilon=1e-3),
        helper.make_node("LpNormalization", ["x"], ["l2"]),
        helper.make_node("LpNormalization", ["x"], ["l1"], axis=1, p=1),
    ], [("x", [2, 3, 4, 5]), ("s", [3]), ("b", [3])], [out(n) for n in ["inorm", "l2", "l1"]], opset=18)
    check(model, {"x": rand(2, 3, 4, 5), "s": rand(3), "b": rand(3)})


def test_tile_constant_and_runtime_repeats_reduce_log_sum_exp():
    model = make_model([
        helper.make_node("Tile", ["x", "reps"], ["t"]),
        helper.make_node("Tile", ["x", "r"], ["t2"]),
        helper.make_node("ReduceLogSumExp", ["x", "ax"], ["lse"], keepdims=0),
    ], [("x", [2, 3])], [out("t"), out("t2"), out("lse")],
        {"reps": np.array([2, 3], np.int64), "ax": np.array([1], np.int64)}, opset=18)
    model.graph.input.append(helper.make_tensor_value_info("r", TensorProto.INT64, [2]))  # runtime repeats
    check(model, {"x": rand(2, 3), "r": np.array([3, 1], np.int64)})


def test_topk_hardmax_depth_space_shuffles():
    model = make_model([
        helper.make_node("TopK", ["x", "k"], ["tv", "ti"], axis=1),
        helper.make_node("TopK", ["x", "k"], ["sv", "si"], largest=0),
        helper.make_node("Hardmax", ["x"], ["hm"], axis=1),
        helper.make_node("DepthToSpace", ["x"], ["d2s"], blocksize=2),
        helper.make_node("DepthToSpace", ["x"], ["d2s_crd"], blocksize=2, mode="CRD"),
        helper.make_node("SpaceToDepth", ["x"], ["s2d"], blocksize=2),
    ], [("x", [2, 8, 4, 6])], [out("tv"), out("ti", None, TensorProto.INT64), out("sv"),
                               out("si", None, TensorProto.INT64), out("hm"), out("d2s"), out("d2s_crd"), out("s2d")],
        {"k": np.array([3], np.int64)}, opset=13)
    check(model, {"x": rand(2, 8, 4, 6)})


def test_trilu_upper_lower_with_runtime_k():
    model = make_model([
        helper.make_node("Trilu", ["x"], ["up"]),
        helper.make_node("Trilu", ["x", "k"], ["low"], upper=0),
    ], [("x", [2, 4, 5])], [out("up"), out("low")], opset=14)
    model.graph.input.append(helper.make_tensor_value_info("k", TensorProto.INT64, []))  # runtime k
    check(model, {"x": rand(2, 4, 5), "k": np.array(-1, np.int64)})


def test_clip_runtime_bounds_and_layer_norm_statistics():
    model = make_model([
        helper.make_node("Clip", ["x", "lo", "hi"], ["c"]),
        helper.make_node("Clip", ["x", "", "hi"], ["c_hi"]),
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["ln", "mean", "inv"], axis=-1),
    ], [("x", [3, 4]), ("lo", []), ("hi", [])], [out("c"), out("c_hi"), out("ln"), out("mean"), out("inv")],
        {"g": rand(4), "b": rand(4)}, opset=17)
    check(model, {"x": rand(3, 4), "lo": np.array(-0.5, np.float32), "hi": np.array(0.4, np.float32)})


def test_pow_with_runtime_exponent():
    model = make_model([helper.make_node("Pow", ["x", "y"], ["p"])], [("x", [2, 3]), ("y", [3])], [out("p")], opset=15)
    check(model, {"x": np.abs(rand(2, 3)) + 0.5, "y": rand(3)})
    # Negative bases: (-2)^3 = -8, (-2)^2 = 4, (-2)^0.5 = NaN; 0^0 = 1; 0^-1 = inf.
    x = np.array([[-2.0, -2.0, -2.0], [0.0, 0.0, -1.5]], np.float32)
    y = np.array([3.0, 2.0, 0.5], np.float32)
    check(model, {"x": x, "y": y})
    check(model, {"x": np.array([[0.0, -3.0, 0.0]] * 2, np.float32), "y": np.array([0.0, -1.0, -1.0], np.float32)})


def test_reduce_max_min_by_axes():
    model = make_model([
        helper.make_node("ReduceMax", ["x"], ["mx"], axes=[0, 2]),
        helper.make_node("ReduceMin", ["x"], ["mn"], axes=[-1], keepdims=0),
        helper.make_node("ReduceMax", ["x"], ["all"], keepdims=0),
    ], [("x", [2, 3, 4])], [out("mx"), out("mn"), out("all")], opset=13)
    check(model, {"x": rand(2, 3, 4)})


def test_mod_floor_and_fmod():
    model = make_model([
        helper.make_node("Mod", ["x", "y"], ["m"], fmod=1),
    ], [("x", [2, 3]), ("y", [3])], [out("m")], opset=13)
    check(model, {"x": rand(2, 3) * 10, "y": np.array([3.0, -2.5, 1.5], np.float32)})
    ints = make_model([helper.make_node("Mod", ["a", "b"], ["m"])], [], [out("m", None, TensorProto.INT64)], opset=13)
    ints.graph.input.extend([helper.make_tensor_value_info(n, TensorProto.INT64, [6]) for n in "ab"])
    check(ints, {"a": np.array([-4, 7, 5, 4, -7, 8], np.int64), "b": np.array([2, -3, 8, -2, 3, 5], np.int64)})


def test_group_normalization_per_channel_scale():
    model = make_model([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-3)],
                       [("x", [2, 4, 3, 5]), ("s", [4]), ("b", [4])], [out("y")], opset=21)
    check(model, {"x": rand(2, 4, 3, 5), "s": rand(4), "b": rand(4)})


def test_erf_and_gelu():
    model = make_model([
        helper.make_node("Erf", ["x"], ["erf"]),
        helper.make_node("Gelu", ["x"], ["gelu"]),
        helper.make_node("Gelu", ["x"], ["gelu_tanh"], approximate="tanh"),
    ], [("x", [4, 5])], [out("erf"), out("gelu"), out("gelu_tanh")], opset=20)
    check(model, {"x": rand(4, 5) * 2}, atol=1e-6)
