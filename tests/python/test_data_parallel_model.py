"""caffe2.python.data_parallel_model in one process on CPU devices: Caffe2's data_parallel_model_test
CPU cases re-expressed (n devices with batch/n each train exactly like one device with the whole
batch, shared_model, AddBlobSync), the net surgery (names, seeds, order, args), checkpoints,
learning-rate names, predictor extraction, BMUF, and combine_spatial_bn."""
import numpy as np
import pytest

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, optimizer, scope, workspace
from caffe2.python import data_parallel_model as dpm

import hetnet


def _fc_model_builder(model, loss_scale):
    fc = brew.fc(model, "data", "fc", 16, 1, weight_init=("ConstantFill", {}), bias_init=("ConstantFill", {}))
    fc_fl = model.net.Squeeze(fc, "fc_fl", dims=[1])
    sigm = model.net.Sigmoid(fc_fl, "sigm")
    sq = model.net.SquaredL2Distance([sigm, "label"], "sq")
    loss = model.net.AveragedLoss(sq, "loss")
    loss = model.net.Scale(loss, scale=loss_scale)
    model.param_init_net.UniformFill([], ["sync_num"], shape=[1])  # for AddBlobSync
    return [loss]


def _sgd(model):
    return optimizer.build_sgd(model, 0.1, policy="fixed", momentum=0.9)


def _run_fc_model(devices, shared_model=False, iterations=10):
    """Caffe2's run_model: returns devices[0]'s fc_w after `iterations` steps of batch 64."""
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="test{}".format(devices))
    dpm.Parallelize(model, input_builder_fun=lambda m: None, forward_pass_builder_fun=_fc_model_builder,
                    optimizer_builder_fun=_sgd, devices=devices, cpu_device=True, shared_model=shared_model)
    dpm.AddBlobSync(model, ["sync_num"])
    rng = np.random.RandomState(2603)
    batch_size = 64
    for i in range(iterations):
        full_data = rng.rand(batch_size, 16)
        full_labels = np.round(full_data[:, 0])
        per_device = batch_size // len(devices)
        for j, d in enumerate(devices):
            workspace.FeedBlob("cpu_{}/data".format(d), full_data[j * per_device:(j + 1) * per_device].astype(np.float32))
            workspace.FeedBlob("cpu_{}/label".format(d),
                               full_labels[j * per_device:(j + 1) * per_device].astype(np.float32))
        if i == 0:
            dpm.RunInitNet(model)
            assert workspace.FetchBlob("cpu_{}/data".format(devices[-1])).shape == (per_device, 16)
        workspace.FeedBlob("cpu_{}/sync_num".format(devices[0]), np.array([i * 2], dtype=np.float32))
        workspace.RunNet(model.net.Proto().name)
        for d in devices:  # AddBlobSync copied devices[0]'s value
            assert abs(workspace.FetchBlob("cpu_{}/sync_num".format(d))[0] - i * 2) < 0.01
    return workspace.FetchBlob("cpu_{}/fc_w".format(devices[0])), model


def test_n_cpu_devices_train_like_one_device_with_the_whole_batch(ws):
    one, _ = _run_fc_model([0])
    assert np.abs(one).max() > 1e-3  # it trained
    for devices in ([0, 1], [0, 1, 2, 3], [1, 3]):  # ids need not be 0..n-1
        many, model = _run_fc_model(devices)
        np.testing.assert_allclose(many, one, rtol=1e-5, atol=1e-6)
        for d in devices[1:]:  # replicas stay identical
            np.testing.assert_array_equal(workspace.FetchBlob("cpu_{}/fc_w".format(d)), many)


def test_shared_model_trains_like_one_device_and_keeps_one_copy(ws):
    one, _ = _run_fc_model([0])
    shared, model = _run_fc_model([0, 1, 2, 3], shared_model=True)
    np.testing.assert_allclose(shared, one, rtol=1e-5, atol=1e-6)
    assert not workspace.HasBlob("cpu_1/fc_w")  # every replica reads cpu_0's params
    assert [str(p) for p in model.params] == ["cpu_0/fc_w", "cpu_0/fc_b"]
    fc_ops = [op for op in model.net.Proto().op if op.type == "FC"]
    assert [op.input[1] for op in fc_ops] == ["cpu_0/fc_w"] * 4


