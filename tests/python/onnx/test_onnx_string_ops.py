"""StringConcat / StringSplit / StringNormalizer / RegexFullMatch (operators/onnx_string_ops) on inputs
the conformance cases do not try (multi-character delimiters, maxsplit with whitespace runs,
broadcasting of both sides, case-insensitive stopwords, other patterns). Expected values come from
Python's str.split and re.fullmatch, onnxruntime (StringConcat) and ONNX's reference evaluator
(StringNormalizer: onnxruntime's needs a locale this machine lacks); bad dtypes and patterns give
hetnet errors."""
import numpy as np
import onnx
import onnx.helper as oh
import onnx.reference
import onnxruntime
import pytest
from onnx import TensorProto

import hetnet
from hetnet.onnx.backend import HetnetBackend


def _Model(node, inputs, opset=20):
    ins = [oh.make_tensor_value_info(n, TensorProto.STRING if a.dtype == object else TensorProto.INT64, list(a.shape))
           for n, a in inputs.items()]
    outs = [onnx.ValueInfoProto(name=o) for o in node.output]
    model = oh.make_model(oh.make_graph([node], "g", ins, outs), opset_imports=[oh.make_opsetid("", opset)])
    model.ir_version = 8
    return model


def _Ort(model, inputs):
    sess = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, inputs)


def test_string_concat_broadcasts_both_sides_like_onnxruntime():
    x = np.array([["a", "bc"], ["", "d"], ["e", "f"]], dtype=object)
    y = np.array([["-1"], ["-2"], ["-3"]], dtype=object)
    model = _Model(oh.make_node("StringConcat", ["x", "y"], ["z"]), {"x": x, "y": y})
    (got,) = HetnetBackend.run_model(model, [x, y])
    (want,) = _Ort(model, {"x": x, "y": y})
    assert got.shape == want.shape and got.tolist() == want.tolist()


@pytest.mark.parametrize("delimiter,maxsplit", [(None, None), (None, 1), ("ab", None), ("ab", 1), (",", 0)])
def test_string_split_matches_python(delimiter, maxsplit):
    x = np.array([["  lead and  trail  ", "ab"], ["xabyabab", "a,b,,c"]], dtype=object)
    attrs = {}
    if delimiter is not None:
        attrs["delimiter"] = delimiter
    if maxsplit is not None:
        attrs["maxsplit"] = maxsplit
    model = _Model(oh.make_node("StringSplit", ["x"], ["y", "n"], **attrs), {"x": x})
    y, n = HetnetBackend.run_model(model, [x])
    parts = [[s.split(delimiter, -1 if maxsplit is None else maxsplit) for s in row] for row in x.tolist()]
    width = max(len(p) for row in parts for p in row)
    assert y.shape == (2, 2, width)
    assert n.tolist() == [[len(p) for p in row] for row in parts]
    assert y.tolist() == [[p + [""] * (width - len(p)) for p in row] for row in parts]


@pytest.mark.parametrize("action,sensitive", [("LOWER", 0), ("UPPER", 0), ("NONE", 1), ("LOWER", 1)])
def test_string_normalizer_matches_onnxruntime(action, sensitive):
    x = np.array(["Monday and", "tuesday", "MONDAY", "wednesday Monday"], dtype=object)
    node = oh.make_node("StringNormalizer", ["x"], ["y"], case_change_action=action, is_case_sensitive=sensitive,
                        stopwords=["monday"])
    model = _Model(node, {"x": x}, opset=18)
    (got,) = HetnetBackend.run_model(model, [x])
    (want,) = onnx.reference.ReferenceEvaluator(model).run(None, {"x": x})
    assert got.tolist() == want.tolist()


def test_string_ops_refuse_numbers():
    x = np.array([1, 2], dtype=np.int64)
    model = _Model(oh.make_node("StringSplit", ["x"], ["y", "n"]), {"x": x})
    with pytest.raises(hetnet.HetnetError, match="StringSplit.*string tensor"):
        HetnetBackend.run_model(model, [x])


@pytest.mark.parametrize("pattern", [r"[a-c]+\d{2,3}", r"(foo|bar)\b.*", r"\w+@\w+\.(com|org)", r""])
def test_regex_full_match_matches_python_re(pattern):
    import re
    x = np.array([["abc12", "abc1234", "foo bar"], ["a@b.org", "", "bar"]], dtype=object)
    model = _Model(oh.make_node("RegexFullMatch", ["x"], ["y"], pattern=pattern), {"x": x})
    (got,) = HetnetBackend.run_model(model, [x])
    assert got.dtype == np.bool_
    assert got.tolist() == [[re.fullmatch(pattern, s) is not None for s in row] for row in x.tolist()]


def test_regex_full_match_refuses_a_bad_pattern():
    x = np.array(["a"], dtype=object)
    model = _Model(oh.make_node("RegexFullMatch", ["x"], ["y"], pattern="(unclosed"), {"x": x})
    with pytest.raises(hetnet.HetnetError, match="RegexFullMatch.*does not compile"):
        HetnetBackend.run_model(model, [x])
