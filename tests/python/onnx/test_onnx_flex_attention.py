"""ai.onnx.preview FlexAttention beyond ONNX's own cases: a score_mod reading a graph initializer and
a prob_mod together, against onnx's reference evaluator; refusals (GQA or float64 with modifiers, a
modifier with two outputs) name the node."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import hetnet.onnx.backend as backend


def _model(q, k, v, score_mod=None, prob_mod=None, dtype=TensorProto.FLOAT, **attrs):
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **attrs)
    if score_mod is not None:
        node.attribute.append(helper.make_attribute("score_mod", score_mod))
    if prob_mod is not None:
        node.attribute.append(helper.make_attribute("prob_mod", prob_mod))
    vi = helper.make_tensor_value_info
    g = helper.make_graph([node], "flex", [vi("Q", dtype, q), vi("K", dtype, k), vi("V", dtype, v)],
                          [vi("Y", dtype, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 26), helper.make_opsetid("ai.onnx.preview", 1)])


def _unary_graph(op, name, const):
    vi = helper.make_tensor_value_info
    c = numpy_helper.from_array(np.array(const, np.float32), name + "_c")
    return helper.make_graph([helper.make_node(op, ["s", name + "_c"], ["s_out"])], name, [vi("s", TensorProto.FLOAT, None)],
                             [vi("s_out", TensorProto.FLOAT, None)], [c])


def test_score_and_prob_mod_against_reference():
    rng = np.random.RandomState(0)
    q, k, v = (rng.randn(2, 3, 5, 8).astype(np.float32), rng.randn(2, 3, 7, 8).astype(np.float32),
               rng.randn(2, 3, 7, 4).astype(np.float32))
    m = _model(q.shape, k.shape, v.shape, score_mod=_unary_graph("Add", "bias", 0.25),
               prob_mod=_unary_graph("Mul", "half", 0.5), scale=0.3)
    want = ReferenceEvaluator(m).run(None, {"Q": q, "K": k, "V": v})[0]
    got = backend.prepare(m).run([q, k, v])[0]
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("shapes,dtype,message", [
    (((1, 4, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)), TensorProto.FLOAT, "no GQA"),
    (((1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8)), TensorProto.DOUBLE, "float32 inputs only"),
])
def test_refusals_with_modifiers(shapes, dtype, message):
    m = _model(*shapes, score_mod=_unary_graph("Add", "bias", 1.0), dtype=dtype)
    with pytest.raises(Exception) as e:
        backend.prepare(m)
    assert message in str(e.value) and "FlexAttention" in str(e.value)


def test_modifier_with_two_outputs_refused():
    vi = helper.make_tensor_value_info
    two = helper.make_graph([helper.make_node("Identity", ["s"], ["a"]), helper.make_node("Identity", ["s"], ["b"])],
                            "two", [vi("s", TensorProto.FLOAT, None)],
                            [vi("a", TensorProto.FLOAT, None), vi("b", TensorProto.FLOAT, None)])
    m = _model((1, 2, 3, 8), (1, 2, 5, 8), (1, 2, 5, 8), score_mod=two)
    with pytest.raises(Exception) as e:
        backend.prepare(m)
    assert "expected one of each" in str(e.value)
