"""Data-parallel LeNet training throughput: 1 process against N processes (issue 14 item 7).

    PYTHONPATH=build/python python3 benchmarks/dpm_lenet_throughput.py [--nproc 2] [--steps 30]

Each configuration runs under ``python -m hetnet.distributed.run`` (TCP-store rendezvous on
loopback, Allreduce engine GLOO), one core per process (sched_setaffinity, OMP_NUM_THREADS=1).
The global batch is fixed (weak scaling would hide the communication): with N ranks each trains
on batch/N images per step, and the gradients are allreduced every step. Reports the median step
time after warm-up and images per second, and the speed-up over one process.
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))


def _lenet(model, loss_scale):
    """Caffe2's MNIST LeNet (conv 20, conv 50, fc 500, fc 10) on 1x28x28 images."""
    from caffe2.python import brew
    conv1 = brew.conv(model, "data", "conv1", 1, 20, 5)
    pool1 = brew.max_pool(model, conv1, "pool1", kernel=2, stride=2)
    conv2 = brew.conv(model, pool1, "conv2", 20, 50, 5)
    pool2 = brew.max_pool(model, conv2, "pool2", kernel=2, stride=2)
    fc3 = brew.relu(model, brew.fc(model, pool2, "fc3", 50 * 4 * 4, 500), "relu3")
    pred = brew.fc(model, fc3, "pred", 500, 10)
    _, loss = model.net.SoftmaxWithLoss([pred, "label"], ["softmax", "xent"])
    return [model.net.Scale(loss, "loss", scale=loss_scale)]


def worker(out_path, batch, steps, warmup):
    import hetnet.distributed as hd
    from caffe2.python import data_parallel_model as dpm, model_helper, optimizer, workspace
    env = hd.get_env()
    os.sched_setaffinity(0, {env.rank % os.cpu_count()})
    per = batch // env.world_size
    rdv = hd.rendezvous() if env.world_size > 1 else None
    model = model_helper.ModelHelper(name="lenet_bench")
    dpm.Parallelize_CPU(model, lambda m: None, _lenet, rendezvous=rdv, devices=[0],
                        optimizer_builder_fun=lambda m: optimizer.build_sgd(m, 0.01, momentum=0.9))
    rng = np.random.RandomState(env.rank)
    workspace.FeedBlob("cpu_0/data", rng.randn(per, 1, 28, 28).astype(np.float32))
    workspace.FeedBlob("cpu_0/label", rng.randint(0, 10, size=per).astype(np.int32))
    dpm.RunInitNet(model)
    times = []
    for step in range(warmup + steps):
        t0 = time.perf_counter()
        dpm.RunNet(model, 1)
        if step >= warmup:
            times.append(time.perf_counter() - t0)
    if env.rank == 0:
        with open(out_path, "w") as f:
            json.dump({"step_ms": 1e3 * float(np.median(times)), "per_rank_batch": per}, f)


def run_config(nproc, batch, steps, warmup):
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "result.json")
        env = dict(os.environ, OMP_NUM_THREADS="1")
        cmd = [sys.executable, "-m", "hetnet.distributed.run", "--nproc", str(nproc), "--timeout", "600",
               os.path.abspath(__file__), "--worker", out, "--batch", str(batch), "--steps", str(steps),
               "--warmup", str(warmup)]
        subprocess.run(cmd, env=env, check=True)
        with open(out) as f:
            return json.load(f)


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--nproc", type=int, default=2)
    p.add_argument("--batch", type=int, default=64, help="global batch per step")
    p.add_argument("--steps", type=int, default=30)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--worker", metavar="OUT", help=argparse.SUPPRESS)
    a = p.parse_args()
    if a.worker:
        return worker(a.worker, a.batch, a.steps, a.warmup)
    print("| processes | per-rank batch | median step (ms) | images/s | speed-up |")
    print("|---:|---:|---:|---:|---:|")
    base = None
    for n in sorted({1, a.nproc}):
        r = run_config(n, a.batch, a.steps, a.warmup)
        ips = a.batch / (r["step_ms"] / 1e3)
        base = base or ips
        print("| {} | {} | {:.2f} | {:.0f} | {:.2f} |".format(n, r["per_rank_batch"], r["step_ms"], ips, ips / base))


if __name__ == "__main__":
    main()
