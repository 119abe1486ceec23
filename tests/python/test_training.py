"""Training from Python: Net/ModelHelper.AddGradientOperators (names, map, numeric check), the
optimizer ops against numpy references (one step each), optimizer.py's nets, LearningRate policies,
weight decay, gradient clipping and the smoothed loss."""
import math

import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, optimizer


def _mlp_net():
    net = core.Net("mlp")
    net.FC(["x", "w1", "b1"], "h")
    net.Relu("h", "h")  # in place
    net.FC(["h", "w2", "b2"], "a")  # h used twice, w2 shared
    net.FC(["h", "w2", "b3"], "b")
    net.Sum(["a", "b"], "s")
    net.SoftmaxWithLoss(["s", "label"], ["softmax", "loss"])
    return net


def _feed_mlp(ws, values):
    for k, v in values.items():
        ws.FeedBlob(k, v)
    ws.FeedBlob("label", np.array([0, 2, 1, 2], dtype=np.int32))


def _mlp_values(seed=0):
    r = np.random.RandomState(seed)
    shapes = {"x": (4, 5), "w1": (6, 5), "b1": (6,), "w2": (3, 6), "b2": (3,), "b3": (3,)}
    return {k: r.uniform(-1, 1, s).astype(np.float32) for k, s in shapes.items()}


def test_add_gradient_operators_names_and_map(ws):
    net = _mlp_net()
    n_fwd = len(net.Proto().op)
    grad_map = net.AddGradientOperators(["loss"])
    ops = net.Proto().op[n_fwd:]
    assert [op.type for op in ops] == ["ConstantFill", "SoftmaxWithLossGradient", "Scale", "Scale", "FCGradient",
                                       "FCGradient", "Sum", "ReluGradient", "FCGradient", "Sum"]
    # Caffe2 names the seed of a loss given in a list '<loss>_autogen_grad'
    assert list(ops[0].input) == ["loss"] and list(ops[0].output) == ["loss_autogen_grad"]
    assert ops[0].arg[0].name == "value" and ops[0].arg[0].f == 1.0
    assert list(ops[5].output) == ["_w2_grad_autosplit_0", "b2_grad", "_h_grad_autosplit_0"]
    assert list(ops[6].input) == ["h_grad", "_h_grad_autosplit_0"] and list(ops[6].output) == ["h_grad"]
    assert list(ops[9].input) == ["w2_grad", "_w2_grad_autosplit_0"] and list(ops[9].output) == ["w2_grad"]
    # Caffe2 returns {BlobReference: BlobReference}; string keys work too.
    assert all(isinstance(k, core.BlobReference) and isinstance(v, core.BlobReference) for k, v in grad_map.items())
    for p in ("x", "w1", "b1", "w2", "b2", "b3", "h"):
        assert str(grad_map[p]) == p + "_grad"
    assert str(grad_map["loss"]) == "loss_autogen_grad"
    assert "label" not in grad_map


