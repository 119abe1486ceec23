"""Trains a classifier on Fashion-MNIST with hetnet's Caffe2 API (ModelHelper + brew + autodiff +
optimizer), prints a progress line per epoch, and exports init_net.pb + predict_net.pb for
`hetnet run`.

    PYTHONPATH=build/python python3 python/examples/train_fashion_mnist.py --epochs 5 --out /tmp/fm

Data: the Debian package dataset-fashion-mnist (IDX files under /usr/share/datasets/fashion-mnist;
`dpkg -L dataset-fashion-mnist`). --arch lenet (Conv/MaxPool/FC) needs the Conv and MaxPool
operators; --arch mlp (default when they are missing) is FC/Relu only. --gpu puts the conv/FC layers
on GPU 0 and keeps data, labels and the loss on CPU (the runtime inserts the copies).
"""
import argparse
import contextlib
import gzip
import os
import struct
import sys
import time

import numpy as np

from caffe2.proto import caffe2_pb2
from caffe2.python import brew, core, model_helper, optimizer, workspace

DATA_DIR = "/usr/share/datasets/fashion-mnist"
MEAN, STD = np.float32(0.2860), np.float32(0.3530)  # of the training images (pixels / 255)


# ---- data ----

def _read_idx(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rb") as f:
        data = f.read()
    zero, dtype_code, ndim = struct.unpack(">HBB", data[:4])
    assert zero == 0 and dtype_code == 0x08, "{}: not an unsigned-byte IDX file".format(path)
    dims = struct.unpack(">" + "I" * ndim, data[4:4 + 4 * ndim])
    return np.frombuffer(data, dtype=np.uint8, offset=4 + 4 * ndim).reshape(dims)


def _find(data_dir, stem):
    for name in (stem + ".gz", stem):
        p = os.path.join(data_dir, name)
        if os.path.exists(p):
            return p
    raise FileNotFoundError("{} not found in {} (apt-get install dataset-fashion-mnist)".format(stem, data_dir))


def load_fashion_mnist(data_dir=DATA_DIR):
    """(train_x, train_y, test_x, test_y): float32 [N, 1, 28, 28] standardized ((x/255 - MEAN) / STD),
    int32 labels."""
    out = []
    for split in ("train", "t10k"):
        x = (_read_idx(_find(data_dir, split + "-images-idx3-ubyte")).astype(np.float32) / 255.0 - MEAN) / STD
        y = _read_idx(_find(data_dir, split + "-labels-idx1-ubyte")).astype(np.int32)
        out += [x.reshape(-1, 1, 28, 28), y]
    return tuple(out)


# ---- model ----

def has_conv():
    return core.IsOperator("Conv") and core.IsOperator("MaxPool")


def _layers(model, arch):
    """Forward layers from 'data' to 'pred' (logits). Returns the logits blob."""
    if arch == "lenet":
        conv1 = brew.conv(model, "data", "conv1", dim_in=1, dim_out=20, kernel=5)
        pool1 = brew.max_pool(model, conv1, "pool1", kernel=2, stride=2)
        conv2 = brew.conv(model, pool1, "conv2", dim_in=20, dim_out=50, kernel=5)
        pool2 = brew.max_pool(model, conv2, "pool2", kernel=2, stride=2)
        fc3 = brew.fc(model, pool2, "fc3", dim_in=50 * 4 * 4, dim_out=500)
        relu3 = brew.relu(model, fc3, fc3)  # in place
        return brew.fc(model, relu3, "pred", dim_in=500, dim_out=10)
    fc1 = brew.fc(model, "data", "fc1", dim_in=784, dim_out=512)
    brew.relu(model, fc1, fc1)  # in place
    fc2 = brew.fc(model, fc1, "fc2", dim_in=512, dim_out=256)
    brew.relu(model, fc2, fc2)
    return brew.fc(model, fc2, "pred", dim_in=256, dim_out=10)


def _gpu_scope(gpu):
    if gpu:
        return core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0))
    return contextlib.nullcontext()


def build_train_model(arch="mlp", gpu=False, base_lr=0.05, momentum=0.9, weight_decay=1e-4, stepsizes=(2000,),
                      seed=1234, gamma=0.2):
    """ModelHelper with forward, backward (autodiff) and momentum-SGD update ops.
    Layers (and their gradients and updates) go to GPU 0 with gpu=True; data, labels, the loss
    and the iteration counter stay on CPU."""
    model = model_helper.ModelHelper(name="fashion_mnist_train")
    with _gpu_scope(gpu):
        pred = _layers(model, arch)
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        model.net.SoftmaxWithLoss([pred, "label"], ["softmax", "loss"])
    model.AddGradientOperators(["loss"])
    optimizer.build_sgd(model, base_lr, momentum=momentum, nesterov=1, weight_decay=weight_decay,
                        policy="multistep", stepsizes=[int(s) for s in stepsizes], gamma=gamma)
    # Seeded parameter initialization (a random_seed on every init op).
    for op in model.param_init_net.Proto().op:
        op.device_option.random_seed = seed
        seed += 1
    return model


