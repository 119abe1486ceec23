"""Reduced-precision inference from Python and the command line (core/reduced_precision.h):
``workspace.Predictor(..., precision="bf16")`` converts the weights that only narrow operators read,
keeps float32 inputs and outputs, and answers within bfloat16's rounding of the float32 Predictor;
``hetnet run --precision bf16`` on an ONNX model does the same; a precision it does not know is an
error naming it. The bfloat16 kernels are oneDNN's (the DNNL engine, AVX-512 CPUs); without them
the cases skip, saying so."""
import os
import subprocess

import numpy as np
import pytest

from hetnet import _C, core, workspace


def _bf16_kernels():
    try:
        flags = open("/proc/cpuinfo").read()
    except OSError:
        flags = ""
    return "DNNL" in _C.operator_engines("FC", 0) and " avx512f" in flags


HETNET = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "build", "bin", "hetnet")
needs_bf16 = pytest.mark.skipif(not _bf16_kernels(), reason="no oneDNN bfloat16 kernels here (DNNL engine on an AVX-512 CPU)")


def _mlp():
    rng = np.random.RandomState(0)
    init = core.Net("init")
    for name, shape in (("w1", (64, 20)), ("b1", (64,)), ("w2", (10, 64)), ("b2", (10,))):
        init.GivenTensorFill([], name, shape=list(shape), values=(rng.rand(*shape) - 0.5).astype(np.float32).ravel().tolist())
    pred = core.Net("mlp")
    pred.FC(["data", "w1", "b1"], "h")
    pred.Relu("h", "r")
    pred.FC(["r", "w2", "b2"], "o")
    pred.Softmax("o", "prob")
    pred.Proto().external_input.extend(["data", "w1", "b1", "w2", "b2"])
    pred.Proto().external_output.append("prob")
    return init.Proto(), pred.Proto()


@needs_bf16
def test_bf16_predictor_converts_weights_and_matches_float32():
    init, pred = _mlp()
    full = workspace.Predictor(init, pred)
    narrow = workspace.Predictor(init, pred, precision="bf16")
    assert full.narrowed_weights == []
    assert sorted(narrow.narrowed_weights) == ["b1", "b2", "w1", "w2"]
    for batch in (1, 8):
        x = np.random.RandomState(batch).rand(batch, 20).astype(np.float32)
        want, got = full.run([x])[0], narrow.run([x])[0]
        assert got.dtype == np.float32 and got.shape == want.shape
        np.testing.assert_allclose(got, want, atol=2e-2)
        assert np.abs(got - want).max() > 0  # it did run narrow


def test_unknown_precision_is_an_error_naming_it():
    init, pred = _mlp()
    with pytest.raises(Exception) as e:
        workspace.Predictor(init, pred, precision="int3")
    assert "int3" in str(e.value) and "bfloat16" in str(e.value)


@needs_bf16
def test_cli_run_precision_bf16_matches_float32(tmp_path):
    onnx = pytest.importorskip("onnx")
    from onnx import helper, numpy_helper, TensorProto
    rng = np.random.RandomState(1)
    w = (rng.rand(8, 3, 3, 3) - 0.5).astype(np.float32)
    fc = (rng.rand(10, 8 * 6 * 6) - 0.5).astype(np.float32)
    graph = helper.make_graph(
        [helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["c"], ["r"]),
         helper.make_node("Flatten", ["r"], ["f"]),
         helper.make_node("Gemm", ["f", "fc"], ["y"], transB=1)],
        "convnet", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 6, 6])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 10])],
        [numpy_helper.from_array(w, "w"), numpy_helper.from_array(fc, "fc")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    path = tmp_path / "convnet.onnx"
    onnx.save(model, str(path))
    x = rng.rand(2, 3, 6, 6).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    hetnet = os.environ.get("HETNET_BIN") or HETNET
    if not os.path.exists(hetnet):
        pytest.skip("build/bin/hetnet not built")
    outs = {}
    for precision in ("float32", "bf16"):
        out = tmp_path / ("y_%s.npy" % precision)
        r = subprocess.run([hetnet, "run", str(path), "--input", "x=%s" % (tmp_path / "x.npy"), "--output",
                            "y=%s" % out, "--precision", precision], capture_output=True, text=True, timeout=120)
        assert r.returncode == 0, r.stderr
        outs[precision] = np.load(out)
        if precision == "bf16":
            assert "precision bfloat16: " in r.stdout and "weights converted" in r.stdout
    assert outs["bf16"].dtype == np.float32
    scale = np.abs(outs["float32"]).max()
    assert np.abs(outs["bf16"] - outs["float32"]).max() <= 2e-2 * scale