def test_backward_pass_matches_finite_differences(ws):
    values = _mlp_values()
    fwd = _mlp_net()
    train = _mlp_net()
    grad_map = train.AddGradientOperators(["loss"])
    _feed_mlp(ws, values)
    ws.RunNetOnce(train)
    grads = {p: ws.FetchBlob(grad_map[p]) for p in values}

    def loss(vals):
        _feed_mlp(ws, vals)
        ws.RunNetOnce(fwd)
        return float(ws.FetchBlob("loss"))

    eps = 1e-2
    for p, v in values.items():
        flat = v.reshape(-1)
        for i in range(0, flat.size, max(1, flat.size // 7)):
            plus = {k: x.copy() for k, x in values.items()}
            minus = {k: x.copy() for k, x in values.items()}
            plus[p].reshape(-1)[i] += eps
            minus[p].reshape(-1)[i] -= eps
            numeric = (loss(plus) - loss(minus)) / (2 * eps)
            assert abs(grads[p].reshape(-1)[i] - numeric) <= 2e-3 + 2e-2 * abs(numeric), (p, i)


def test_no_gradient_maker_error_names_op(ws):
    net = core.Net("nomaker")
    net.FC(["x", "w", "b"], "y")
    net.WeightedSum(["y", "one"], "z")
    net.SoftmaxWithLoss(["z", "label"], ["softmax", "loss"])
    with pytest.raises(Exception) as e:
        net.AddGradientOperators(["loss"])
    msg = str(e.value)
    assert "operator #1 (WeightedSum)" in msg and "'z'" in msg


def test_stop_gradient(ws):
    net = core.Net("stop")
    net.FC(["x", "w1", "b1"], "h")
    net.StopGradient("h", "h")
    net.FC(["h", "w2", "b2"], "s")
    net.SoftmaxWithLoss(["s", "label"], ["softmax", "loss"])
    grad_map = net.AddGradientOperators(["loss"])
    assert "w2" in grad_map and "w1" not in grad_map and "x" not in grad_map


def _tiny_model(ws, seed=3):
    model = model_helper.ModelHelper(name="tiny")
    fc = brew.fc(model, "data", "fc", dim_in=4, dim_out=3)
    model.net.SoftmaxWithLoss([fc, "label"], ["softmax", "loss"])
    grad_map = model.AddGradientOperators(["loss"])
    r = np.random.RandomState(seed)
    ws.FeedBlob("data", r.uniform(-1, 1, (5, 4)).astype(np.float32))
    ws.FeedBlob("label", np.array([0, 1, 2, 1, 0], dtype=np.int32))
    return model, grad_map


def test_model_helper_param_info(ws):
    model, grad_map = _tiny_model(ws)
    assert set(map(str, model.param_to_grad)) == {"fc_w", "fc_b"}
    infos = model.GetOptimizationParamInfo()
    assert [(str(i.blob), str(i.grad)) for i in infos] == [("fc_w", "fc_w_grad"), ("fc_b", "fc_b_grad")]
    with pytest.raises(RuntimeError):
        model.AddGradientOperators(["loss"])


def _one_step(ws, model, build):
    """Runs init, then the train net once with the update ops removed to read the gradients, then
    the full net once from the same start; returns (params before, grads, params after)."""
    build(model)
    ws.RunNetOnce(model.param_init_net)
    params = {str(p): ws.FetchBlob(p).copy() for p in model.params}
    ws.CreateNet(model.net)
    ws.RunNet(model.net.Proto().name)
    grads = {str(p): ws.FetchBlob(str(p) + "_grad") for p in model.params}
    after = {str(p): ws.FetchBlob(p) for p in model.params}
    return params, grads, after


def test_build_sgd_plain_is_param_minus_lr_grad(ws):
    model, _ = _tiny_model(ws)
    before, grads, after = _one_step(ws, model, lambda m: optimizer.build_sgd(m, 0.1))
    ops = [op.type for op in model.net.Proto().op]
    assert ops[-4:] == ["Iter", "LearningRate", "WeightedSum", "WeightedSum"]
    lr_op = [op for op in model.net.Proto().op if op.type == "LearningRate"][0]
    assert [a.f for a in lr_op.arg if a.name == "base_lr"] == [pytest.approx(-0.1)]
    assert lr_op.output[0].startswith("SgdOptimizer_") and lr_op.output[0].endswith("_lr_cpu")
    assert float(ws.FetchBlob(lr_op.output[0])[0]) == pytest.approx(-0.1)
    assert int(ws.FetchBlob("optimizer_iteration")[0]) == 1
    for p in before:
        np.testing.assert_allclose(after[p], before[p] - 0.1 * grads[p], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("nesterov", [0, 1])
def test_build_sgd_momentum(ws, nesterov):
    model, _ = _tiny_model(ws)
    build = lambda m: optimizer.build_sgd(m, 0.1, momentum=0.9, nesterov=nesterov)  # noqa: E731
    before, grads, after = _one_step(ws, model, build)
    lr_blob = [op.output[0] for op in model.net.Proto().op if op.type == "LearningRate"][0]
    assert float(ws.FetchBlob(lr_blob)[0]) == pytest.approx(0.1)  # positive: MomentumSGDUpdate subtracts
    for p in before:
        g = grads[p]  # MomentumSGDUpdate overwrote the grad with the step; recompute from momentum
        m_new = ws.FetchBlob(p + "_momentum")
        # first step from m = 0: m' = lr * g_orig
        g_orig = m_new / 0.1
        step = m_new if not nesterov else (1 + 0.9) * m_new
        np.testing.assert_allclose(after[p], before[p] - step, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(g, step, rtol=1e-5, atol=1e-7)
        assert np.abs(g_orig).sum() > 0


def test_momentum_sgd_update_two_steps_numpy(ws):
    r = np.random.RandomState(0)
    g, m, p = (r.randn(7).astype(np.float32) for _ in range(3))
    for nesterov in (0, 1):
        ws.FeedBlob("g", g)
        ws.FeedBlob("m", m)
        ws.FeedBlob("p", p)
        ws.FeedBlob("lr", np.array([0.05], dtype=np.float32))
        ws.RunOperatorOnce(core.CreateOperator("MomentumSGDUpdate", ["g", "m", "lr", "p"], ["g", "m", "p"],
                                               momentum=0.9, nesterov=nesterov))
        if nesterov:
            m_new = 0.9 * m + 0.05 * g
            step = 1.9 * m_new - 0.9 * m
        else:
            m_new = step = 0.05 * g + 0.9 * m
        np.testing.assert_allclose(ws.FetchBlob("m"), m_new, rtol=1e-6)
        np.testing.assert_allclose(ws.FetchBlob("g"), step, rtol=1e-6)
        np.testing.assert_allclose(ws.FetchBlob("p"), p - step, rtol=1e-6, atol=1e-7)


def test_adam_adagrad_rmsprop_numpy(ws):
    r = np.random.RandomState(1)
    p, g = r.randn(6).astype(np.float32), r.randn(6).astype(np.float32)
    m1, m2 = r.randn(6).astype(np.float32) * 0.1, np.abs(r.randn(6)).astype(np.float32)
    lr = np.array([-0.01], dtype=np.float32)
    for k, v in dict(p=p, g=g, m1=m1, m2=m2, lr=lr, it=np.array([4], dtype=np.int64)).items():
        ws.FeedBlob(k, v)
    ws.RunOperatorOnce(core.CreateOperator("Adam", ["p", "m1", "m2", "g", "lr", "it"], ["p", "m1", "m2"],
                                           beta1=0.9, beta2=0.999, epsilon=1e-8))
    nm1 = 0.9 * m1 + 0.1 * g
    nm2 = 0.999 * m2 + 0.001 * g * g
    t = 5
    corr = math.sqrt(1 - 0.999 ** t) / (1 - 0.9 ** t)
    np.testing.assert_allclose(ws.FetchBlob("m1"), nm1, rtol=1e-5)
    np.testing.assert_allclose(ws.FetchBlob("m2"), nm2, rtol=1e-5)
    np.testing.assert_allclose(ws.FetchBlob("p"), p + lr[0] * corr * nm1 / (np.sqrt(nm2) + 1e-8), rtol=1e-5)

    ws.FeedBlob("p", p)
    ws.FeedBlob("h", m2)
    ws.RunOperatorOnce(core.CreateOperator("Adagrad", ["p", "h", "g", "lr"], ["p", "h"], epsilon=1e-4, decay=0.95))
    nh = 0.95 * m2 + g * g
    np.testing.assert_allclose(ws.FetchBlob("h"), nh, rtol=1e-5)
    np.testing.assert_allclose(ws.FetchBlob("p"), p + lr[0] * g / (np.sqrt(nh) + 1e-4), rtol=1e-5)

    ws.FeedBlob("ms", m2)
    ws.FeedBlob("mom", m1)
    ws.RunOperatorOnce(core.CreateOperator("RmsProp", ["g", "ms", "mom", "lr"], ["step", "ms", "mom"], decay=0.9,
                                           momentum=0.5, epsilon=1e-5))
    nms = m2 + 0.1 * (g * g - m2)
    nmom = 0.5 * m1 + lr[0] * g / np.sqrt(1e-5 + nms)
    np.testing.assert_allclose(ws.FetchBlob("ms"), nms, rtol=1e-5)
    np.testing.assert_allclose(ws.FetchBlob("mom"), nmom, rtol=1e-5)
    np.testing.assert_allclose(ws.FetchBlob("step"), nmom, rtol=1e-5)


@pytest.mark.parametrize("builder", ["adam", "adagrad", "rms_prop"])
def test_adaptive_builders_decrease_loss(ws, builder):
    model, _ = _tiny_model(ws)
    getattr(optimizer, "build_" + builder)(model, 0.05)
    ws.RunNetOnce(model.param_init_net)
    ws.CreateNet(model.net)
    losses = []
    for _ in range(30):
        ws.RunNet(model.net.Proto().name)
        losses.append(float(ws.FetchBlob("loss")))
    assert losses[-1] < losses[0] * 0.8, losses


POLICIES = [
    (dict(policy="fixed"), lambda it: 1.0),
    (dict(policy="step", stepsize=3, gamma=0.5), lambda it: 0.5 ** (it // 3)),
    (dict(policy="exp", gamma=0.9), lambda it: 0.9 ** it),
    (dict(policy="inv", gamma=0.1, power=0.75), lambda it: (1 + 0.1 * it) ** -0.75),
    (dict(policy="multistep", stepsizes=[2, 5], gamma=0.1), lambda it: 0.1 ** ((it >= 2) + (it >= 5))),
    (dict(policy="poly", power=2.0, max_iter=10), lambda it: (1 - it / 10.0) ** 2),
    (dict(policy="sigmoid", stepsize=4, gamma=0.5), lambda it: 1 / (1 + math.exp(0.5 * (it - 4)))),
]


@pytest.mark.parametrize("args,ref", POLICIES, ids=[p[0]["policy"] for p in POLICIES])
def test_learning_rate_policies(ws, args, ref):
    for it in range(8):
        ws.FeedBlob("it", np.array([it], dtype=np.int64))
        ws.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], base_lr=-0.1, **args))
        assert float(ws.FetchBlob("lr")[0]) == pytest.approx(-0.1 * ref(it), rel=1e-5)


def test_learning_rate_bad_policy(ws):
    ws.FeedBlob("it", np.array([0], dtype=np.int64))
    with pytest.raises(Exception, match="unknown policy 'nope'"):
        ws.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], base_lr=0.1, policy="nope"))
    with pytest.raises(Exception, match="needs argument stepsize"):
        ws.RunOperatorOnce(core.CreateOperator("LearningRate", ["it"], ["lr"], base_lr=0.1, policy="step",
                                               gamma=0.1))