def build_deploy_model(arch="mlp", gpu=False):
    """data -> softmax, reading the trained parameters (no init ops)."""
    model = model_helper.ModelHelper(name="fashion_mnist_predict", init_params=False)
    with _gpu_scope(gpu):
        pred = _layers(model, arch)
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        model.net.Softmax(pred, "softmax")
    model.net.AddExternalOutput(core.BlobReference("softmax"))
    return model


def export(deploy, out_dir):
    """init_net.pb (GivenTensorFill of every trained parameter) and predict_net.pb."""
    os.makedirs(out_dir, exist_ok=True)
    init = caffe2_pb2.NetDef()
    init.name = "fashion_mnist_init"
    for p in deploy.params:
        value = workspace.FetchBlob(str(p))
        init.op.extend([core.CreateOperator("GivenTensorFill", [], [str(p)], shape=list(value.shape),
                                            values=value.astype(np.float32).flatten(), debug_info="")])
    predict = caffe2_pb2.NetDef()
    predict.CopyFrom(deploy.net.Proto())
    for op in predict.op:
        op.ClearField("debug_info")
    if "data" not in predict.external_input:
        predict.external_input.insert(0, "data")
    with open(os.path.join(out_dir, "init_net.pb"), "wb") as f:
        f.write(init.SerializeToString())
    with open(os.path.join(out_dir, "predict_net.pb"), "wb") as f:
        f.write(predict.SerializeToString())
    return init, predict


# ---- training ----

def evaluate(deploy_net_name, x, y, batch=1000):
    correct = 0
    for i in range(0, len(x), batch):
        workspace.FeedBlob("data", x[i:i + batch])
        workspace.RunNet(deploy_net_name)
        correct += int((workspace.FetchBlob("softmax").argmax(axis=1) == y[i:i + batch]).sum())
    return correct / float(len(x))


def train(data, arch="mlp", epochs=5, batch_size=64, max_iters=None, gpu=False, log=print, seed=1234,
          base_lr=0.05, stepsizes=None, average_loss=100):
    """Trains; returns (train model, deploy model, history of per-epoch dicts, per-iteration losses).
    The learning rate is multiplied by 0.2 after 60% and after 80% of the epochs (multistep)."""
    train_x, train_y, test_x, test_y = data
    if arch == "mlp":
        train_x, test_x = train_x.reshape(-1, 784), test_x.reshape(-1, 784)
    iters_per_epoch = len(train_x) // batch_size
    if stepsizes is None:
        stepsizes = [max(1, int(round(f * epochs))) * iters_per_epoch for f in (0.6, 0.8)]
    model = build_train_model(arch, gpu, base_lr=base_lr, stepsizes=stepsizes, seed=seed)
    deploy = build_deploy_model(arch, gpu)
    workspace.RunNetOnce(model.param_init_net)
    workspace.FeedBlob("data", train_x[:batch_size])
    workspace.FeedBlob("label", train_y[:batch_size])
    workspace.CreateNet(model.net, overwrite=True)
    workspace.CreateNet(deploy.net, overwrite=True)
    rng = np.random.RandomState(seed)
    smoothed = optimizer.SmoothedLoss(average_loss)
    history, losses, it = [], [], 0
    for epoch in range(epochs):
        order = rng.permutation(len(train_x))
        start, seen, correct = time.time(), 0, 0
        for b in range(iters_per_epoch):
            idx = order[b * batch_size:(b + 1) * batch_size]
            workspace.FeedBlob("data", train_x[idx])
            workspace.FeedBlob("label", train_y[idx])
            workspace.RunNet(model.net.Proto().name)
            loss = float(workspace.FetchBlob("loss"))
            losses.append(loss)
            smoothed.update(loss)
            correct += int((workspace.FetchBlob("softmax").argmax(axis=1) == train_y[idx]).sum())
            seen += len(idx)
            it += 1
            if max_iters is not None and it >= max_iters:
                break
        elapsed = time.time() - start
        test_acc = evaluate(deploy.net.Proto().name, test_x, test_y)
        row = dict(epoch=epoch + 1, loss=smoothed.smoothed, train_acc=correct / float(seen), test_acc=test_acc,
                   images_per_s=seen / elapsed, seconds=elapsed)
        history.append(row)
        log("epoch {epoch}: loss {loss:.4f} (smoothed over the last {n} iterations), train acc {train_acc:.4f}, "
            "test acc {test_acc:.4f}, {images_per_s:.0f} images/s ({seconds:.1f} s)".format(n=average_loss, **row))
        if max_iters is not None and it >= max_iters:
            break
    return model, deploy, history, losses