def _build(devices, **kwargs):
    model = model_helper.ModelHelper(name="build")
    dpm.Parallelize_CPU(model, input_builder_fun=lambda m: None, forward_pass_builder_fun=_fc_model_builder,
                        optimizer_builder_fun=_sgd, devices=devices, **kwargs)
    return model


def test_net_surgery_names_seeds_order_and_args(ws):
    model = _build([0, 2])
    proto = model.net.Proto()
    assert proto.type == "dag" and proto.num_workers == 2 * 4
    assert [(a.name, a.i) for a in proto.arg] == [("first_iter_only_one_worker", 1)]
    assert [str(p) for p in model.params] == ["cpu_0/fc_w", "cpu_0/fc_b", "cpu_2/fc_w", "cpu_2/fc_b"]
    assert model._device_prefix == "cpu" and model._device_type == caffe2_pb2.CPU
    seeds = [op for op in proto.op if op.type == "ConstantFill" and op.output[0] == op.input[0] + "_grad"]
    assert [(op.input[0].split("/")[0], op.device_option.device_id) for op in seeds] == [("cpu_0", 0), ("cpu_2", 2)]
    assert all(next(a.f for a in op.arg if a.name == "value") == 1.0 for op in seeds)
    scales = [op for op in proto.op if op.type == "Scale" and not op.output[0].endswith("_grad")]
    assert all(next(a.f for a in op.arg if a.name == "scale") == 0.5 for op in scales)  # 1/(2 devices)
    # Gradients are reduced in reverse order into devices[0], then copied back.
    sums = [op for op in proto.op if op.type == "Sum" and op.input[0].startswith("cpu_0/") and op.input[0].endswith("_grad")]
    assert [list(op.input) for op in sums] == [["cpu_0/fc_b_grad", "cpu_2/fc_b_grad"],
                                                ["cpu_0/fc_w_grad", "cpu_2/fc_w_grad"]]
    assert all(list(op.output) == [op.input[0]] for op in sums)
    copies = [(op.input[0], op.output[0]) for op in proto.op if op.type == "Copy"]
    assert copies == [("cpu_0/fc_b_grad", "cpu_2/fc_b_grad"), ("cpu_0/fc_w_grad", "cpu_2/fc_w_grad")]
    # The initial sync copies every devices[0] param init output to the other device.
    init_copies = [(op.input[0], op.output[0]) for op in model.param_init_net.Proto().op if op.type == "Copy"]
    assert ("cpu_0/fc_w", "cpu_2/fc_w") in init_copies and ("cpu_0/fc_w_momentum", "cpu_2/fc_w_momentum") in init_copies
    assert model._data_parallel_model_nets == [model.net]


def test_transformer_and_post_sync_functions(ws):
    calls = []

    def pre_grad(m):
        calls.append(("pre_grad", m.gradient_ops_added))

    def transformer(m, num_devices, prefix, device_type):
        calls.append(("transformer", m.gradient_ops_added, num_devices, prefix, device_type))

    def post_sync(m):
        calls.append(("post_sync", core.ScopedName("x"), scope.CurrentDeviceScope().device_id))
    _build([0, 1], pre_grad_net_transformer_fun=pre_grad, net_transformer_fun=transformer,
           post_sync_builder_fun=post_sync)
    assert calls == [("pre_grad", False), ("transformer", True, 2, "cpu", caffe2_pb2.CPU),
                     ("post_sync", "cpu_0/x", 0), ("post_sync", "cpu_1/x", 1)]


def test_initial_params_are_copied_from_the_first_device(ws):
    model = model_helper.ModelHelper(name="init_sync")

    def builder(m, loss_scale):
        fc = brew.fc(m, "data", "fc", 4, 3)  # XavierFill: random per device before the sync
        return [m.net.AveragedLoss(m.net.SumSqrElements(fc, "ss"), "loss")]
    dpm.Parallelize_CPU(model, lambda m: None, builder, optimizer_builder_fun=_sgd, devices=[0, 1, 2])
    dpm.RunInitNet(model)
    w0 = workspace.FetchBlob("cpu_0/fc_w")
    for d in (1, 2):
        np.testing.assert_array_equal(workspace.FetchBlob("cpu_{}/fc_w".format(d)), w0)


