"""Multi-batch (synchronized) SpatialBN and its helper ops, against numpy references written from
the formulas of Caffe2's combine_spatial_bn (spec distributed-facts.md 4.2):

  forward:  S = sum_d sum x, Q = sum_d sum x^2, M = num_batches * N * HxW (or the count input 7)
            mean = S / M, var = Q / M - mean^2, rstd = 1 / sqrt(var + eps),
            running = momentum * running + (1 - momentum) * batch (biased var)
  backward: G = sum_d sum dY (x - mean) rstd, B = sum_d sum dY; dscale = G / n, dbias = B / n,
            dX = alpha dY + beta x + gamma, alpha = scale rstd,
            beta = -alpha (G / n) rstd / (N HxW), gamma = alpha (mean (G / n) rstd - B / n) / (N HxW)

CPU always; the same tests on CUDA:0 where a device exists (the "gpu" ids; skipped otherwise)."""
import numpy as np
import pytest

from hetnet import core, workspace
from hetnet.gradient_checker import GradientChecker
from hetnet.proto import caffe2_pb2

NO_GPU = workspace.NumCudaDevices() == 0
DEVICES = [pytest.param(caffe2_pb2.CPU, id="cpu"),
           pytest.param(caffe2_pb2.CUDA, id="gpu",
                        marks=pytest.mark.skipif(NO_GPU, reason="no CUDA device (NumCudaDevices() == 0)"))]
SHAPES = [(4, 3), (2, 3, 5), (2, 3, 4, 5), (2, 3, 2, 3, 2)]  # 2-D to 5-D, channel count 3 (NCHW)
EPS = 1e-5


@pytest.fixture(autouse=True)
def clean_workspace():
    workspace.ResetWorkspace()
    yield
    workspace.ResetWorkspace()


def run(op_type, inputs, outputs, device=caffe2_pb2.CPU, **args):
    """Feeds inputs (name -> array, or name only to reuse a blob) and runs one op; returns outputs."""
    opt = core.DeviceOption(device, 0)
    names = []
    for item in inputs:
        if isinstance(item, tuple):
            workspace.FeedBlob(item[0], item[1], opt)
            item = item[0]
        names.append(item)
    workspace.RunOperatorOnce(core.CreateOperator(op_type, names, outputs, device_option=opt, **args))
    return [workspace.FetchBlob(o) for o in outputs]


def channel_axis(ndim, order):
    return 1 if order == "NCHW" else ndim - 1


def other_axes(ndim, order):
    return tuple(a for a in range(ndim) if a != channel_axis(ndim, order))


def per_channel(v, ndim, order):
    """[C] reshaped to broadcast against an input of ndim dims in `order`."""
    shape = [1] * ndim
    shape[channel_axis(ndim, order)] = -1
    return np.asarray(v, np.float64).reshape(shape)


def nhwc(shape):
    return (shape[0],) + tuple(shape[2:]) + (shape[1],)


def to_nhwc(x):
    return np.moveaxis(x, 1, -1).copy()


def rand(shape, seed, lo=-2.0, hi=2.0):
    return np.random.RandomState(seed).uniform(lo, hi, shape).astype(np.float32)


def bn_params(C, seed):
    r = np.random.RandomState(seed)
    return (r.uniform(0.5, 1.5, C).astype(np.float32), r.uniform(-0.5, 0.5, C).astype(np.float32),
            r.uniform(-0.5, 0.5, C).astype(np.float32), r.uniform(0.5, 1.5, C).astype(np.float32))


# ---- numpy references (float64) ----

def ref_channel_stats(x, order):
    x64 = x.astype(np.float64)
    axes = other_axes(x.ndim, order)
    return x64.sum(axis=axes), (x64 * x64).sum(axis=axes)


