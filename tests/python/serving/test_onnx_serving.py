"""ONNX models in `hetnet serve`: Triton's platform "onnxruntime_onnx" (file model.onnx) loads through
the importer, inputs and outputs come from the graph when the config leaves them out, and results
match onnxruntime's on the same file, over HTTP and gRPC with the real tritonclient."""
import numpy as np
import pytest

import serving_util as su

onnx = pytest.importorskip("onnx", reason="PyPI onnx is installed by tools/setup_deps.sh")
ort = pytest.importorskip("onnxruntime", reason="PyPI onnxruntime is installed by tools/setup_deps.sh")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
import tritonclient.grpc as grpcclient  # noqa: E402
import tritonclient.http as httpclient  # noqa: E402


def mlp_onnx(seed=0, sizes=(12, 16, 5), opset=17):
    """Gemm + Relu + Gemm + Softmax over a symbolic batch dimension "N", random weights."""
    rng = np.random.RandomState(seed)
    inits, nodes, x = [], [], "x"
    for i, (a, b) in enumerate(zip(sizes[:-1], sizes[1:])):
        inits.append(numpy_helper.from_array(rng.randn(b, a).astype(np.float32) * 0.3, "w%d" % i))
        inits.append(numpy_helper.from_array(rng.randn(b).astype(np.float32) * 0.1, "b%d" % i))
        nodes.append(helper.make_node("Gemm", [x, "w%d" % i, "b%d" % i], ["h%d" % i], transB=1))
        x = "h%d" % i
        if i + 2 < len(sizes):
            nodes.append(helper.make_node("Relu", [x], ["r%d" % i]))
            x = "r%d" % i
    nodes.append(helper.make_node("Softmax", [x], ["prob"], axis=-1))
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", sizes[0]])],
                              [helper.make_tensor_value_info("prob", TensorProto.FLOAT, ["N", sizes[-1]])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 8  # opset 17's IR version (onnx 1.23 writes a newer one than onnxruntime 1.30 reads)
    onnx.checker.check_model(model)
    return model


def write_onnx_model(repo, name, model, config=None):
    vdir = repo / name / "1"
    vdir.mkdir(parents=True)
    (vdir / "model.onnx").write_bytes(model.SerializeToString())
    if config is not None:
        (repo / name / "config.pbtxt").write_text(config)


def reference(model, x):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def test_onnx_models_load_complete_their_config_and_match_onnxruntime(tmp_path):
    repo = tmp_path / "repo"
    model = mlp_onnx()
    # Platform named, inputs and outputs left to the graph, batching on: dims lose the batch dimension.
    write_onnx_model(repo, "onnx_mlp", model,
                     'name: "onnx_mlp"\nplatform: "onnxruntime_onnx"\nmax_batch_size: 8\n'
                     "dynamic_batching { max_queue_delay_microseconds: 500 }\n")
    # No config at all: recognised from model.onnx, as Triton does; no batching, full dims.
    write_onnx_model(repo, "onnx_auto", mlp_onnx(seed=1))
    with su.ServerProcess(repo) as s:
        http = httpclient.InferenceServerClient(s.http_url)
        grpc = grpcclient.InferenceServerClient(s.grpc_url)
        cfg = http.get_model_config("onnx_mlp")
        assert cfg["platform"] == "onnxruntime_onnx"
        assert [(t["name"], t["data_type"], t["dims"]) for t in cfg["input"]] == [("x", "TYPE_FP32", [12])]
        assert [(t["name"], t["data_type"], t["dims"]) for t in cfg["output"]] == [("prob", "TYPE_FP32", [5])]
        auto = http.get_model_config("onnx_auto")
        assert auto["platform"] == "onnxruntime_onnx"
        assert [t["dims"] for t in auto["input"]] == [[-1, 12]]
        meta = http.get_model_metadata("onnx_mlp")
        assert meta["inputs"][0]["shape"] == [-1, 12]

        x = np.random.RandomState(3).rand(6, 12).astype(np.float32)
        inp = httpclient.InferInput("x", list(x.shape), "FP32")
        inp.set_data_from_numpy(x)
        got = http.infer("onnx_mlp", [inp]).as_numpy("prob")
        np.testing.assert_allclose(got, reference(model, x), rtol=1e-5, atol=1e-6)

        ginp = grpcclient.InferInput("x", list(x.shape), "FP32")
        ginp.set_data_from_numpy(x)
        got = grpc.infer("onnx_auto", [ginp]).as_numpy("prob")
        np.testing.assert_allclose(got, reference(mlp_onnx(seed=1), x), rtol=1e-5, atol=1e-6)

        # A request of the wrong width gets an error naming the model; the model keeps serving.
        bad = httpclient.InferInput("x", [1, 7], "FP32")
        bad.set_data_from_numpy(np.ones((1, 7), np.float32))
        with pytest.raises(Exception) as e:
            http.infer("onnx_mlp", [bad])
        assert "onnx_mlp" in str(e.value) or "x" in str(e.value)
        got = http.infer("onnx_mlp", [inp]).as_numpy("prob")
        np.testing.assert_allclose(got, reference(model, x), rtol=1e-5, atol=1e-6)
        assert s.stop() == 0


def test_an_onnx_model_with_an_unsupported_operator_fails_alone_naming_it(tmp_path):
    repo = tmp_path / "repo"
    node = helper.make_node("NoSuchOnnxOp", ["x"], ["y"])
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
    write_onnx_model(repo, "unsupported", helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]))
    write_onnx_model(repo, "good", mlp_onnx())
    with su.ServerProcess(repo, ["--strict-readiness=false"]) as s:
        http = httpclient.InferenceServerClient(s.http_url)
        index = {m["name"]: m for m in http.get_model_repository_index()}
        assert index["good"]["state"] == "READY"
        assert index["unsupported"]["state"] == "UNAVAILABLE"
        assert "NoSuchOnnxOp" in index["unsupported"]["reason"], index["unsupported"]
        assert s.stop() == 0


