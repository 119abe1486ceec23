"""Model repository loading: Triton's layout and config fields, auto-complete, zoo file names, the
refusals (unsupported fields, names, symlinks out of the repository, unsafe ops, KIND_GPU without a
GPU) and instance-group placement, each against a real `hetnet serve`."""
import json
import os
import urllib.error
import urllib.request

import numpy as np
import pytest
import tritonclient.http as httpclient

import serving_util as su


def get_json(server, path):
    with urllib.request.urlopen("http://%s%s" % (server.http_url, path), timeout=10) as r:
        return json.loads(r.read())


def index(server):
    req = urllib.request.Request("http://%s/v2/repository/index" % server.http_url, data=b"", method="POST")
    with urllib.request.urlopen(req, timeout=10) as r:
        return {m["name"]: m for m in json.loads(r.read())}


def simple_infer(client, name="simple", version=""):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, np.int32)
    ins = [httpclient.InferInput("INPUT0", [1, 16], "INT32"), httpclient.InferInput("INPUT1", [1, 16], "INT32")]
    ins[0].set_data_from_numpy(a)
    ins[1].set_data_from_numpy(b)
    r = client.infer(name, ins, model_version=version)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT1"), a - b)
    return r


def test_bad_models_fail_alone_with_clear_reasons(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    su.write_simple_model(repo, "seqmodel", config=su.SIMPLE_CONFIG + "\nsequence_batching { }\n")
    su.write_simple_model(repo, "wrongname", config=su.SIMPLE_CONFIG.replace('name: "simple"', 'name: "other"'))
    su.write_simple_model(repo, "badplatform", config=su.SIMPLE_CONFIG.replace("caffe2_netdef", "tensorflow_graphdef"))
    # An ONNX model whose file is not ONNX.
    su.write_simple_model(repo, "badonnx", config=su.SIMPLE_CONFIG.replace("caffe2_netdef", "onnxruntime_onnx"))
    (repo / "badonnx" / "1" / "model.onnx").write_bytes(b"\x0a\xff\xff\xff\xff\x0fnot onnx")
    su.write_simple_model(repo, "badinput", config=su.SIMPLE_CONFIG.replace('"INPUT1"', '"NOPE"'))
    su.write_simple_model(repo, "unparsable", config="max_batch_size: [[[")
    # A model whose version folder is a symbolic link out of the repository.
    outside = tmp_path / "outside"
    su.write_simple_model(outside, "escape")
    (repo / "escape").mkdir()
    os.symlink(outside / "escape" / "1", repo / "escape" / "1")
    # A served net may not touch files unless --allow-unsafe-ops.
    predict = su._net("unsafe", [su._op("Save", ["INPUT0"], [], db="/tmp/x", db_type="minidb"),
                                 su._op("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
                                 su._op("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
                      ["INPUT0", "INPUT1"], ["OUTPUT0", "OUTPUT1"])
    su.write_model(repo, "unsafe", predict, None, su.SIMPLE_CONFIG.replace('name: "simple"', 'name: "unsafe"'))
    # Print writing to a file counts as touching files too.
    predict = su._net("printer", [su._op("Print", ["INPUT0"], [], to_file=1),
                                  su._op("Add", ["INPUT0", "INPUT1"], ["OUTPUT0"]),
                                  su._op("Sub", ["INPUT0", "INPUT1"], ["OUTPUT1"])],
                      ["INPUT0", "INPUT1"], ["OUTPUT0", "OUTPUT1"])
    su.write_model(repo, "printer", predict, None, su.SIMPLE_CONFIG.replace('name: "simple"', 'name: "printer"'))
    with su.ServerProcess(repo, ["--strict-readiness=false"]) as s:
        models = index(s)
        assert models["simple"]["state"] == "READY"
        reasons = {n: models[n]["reason"] for n in models if n != "simple"}
        assert all(models[n]["state"] == "UNAVAILABLE" for n in reasons), models
        assert "unsupported model config field 'sequence_batching'" in reasons["seqmodel"]
        assert "differs from its directory name" in reasons["wrongname"]
        assert "unsupported platform 'tensorflow_graphdef'" in reasons["badplatform"]
        assert "model.onnx" in reasons["badonnx"] and "badonnx" in reasons["badonnx"]
        assert "input 'NOPE' is not an external input" in reasons["badinput"]
        assert "does not parse" in reasons["unparsable"]
        assert "outside the model repository" in reasons["escape"]
        assert "contains operator Save" in reasons["unsafe"] and "--allow-unsafe-ops" in reasons["unsafe"]
        assert "contains operator Print" in reasons["printer"]
        client = httpclient.InferenceServerClient(s.http_url)
        simple_infer(client)  # the good model serves; the server stays up
        assert not client.is_model_ready("seqmodel")
        assert s.stop() == 0


def test_strict_readiness_reports_a_failed_model(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    su.write_simple_model(repo, "broken", config="max_batch_size: [[[")
    with su.ServerProcess(repo) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        assert client.is_server_live()
        assert not client.is_server_ready()
        simple_infer(client)
        s.stop()


def test_config_is_completed_from_the_netdef_and_zoo_names_load(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    # Zoo file names, no config.pbtxt: inputs are the external inputs the init net leaves unset.
    weights = su.write_mlp_model(repo, "zoo", sizes=(8, 4, 3), config="")
    os.remove(repo / "zoo" / "config.pbtxt")
    vdir = repo / "zoo" / "1"
    os.rename(vdir / "model.netdef", vdir / "predict_net.pb")
    os.rename(vdir / "init_model.netdef", vdir / "init_net.pb")
    with su.ServerProcess(repo) as s:
        config = get_json(s, "/v2/models/zoo/config")
        assert [i["name"] for i in config["input"]] == ["data"]
        assert [o["name"] for o in config["output"]] == ["prob"]
        assert config["platform"] == "caffe2_netdef"
        client = httpclient.InferenceServerClient(s.http_url)
        x = np.random.RandomState(1).rand(2, 8).astype(np.float32)
        inp = httpclient.InferInput("data", [2, 8], "FP32")
        inp.set_data_from_numpy(x)
        out = client.infer("zoo", [inp]).as_numpy("prob")
        np.testing.assert_allclose(out, su.mlp_reference(x, weights), rtol=1e-5, atol=1e-6)
        s.stop()


def test_version_policy_and_versioned_urls(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    cfg = su.SIMPLE_CONFIG + "\nversion_policy: { all { } }\n"
    for v in (1, 2, 3):
        su.write_simple_model(repo, config=cfg, version=v)
    os.makedirs(repo / "simple" / "0042")  # starts with 0: ignored, as in Triton
    os.makedirs(repo / "simple" / "notes")  # not numeric: ignored
    with su.ServerProcess(repo) as s:
        meta = get_json(s, "/v2/models/simple")
        assert meta["versions"] == ["1", "2", "3"]
        client = httpclient.InferenceServerClient(s.http_url)
        assert simple_infer(client, version="2").get_response()["model_version"] == "2"
        assert simple_infer(client).get_response()["model_version"] == "3"
        with pytest.raises(urllib.error.HTTPError) as e:
            get_json(s, "/v2/models/simple/versions/42")
        assert e.value.code == 404
        assert "Request for unknown model: 'simple' version 42 is not found" in json.loads(e.value.read())["error"]
        s.stop()


def test_kind_gpu_without_gpu_fails_unless_soft_placement(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    cfg = su.SIMPLE_CONFIG + '\ninstance_group [ { kind: KIND_GPU count: 2 gpus: [ 0 ] } ]\n'
    su.write_simple_model(repo, config=cfg)
    from hetnet import workspace
    if workspace.NumCudaDevices() > 0:
        pytest.skip("this test is about a machine without a GPU; this one has %d" % workspace.NumCudaDevices())
    with su.ServerProcess(repo, ["--strict-readiness=false"]) as s:
        reason = index(s)["simple"]["reason"]
        assert "KIND_GPU but this machine has no usable GPU" in reason and "--soft-placement" in reason
        s.stop()
    with su.ServerProcess(repo, ["--soft-placement"]) as s:
        simple_infer(httpclient.InferenceServerClient(s.http_url))
        s.stop()


def test_mixed_model_placement_report_under_soft_placement(tmp_path):
    """A model whose FC ops the NetDef pins to GPU 0 (KIND_MODEL keeps per-op placement). Without a GPU
    it runs under --soft-placement and the placement endpoint says where each op ran and why."""
    repo = tmp_path / "repo"
    repo.mkdir()
    cfg = """
name: "mixed"
platform: "caffe2_netdef"
max_batch_size: 16
input [ { name: "data" data_type: TYPE_FP32 dims: [ 8 ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ 3 ] } ]
instance_group [ { kind: KIND_MODEL } ]
"""
    weights = su.write_mlp_model(repo, "mixed", sizes=(8, 6, 3), config=cfg, gpu_ops=True)
    from hetnet import workspace
    gpus = workspace.NumCudaDevices()
    with su.ServerProcess(repo, [] if gpus else ["--soft-placement"]) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        x = np.random.RandomState(2).rand(4, 8).astype(np.float32)
        inp = httpclient.InferInput("data", [4, 8], "FP32")
        inp.set_data_from_numpy(x)
        np.testing.assert_allclose(client.infer("mixed", [inp]).as_numpy("prob"), su.mlp_reference(x, weights),
                                   rtol=1e-5, atol=1e-6)
        placement = get_json(s, "/v2/models/mixed/placement")
        fc = [op for op in placement["ops"] if op["type"] == "FC"]
        assert len(fc) == 2
        if gpus:
            assert all(op["device"] == "cuda:0" for op in fc)
            assert placement["copies"], placement
        else:
            assert all(op["device"] == "cpu" and "soft placement" in op["reason"] for op in fc), fc
            assert placement["copies"] == []
        s.stop()


def test_model_warmup_runs_before_ready_and_a_failing_warmup_fails_the_load(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    warm = su.SIMPLE_CONFIG + """
model_warmup [ { name: "zeros" batch_size: 2 count: 3
  inputs { key: "INPUT0" value: { data_type: TYPE_INT32 dims: [ 16 ] zero_data: true } }
  inputs { key: "INPUT1" value: { data_type: TYPE_INT32 dims: [ 16 ] random_data: true } } } ]
"""
    su.write_simple_model(repo, config=warm)
    bad = warm.replace('name: "simple"', 'name: "badwarm"').replace('key: "INPUT1"', 'key: "MISSING"')
    su.write_simple_model(repo, "badwarm", config=bad)
    with su.ServerProcess(repo, ["--strict-readiness=false"]) as s:
        models = index(s)
        assert models["simple"]["state"] == "READY"
        assert models["badwarm"]["state"] == "UNAVAILABLE" and "warmup 'zeros'" in models["badwarm"]["reason"]
        client = httpclient.InferenceServerClient(s.http_url)
        simple_infer(client)
        # Warmup runs are not requests: the statistics count only the one request above.
        assert client.get_inference_statistics("simple")["model_stats"][0]["inference_count"] == 1
        s.stop()


def test_a_single_model_directory_is_served_under_model_name(tmp_path):
    """KServe mounts one model at /mnt/models: the directory is the model, --model-name names it."""
    su.write_simple_model(tmp_path)
    with su.ServerProcess(tmp_path / "simple", ["--model-name", "adder", "--log-verbose", "1"]) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        assert client.is_model_ready("adder")
        a = np.ones((1, 16), np.int32)
        ins = [httpclient.InferInput("INPUT0", [1, 16], "INT32"), httpclient.InferInput("INPUT1", [1, 16], "INT32")]
        ins[0].set_data_from_numpy(a)
        ins[1].set_data_from_numpy(a)
        with pytest.raises(Exception):
            client.infer("simple", ins)
        s.stop()
        assert "loaded 'adder' version 1 (2 ops on cpu)" in s.output()