def test_checkpoint_params_and_finalize(ws):
    model = _build([0, 1])
    names = sorted(str(b) for b in dpm.GetCheckpointParams(model))
    assert names == ["cpu_0/fc_b", "cpu_0/fc_b_momentum", "cpu_0/fc_w", "cpu_0/fc_w_momentum", "cpu_0/sync_num",
                     "optimizer_iteration"]
    checkpoint = dpm.GetCheckpointParams(model)  # Caffe2's test_checkpoint_params, by membership
    for p in model.GetParams("cpu_0/"):
        assert p in checkpoint and p + "_momentum" in checkpoint
    assert not any(p in checkpoint for p in model.GetParams("cpu_1/")) and "optimizer_iteration" in checkpoint
    workspace.FeedBlob("cpu_0/data", np.zeros((2, 16), np.float32))
    workspace.FeedBlob("cpu_0/label", np.zeros((2,), np.float32))
    workspace.FeedBlob("cpu_1/data", np.zeros((2, 16), np.float32))
    workspace.FeedBlob("cpu_1/label", np.zeros((2,), np.float32))
    dpm.RunInitNet(model)
    loaded = np.arange(16, dtype=np.float32).reshape(1, 16)
    workspace.FeedBlob("cpu_0/fc_w", loaded)  # as a checkpoint load writes devices[0]'s blobs
    dpm.FinalizeAfterCheckpoint(model)
    np.testing.assert_array_equal(workspace.FetchBlob("cpu_1/fc_w"), loaded)


def test_learning_rate_blob_names(ws):
    model = _build([0, 1])
    assert dpm.GetLearningRateBlobNames(model) == [model._optimizer.get_cpu_blob_name("lr")]

    def update(m):  # param_update_builder_fun: one LearningRate per device
        it = m.param_init_net.ConstantFill([], "it", shape=[1], value=0, dtype=core.DataType.INT64,
                                           device_option=core.DeviceOption(caffe2_pb2.CPU))
        m.net.Iter(it, it)
        lr = m.net.LearningRate(it, "LR", base_lr=-0.1, policy="fixed")
        one = m.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
        for p in m.GetParams():
            m.net.WeightedSum([p, one, m.param_to_grad[p], lr], p)
    other = model_helper.ModelHelper(name="update_fun")
    dpm.Parallelize_CPU(other, lambda m: None, _fc_model_builder, param_update_builder_fun=update, devices=[0, 1])
    assert dpm.GetLearningRateBlobNames(other) == ["cpu_0/LR", "cpu_1/LR"]


def test_extract_predictor_net_and_convert_net_for_device(ws):
    model = model_helper.ModelHelper(name="pred", init_params=False)

    def builder(m, loss_scale):
        fc = brew.fc(m, "data", "fc", 16, 2)
        return [m.net.Softmax(fc, "softmax")]
    dpm.Parallelize_CPU(model, lambda m: None, builder, devices=[0, 1])
    net, params = dpm.ExtractPredictorNet(model, ["data"], ["softmax"], core.DeviceOption(caffe2_pb2.CPU))
    assert [op.type for op in net.Proto().op] == ["FC", "Softmax"]
    assert list(net.Proto().op[0].input) == ["data", "cpu_0/fc_w", "cpu_0/fc_b"]
    assert sorted(params) == ["cpu_0/fc_b", "cpu_0/fc_w"]
    assert list(net.Proto().external_output) == ["softmax"]

    plain = core.Net("plain")
    plain.Relu("x", "y")
    converted = dpm.ConvertNetForDevice(plain, core.DeviceOption(caffe2_pb2.CPU, 3))
    op = converted.Proto().op[0]
    assert (list(op.input), list(op.output), op.device_option.device_id) == (["cpu_3/x"], ["cpu_3/y"], 3)
    assert list(converted.Proto().external_input) == ["cpu_3/x"]
    assert list(plain.Proto().op[0].input) == ["x"]  # the original is unchanged