def ref_backprop_stats(x, mean, rstd, dy, order):
    nd, axes = x.ndim, other_axes(x.ndim, order)
    xhat = (x.astype(np.float64) - per_channel(mean, nd, order)) * per_channel(rstd, nd, order)
    return (dy * xhat).sum(axis=axes), dy.astype(np.float64).sum(axis=axes)


def ref_forward(xs, S, Q, M, scale, bias, rm, rv, momentum, order):
    mean = S / M
    var = Q / M - mean * mean
    rstd = 1.0 / np.sqrt(var + EPS)
    ys = [per_channel(scale * rstd, x.ndim, order) * (x - per_channel(mean, x.ndim, order)) +
          per_channel(bias, x.ndim, order) for x in xs]
    return ys, momentum * rm + (1 - momentum) * mean, momentum * rv + (1 - momentum) * var, mean, rstd


def ref_grad_caffe2(x, scale, dy, mean, rstd, G, B, num_batches, order):
    """Caffe2's ComputeMultiBatchScaleBiasGradientsAndFusedParams: equal batches on every device."""
    nd = x.ndim
    NHxW = x.size // x.shape[channel_axis(nd, order)]
    dscale, dbias = G / num_batches, B / num_batches
    alpha = scale * rstd
    beta = -alpha * dscale * rstd / NHxW
    gamma = alpha * (mean * dscale * rstd - dbias) / NHxW
    dx = per_channel(alpha, nd, order) * dy + per_channel(beta, nd, order) * x + per_channel(gamma, nd, order)
    return dx, dscale, dbias


def ref_grad_count(x, scale, dy, mean, rstd, G, B, M, num_batches, order):
    """dX = scale rstd (dY - (B + (x - mean) rstd G) / M) with any per-device batch sizes."""
    nd = x.ndim
    xhat = (x - per_channel(mean, nd, order)) * per_channel(rstd, nd, order)
    dx = per_channel(scale * rstd, nd, order) * (dy - (per_channel(B, nd, order) + xhat * per_channel(G, nd, order)) / M)
    return dx, G / num_batches, B / num_batches


def close(got, want, tol=1e-4):
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol)


# ---- ChannelStats / ChannelBackpropStats ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", SHAPES)
@pytest.mark.parametrize("dtype", ["float", "double"])
def test_channel_stats(device, order, shape, dtype):
    x = rand(shape if order == "NCHW" else nhwc(shape), 1)
    s, q = run("ChannelStats", [("x", x)], ["s", "q"], device, order=order, dtype=dtype)
    assert s.dtype == (np.float64 if dtype == "double" else np.float32) and s.shape == (3,) and q.dtype == s.dtype
    want_s, want_q = ref_channel_stats(x, order)
    close(s, want_s, 1e-5)
    close(q, want_q, 1e-5)


def test_channel_stats_default_is_nchw_float():
    x = rand((2, 4, 3), 2)
    s, q = run("ChannelStats", [("x", x)], ["s", "q"])
    assert s.dtype == np.float32 and s.shape == (4,)
    close(s, x.astype(np.float64).sum(axis=(0, 2)), 1e-5)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", SHAPES)
def test_channel_backprop_stats(device, order, shape):
    x = rand(shape if order == "NCHW" else nhwc(shape), 3)
    dy = rand(x.shape, 4)
    mean, rstd = rand((3,), 5, -0.5, 0.5), rand((3,), 6, 0.5, 2.0)
    g, b = run("ChannelBackpropStats", [("x", x), ("m", mean), ("r", rstd), ("dy", dy)], ["g", "b"], device,
               order=order)
    want_g, want_b = ref_backprop_stats(x, mean, rstd, dy, order)
    close(g, want_g)
    close(b, want_b)


