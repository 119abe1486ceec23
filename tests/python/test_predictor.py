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


def test_predictor_reads_inputs_in_place_and_hands_outputs_over(ws):
    """Inputs are read where they lie (no copy) and never written, even by a net that writes its
    input blob; each output is an array over memory of its own, which the next run does not touch."""
    init, predict = _nets()
    p = workspace.Predictor(init, predict)
    x = np.array([1.0, -1.0, 3.0], np.float32)
    (y1,) = p.run([x])
    assert not y1.flags["OWNDATA"]  # over the output tensor's memory, handed over
    (y2,) = p.run({"x": np.array([4.0, 4.0, 4.0], np.float32)})
    np.testing.assert_array_equal(y1, [2.0, 0.0, 6.0])  # the second run wrote elsewhere
    np.testing.assert_array_equal(y2, [8.0, 8.0, 8.0])
    y2[:] = 0  # the caller owns it: the next run is unaffected
    np.testing.assert_array_equal(p.run([x])[0], [2.0, 0.0, 6.0])

    writes = core.Net("writes_input")  # Relu in place on the input blob
    writes.Relu("x", "x")
    writes.Mul(["x", "w"], "y")
    writes.AddExternalOutput(core.BlobReference("y"))
    q = workspace.Predictor(init, writes)
    x = np.array([-1.0, 2.0, -3.0], np.float32)
    np.testing.assert_array_equal(q.run([x])[0], [0.0, 4.0, 0.0])
    np.testing.assert_array_equal(x, [-1.0, 2.0, -3.0])  # the caller's array is not written

    base = np.arange(13, dtype=np.float32)
    for arr in (base[1:4], base[::4][:3].copy(order="C"), np.asfortranarray(base[:3])):  # 4-byte aligned, copies
        np.testing.assert_array_equal(p.run([arr])[0], np.maximum(arr, 0) * 2)
    del x, base  # inputs the predictor read stay valid for as long as it reads them
    np.testing.assert_array_equal(p.run([np.ones(3, np.float32)])[0], [2.0, 2.0, 2.0])