def test_iter_counts_in_place(ws):
    ws.RunOperatorOnce(core.CreateOperator("ConstantFill", [], ["it"], shape=[1], value=0,
                                           dtype=caffe2_pb2.TensorProto.INT64))
    for _ in range(3):
        ws.RunOperatorOnce(core.CreateOperator("Iter", ["it"], ["it"]))
    assert ws.FetchBlob("it").dtype == np.int64 and int(ws.FetchBlob("it")[0]) == 3


@pytest.mark.parametrize("l1", [False, True])
def test_weight_decay_adds_to_weight_grads_only(ws, l1):
    model, _ = _tiny_model(ws)
    optimizer.add_weight_decay(model, 0.01, l1=l1)
    ws.RunNetOnce(model.param_init_net)
    w = ws.FetchBlob("fc_w")
    ws.RunNetOnce(model.net)
    decayed = ws.FetchBlob("fc_w_grad")
    bias_grad = ws.FetchBlob("fc_b_grad")
    # raw gradient: run the net without the decay ops
    proto = caffe2_pb2.NetDef()
    proto.CopyFrom(model.net.Proto())
    del proto.op[len(proto.op) - (2 if l1 else 1):]
    ws.RunNetOnce(proto)
    raw = ws.FetchBlob("fc_w_grad")
    np.testing.assert_allclose(decayed, raw + 0.01 * (np.sign(w) if l1 else w), rtol=1e-5, atol=1e-7)
    np.testing.assert_allclose(ws.FetchBlob("fc_b_grad"), bias_grad)