def test_channel_ops_have_no_gradient_and_reject_bad_input():
    assert core.GradientRegistry.GetGradientForOp(
        core.CreateOperator("ChannelStats", ["x"], ["s", "q"]), ["s_grad", "q_grad"])[0] == []
    workspace.FeedBlob("x", rand((2, 3), 1))
    with pytest.raises(Exception, match="order must be NCHW or NHWC"):
        run("ChannelStats", ["x"], ["s", "q"], order="CHWN")
    with pytest.raises(Exception, match="dtype"):
        run("ChannelStats", ["x"], ["s", "q"], dtype="half")
    with pytest.raises(Exception, match="'m'"):
        run("ChannelBackpropStats", ["x", ("m", rand((4,), 2)), ("r", rand((3,), 2)), ("dy", rand((2, 3), 3))],
            ["g", "b"])


# ---- multi-batch forward and gradient (equal batches: Caffe2's form) ----

def run_devices_forward(xs, params, device, order, momentum, stats_dtype="float", count=None):
    """Every 'device' d: ChannelStats(x_d); S, Q summed (as DPM's Sum); SpatialBN(7 or 8 inputs)."""
    scale, bias, rm0, rv0 = params
    sums = [run("ChannelStats", [("x%d" % d, x)], ["s%d" % d, "q%d" % d], device, order=order, dtype=stats_dtype)
            for d, x in enumerate(xs)]
    S = np.sum([s for s, _ in sums], axis=0)
    Q = np.sum([q for _, q in sums], axis=0)
    outs = []
    for d, x in enumerate(xs):
        inputs = [("x%d" % d, x), ("sc", scale), ("bi", bias), ("rm%d" % d, rm0), ("rv%d" % d, rv0), ("S", S), ("Q", Q)]
        if count is not None:
            inputs.append(("count", count))
        outs.append(run("SpatialBN", inputs, ["y%d" % d, "rm%d" % d, "rv%d" % d, "m%d" % d, "r%d" % d], device,
                        order=order, num_batches=len(xs), momentum=momentum, epsilon=EPS))
    return S.astype(np.float64), Q.astype(np.float64), outs


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", SHAPES[1:])
def test_multi_batch_forward_matches_formulas_and_concatenated_batch(device, order, shape):
    shape = shape if order == "NCHW" else nhwc(shape)
    xs = [rand(shape, 10 + d) + d for d in range(3)]
    params = bn_params(3, 7)
    S, Q, outs = run_devices_forward(xs, params, device, order, momentum=0.8)
    M = 3 * xs[0].size / 3
    ys, rm, rv, mean, rstd = ref_forward(xs, S, Q, M, *params, momentum=0.8, order=order)
    for d in range(3):
        y, rm_d, rv_d, m_d, r_d = outs[d]
        close(y, ys[d])
        close(rm_d, rm)
        close(rv_d, rv)
        close(m_d, mean)
        close(r_d, rstd)
    # One BN over the concatenated batch gives the same Y and statistics.
    y_all = run("SpatialBN", [("xa", np.concatenate(xs)), ("sc", params[0]), ("bi", params[1]), ("rma", params[2]),
                              ("rva", params[3])], ["ya", "rma", "rva", "ma", "ra"], device, order=order,
                momentum=0.8, epsilon=EPS)
    close(np.concatenate([o[0] for o in outs]), y_all[0])
    close(outs[0][4], y_all[4])


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
def test_multi_batch_gradient_matches_caffe2_formulas(device, order):
    shape = (2, 3, 4, 3) if order == "NCHW" else nhwc((2, 3, 4, 3))
    n = 2
    xs = [rand(shape, 20 + d) for d in range(n)]
    dys = [rand(shape, 30 + d) for d in range(n)]
    params = bn_params(3, 8)
    scale = params[0]
    _, _, outs = run_devices_forward(xs, params, device, order, momentum=0.9)
    mean, rstd = outs[0][3], outs[0][4]
    # Per device ChannelBackpropStats, summed: G, B.
    parts = [run("ChannelBackpropStats", [("x%d" % d, xs[d]), ("m%d" % d, mean), ("r%d" % d, rstd),
                                          ("dy%d" % d, dys[d])], ["g%d" % d, "b%d" % d], device, order=order)
             for d in range(n)]
    G = np.sum([p[0] for p in parts], axis=0)
    B = np.sum([p[1] for p in parts], axis=0)
    dx_all = []
    for d in range(n):
        # In place: inputs 5, 6 are the dscale/dbias output blobs (as the gradient maker wires them).
        dx, ds, db = run("SpatialBNGradient", [("x%d" % d, xs[d]), ("sc", scale), ("dy%d" % d, dys[d]),
                                               ("m%d" % d, mean), ("r%d" % d, rstd), ("sc_grad", G), ("bi_grad", B)],
                         ["dx%d" % d, "sc_grad", "bi_grad"], device, order=order, num_batches=n, epsilon=EPS)
        want_dx, want_ds, want_db = ref_grad_caffe2(xs[d].astype(np.float64), scale, dys[d], mean, rstd, G, B, n,
                                                    order)
        close(dx, want_dx)
        close(ds, want_ds)
        close(db, want_db)
        dx_all.append(dx)
    # One BN gradient over the concatenated batch: the same dX; its dscale/dbias are n times ours.
    xa, dya = np.concatenate(xs), np.concatenate(dys)
    run("SpatialBN", [("xa", xa), ("sc", scale), ("bi", params[1]), ("rma", params[2]), ("rva", params[3])],
        ["ya", "rma", "rva", "ma", "ra"], device, order=order, epsilon=EPS)
    dxa, dsa, dba = run("SpatialBNGradient", ["xa", "sc", ("dya", dya), "ma", "ra"], ["dxa", "dsa", "dba"], device,
                        order=order, epsilon=EPS)
    close(np.concatenate(dx_all), dxa)
    close(ds * n, dsa)
    close(db * n, dba)


