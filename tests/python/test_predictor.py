"""workspace.Predictor over hetnet::Predictor."""
import threading

import numpy as np
import pytest

from hetnet import _C, core, workspace

pytestmark = pytest.mark.skipif(not _C.has_predictor, reason="waiting for core/predictor.h")


def _nets():
    init = core.Net("pred_init")
    init.ConstantFill([], "w", shape=[3], value=2.0)
    predict = core.Net("pred")
    predict.Mul(["x", "w"], "xw")
    predict.Relu("xw", "y")
    predict.AddExternalOutput(core.BlobReference("y"))
    return init, predict


def test_predictor_runs_list_and_dict(ws):
    init, predict = _nets()
    p = workspace.Predictor(init, predict)
    assert p.input_names == ["x"] and p.output_names == ["y"]
    (y,) = p.run([np.array([1.0, -1.0, 3.0], np.float32)])
    np.testing.assert_array_equal(y, [2.0, 0.0, 6.0])
    (y,) = p.run({"x": np.array([0.5, 0.5, -2.0], np.float32)})
    np.testing.assert_array_equal(y, [1.0, 1.0, 0.0])
    assert not ws.HasBlob("w")  # the weights are the predictor's own


def test_predictor_threads_and_errors(ws):
    init, predict = _nets()
    p = workspace.Predictor(init, predict)
    results = []

    def worker(k):
        results.append(p.run([np.full(3, float(k), np.float32)])[0][0])

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(results) == [2.0 * k for k in range(8)]
    import hetnet
    with pytest.raises(hetnet.HetnetError):
        p.run([])