def test_gradient_clipping_by_global_norm(ws):
    model, _ = _tiny_model(ws)
    norm_blob = optimizer.add_gradient_clipping(model, 1e-3)
    ws.RunNetOnce(model.param_init_net)
    n_clip = len(model.GetOptimizationParamInfo())
    proto = caffe2_pb2.NetDef()
    proto.CopyFrom(model.net.Proto())
    del proto.op[len(proto.op) - n_clip:]
    ws.RunNetOnce(proto)
    raw = {p: ws.FetchBlob(p + "_grad") for p in ("fc_w", "fc_b")}
    norm = math.sqrt(sum(float((g.astype(np.float64) ** 2).sum()) for g in raw.values()))
    assert float(ws.FetchBlob(norm_blob)) == pytest.approx(norm, rel=1e-5)
    ws.RunNetOnce(model.net)
    for p, g in raw.items():
        np.testing.assert_allclose(ws.FetchBlob(p + "_grad"), g * (1e-3 / norm), rtol=1e-5)


def test_smoothed_loss_is_mean_of_last_n():
    s = optimizer.SmoothedLoss(3)
    seen = []
    for x in [4.0, 2.0, 6.0, 1.0, 5.0, 3.0]:
        seen.append(x)
        assert s.update(x) == pytest.approx(np.mean(seen[-3:]))


