"""ONNX's own backend tests (onnx.backend.test.BackendTest) over hetnet's ONNX backend.

Cases: every node case that PyPI onnx defines, and the simple, PyTorch-converted, PyTorch-operator
and real-model cases its wheel ships on disk (the real models are onnx's "light" copies, local
files: nothing is downloaded; a real case that would need a download is skipped, saying so).
Each case runs on CPU and on CUDA; CUDA cases skip without a GPU.

Cases hetnet fails today are listed, with their reasons, in expected_failures.txt and run as
pytest xfails with that reason: any unlisted failure (a regression) fails the suite. A listed
case that passes is reported as XPASS (pytest -rX) without failing the suite, so that converters
landing between list updates do not turn it red; HETNET_ONNX_STRICT_XFAIL=1 makes XPASS fail too
(then update the list: python3 tools/onnx_coverage.py --update-expected-failures).
HETNET_ONNX_CONFORMANCE_RAW=1 ignores the list (what the coverage tool runs, to see the real
outcome of every case).
"""
import os
import re
import sys
import tempfile
import unittest
import warnings

import onnx.backend.test
import pytest
from onnx.backend.test.loader import load_model_tests

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import expected_failures  # noqa: E402

from hetnet.onnx.backend import HetnetBackend  # noqa: E402

# The real-model cases write generated test data under $ONNX_HOME/models; keep it out of $HOME.
os.environ.setdefault("ONNX_HOME", os.path.join(tempfile.gettempdir(), "hetnet_onnx_home"))

RAW = os.environ.get("HETNET_ONNX_CONFORMANCE_RAW") == "1"
STRICT = os.environ.get("HETNET_ONNX_STRICT_XFAIL") == "1"
EXPECTED_FAILURES = [] if RAW else expected_failures.Load()


def _DownloadNeeded():
    """{real-model case name: url} for the cases whose model is neither shipped nor cached."""
    models_dir = os.environ.get("ONNX_MODELS", os.path.join(os.environ["ONNX_HOME"], "models"))
    needed = {}
    for case in load_model_tests(kind="real"):
        url = case.url or ""
        local = case.model_dir is not None or url.startswith("onnx/backend/test/data/light/")
        if not local and not os.path.exists(os.path.join(models_dir, case.model_name, "model.onnx")):
            needed[case.name] = url
    return needed


class _BackendTest(onnx.backend.test.BackendTest):
    """onnx's runner, except that a sequence output's elements are compared one by one as outputs:
    onnx's own recursion passes each element where it expects a list of outputs, which works for an
    element of rank >= 1 by iterating its rows, and raises TypeError (len() of a 0-d array) for a
    sequence of 0-d tensors (test_loop16_seq_none), whatever the backend returns."""

    @classmethod
    def assert_similar_outputs(cls, ref_outputs, outputs, rtol, atol, model_dir=None):
        if len(outputs) == len(ref_outputs) and any(isinstance(o, (list, tuple)) for o in outputs):
            for ref, out in zip(ref_outputs, outputs):
                if isinstance(out, (list, tuple)) and isinstance(ref, (list, tuple)):
                    assert len(out) == len(ref), "a sequence output has %d elements, expected %d" % (len(out), len(ref))
                    for r, o in zip(ref, out):
                        super().assert_similar_outputs([r], [o], rtol, atol, model_dir=model_dir)
                else:
                    super().assert_similar_outputs([ref], [out], rtol, atol, model_dir=model_dir)
            return
        super().assert_similar_outputs(ref_outputs, outputs, rtol, atol, model_dir=model_dir)


with warnings.catch_warnings():  # onnx's case generators overflow/divide by zero on purpose
    warnings.simplefilter("ignore", RuntimeWarning)
    backend_test = _BackendTest(HetnetBackend, __name__)
TEST_CASES = backend_test.test_cases


def _MarkExpectedFailures(test_cases, entries):
    """Marks each listed case xfail with its reason (exact-name entries by lookup: the list has
    thousands; other regexes by search)."""
    exact, searched = {}, []
    for pattern, reason in entries:
        names = expected_failures.ExactNames(pattern)
        if names is not None:
            for name in names:
                exact.setdefault(name, reason)
        else:
            searched.append((re.compile(pattern), reason))
    for case in test_cases.values():
        for name in [n for n in vars(case) if n.startswith("test_")]:
            reason = exact.get(name) or next((r for p, r in searched if p.search(name)), None)
            if reason is not None:
                setattr(case, name, pytest.mark.xfail(reason=reason, strict=STRICT)(getattr(case, name)))


_MarkExpectedFailures(TEST_CASES, EXPECTED_FAILURES)

for _name, _url in _DownloadNeeded().items():
    for _device in ("cpu", "cuda"):
        setattr(TEST_CASES["OnnxBackendRealModelTest"], "%s_%s" % (_name, _device),
                unittest.skip("real model needs a network download from %s (put it under "
                              "$ONNX_MODELS to run it)" % _url)(lambda self: None))

globals().update(TEST_CASES)


def AllCaseNames():
    return sorted(name for case in TEST_CASES.values() for name in dir(case) if name.startswith("test_"))


def test_expected_failures_list_is_current():
    """Every entry names at least one case (a stale entry would hide nothing and rot)."""
    names = AllCaseNames()
    assert len(names) > 3000, "BackendTest collected only %d cases" % len(names)
    stale = [p for p, _ in expected_failures.Load() if not any(re.search(p, n) for n in names)]
    assert not stale, "expected_failures.txt entries that match no case: %s" % stale
