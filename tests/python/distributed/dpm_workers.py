"""The worker processes of test_dpm_multiprocess.py, run under hetnet.distributed.run (or in a
network namespace): ``python dpm_workers.py <case> <out dir> [args]``. Each writes rank<r>.npz (or
an outcome file) into <out dir> for the test to compare."""
import os
import sys

import numpy as np

STEPS = 10
GLOBAL_BATCH = 8
PARAMS = ("conv1_w", "conv1_b", "fc_w", "fc_b")


def _lenet(model, loss_scale):
    from caffe2.python import brew
    conv1 = brew.conv(model, "data", "conv1", 1, 4, 3)
    pool1 = brew.max_pool(model, brew.relu(model, conv1, "relu1"), "pool1", kernel=2, stride=2)
    fc = brew.fc(model, pool1, "fc", 4 * 3 * 3, 10)
    _, loss = model.net.SoftmaxWithLoss([fc, "label"], ["softmax", "xent"])
    return [model.net.Scale(loss, "loss", scale=loss_scale)]


def _step_batch(step):
    rng = np.random.RandomState(100 + step)
    return (rng.randn(GLOBAL_BATCH, 1, 8, 8).astype(np.float32),
            rng.randint(0, 10, size=GLOBAL_BATCH).astype(np.int32))


def lenet_worker(out_dir, devices_per_rank):
    from caffe2.python import data_parallel_model as dpm, model_helper, optimizer, workspace
    import hetnet.distributed as hd
    env = hd.get_env()
    devices = list(range(devices_per_rank))
    replicas = env.world_size * len(devices)
    per = GLOBAL_BATCH // replicas
    rdv = hd.rendezvous()
    model = model_helper.ModelHelper(name="lenet")
    dpm.Parallelize_CPU(model, lambda m: None, _lenet, rendezvous=rdv, devices=devices,
                        optimizer_builder_fun=lambda m: optimizer.build_sgd(m, 0.1, momentum=0.9))

    def feed(step):
        data, label = _step_batch(step)
        for d in devices:
            k = env.rank * len(devices) + d
            workspace.FeedBlob("cpu_{}/data".format(d), data[k * per:(k + 1) * per])
            workspace.FeedBlob("cpu_{}/label".format(d), label[k * per:(k + 1) * per])
    feed(0)
    np.random.seed(1000 + env.rank)  # no effect on hetnet's fillers; ranks still differ before the sync
    dpm.RunInitNet(model)
    synced = {p: workspace.FetchBlob("cpu_{}/{}".format(devices[-1], p)) for p in PARAMS}
    init = np.random.RandomState(7)  # one start for every world size
    for p in PARAMS:
        value = init.randn(*synced[p].shape).astype(np.float32) * 0.3
        for d in devices:
            workspace.FeedBlob("cpu_{}/{}".format(d, p), value)
    for step in range(STEPS):
        feed(step)
        dpm.RunNet(model, 1)
    result = {p: workspace.FetchBlob("cpu_0/{}".format(p)) for p in PARAMS}
    result.update({"init_" + p: v for p, v in synced.items()})
    np.savez(os.path.join(out_dir, "rank{}.npz".format(env.rank)), **result)


def checkpoint_worker(out_dir):
    """FinalizeAfterCheckpoint across shards: every replica of every rank gets rank 0's cpu_0 values."""
    from caffe2.python import data_parallel_model as dpm, model_helper, optimizer, workspace
    import hetnet.distributed as hd
    env = hd.get_env()
    model = model_helper.ModelHelper(name="ckpt")
    dpm.Parallelize_CPU(model, lambda m: None, _lenet, rendezvous=hd.rendezvous(), devices=[0, 1],
                        optimizer_builder_fun=lambda m: optimizer.build_sgd(m, 0.1, momentum=0.9))
    data, label = _step_batch(0)
    for d in (0, 1):
        workspace.FeedBlob("cpu_{}/data".format(d), data[:2])
        workspace.FeedBlob("cpu_{}/label".format(d), label[:2])
    dpm.RunInitNet(model)
    workspace.FeedBlob("cpu_0/fc_b", np.full(10, env.rank + 5, np.float32))  # as if each loaded its own file
    dpm.FinalizeAfterCheckpoint(model)
    result = {"fc_b_{}".format(d): workspace.FetchBlob("cpu_{}/fc_b".format(d)) for d in (0, 1)}
    dpm.RunNet(model, 2)  # the nets still run after the extra common world
    result["fc_w"] = workspace.FetchBlob("cpu_1/fc_w")
    np.savez(os.path.join(out_dir, "rank{}.npz".format(env.rank)), **result)


