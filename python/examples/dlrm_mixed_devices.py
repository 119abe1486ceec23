"""A small DLRM-style recommender on mixed devices, built with hetnet's Caffe2 Python API.

Embedding tables (too big for a GPU, in production) live on the CPU and are looked up there with
SparseLengthsSum (each sample has a few ids per sparse feature); the dense features go through a
bottom MLP on GPU 0; the pooled embeddings and the bottom MLP's output are concatenated and go
through the top MLP on GPU 0 to a click probability. The runtime inserts the CPU<->GPU copies.

Without a GPU both nets ask for soft placement (net argument soft_placement=1): the GPU ops run on
the CPU and the script says so; it also prints the plan the runtime would make on a machine with
one GPU (planned offline, nothing runs there).

It trains a few SGD steps on synthetic clicks (loss: 0.5 * (sigmoid(logit) - click)^2 averaged,
via SquaredL2Distance and AveragedLoss; the embedding tables' gradients are dense,
SparseLengthsSumDenseGradient, where Caffe2's were sparse) and prints the losses, the placement report
and a prediction for a held-out batch.
"""
import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import core, model_helper, workspace

BATCH = 32
DENSE_DIM = 6
EMB_DIM = 4
TABLE_ROWS = [50, 30]  # one table per sparse feature
BOTTOM = [DENSE_DIM, 8, EMB_DIM]
TOP = [EMB_DIM * (1 + len(TABLE_ROWS)), 8, 1]
LR = 10.0

CPU = core.DeviceOption(caffe2_pb2.CPU, -1)
GPU0 = core.DeviceOption(workspace.GpuDeviceType, 0)


def synthetic_batch(rng, teacher):
    """Dense features, per-feature (ids, lengths) with 1-3 ids per sample, and clicks drawn from a
    fixed random 'teacher' over the same inputs (so the model has something to learn)."""
    dense = rng.standard_normal((BATCH, DENSE_DIM)).astype(np.float32)
    sparse = []
    score = dense @ teacher["dense"]
    for t, rows in enumerate(TABLE_ROWS):
        lengths = rng.integers(1, 4, size=BATCH).astype(np.int32)
        ids = rng.integers(0, rows, size=int(lengths.sum())).astype(np.int32)
        sparse.append((ids, lengths))
        seg = np.repeat(np.arange(BATCH), lengths)
        np.add.at(score, seg, teacher["rows"][t][ids])
    clicks = (score > 0).astype(np.float32).reshape(BATCH, 1)
    return dense, sparse, clicks


def feed_batch(dense, sparse, clicks):
    workspace.FeedBlob("dense", dense, device_option=CPU)
    for t, (ids, lengths) in enumerate(sparse):
        workspace.FeedBlob("ids_%d" % t, ids, device_option=CPU)
        workspace.FeedBlob("lengths_%d" % t, lengths, device_option=CPU)
    workspace.FeedBlob("click", clicks, device_option=CPU)


def mlp(m, x, dims, prefix, last_relu):
    """FC layers (weights filled in param_init_net in the current device scope)."""
    for i in range(len(dims) - 1):
        w, b = "%s_w%d" % (prefix, i), "%s_b%d" % (prefix, i)
        m.param_init_net.XavierFill([], w, shape=[dims[i + 1], dims[i]])
        m.param_init_net.ConstantFill([], b, shape=[dims[i + 1]], value=0.0)
        m.params.extend([core.BlobReference(w), core.BlobReference(b)])
        x = m.net.FC([x, w, b], "%s_fc%d" % (prefix, i))
        if i < len(dims) - 2 or last_relu:
            x = m.net.Relu(x, "%s_relu%d" % (prefix, i))
    return x


