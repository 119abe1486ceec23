"""ai.onnx.ml LabelEncoder (every key/value type, defaults, NaN keys, repeated keys), Binarizer,
TreeEnsemble (every aggregate, cycles and bad ids refused) and ArrayFeatureExtractor against onnx's reference evaluator; refusals name the op."""
import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

import hetnet.onnx.backend as backend


def _model(op, inputs, out_type, **attrs):
    node = helper.make_node(op, [name for name, _, _ in inputs], ["y"], domain="ai.onnx.ml", **attrs)
    vi = helper.make_tensor_value_info
    g = helper.make_graph([node], "ml", [vi(n, t, s) for n, t, s in inputs], [vi("y", out_type, None)])
    return helper.make_model(g, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", 4)])


CASES = [
    (TensorProto.INT64, np.array([3, 7, 9, 3], np.int64), TensorProto.STRING,
     dict(keys_int64s=[3, 9], values_strings=["three", "nine"], default_string="?")),
    (TensorProto.STRING, np.array(["b", "a", "z"], dtype=object), TensorProto.INT64,
     dict(keys_strings=["a", "b", "a"], values_int64s=[1, 2, 3])),  # a repeated key: the last wins
    (TensorProto.FLOAT, np.array([1.0, 4.0], np.float32), TensorProto.STRING,
     dict(keys_floats=[1.0], values_strings=["one"])),  # the default default: "_Unused"
]


@pytest.mark.parametrize("in_type,x,out_type,attrs", CASES)
def test_label_encoder_against_reference(in_type, x, out_type, attrs):
    m = _model("LabelEncoder", [("x", in_type, list(x.shape))], out_type, **attrs)
    want = ReferenceEvaluator(m).run(None, {"x": x})[0]
    got = backend.prepare(m).run([x])[0]
    np.testing.assert_array_equal(got, want)


def test_label_encoder_nan_key_matches_any_nan():
    # ONNX's rule ("Float keys with value 'NaN' match any input 'NaN' value"); the reference evaluator's
    # dict lookup does not match NaN, so the expected values are written from the rule.
    x = np.array([0.5, np.nan, 2.0, -1.0, -np.nan], np.float32)
    m = _model("LabelEncoder", [("x", TensorProto.FLOAT, [5])], TensorProto.FLOAT, keys_floats=[0.5, float("nan"), 2.0],
               values_floats=[10.0, 20.0, 30.0], default_float=-5.0)
    np.testing.assert_array_equal(backend.prepare(m).run([x])[0], np.array([10, 20, 30, -5, 20], np.float32))


def test_array_feature_extractor_against_reference():
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    idx = np.array([3, 0, 3], np.int64)
    m = _model("ArrayFeatureExtractor", [("x", TensorProto.FLOAT, [2, 3, 4]), ("i", TensorProto.INT64, [3])],
               TensorProto.FLOAT)
    np.testing.assert_array_equal(backend.prepare(m).run([x, idx])[0],
                                  ReferenceEvaluator(m).run(None, {"x": x, "i": idx})[0])


@pytest.mark.parametrize("np_dtype,onnx_type", [(np.float32, TensorProto.FLOAT), (np.float64, TensorProto.DOUBLE)])
def test_binarizer_against_reference(np_dtype, onnx_type):
    x = np.array([[-1.0, 0.5, 0.5000001], [2.0, np.nan, 0.4]], np_dtype)
    m = _model("Binarizer", [("x", onnx_type, [2, 3])], onnx_type, threshold=0.5)
    got = backend.prepare(m).run([x])[0]
    assert got.dtype == np_dtype
    np.testing.assert_array_equal(got, ReferenceEvaluator(m).run(None, {"x": x})[0])


def _tree_model(**attrs):
    base = dict(aggregate_function=1, n_targets=2, leaf_targetids=[0, 1, 0], tree_roots=[0],
                nodes_featureids=[0, 1], nodes_truenodeids=[1, 0], nodes_trueleafs=[0, 1],
                nodes_falsenodeids=[2, 2], nodes_falseleafs=[1, 1],
                nodes_modes=numpy_helper.from_array(np.array([0, 3], np.uint8)),
                nodes_splits=numpy_helper.from_array(np.array([0.5, -1.0], np.float64)),
                leaf_weights=numpy_helper.from_array(np.array([1.5, -2.0, 4.0], np.float64)))
    base.update(attrs)
    return _model("TreeEnsemble", [("x", TensorProto.DOUBLE, [5, 2])], TensorProto.DOUBLE, **base)


@pytest.mark.parametrize("aggregate", [0, 1, 2, 3])
def test_tree_ensemble_against_reference(aggregate):
    x = np.array([[0.2, 0.0], [0.7, 3.0], [0.5, -2.0], [-1.0, -0.5], [0.9, -1.0]], np.float64)
    m = _tree_model(aggregate_function=aggregate, tree_roots=[0, 1])
    np.testing.assert_allclose(backend.prepare(m).run([x])[0], ReferenceEvaluator(m).run(None, {"x": x})[0],
                               rtol=1e-12)


def test_tree_ensemble_cycle_and_bad_ids_are_errors():
    x = np.zeros((5, 2), np.float64)
    # node 1's true branch leads back to node 0 (not a leaf), whose true branch is node 1: a cycle
    m = _tree_model(nodes_trueleafs=[0, 0], nodes_truenodeids=[1, 0])
    with pytest.raises(Exception) as e:
        backend.prepare(m).run([x])
    assert "has a cycle" in str(e.value) and "OnnxTreeEnsemble" in str(e.value)
    m = _tree_model(nodes_featureids=[0, 7])
    with pytest.raises(Exception) as e:
        backend.prepare(m).run([x])
    assert "feature id 7" in str(e.value)


def test_label_encoder_refusals():
    m = _model("LabelEncoder", [("x", TensorProto.INT64, [2])], TensorProto.INT64, keys_int64s=[1, 2],
               values_int64s=[5])
    with pytest.raises(Exception) as e:
        backend.prepare(m).run([np.array([1, 2], np.int64)])
    assert "2 keys but 1 values" in str(e.value)
    m = _model("LabelEncoder", [("x", TensorProto.INT64, [2])], TensorProto.INT64, keys_strings=["a"],
               values_int64s=[5])
    with pytest.raises(Exception) as e:
        backend.prepare(m).run([np.array([1, 2], np.int64)])
    assert "OnnxLabelEncoder" in str(e.value) and "the keys are string" in str(e.value)