def bmuf_worker(out_dir):
    """Parallelize_CPU_BMUF on 2 devices per rank: local steps, then one block update."""
    from caffe2.python import data_parallel_model as dpm, model_helper, workspace
    import hetnet.distributed as hd
    env = hd.get_env()

    def update(m):
        lr = m.param_init_net.ConstantFill([], "LR", shape=[1], value=-0.1)
        one = m.param_init_net.ConstantFill([], "ONE", shape=[1], value=1.0)
        for p in m.GetParams():
            m.net.WeightedSum([p, one, m.param_to_grad[p], lr], p)
    model = model_helper.ModelHelper(name="bmuf")
    dpm.Parallelize_CPU_BMUF(model, lambda m: None, _lenet, update, rendezvous=hd.rendezvous(), devices=[0, 1],
                             block_learning_rate=1.0, block_momentum=0.0)
    data, label = _step_batch(0)
    for d in (0, 1):
        k = env.rank * 2 + d
        workspace.FeedBlob("cpu_{}/data".format(d), data[2 * k:2 * k + 2])
        workspace.FeedBlob("cpu_{}/label".format(d), label[2 * k:2 * k + 2])
    dpm.RunInitNet(model)
    workspace.RunNet(model.net, 3)
    result = {"before_{}".format(d): workspace.FetchBlob("cpu_{}/fc_w".format(d)) for d in (0, 1)}
    dpm.RunNet(model, 0)  # runs the block-update net once (a (net, 1) entry) and the others 0 times
    result.update({"after_{}".format(d): workspace.FetchBlob("cpu_{}/fc_w".format(d)) for d in (0, 1)})
    np.savez(os.path.join(out_dir, "rank{}.npz".format(env.rank)), **result)


def peer_dies_worker(out_dir):
    """Rank 1 leaves after one step; rank 0's next RunNet must fail (not hang) with IoError."""
    import time
    from caffe2.python import data_parallel_model as dpm, model_helper, optimizer, workspace
    import hetnet
    import hetnet.distributed as hd
    env = hd.get_env()
    model = model_helper.ModelHelper(name="dies")
    dpm.Parallelize_CPU(model, lambda m: None, _lenet, rendezvous=hd.rendezvous(), devices=[0],
                        optimizer_builder_fun=lambda m: optimizer.build_sgd(m, 0.1))
    data, label = _step_batch(0)
    workspace.FeedBlob("cpu_0/data", data[:4])
    workspace.FeedBlob("cpu_0/label", label[:4])
    dpm.RunInitNet(model)
    dpm.RunNet(model, 1)
    if env.rank == 1:
        os._exit(0)  # gone without closing anything
    start = time.monotonic()
    outcome = "no error"
    try:
        dpm.RunNet(model, 1)
    except hetnet.HetnetError as e:
        outcome = type(e).__name__
    with open(os.path.join(out_dir, "outcome"), "w") as f:
        f.write("{} {:.1f}".format(outcome, time.monotonic() - start))


def _bn_batches(sizes, order, seed=3):
    rng = np.random.RandomState(seed)
    shape = (sum(sizes), 3, 4, 5) if order == "NCHW" else (sum(sizes), 4, 5, 3)
    x = (rng.randn(*shape) * 2 + 5).astype(np.float32)
    w = rng.randn(*shape).astype(np.float32)
    return x, w


def _bn_net(order):
    from caffe2.python import core
    net = core.Net("bn")
    net.SpatialBN(["x", "s", "b", "rm", "rv"], ["y", "rm", "rv", "sm", "siv"], is_test=0, order=order,
                  epsilon=1e-3, momentum=0.8)
    net.Mul(["y", "w"], "yw")
    net.ReduceSum("yw", "loss", axes=[0, 1, 2, 3], keepdims=0)
    net.AddGradientOperators(["loss"])
    return net