def verify_with_cli(cli, deploy, out_dir, x, optimize=False):
    """Runs the exported nets through `hetnet run` on x; True when its softmax equals Python's exactly.
    By default with --no-optimize, the nets as exported: the inference rewrite (optimize=True: fused
    ops, packed FC weights) gives the same predictions to float rounding, not the same bits."""
    import subprocess
    import tempfile
    workspace.FeedBlob("data", x)
    workspace.RunNet(deploy.net.Proto().name)
    expected = workspace.FetchBlob("softmax")
    with tempfile.TemporaryDirectory() as tmp:
        x_path, out_path = os.path.join(tmp, "x.npy"), os.path.join(tmp, "out.npy")
        np.save(x_path, x)
        res = subprocess.run([cli, "run", "--init", os.path.join(out_dir, "init_net.pb"), "--predict",
                              os.path.join(out_dir, "predict_net.pb"), "--input", "data=" + x_path,
                              "--output", "softmax=" + out_path] + ([] if optimize else ["--no-optimize"]),
                             capture_output=True, text=True)
        if res.returncode != 0:
            raise RuntimeError("hetnet run failed: " + res.stderr)
        got = np.load(out_path)
        return np.array_equal(got, expected) if not optimize else np.allclose(got, expected, rtol=1e-5, atol=1e-7)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--arch", choices=["mlp", "lenet"], default=None,
                        help="default: lenet when Conv/MaxPool are registered, else mlp")
    parser.add_argument("--epochs", type=int, default=5)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--lr", type=float, default=None, help="base learning rate (default: mlp 0.05, lenet 0.01)")
    parser.add_argument("--max-iters", type=int, default=None)
    parser.add_argument("--train-subset", type=int, default=None)
    parser.add_argument("--data-dir", default=DATA_DIR)
    parser.add_argument("--out", default="fashion_mnist_out")
    parser.add_argument("--gpu", action="store_true", help="conv/FC layers on GPU 0, data and loss on CPU")
    parser.add_argument("--print-net", action="store_true", help="print the training NetDef and exit")
    parser.add_argument("--verify-with-cli", metavar="HETNET", default=None,
                        help="after export, run the exported nets with this `hetnet` binary on 64 test images and "
                             "check its predictions equal Python's exactly")
    args = parser.parse_args(argv)
    arch = args.arch or ("lenet" if has_conv() else "mlp")
    if args.print_net:
        model = build_train_model(arch, args.gpu)
        print(model.net.Proto())
        print(workspace.FormatPlacementReport(workspace.PlacementReport(model.net, soft_placement=True)))
        return 0
    if args.gpu and workspace.NumCudaDevices() == 0:
        print("--gpu: no CUDA device here; use --print-net to see the placed net", file=sys.stderr)
        return 2
    data = load_fashion_mnist(args.data_dir)
    if args.train_subset:
        data = (data[0][:args.train_subset], data[1][:args.train_subset]) + data[2:]
    print("arch {}, {} training images, {} test images, batch {}, {} thread(s)".format(
        arch, len(data[0]), len(data[2]), args.batch_size, os.environ.get("OMP_NUM_THREADS", "default")))
    _, deploy, history, _ = train(data, arch, args.epochs, args.batch_size, args.max_iters, args.gpu,
                                  base_lr=args.lr or (0.01 if arch == "lenet" else 0.05))
    export(deploy, args.out)
    print("exported {}/init_net.pb and {}/predict_net.pb; final test accuracy {:.4f}".format(
        args.out, args.out, history[-1]["test_acc"]))
    if args.verify_with_cli:
        x = data[2][:64].reshape((64, 784) if arch == "mlp" else (64, 1, 28, 28)).astype(np.float32)
        same = verify_with_cli(args.verify_with_cli, deploy, args.out, x)
        print("hetnet run on the exported nets reproduces the Python predictions exactly: {}".format(
            "yes" if same else "NO"))
        return 0 if same else 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