def test_strip_blob_name_and_unsupported_device_types(ws):
    assert dpm.stripBlobName("cpu_0/a/b") == "a/b"
    with pytest.raises(hetnet.UnsupportedError, match="IDEEP"):
        dpm.Parallelize_iDeep(model_helper.ModelHelper(), None, None)
    with pytest.raises(hetnet.InvalidArgumentError, match="lacks kv_handler"):
        dpm.Parallelize_CPU(model_helper.ModelHelper(), None, None, devices=[0], rendezvous={"shard_id": 0})
    with pytest.raises(hetnet.InvalidArgumentError, match="shard_id 2"):
        dpm.Parallelize_CPU(model_helper.ModelHelper(), None, None, devices=[0], rendezvous={
            "kv_handler": "s", "shard_id": 2, "num_shards": 2, "engine": "GLOO"})
    with pytest.raises(AssertionError, match="device-scope"):
        with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
            dpm.Parallelize_CPU(model_helper.ModelHelper(), None, None, devices=[0])


def test_lenet_on_two_cpu_devices_equals_one(ws):
    def lenet(m, loss_scale):
        conv1 = brew.conv(m, "data", "conv1", 1, 4, 3)
        pool1 = brew.max_pool(m, brew.relu(m, conv1, "relu1"), "pool1", kernel=2, stride=2)
        fc = brew.fc(m, pool1, "fc", 4 * 3 * 3, 10)
        _, loss = m.net.SoftmaxWithLoss([fc, "label"], ["softmax", "xent"])
        return [m.net.Scale(loss, "loss", scale=loss_scale)]

    def train(devices):
        workspace.ResetWorkspace()
        model = model_helper.ModelHelper(name="lenet{}".format(len(devices)))
        dpm.Parallelize_CPU(model, lambda m: None, lenet, optimizer_builder_fun=_sgd, devices=devices)
        rng = np.random.RandomState(5)
        data = rng.randn(8, 1, 8, 8).astype(np.float32)
        label = rng.randint(0, 10, size=8).astype(np.int32)
        per = 8 // len(devices)
        for j, d in enumerate(devices):
            workspace.FeedBlob("cpu_{}/data".format(d), data[j * per:(j + 1) * per])
            workspace.FeedBlob("cpu_{}/label".format(d), label[j * per:(j + 1) * per])
        dpm.RunInitNet(model)
        init = np.random.RandomState(7)  # the same initial params for both runs, from devices[0]
        for name in ("conv1_w", "conv1_b", "fc_w", "fc_b"):
            shape = workspace.FetchBlob("cpu_{}/{}".format(devices[0], name)).shape
            workspace.FeedBlob("cpu_{}/{}".format(devices[0], name), init.randn(*shape).astype(np.float32) * 0.3)
        dpm.FinalizeAfterCheckpoint(model)
        dpm.RunNet(model, 5)
        return {b: workspace.FetchBlob("cpu_{}/{}".format(d, b)) for b in ("conv1_w", "conv1_b", "fc_w", "fc_b")
                for d in devices[:1]}

    one = train([0])
    two = train([0, 1])
    for k in one:
        assert not np.allclose(two[k], 0)
        np.testing.assert_allclose(two[k], one[k], rtol=1e-4, atol=1e-5)