def test_precision_parameter_serves_bfloat16_within_its_rounding(tmp_path):
    """parameters { key: "precision" } (core/reduced_precision.h): the model runs its GEMMs in bfloat16
    where oneDNN has bfloat16 kernels; the protocol still carries FP32 and answers stay within
    bfloat16's rounding of the float32 model's. An unknown precision fails the load, naming it."""
    repo = tmp_path / "repo"
    model = mlp_onnx(seed=4, sizes=(64, 128, 10))
    base = 'platform: "onnxruntime_onnx"\nmax_batch_size: 8\n'
    write_onnx_model(repo, "full", model, 'name: "full"\n' + base)
    write_onnx_model(repo, "narrow", model, 'name: "narrow"\n' + base +
                     'parameters { key: "precision" value: { string_value: "bf16" } }\n')
    write_onnx_model(repo, "bad", model, 'name: "bad"\n' + base +
                     'parameters { key: "precision" value: { string_value: "int3" } }\n')
    with su.ServerProcess(repo, ["--strict-readiness=false"]) as s:
        http = httpclient.InferenceServerClient(s.http_url)
        index = {m["name"]: m for m in http.get_model_repository_index()}
        assert index["narrow"]["state"] == "READY", index
        assert index["bad"]["state"] == "UNAVAILABLE" and "int3" in index["bad"]["reason"], index
        x = np.random.RandomState(5).rand(4, 64).astype(np.float32)
        outs = {}
        for name in ("full", "narrow"):
            inp = httpclient.InferInput("x", list(x.shape), "FP32")
            inp.set_data_from_numpy(x)
            outs[name] = http.infer(name, [inp]).as_numpy("prob")
        assert outs["narrow"].dtype == np.float32
        np.testing.assert_allclose(outs["narrow"], outs["full"], atol=2e-2)
        if " avx512f" in open("/proc/cpuinfo").read():  # oneDNN's bfloat16 kernels run here
            assert np.abs(outs["narrow"] - outs["full"]).max() > 0