def test_gradient_maker_picks_the_multi_batch_form():
    def grad(inputs, **args):
        op = core.CreateOperator("SpatialBN", inputs, ["y", "rm", "rv", "sm", "si"], **args)
        ops, _ = core.GradientRegistry.GetGradientForOp(op, ["y_grad"])
        assert len(ops) == 1 and ops[0].type == "SpatialBNGradient"
        return list(ops[0].input), list(ops[0].output)
    five = ["x", "s", "b", "rm", "rv"]
    assert grad(five)[0] == ["x", "s", "y_grad", "sm", "si"]
    assert grad(five + ["S", "Q"], num_batches=1)[0] == ["x", "s", "y_grad", "sm", "si"]
    ins, outs = grad(five + ["S", "Q"], num_batches=4)
    assert ins == ["x", "s", "y_grad", "sm", "si", "s_grad", "b_grad"] and outs == ["x_grad", "s_grad", "b_grad"]
    assert grad(five + ["S", "Q", "n"])[0] == ["x", "s", "y_grad", "sm", "si", "s_grad", "b_grad", "n"]
    with pytest.raises(Exception, match="7 or 8 inputs"):
        grad(five, num_batches=2)


# ---- order NHWC == NCHW on the transposed input ----

@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("shape", SHAPES)
def test_nhwc_equals_nchw_on_transposed_input(device, shape):
    x, dy = rand(shape, 40), rand(shape, 41)
    scale, bias, rm, rv = bn_params(3, 9)
    out = {}
    for order, xi, dyi in [("NCHW", x, dy), ("NHWC", to_nhwc(x), to_nhwc(dy))]:
        fwd = run("SpatialBN", [("x", xi), ("sc", scale), ("bi", bias), ("rm", rm), ("rv", rv)],
                  ["y", "rm", "rv", "m", "r"], device, order=order)
        grad = run("SpatialBNGradient", ["x", "sc", ("dy", dyi), "m", "r"], ["dx", "ds", "db"], device, order=order)
        test = run("SpatialBN", ["x", "sc", "bi", ("rm", rm), ("rv", rv)], ["yt"], device, order=order, is_test=1)
        out[order] = fwd + grad + test
    for i, (a, b) in enumerate(zip(out["NCHW"], out["NHWC"])):
        if a.shape == x.shape:
            b = np.moveaxis(b, -1, 1)
        close(b, a, 1e-5)