def test_caffe2_python_optimizer_alias():
    from caffe2.python import optimizer as c2opt, checkpoint as c2ckpt  # noqa: F401
    assert c2opt is optimizer
    assert hasattr(c2opt, "build_sgd") and hasattr(c2opt, "build_adam")


def test_given_loss_gradient_and_skip(ws):
    net = _mlp_net()
    grad_map = net.AddGradientOperators({"loss": "my_loss_grad"})
    grad_ops = [op for op in net.Proto().op if op.is_gradient_op or op.type == "ConstantFill"]
    assert grad_ops[0].type == "SoftmaxWithLossGradient" and "my_loss_grad" in grad_ops[0].input
    assert str(grad_map["loss"]) == "my_loss_grad"
    values = _mlp_values(1)
    _feed_mlp(ws, values)
    ws.FeedBlob("my_loss_grad", np.array(2.0, dtype=np.float32))
    ws.RunNetOnce(net)
    doubled = ws.FetchBlob("w1_grad")
    seeded = _mlp_net()
    seeded.AddGradientOperators(["loss"])
    ws.RunNetOnce(seeded)
    np.testing.assert_allclose(doubled, 2 * ws.FetchBlob("w1_grad"), rtol=1e-5, atol=1e-7)
    # skip: only the ops from index `skip` on are differentiated
    tail = core.Net("tail")
    tail.Relu("x", "x_relu")
    tail.FC(["x_relu", "w", "b"], "s")
    tail.SoftmaxWithLoss(["s", "label"], ["softmax", "loss"])
    grad_map = tail.AddGradientOperators(["loss"], skip=1)
    assert "x_relu" in grad_map and "x" not in grad_map
