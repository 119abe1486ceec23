"""DNNL Conv / FC weights prepared once and re-prepared when written from Python or by a net
(issue 16 item 2). Conv and FC run the DNNL engine by default on CPU when hetnet is built with
oneDNN (engine "DNNL" asked for explicitly here; without oneDNN it resolves to the portable
kernels and the same checks hold). Expected outputs are numpy float64 references."""
import numpy as np

from hetnet import core


def _conv_ref(x, w, b, pad):
    x = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pad, pad), (pad, pad)))
    n, c, h, wd = x.shape
    m, _, kh, kw = w.shape
    oh, ow = h - kh + 1, wd - kw + 1
    y = np.zeros((n, m, oh, ow))
    for i in range(kh):
        for j in range(kw):
            y += np.einsum("nchw,mc->nmhw", x[:, :, i:i + oh, j:j + ow], w[:, :, i, j].astype(np.float64))
    return y + b.astype(np.float64)[None, :, None, None]


def _rand(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_conv_sees_a_same_size_filter_fed_between_runs(ws):
    rng = np.random.default_rng(0)
    x, w1, w2, b = _rand(rng, 2, 3, 7, 7), _rand(rng, 8, 3, 3, 3), _rand(rng, 8, 3, 3, 3), _rand(rng, 8)
    net = core.Net("conv")
    net.Conv(["X", "W", "b"], "Y", kernel=3, pad=1, engine="DNNL")
    ws.FeedBlob("X", x)
    ws.FeedBlob("b", b)
    ws.FeedBlob("W", w1)
    ws.CreateNet(net)
    for _ in range(2):  # the second run reuses the prepared filter
        ws.RunNet(net.Name())
        np.testing.assert_allclose(ws.FetchBlob("Y"), _conv_ref(x, w1, b, 1), rtol=1e-4, atol=1e-4)
    ws.FeedBlob("W", w2)  # same shape and size
    ws.RunNet(net.Name())
    np.testing.assert_allclose(ws.FetchBlob("Y"), _conv_ref(x, w2, b, 1), rtol=1e-4, atol=1e-4)


def test_conv_sees_a_filter_written_in_place_by_another_net(ws):
    rng = np.random.default_rng(1)
    x, w, b = _rand(rng, 1, 4, 6, 6), _rand(rng, 5, 4, 3, 3), _rand(rng, 5)
    conv = core.Net("conv")
    conv.Conv(["X", "W", "b"], "Y", kernel=3, pad=1, engine="DNNL")
    update = core.Net("update")  # an in-place update, as an optimizer's
    update.Mul(["W", "two"], "W")
    for name, value in (("X", x), ("W", w), ("b", b), ("two", np.full(w.shape, 2.0, np.float32))):
        ws.FeedBlob(name, value)
    ws.CreateNet(conv)
    ws.CreateNet(update)
    ws.RunNet(conv.Name())
    np.testing.assert_allclose(ws.FetchBlob("Y"), _conv_ref(x, w, b, 1), rtol=1e-4, atol=1e-4)
    ws.RunNet(update.Name())
    ws.RunNet(conv.Name())
    np.testing.assert_allclose(ws.FetchBlob("Y"), _conv_ref(x, 2 * w, b, 1), rtol=1e-4, atol=1e-4)


def test_fc_sees_a_same_size_weight_fed_between_runs_and_fuses_relu(ws):
    rng = np.random.default_rng(2)
    x, w1, w2, b = _rand(rng, 6, 10), _rand(rng, 7, 10), _rand(rng, 7, 10), _rand(rng, 7)
    net = core.Net("fc")
    net.FC(["X", "W", "b"], "Y", engine="DNNL")
    net.FC(["X", "W", "b"], "Z", engine="DNNL", fused_activation="Relu")
    for name, value in (("X", x), ("W", w1), ("b", b)):
        ws.FeedBlob(name, value)
    ws.CreateNet(net)
    for w in (w1, w1, w2):
        ws.FeedBlob("W", w)
        ws.RunNet(net.Name())
        ref = x.astype(np.float64) @ w.astype(np.float64).T + b
        np.testing.assert_allclose(ws.FetchBlob("Y"), ref, rtol=1e-4, atol=1e-4)
        np.testing.assert_allclose(ws.FetchBlob("Z"), np.maximum(ref, 0), rtol=1e-4, atol=1e-4)
    assert (ref < 0).any()  # the Relu case clamps something