@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("shape", [(3, 2, 4), (2, 2, 3, 2)])
def test_spatial_bn_gradient_check(order, shape):
    shape = shape if order == "NCHW" else nhwc(shape)
    scale, bias, rm, rv = bn_params(2, 11)
    x = rand(shape, 12)
    checker = GradientChecker(stepsize=1e-2, threshold=2e-2)
    op = core.CreateOperator("SpatialBN", ["x", "sc", "bi", "rm", "rv"], ["y", "rm", "rv", "m", "r"], order=order,
                             epsilon=1e-3)
    for i in range(3):
        ok, grad, est = checker.CheckSimple(op, [x, scale, bias, rm, rv], i, [0])
        assert ok, "input %d: %s vs %s" % (i, grad, est)


def test_multi_batch_scale_bias_gradient_check():
    """7-input form with num_batches 1: the sums are constants to the checker, so only scale and
    bias (whose gradients do not go through the sums) are checked; the wiring is the DPM one."""
    x = rand((3, 2, 4), 13)
    scale, bias, rm, rv = bn_params(2, 14)
    S, Q = ref_channel_stats(x, "NCHW")
    op = core.CreateOperator("SpatialBN", ["x", "sc", "bi", "rm", "rv", "S", "Q"], ["y", "rm", "rv", "m", "r"],
                             num_batches=1, epsilon=1e-3)
    grad_ops = [core.CreateOperator("ChannelBackpropStats", ["x", "m", "r", "y_grad"], ["sc_grad", "bi_grad"]),
                core.CreateOperator("SpatialBNGradient", ["x", "sc", "y_grad", "m", "r", "sc_grad", "bi_grad"],
                                    ["x_grad", "sc_grad", "bi_grad"], num_batches=1, epsilon=1e-3)]
    checker = GradientChecker(stepsize=1e-2, threshold=2e-2)
    for i in (1, 2):
        ok, grad, est = checker.CheckSimple(op, [x, scale, bias, rm, rv, S, Q], i, [0], grad_ops=grad_ops)
        assert ok, "input %d: %s vs %s" % (i, grad, est)


# ---- numerical stability and unequal batches (hetnet input 7) ----

@pytest.mark.parametrize("device", DEVICES)
def test_large_mean_keeps_variance_with_double_stats(device):
    r = np.random.RandomState(50)
    xs = [(1e4 + r.standard_normal((4, 2, 8, 8))).astype(np.float32) for _ in range(2)]
    params = bn_params(2, 15)
    _, _, outs = run_devices_forward(xs, params, device, "NCHW", momentum=0.0, stats_dtype="double")
    x64 = np.concatenate(xs).astype(np.float64)
    want_var = x64.var(axis=(0, 2, 3))
    assert np.all(want_var > 0.5)
    for out in outs:  # momentum 0: running var is the batch var
        np.testing.assert_allclose(out[2], want_var, rtol=1e-3)
        np.testing.assert_allclose(out[1], x64.mean(axis=(0, 2, 3)), rtol=1e-6)
        np.testing.assert_allclose(1.0 / out[4].astype(np.float64) ** 2 - EPS, want_var, rtol=1e-3)