_BN_PARAMS = {"s": np.array([1.0, 2.0, 0.5], np.float32), "b": np.array([0.1, -0.2, 0.3], np.float32),
              "rm": np.array([0.5, 0.0, -1.0], np.float32), "rv": np.array([1.0, 2.0, 3.0], np.float32)}


def _bn_feed_params(workspace):
    for name, value in _BN_PARAMS.items():
        workspace.FeedBlob(name, value)


BN_BLOBS = ("y", "rm", "rv", "sm", "siv", "x_grad", "s_grad", "b_grad")


def bn_worker(out_dir, sizes, order):
    """Sync BN through hetnet.distributed.sync_batch_norm on a common world of all ranks."""
    from caffe2.python import workspace
    import hetnet.distributed as hd
    env = hd.get_env()
    sizes = [int(s) for s in sizes.split(",")]
    x, w = _bn_batches(sizes, order)
    start = sum(sizes[:env.rank])
    rdv = hd.rendezvous()
    cw = hd.create_common_world(rdv, "cw")
    net = _bn_net(order)
    assert hd.sync_batch_norm(net, comm_world=cw, world_size=env.world_size) == 1
    _bn_feed_params(workspace)
    workspace.FeedBlob("x", x[start:start + sizes[env.rank]])
    workspace.FeedBlob("w", w[start:start + sizes[env.rank]])
    workspace.RunNetOnce(net)
    np.savez(os.path.join(out_dir, "rank{}.npz".format(env.rank)), **{b: workspace.FetchBlob(b) for b in BN_BLOBS})


def dpm_bn_worker(out_dir):
    """Parallelize(combine_spatial_bn=True) on 2 CPU devices per rank: BN over every rank's devices."""
    from caffe2.python import brew, data_parallel_model as dpm, model_helper, workspace
    import hetnet.distributed as hd
    env = hd.get_env()
    devices = [0, 1]
    replicas = env.world_size * len(devices)
    x, w = _bn_batches([8], "NCHW")
    per = 8 // replicas

    def fwd(m, loss_scale):
        bn = brew.spatial_bn(m, "x", "y", 3, epsilon=1e-3, momentum=0.8, is_test=False)
        s = m.net.ReduceSum(m.net.Mul([bn, "w"], "yw"), "ysum", axes=[0, 1, 2, 3], keepdims=0)
        return [m.net.Scale(s, "loss", scale=loss_scale)]
    model = model_helper.ModelHelper(name="dpm_bn")
    dpm.Parallelize_CPU(model, lambda m: None, fwd, param_update_builder_fun=lambda m: None, devices=devices,
                        rendezvous=hd.rendezvous(), combine_spatial_bn=True)
    for d in devices:
        k = env.rank * len(devices) + d
        workspace.FeedBlob("cpu_{}/x".format(d), x[k * per:(k + 1) * per])
        workspace.FeedBlob("cpu_{}/w".format(d), w[k * per:(k + 1) * per])
    dpm.RunInitNet(model)
    for d in devices:  # _bn_feed_params' values, under brew's names
        with_prefix = {"s": "y_s", "b": "y_b", "rm": "y_rm", "rv": "y_riv"}
        for src, dst in with_prefix.items():
            workspace.FeedBlob("cpu_{}/{}".format(d, dst), _BN_PARAMS[src])
    dpm.RunNet(model, 1)
    result = {}
    for d in devices:
        for b in ("y", "y_rm", "y_riv", "x_grad", "y_s_grad", "y_b_grad"):
            result["{}_{}".format(b, d)] = workspace.FetchBlob("cpu_{}/{}".format(d, b))
    np.savez(os.path.join(out_dir, "rank{}.npz".format(env.rank)), **result)


if __name__ == "__main__":
    case, out_dir, rest = sys.argv[1], sys.argv[2], sys.argv[3:]
    if case == "lenet":
        lenet_worker(out_dir, int(rest[0]))
    elif case == "bn":
        bn_worker(out_dir, rest[0], rest[1])
    elif case == "dpm_bn":
        dpm_bn_worker(out_dir)
    elif case == "ckpt":
        checkpoint_worker(out_dir)
    elif case == "bmuf":
        bmuf_worker(out_dir)
    elif case == "peer_dies":
        peer_dies_worker(out_dir)
    else:
        sys.exit("unknown case " + case)