def test_bmuf_block_update_averages_the_replicas(ws):
    model = model_helper.ModelHelper(name="bmuf")

    def update(m):
        lr = m.param_init_net.ConstantFill([], "LR", shape=[1], value=-0.5)
        one = m.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
        for p in m.GetParams():
            m.net.WeightedSum([p, one, m.param_to_grad[p], lr], p)
    dpm.Parallelize_CPU_BMUF(model, lambda m: None, _fc_model_builder, update, block_learning_rate=1.0,
                             block_momentum=0.0, devices=[0, 1])
    rng = np.random.RandomState(1)
    for d in (0, 1):
        workspace.FeedBlob("cpu_{}/data".format(d), rng.rand(4, 16).astype(np.float32))
        workspace.FeedBlob("cpu_{}/label".format(d), np.ones(4, np.float32) * d)
    dpm.RunInitNet(model)
    workspace.RunNet(model.net, 3)  # local steps: the replicas drift apart
    w = [workspace.FetchBlob("cpu_{}/fc_w".format(d)) for d in (0, 1)]
    assert not np.allclose(w[0], w[1])
    workspace.RunNet(model._global_model_param_updates_net.Proto().name)
    # momentum 0, block lr 1: the global model moves to the replicas' average, every replica gets it.
    for d in (0, 1):
        np.testing.assert_allclose(workspace.FetchBlob("cpu_{}/fc_w".format(d)), (w[0] + w[1]) / 2, rtol=1e-5)


def test_dyndep_ignores_missing_libraries_and_rnn_cell_errors(ws, capsys):
    from caffe2.python import dyndep, rnn_cell
    dyndep.InitOpsLibrary("@/caffe2/caffe2/distributed:file_store_handler_ops")
    assert capsys.readouterr().out == \
        "Ignoring @/caffe2/caffe2/distributed:file_store_handler_ops as it is not a valid file.\n"
    with pytest.raises(hetnet.UnsupportedError, match="recurrent"):
        rnn_cell.LSTM(None, "x", "seq", ("h", "c"), 4, 4, scope="lstm")


# ---- combine_spatial_bn (one process) ----

_BN_SCALE = np.array([1.0, 2.0, 0.5], np.float32)
_BN_BIAS = np.array([0.1, -0.2, 0.3], np.float32)


def _bn_builder(order):
    def forward(m, loss_scale):
        bn = brew.spatial_bn(m, "data", "bn", 3, epsilon=1e-3, momentum=0.8, is_test=False, order=order)
        s = m.net.ReduceSum(m.net.Mul([bn, "w"], "yw"), "ysum", axes=[0, 1, 2, 3], keepdims=0)
        return [m.net.Scale(s, "loss", scale=loss_scale)]
    return forward


def _run_bn(devices, data, w, order, combine=True):
    workspace.ResetWorkspace()
    model = model_helper.ModelHelper(name="bn")
    dpm.Parallelize_CPU(model, lambda m: None, _bn_builder(order), param_update_builder_fun=lambda m: None,
                        devices=devices, combine_spatial_bn=combine)
    per = len(data) // len(devices)
    for k, d in enumerate(devices):
        workspace.FeedBlob("cpu_{}/data".format(d), data[k * per:(k + 1) * per])
        workspace.FeedBlob("cpu_{}/w".format(d), w[k * per:(k + 1) * per])
    dpm.RunInitNet(model)
    for d in devices:
        workspace.FeedBlob("cpu_{}/bn_s".format(d), _BN_SCALE)
        workspace.FeedBlob("cpu_{}/bn_b".format(d), _BN_BIAS)
    dpm.RunNet(model, 2)  # the second run checks the running statistics' update again
    names = ("bn", "bn_rm", "bn_riv", "bn_sm", "bn_siv", "bn_s_grad", "bn_b_grad", "data_grad")
    return model, {n: [workspace.FetchBlob("cpu_{}/{}".format(d, n)) for d in devices] for n in names}