@pytest.mark.parametrize("device", DEVICES)
@pytest.mark.parametrize("order", ["NCHW", "NHWC"])
@pytest.mark.parametrize("count_dtype", [np.float32, np.float64, np.int64])
def test_unequal_batches_with_count_equal_single_bn(device, order, count_dtype):
    base = [(3, 3, 2, 5), (5, 3, 2, 5), (1, 3, 2, 5)]  # three devices/ranks, batch 3, 5 and 1
    shapes = base if order == "NCHW" else [nhwc(s) for s in base]
    xs = [rand(s, 60 + d) * (d + 1) for d, s in enumerate(shapes)]
    dys = [rand(s, 70 + d) for d, s in enumerate(shapes)]
    params = bn_params(3, 16)
    scale = params[0]
    M = sum(x.size for x in xs) // 3
    count = np.array([M], dtype=count_dtype)
    _, _, outs = run_devices_forward(xs, params, device, order, momentum=0.7, count=count)
    single = run("SpatialBN", [("xa", np.concatenate(xs)), ("sc", scale), ("bi", params[1]), ("rma", params[2]),
                               ("rva", params[3])], ["ya", "rma", "rva", "ma", "ra"], device, order=order,
                 momentum=0.7, epsilon=EPS)
    close(np.concatenate([o[0] for o in outs]), single[0])
    for o in outs:
        for got, want in zip(o[1:], single[1:]):
            close(got, want)
    # Gradient: per-rank ChannelBackpropStats, summed, and the 8-input SpatialBNGradient.
    mean, rstd = outs[0][3], outs[0][4]
    parts = [run("ChannelBackpropStats", ["x%d" % d, "m%d" % d, "r%d" % d, ("dy%d" % d, dys[d])],
                 ["g%d" % d, "b%d" % d], device, order=order) for d in range(3)]
    G = np.sum([p[0] for p in parts], axis=0)
    B = np.sum([p[1] for p in parts], axis=0)
    dxs = []
    for d in range(3):
        dx, ds, db = run("SpatialBNGradient", ["x%d" % d, "sc", "dy%d" % d, "m%d" % d, "r%d" % d, ("G", G), ("B", B),
                                               "count"], ["dx%d" % d, "G", "B"], device, order=order,
                         num_batches=3, epsilon=EPS)
        want_dx, want_ds, want_db = ref_grad_count(xs[d].astype(np.float64), scale, dys[d], mean, rstd, G, B, M, 3,
                                                   order)
        close(dx, want_dx)
        close(ds, want_ds)
        close(db, want_db)
        dxs.append(dx)
    dxa, dsa, dba = run("SpatialBNGradient", ["xa", "sc", ("dya", np.concatenate(dys)), "ma", "ra"],
                        ["dxa", "dsa", "dba"], device, order=order, epsilon=EPS)
    close(np.concatenate(dxs), dxa)
    close(ds * 3, dsa)
    close(db * 3, dba)


def test_multi_batch_bad_inputs_are_errors():
    x = rand((2, 3, 4), 80)
    scale, bias, rm, rv = bn_params(3, 17)
    base = [("x", x), ("sc", scale), ("bi", bias), ("rm", rm), ("rv", rv)]
    outs = ["y", "rm", "rv", "m", "r"]
    with pytest.raises(Exception, match="num_batches 2 > 1 needs inputs 5 and 6"):
        run("SpatialBN", base, outs, num_batches=2)
    with pytest.raises(Exception, match="'S'"):
        run("SpatialBN", base + [("S", np.zeros(4, np.float32)), ("Q", np.zeros(3, np.float32))], outs, num_batches=2)
    with pytest.raises(Exception, match="one dtype"):
        run("SpatialBN", base + [("S", np.zeros(3, np.float32)), ("Q", np.zeros(3, np.float64))], outs, num_batches=2)
    with pytest.raises(Exception, match="input 7"):
        run("SpatialBN", base + ["S", ("Q", np.zeros(3, np.float32)), ("n", np.array([1, 2], np.int64))], outs)
    with pytest.raises(Exception, match="input 7"):
        run("SpatialBN", base + ["S", "Q", ("n", np.array([8], np.int32))], outs)
    with pytest.raises(Exception, match="takes 5 inputs, 7"):
        run("SpatialBN", base + ["S"], outs)
