"""python/examples/dlrm_mixed_devices.py: it trains (the loss falls), its prediction matches a numpy
forward pass of the same trained weights, the embedding lookups stay on the CPU, and the script
runs as a subprocess."""
import importlib.util
import os
import subprocess
import sys

import numpy as np
from hetnet.proto import caffe2_pb2

from conftest import REPO_ROOT, require_operators, subprocess_env

SCRIPT = os.path.join(REPO_ROOT, "python", "examples", "dlrm_mixed_devices.py")
NEEDED = ("SparseLengthsSum", "SparseLengthsSumDenseGradient", "FC", "Relu", "Concat", "Sigmoid",
          "SquaredL2Distance", "SquaredL2DistanceGradient", "AveragedLoss", "WeightedSum", "GaussianFill")


def _load():
    spec = importlib.util.spec_from_file_location("dlrm_mixed_devices", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _numpy_forward(mod, params, batch):
    dense, sparse, _ = batch
    x = dense.astype(np.float64)
    for i in range(len(mod.BOTTOM) - 1):
        x = np.maximum(x @ params["bot_w%d" % i].T + params["bot_b%d" % i], 0.0)
    pooled = []
    for t, (ids, lengths) in enumerate(sparse):
        out = np.zeros((len(lengths), mod.EMB_DIM))
        np.add.at(out, np.repeat(np.arange(len(lengths)), lengths), params["emb_%d" % t][ids])
        pooled.append(out)
    x = np.concatenate([x] + pooled, axis=1)
    n = len(mod.TOP) - 1
    for i in range(n):
        x = x @ params["top_w%d" % i].T + params["top_b%d" % i]
        if i < n - 1:
            x = np.maximum(x, 0.0)
    return 1.0 / (1.0 + np.exp(-x))


def test_dlrm_trains_and_predicts_like_numpy(ws):
    require_operators(*NEEDED)
    mod = _load()
    result = mod.run(steps=24, seed=0, verbose=False)
    # The batches cycle every 4 steps; compare whole cycles so batch difficulty cancels out.
    cycles = np.array(result["losses"]).reshape(-1, 4).mean(axis=1)
    assert np.all(np.isfinite(cycles))
    assert cycles[-1] < 0.7 * cycles[0], cycles
    want = _numpy_forward(mod, result["params"], result["eval_batch"])
    np.testing.assert_allclose(result["prob"], want, rtol=1e-4, atol=1e-5)
    ops = result["report"]["ops"]
    sls = [op for op in ops if op["type"] == "SparseLengthsSum"]
    assert len(sls) == 2 and all(op["device"][0] == caffe2_pb2.CPU for op in sls)
    fcs = [op for op in ops if op["type"] == "FC"]
    if result["num_gpus"] == 0:
        assert all("soft placement" in op["reason"] for op in fcs)
        assert "SparseLengthsSum" not in result["moved"]
    else:
        assert all(tuple(op["device"]) == (caffe2_pb2.CUDA, 0) for op in fcs)


def test_dlrm_script_runs():
    require_operators(*NEEDED)
    proc = subprocess.run([sys.executable, SCRIPT], env=subprocess_env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    out = proc.stdout
    assert "Placement of net 'dlrm_mixed_devices'" in out
    assert "step 23: loss" in out and "prediction for the first 4 eval samples" in out
    from hetnet import workspace
    if workspace.NumCudaDevices() == 0:
        assert "no GPU: running everything on CPU with soft placement" in out
        assert "planned on a machine with one GPU" in out