@pytest.mark.parametrize("order,devices", [("NCHW", [0, 1]), ("NHWC", [1, 3]), ("NCHW", [0, 1, 2, 3])])
def test_combine_spatial_bn_equals_bn_on_the_concatenated_batch(ws, order, devices):
    rng = np.random.RandomState(0)
    shape = (8, 3, 4, 5) if order == "NCHW" else (8, 4, 5, 3)
    data = (rng.randn(*shape) * 2 + 3).astype(np.float32)
    w = rng.randn(*shape).astype(np.float32)
    _, one = _run_bn([0], data, w, order)
    model, many = _run_bn(devices, data, w, order)
    n = len(devices)
    np.testing.assert_allclose(np.concatenate(many["bn"]), one["bn"][0], rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(np.concatenate(many["data_grad"]) * n, one["data_grad"][0], rtol=1e-4, atol=1e-5)
    for k in range(n):
        for name in ("bn_rm", "bn_riv", "bn_sm", "bn_siv"):
            np.testing.assert_allclose(many[name][k], one[name][0], rtol=1e-5, atol=1e-6)
        for name in ("bn_s_grad", "bn_b_grad"):  # allreduced: the whole batch's gradient / n (loss_scale)
            np.testing.assert_allclose(many[name][k] * n, one[name][0], rtol=1e-4, atol=1e-4)
    stats = [op for op in model.net.Proto().op if op.type == "ChannelStats"]
    assert all(next(a.s for a in op.arg if a.name == "order") == order.encode() for op in stats)
    bn_ops = [op for op in model.net.Proto().op if op.type == "SpatialBN"]
    assert [len(op.input) for op in bn_ops] == [8] * n
    assert all(next(a.i for a in op.arg if a.name == "num_batches") == n for op in bn_ops)
    assert bn_ops[0].input[5] == "cpu_{}/data_sums_combined".format(devices[0])
    # without combine, each device normalizes its own part (the statistics differ)
    _, separate = _run_bn(devices, data, w, order, combine=False)
    assert not np.allclose(separate["bn_sm"][0], one["bn_sm"][0])


@pytest.mark.parametrize("shape", [(8, 3, 2, 2), (8, 3), (8, 3, 2, 1, 2)])
def test_sync_batch_norm_pass_with_unequal_device_batches(ws, shape):
    """hetnet.distributed.sync_batch_norm over two replicas of unequal batch (3 and 5 samples)."""
    import hetnet.distributed as hd
    rng = np.random.RandomState(1)
    x = (rng.randn(*shape) * 0.5 + 1e4).astype(np.float32)  # |mean| >> std: float64 statistics
    w = rng.randn(*shape).astype(np.float32)
    axes = [0] + list(range(2, len(shape)))

    def build(parts):
        net = core.Net("pass")
        for d, _ in enumerate(parts):
            p = "cpu_{}/".format(d)
            net.SpatialBN([p + "x", "s", "b", p + "rm", p + "rv"], [p + "y", p + "rm", p + "rv", p + "sm", p + "siv"],
                          is_test=0, epsilon=1e-5)
            net.Mul([p + "y", p + "w"], p + "yw")
            net.ReduceSum(p + "yw", p + "loss", axes=list(range(len(shape))), keepdims=0)
        net.AddGradientOperators(["cpu_{}/loss".format(d) for d in range(len(parts))])
        return net

    def run(parts, sync):
        workspace.ResetWorkspace()
        net = build(parts)
        if sync:
            assert hd.sync_batch_norm(net, devices=list(range(len(parts)))) == 1
        workspace.FeedBlob("s", _BN_SCALE)
        workspace.FeedBlob("b", _BN_BIAS)
        start = 0
        for d, size in enumerate(parts):
            p = "cpu_{}/".format(d)
            workspace.FeedBlob(p + "x", x[start:start + size])
            workspace.FeedBlob(p + "w", w[start:start + size])
            workspace.FeedBlob(p + "rm", np.zeros(3, np.float32))
            workspace.FeedBlob(p + "rv", np.ones(3, np.float32))
            start += size
        workspace.RunNetOnce(net)
        fetch = ("y", "x_grad", "sm", "siv", "rv")
        return {n: [workspace.FetchBlob("cpu_{}/{}".format(d, n)) for d in range(len(parts))] for n in fetch}

    whole = run([8], False)
    parts = run([3, 5], True)
    np.testing.assert_allclose(np.concatenate(parts["y"]), whole["y"][0], rtol=1e-3, atol=1e-3)
    np.testing.assert_allclose(np.concatenate(parts["x_grad"]), whole["x_grad"][0], rtol=1e-3, atol=1e-3)
    var = x.astype(np.float64).var(axis=tuple(axes))
    for d in range(2):
        np.testing.assert_allclose(parts["sm"][d], whole["sm"][0], rtol=1e-6)
        # the stability requirement: mean 1e4, std 0.5 -> the variance within 1e-3 relative
        np.testing.assert_allclose(1.0 / parts["siv"][d] ** 2 - 1e-5, var, rtol=1e-3)


def test_gpu_and_multi_host_net_surgery(ws):
    """Built (not run) here: GPU replicas (Sum tree / NCCL, GPU sync BN through CPU) and a rendezvous."""
    model = model_helper.ModelHelper(name="gpu")
    dpm.Parallelize_GPU(model, lambda m: None, _bn_builder("NCHW"), optimizer_builder_fun=_sgd, devices=[0, 1],
                        combine_spatial_bn=True)
    ops = model.net.Proto().op
    assert ("CopyGPUToCPU", "gpu_1/data_sums", "cpu_0/data_sums_gpu_1_copy") in \
        [(op.type, op.input[0], op.output[0]) for op in ops]
    assert ("CopyCPUToGPU", "cpu_0/data_sums_combined", "gpu_1/data_sums_combined", 1) in \
        [(op.type, op.input[0], op.output[0], op.device_option.device_id) for op in ops]
    assert any(op.type == "Sum" and op.name == "dpm" for op in ops)
    nccl = model_helper.ModelHelper(name="nccl")
    dpm.Parallelize_GPU(nccl, lambda m: None, _fc_model_builder, optimizer_builder_fun=_sgd, devices=[0, 1],
                        use_nccl=True)
    assert [op.type for op in nccl.net.Proto().op].count("NCCLAllreduce") == 2

    rdv = {"kv_handler": "store", "shard_id": 1, "num_shards": 2, "engine": "GLOO", "exit_nets": None,
           "interface": "lo"}
    multi = model_helper.ModelHelper(name="multi")
    dpm.Parallelize_CPU(multi, lambda m: None, _fc_model_builder, optimizer_builder_fun=_sgd, devices=[0, 1],
                        rendezvous=rdv, max_concurrent_distributed_ops=1)
    init_ops = multi.param_init_net.Proto().op
    worlds = [(op.type, op.output[0], op.name) for op in init_ops if "CommonWorld" in op.type]
    assert worlds == [("CreateCommonWorld", "allreduce_0_cw", "allreduce_0_cw_op"),
                      ("CloneCommonWorld", "broadcast_0_cw", "broadcast_0_cw_op")]
    create = init_ops[[op.type for op in init_ops].index("CreateCommonWorld")]
    args = {a.name: (a.i if a.HasField("i") else a.s) for a in create.arg}
    assert (args["size"], args["rank"], args["timeout_ms"], args["engine"] if "engine" in args else create.engine,
            args["interface"]) == (2, 1, 30000, "GLOO", b"lo")
    allreduces = [op for op in multi.net.Proto().op if op.type == "Allreduce"]
    assert [list(op.input) for op in allreduces] == [["allreduce_0_cw", "cpu_0/fc_b_grad", "cpu_1/fc_b_grad"],
                                                      ["allreduce_0_cw", "cpu_0/fc_w_grad", "cpu_1/fc_w_grad"]]
    assert list(allreduces[1].control_input) == ["cpu_0/fc_b_grad"] and allreduces[0].engine == "GLOO"
    broadcasts = [op for op in init_ops if op.type == "Broadcast"]
    assert [op.name for op in broadcasts] == sorted(op.name for op in broadcasts)
    assert list(broadcasts[0].input)[1:] == ["cpu_0/" + broadcasts[0].name, "cpu_1/" + broadcasts[0].name]
    assert multi.net.Proto().num_workers == 2 * 4 + 8
    gpu_multi = model_helper.ModelHelper(name="gpu_multi")  # hetnet's GLOO kernels are CPU kernels
    dpm.Parallelize_GPU(gpu_multi, lambda m: None, _bn_builder("NCHW"), optimizer_builder_fun=_sgd, devices=[0, 1],
                        rendezvous=dict(rdv, shard_id=0), combine_spatial_bn=True)
    gpu_ops = [(op.type, list(op.input), op.device_option.device_type) for op in gpu_multi.net.Proto().op]
    assert any(t == "Allreduce" and i[0].startswith("allreduce_") and i[1:] == ["gpu_0/bn_s_grad_host"] and
               d == caffe2_pb2.CPU for t, i, d in gpu_ops)
    assert ("CopyCPUToGPU", ["gpu_0/bn_s_grad_host"], caffe2_pb2.CUDA) in gpu_ops
    assert all(op.device_option.device_type == caffe2_pb2.CPU for op in gpu_multi.param_init_net.Proto().op
               if "CommonWorld" in op.type or op.type == "Broadcast")
    assert any(op.type == "Allreduce" and op.input[0] == "spatial_bn_0_cw" for op in gpu_multi.net.Proto().op)
    nccl_multi = model_helper.ModelHelper(name="nccl_multi")  # NCCL: worlds on the GPU, created, not cloned
    dpm.Parallelize_GPU(nccl_multi, lambda m: None, _fc_model_builder, optimizer_builder_fun=_sgd, devices=[0, 1],
                        rendezvous=dict(rdv, engine="NCCL"), max_concurrent_distributed_ops=1)
    worlds = [(op.type, op.engine, op.device_option.device_type) for op in nccl_multi.param_init_net.Proto().op
              if "CommonWorld" in op.type]
    assert worlds == [("CreateCommonWorld", "NCCL", caffe2_pb2.CUDA)] * 2
    barrier_init = multi._data_parallel_model_init_nets[0].Proto().op[0]
    assert (barrier_init.type, barrier_init.output[0]) == ("CreateCommonWorld", "pre_training_barrier_cw")
    assert next(a.i for a in barrier_init.arg if a.name == "timeout_ms") == 300000
    assert multi._data_parallel_model_nets[0].Proto().op[0].type == "Barrier"


@pytest.mark.parametrize("shared_model", [False, True])
def test_resnet50_trainer_cpu_configuration(ws, shared_model):
    """Caffe2's resnet50_trainer on CPU: shared_model and combine_spatial_bn, momentum SGD with weight
    decay, params loaded through FinalizeAfterCheckpoint: 2 devices train like 1."""
    def forward(m, loss_scale):
        conv = brew.conv(m, "data", "conv", 1, 4, 3, pad=1)
        relu = brew.relu(m, brew.spatial_bn(m, conv, "bn", 4, epsilon=1e-3, is_test=False), "relu")
        _, loss = m.net.SoftmaxWithLoss([brew.fc(m, relu, "fc", 4 * 8 * 8, 10), "label"], ["softmax", "xent"])
        return [m.net.Scale(loss, "loss", scale=loss_scale)]

    def train(devices):
        workspace.ResetWorkspace()
        model = model_helper.ModelHelper(name="resnet_like")
        dpm.Parallelize(model, lambda m: None, forward, devices=devices, cpu_device=True,
                        optimizer_builder_fun=lambda m: optimizer.build_sgd(m, 0.1, momentum=0.9, weight_decay=1e-4),
                        shared_model=shared_model and len(devices) > 1, combine_spatial_bn=True)
        rng = np.random.RandomState(0)
        data, label = rng.randn(8, 1, 8, 8).astype(np.float32), rng.randint(0, 10, 8).astype(np.int32)
        per = 8 // len(devices)
        for k, d in enumerate(devices):
            workspace.FeedBlob("cpu_{}/data".format(d), data[k * per:(k + 1) * per])
            workspace.FeedBlob("cpu_{}/label".format(d), label[k * per:(k + 1) * per])
        dpm.RunInitNet(model)
        init = np.random.RandomState(3)
        for p in ("conv_w", "conv_b", "fc_w", "fc_b"):
            shape = workspace.FetchBlob("cpu_0/" + p).shape
            workspace.FeedBlob("cpu_0/" + p, (init.randn(*shape) * 0.2).astype(np.float32))
        dpm.FinalizeAfterCheckpoint(model)
        dpm.RunNet(model, 4)
        return {p: workspace.FetchBlob("cpu_0/" + p) for p in ("conv_w", "fc_w", "bn_s", "bn_b", "bn_rm", "bn_riv")}

    one = train([0])
    two = train([0, 1])
    for name in one:
        np.testing.assert_allclose(two[name], one[name], rtol=1e-5, atol=1e-6)
