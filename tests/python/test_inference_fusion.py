"""Inference rewrites at net creation (core/inference_fusion.h) from Python and the CLI: a LeNet-style
net (Conv+Relu, FC+Relu, test-mode Dropout) and a ResNet-style block (Conv+BN+Relu, Conv+BN, Add,
Relu) give the same outputs (1e-5 relative to the magnitude) rewritten and as written, through
workspace.Predictor (hetnet_optimize=0 turns the rewrite off) and through `hetnet run` (with and
without --no-optimize, whose profile shows which op types ran)."""
import os
import subprocess

import numpy as np
import pytest

from hetnet import core, workspace
from hetnet.proto import caffe2_pb2

HERE = os.path.dirname(os.path.abspath(__file__))
HETNET = os.path.join(HERE, "..", "..", "build", "bin", "hetnet")
RNG = np.random.RandomState(7)


def _fill(init, name, shape, lo=-0.5, hi=0.5):
    init.GivenTensorFill([], name, shape=list(shape), values=RNG.uniform(lo, hi, size=shape).astype(np.float32).ravel().tolist())


def _bn(init, net, x, y, c):
    _fill(init, y + "_s", [c], 0.5, 1.5)
    _fill(init, y + "_b", [c])
    _fill(init, y + "_m", [c])
    _fill(init, y + "_v", [c], 0.2, 2.0)
    net.SpatialBN([x, y + "_s", y + "_b", y + "_m", y + "_v"], y, is_test=1, epsilon=1e-5)


def _lenet():
    init, net = core.Net("lenet_init"), core.Net("lenet")
    _fill(init, "c1_w", [6, 1, 5, 5]); _fill(init, "c1_b", [6])
    _fill(init, "c2_w", [16, 6, 5, 5]); _fill(init, "c2_b", [16])
    _fill(init, "f1_w", [32, 16 * 4 * 4]); _fill(init, "f1_b", [32])
    _fill(init, "f2_w", [10, 32]); _fill(init, "f2_b", [10])
    net.Conv(["data", "c1_w", "c1_b"], "c1", kernel=5, engine="EIGEN")
    net.Relu("c1", "r1")
    net.MaxPool("r1", "p1", kernel=2, stride=2)
    net.Conv(["p1", "c2_w", "c2_b"], "c2", kernel=5, engine="EIGEN")
    net.Relu("c2", "c2")  # in place
    net.MaxPool("c2", "p2", kernel=2, stride=2)
    net.FC(["p2", "f1_w", "f1_b"], "f1", engine="EIGEN")
    net.Relu("f1", "r3")
    net.Dropout("r3", "d3", is_test=1)
    net.FC(["d3", "f2_w", "f2_b"], "f2")
    net.Softmax("f2", "prob")
    net.AddExternalOutput(core.BlobReference("prob"))
    return init, net, ("data", (4, 1, 28, 28)), "prob"


def _resblock():
    init, net = core.Net("res_init"), core.Net("res")
    c = 8
    _fill(init, "w1", [c, c, 3, 3], -0.3, 0.3)
    _fill(init, "w2", [c, c, 3, 3], -0.3, 0.3)
    net.Conv(["x", "w1"], "a1", kernel=3, pad=1)
    _bn(init, net, "a1", "b1", c)
    net.Relu("b1", "r1")
    net.Conv(["r1", "w2"], "a2", kernel=3, pad=1)
    _bn(init, net, "a2", "b2", c)
    net.Add(["b2", "x"], "s")
    net.Relu("s", "out")
    net.AddExternalOutput(core.BlobReference("out"))
    return init, net, ("x", (2, c, 6, 6)), "out"


def _off(net):
    plain = caffe2_pb2.NetDef()
    plain.CopyFrom(net.Proto())
    arg = plain.arg.add()
    arg.name, arg.i = "hetnet_optimize", 0
    return plain


def _close(got, want):
    scale = max(1.0, float(np.abs(want).max()))
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-5 * scale)


@pytest.mark.parametrize("model", [_lenet, _resblock])
def test_predictor_rewritten_equals_as_written(ws, model):
    init, net, (name, shape), out = model()
    x = RNG.uniform(-1, 1, size=shape).astype(np.float32)
    (got,) = workspace.Predictor(init, net).run({name: x})
    (want,) = workspace.Predictor(init, _off(net)).run({name: x})
    assert got.shape == want.shape
    _close(got, want)


def _profile_types(stdout):
    """Op types in `hetnet run --profile`'s per-op-type table."""
    return {line.split("|")[1].strip() for line in stdout.splitlines() if line.startswith("|") and "---" not in line}


@pytest.mark.skipif(not os.path.exists(HETNET), reason="build/bin/hetnet not built")
@pytest.mark.parametrize("model", [_lenet, _resblock])
def test_cli_default_vs_no_optimize(tmp_path, model):
    init, net, (name, shape), out = model()
    (tmp_path / "init.pb").write_bytes(init.Proto().SerializeToString())
    (tmp_path / "predict.pb").write_bytes(net.Proto().SerializeToString())
    np.save(tmp_path / "x.npy", RNG.uniform(-1, 1, size=shape).astype(np.float32))
    results, types = {}, {}
    for flag in ([], ["--no-optimize"]):
        dst = tmp_path / ("y%d.npy" % len(flag))
        cmd = [HETNET, "run", "--init", str(tmp_path / "init.pb"), "--predict", str(tmp_path / "predict.pb"),
               "--input", "%s=%s" % (name, tmp_path / "x.npy"), "--output", "%s=%s" % (out, dst), "--profile"] + flag
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
        assert r.returncode == 0, r.stderr
        results[bool(flag)] = np.load(dst)
        types[bool(flag)] = _profile_types(r.stdout)
    _close(results[False], results[True])
    if model is _resblock:
        assert "SpatialBN" in types[True] and "SpatialBN" not in types[False]
    else:
        assert "Dropout" in types[True] and "Dropout" not in types[False]
        assert "Relu" in types[True] and "Relu" not in types[False]  # every Relu follows an EIGEN Conv/FC