def build_model(use_soft_placement):
    m = model_helper.ModelHelper(name="dlrm_mixed_devices")
    pooled = []
    with core.DeviceScope(CPU):
        for t, rows in enumerate(TABLE_ROWS):
            table = "emb_%d" % t
            m.param_init_net.GaussianFill([], table, shape=[rows, EMB_DIM], std=0.1)
            m.params.append(core.BlobReference(table))
            pooled.append(m.net.SparseLengthsSum([table, "ids_%d" % t, "lengths_%d" % t], "pooled_%d" % t))
        m.param_init_net.ConstantFill([], "one_cpu", shape=[1], value=1.0)
        m.param_init_net.ConstantFill([], "neg_lr_cpu", shape=[1], value=-LR)
    with core.DeviceScope(GPU0):
        bottom = mlp(m, "dense", BOTTOM, "bot", last_relu=True)
        features, _ = m.net.Concat([bottom] + pooled, ["features", "features_split"], axis=1)
        logit = mlp(m, features, TOP, "top", last_relu=False)
        prob = m.net.Sigmoid(logit, "prob")
        dist = m.net.SquaredL2Distance([prob, "click"], "dist")
        m.net.AveragedLoss(dist, "loss")
        m.param_init_net.ConstantFill([], "one_gpu", shape=[1], value=1.0)
        m.param_init_net.ConstantFill([], "neg_lr_gpu", shape=[1], value=-LR)
    grads = m.net.AddGradientOperators(["loss"])
    # Plain SGD, each update on its parameter's device: p = 1 * p + (-lr) * grad.
    for p in m.params:
        on_cpu = str(p).startswith("emb_")
        with core.DeviceScope(CPU if on_cpu else GPU0):
            sfx = "cpu" if on_cpu else "gpu"
            m.net.WeightedSum([p, "one_" + sfx, grads[str(p)], "neg_lr_" + sfx], str(p))
    if use_soft_placement:
        for net in (m.param_init_net, m.net):
            net.Proto().arg.add(name="soft_placement", i=1)
    return m


def run(steps=24, seed=0, verbose=True):
    """Builds, trains `steps` SGD steps on fresh synthetic batches, and returns what it saw:
    losses (before each step), the placement report, an eval batch and its prediction, and the
    parameter values after training."""
    say = print if verbose else (lambda *a: None)
    workspace.ResetWorkspace()
    rng = np.random.default_rng(seed)
    teacher = {"dense": rng.standard_normal(DENSE_DIM).astype(np.float32),
               "rows": [rng.standard_normal(r).astype(np.float32) for r in TABLE_ROWS]}
    num_gpus = workspace.NumCudaDevices()
    if num_gpus == 0:
        say("no GPU: running everything on CPU with soft placement (GPU ops fall back to CPU)")
    else:
        say("running on {} GPU(s): embeddings on CPU, MLPs on cuda:0".format(num_gpus))
    m = build_model(use_soft_placement=num_gpus == 0)
    # Caffe2's fills draw a fresh seed unless the op's device option carries one: seed them, so that
    # one `seed` gives one training run (unseeded, 1 run in ~12 missed the test's loss drop).
    for i, op in enumerate(m.param_init_net.Proto().op):
        op.device_option.random_seed = seed * 1000 + i + 1
    batches = [synthetic_batch(rng, teacher) for _ in range(4)]
    feed_batch(*batches[0])
    workspace.RunNetOnce(m.param_init_net)
    report = workspace.PlacementReport(m.net)
    say(workspace.FormatPlacementReport(report))
    moved = [op["type"] for op in report["ops"] if "soft placement" in op["reason"]]
    if moved:
        say("moved to CPU by soft placement: {} ops ({})".format(len(moved), ", ".join(sorted(set(moved)))))
    if num_gpus == 0:
        planned = workspace.PlacementReport(m.net, devices=["cpu", "cuda:0"], init_net=m.param_init_net)
        say("planned on a machine with one GPU (offline, nothing ran there):")
        say(workspace.FormatPlacementReport(planned))
    workspace.CreateNet(m.net)
    losses = []
    for step in range(steps):
        feed_batch(*batches[step % len(batches)])
        workspace.RunNet(m.net.Name())
        losses.append(float(workspace.FetchBlob("loss")))
        say("step {}: loss {:.6f}".format(step, losses[-1]))
    # Inference on a held-out batch with the trained weights: the forward part only.
    eval_batch = synthetic_batch(rng, teacher)
    feed_batch(*eval_batch)
    params = {str(p): workspace.FetchBlob(str(p)).copy() for p in m.params}
    fwd = core.Net("dlrm_predict")
    for op in m.net.Proto().op:
        if op.type == "Sigmoid":
            fwd.Proto().op.extend([op])
            break
        fwd.Proto().op.extend([op])
    if num_gpus == 0:
        fwd.Proto().arg.add(name="soft_placement", i=1)
    workspace.RunNetOnce(fwd)
    prob = workspace.FetchBlob("prob")
    say("prediction for the first 4 eval samples: " + " ".join("{:.4f}".format(v) for v in prob[:4, 0]))
    say("clicks:                                  " + " ".join("{:.0f}".format(v) for v in eval_batch[2][:4, 0]))
    return {"losses": losses, "report": report, "moved": moved, "eval_batch": eval_batch, "prob": prob,
            "params": params, "num_gpus": num_gpus}


if __name__ == "__main__":
    run()
