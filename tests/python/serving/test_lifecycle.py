"""Scheduling and lifecycle of a real `hetnet serve`: dynamic batching, queue limits, load / unload /
reload and polling while traffic runs, a model that fails at run time, and SIGTERM draining."""
import json
import os
import re
import shutil
import threading
import time
import urllib.error
import urllib.request

import numpy as np
import pytest
import tritonclient.http as httpclient
from tritonclient.utils import InferenceServerException

import serving_util as su

BATCHING_SIMPLE = su.SIMPLE_CONFIG + "\ndynamic_batching { max_queue_delay_microseconds: %d %s }\n"


def simple_inputs(seed, rows=1):
    rng = np.random.RandomState(seed)
    a = rng.randint(-100, 100, size=(rows, 16)).astype(np.int32)
    b = rng.randint(-100, 100, size=(rows, 16)).astype(np.int32)
    ins = [httpclient.InferInput("INPUT0", [rows, 16], "INT32"), httpclient.InferInput("INPUT1", [rows, 16], "INT32")]
    ins[0].set_data_from_numpy(a)
    ins[1].set_data_from_numpy(b)
    return a, b, ins


def check_simple(result, a, b):
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def metric(server, name, **labels):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=10) as r:
        text = r.read().decode()
    want = ",".join('%s="%s"' % kv for kv in sorted(labels.items()))
    for line in text.splitlines():
        m = re.match(r"^(\w+)\{([^}]*)\} (\S+)$", line)
        if m and m.group(1) == name and ",".join(sorted(m.group(2).split(","))) == want:
            return float(m.group(3))
    return None


def stats(client, name):
    return client.get_inference_statistics(name)["model_stats"][0]


def test_dynamic_batching_combines_requests_and_splits_results(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo, config=BATCHING_SIMPLE % (300000, "preferred_batch_size: [ 8 ]"))
    with su.ServerProcess(repo) as s:
        client = httpclient.InferenceServerClient(s.http_url, concurrency=8)
        reqs = [simple_inputs(i) for i in range(8)]
        futures = [client.async_infer("simple", ins) for (_, _, ins) in reqs]
        for (a, b, _), f in zip(reqs, futures):
            check_simple(f.get_result(), a, b)
        st = stats(client, "simple")
        assert st["inference_count"] == 8
        assert st["execution_count"] < 8, st  # at least two requests shared an execution
        assert st["inference_stats"]["success"]["count"] == 8
        assert sum(b["compute_infer"]["count"] for b in st["batch_stats"]) == st["execution_count"]
        assert metric(s, "nv_inference_count", model="simple", version="1") == 8
        assert s.stop() == 0


def test_full_queue_answers_503_and_the_queued_requests_still_succeed(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo, config=BATCHING_SIMPLE % (1500000, "default_queue_policy { max_queue_size: 2 }"))
    with su.ServerProcess(repo) as s:
        client = httpclient.InferenceServerClient(s.http_url, concurrency=4)
        queued = [simple_inputs(i) for i in range(2)]
        futures = [client.async_infer("simple", ins) for (_, _, ins) in queued]
        time.sleep(0.4)  # both wait in the queue for the 1.5 s batching delay
        _, _, ins = simple_inputs(9)
        with pytest.raises(InferenceServerException) as e:
            client.infer("simple", ins)
        assert "Exceeds maximum queue size" in str(e.value)
        assert e.value.status() == "503"
        for (a, b, _), f in zip(queued, futures):
            check_simple(f.get_result(), a, b)
        assert metric(s, "nv_inference_request_failure", model="simple", version="1", reason="REJECTED") == 1
        s.stop()


def test_a_request_that_fails_in_the_net_gets_an_error_and_the_model_keeps_serving(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    cfg = """
name: "anywidth"
platform: "caffe2_netdef"
max_batch_size: 4
input [ { name: "data" data_type: TYPE_FP32 dims: [ -1 ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ 3 ] } ]
"""
    weights = su.write_mlp_model(repo, "anywidth", sizes=(8, 3), config=cfg)
    with su.ServerProcess(repo) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        bad = httpclient.InferInput("data", [1, 5], "FP32")
        bad.set_data_from_numpy(np.ones((1, 5), np.float32))
        with pytest.raises(InferenceServerException) as e:
            client.infer("anywidth", [bad])
        assert e.value.status() in ("400", "500")
        assert "anywidth" in str(e.value) and "FC" in str(e.value)
        x = np.random.RandomState(0).rand(2, 8).astype(np.float32)
        good = httpclient.InferInput("data", [2, 8], "FP32")
        good.set_data_from_numpy(x)
        np.testing.assert_allclose(client.infer("anywidth", [good]).as_numpy("prob"), su.mlp_reference(x, weights),
                                   rtol=1e-5, atol=1e-6)
        assert stats(client, "anywidth")["inference_stats"]["fail"]["count"] == 1
        s.stop()


def test_inputs_are_copied_once_into_the_instance_tensors(server):
    client = httpclient.InferenceServerClient(server.http_url)
    before = metric(server, "hetnet_input_bytes_copied_total", model="simple", version="1") or 0
    a, b, ins = simple_inputs(3, rows=4)
    check_simple(client.infer("simple", ins), a, b)
    after = metric(server, "hetnet_input_bytes_copied_total", model="simple", version="1")
    assert after - before == a.nbytes + b.nbytes


def traffic(url, stop, failures, counts):
    client = httpclient.InferenceServerClient(url)
    i = 0
    deadline = time.time() + 60
    while not stop.is_set() and time.time() < deadline:
        a, b, ins = simple_inputs(i)
        try:
            check_simple(client.infer("simple", ins), a, b)
            counts[0] += 1
        except Exception as e:  # noqa: BLE001 - every failure is recorded and asserted on
            failures.append(repr(e))
        i += 1


def test_explicit_mode_load_unload_and_reload_under_traffic(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    su.write_simple_model(repo, "other")
    with su.ServerProcess(repo, ["--model-control-mode", "explicit", "--load-model", "simple"]) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        names = {m["name"]: m for m in client.get_model_repository_index()}
        assert names["simple"]["state"] == "READY" and names["other"].get("state", "") != "READY"
        assert not client.is_model_ready("other")
        client.load_model("other")
        assert client.is_model_ready("other")
        client.unload_model("other")
        assert not client.is_model_ready("other")
        with pytest.raises(InferenceServerException) as e:
            client.load_model("nosuchmodel")
        assert "failed to load 'nosuchmodel'" in str(e.value)
        stop, failures, counts = threading.Event(), [], [0]
        threads = [threading.Thread(target=traffic, args=(s.http_url, stop, failures, counts)) for _ in range(3)]
        for t in threads:
            t.start()
        for i in range(4):  # reloads with a changed config swap versions while requests run
            cfg = {"name": "simple", "platform": "caffe2_netdef", "max_batch_size": 8,
                   "input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]},
                             {"name": "INPUT1", "data_type": "TYPE_INT32", "dims": [16]}],
                   "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]},
                              {"name": "OUTPUT1", "data_type": "TYPE_INT32", "dims": [16]}],
                   "dynamic_batching": {"max_queue_delay_microseconds": 100 * (i + 1)}}
            client.load_model("simple", config=json.dumps(cfg))
            time.sleep(0.2)
        stop.set()
        for t in threads:
            t.join()
        assert failures == [] and counts[0] > 0
        assert client.get_model_config("simple")["dynamic_batching"]["max_queue_delay_microseconds"] == 400
        s.stop()


def test_none_mode_refuses_repository_control(server):
    client = httpclient.InferenceServerClient(server.http_url)
    with pytest.raises(InferenceServerException) as e:
        client.unload_model("simple")
    assert "explicit model load / unload is not allowed" in str(e.value)
    assert client.is_model_ready("simple")


def test_poll_mode_picks_up_a_new_version_while_serving(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    with su.ServerProcess(repo, ["--model-control-mode", "poll", "--repository-poll-secs", "1"]) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        stop, failures, counts = threading.Event(), [], [0]
        t = threading.Thread(target=traffic, args=(s.http_url, stop, failures, counts))
        t.start()
        su.write_simple_model(repo, version=2)
        deadline = time.time() + 15
        while time.time() < deadline and client.get_model_metadata("simple")["versions"] != ["2"]:
            time.sleep(0.1)
        time.sleep(0.3)
        stop.set()
        t.join()
        assert client.get_model_metadata("simple")["versions"] == ["2"]
        assert failures == [] and counts[0] > 0
        a, b, ins = simple_inputs(5)
        r = client.infer("simple", ins)
        check_simple(r, a, b)
        assert r.get_response()["model_version"] == "2"
        shutil.rmtree(repo / "simple")
        deadline = time.time() + 15
        while time.time() < deadline and client.is_model_ready("simple"):
            time.sleep(0.1)
        assert not client.is_model_ready("simple")
        s.stop()


def test_sigterm_finishes_accepted_requests_then_exits_0(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo, config=BATCHING_SIMPLE % (1000000, ""))
    with su.ServerProcess(repo, ["--exit-timeout-secs", "20"]) as s:
        client = httpclient.InferenceServerClient(s.http_url, concurrency=4)
        reqs = [simple_inputs(i) for i in range(3)]
        futures = [client.async_infer("simple", ins) for (_, _, ins) in reqs]
        time.sleep(0.3)  # the three wait in the queue for the 1 s batching delay
        s.proc.send_signal(15)
        time.sleep(0.2)
        ready = urllib.request.Request("http://%s/v2/health/ready" % s.http_url)
        try:
            code = urllib.request.urlopen(ready, timeout=5).status
        except urllib.error.HTTPError as e:
            code = e.code
        assert code == 503
        _, _, ins = simple_inputs(7)
        with pytest.raises(InferenceServerException) as e:
            httpclient.InferenceServerClient(s.http_url).infer("simple", ins)
        assert "Server is shutting down" in str(e.value)
        for (a, b, _), f in zip(reqs, futures):
            check_simple(f.get_result(), a, b)
        start = time.time()
        assert s.proc.wait(20) == 0
        assert time.time() - start < 20
        assert "stopped" in s.output()


def test_load_with_model_files_in_the_request(tmp_path, monkeypatch):
    """Triton's load override: the config and the model files travel in the request. The server
    writes them to a private folder of its temp directory, removed once the load has read them."""
    server_tmp = tmp_path / "server_tmp"
    server_tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(server_tmp))  # the server's temp directory
    repo = tmp_path / "repo"
    repo.mkdir()
    src = tmp_path / "src"
    su.write_simple_model(src, "uploaded", config=su.SIMPLE_CONFIG.replace('name: "simple"', 'name: "uploaded"'))
    netdef = (src / "uploaded" / "1" / "model.netdef").read_bytes()
    cfg = {"name": "uploaded", "platform": "caffe2_netdef", "max_batch_size": 8,
           "input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]},
                     {"name": "INPUT1", "data_type": "TYPE_INT32", "dims": [16]}],
           "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]},
                      {"name": "OUTPUT1", "data_type": "TYPE_INT32", "dims": [16]}]}
    with su.ServerProcess(repo, ["--model-control-mode", "explicit"]) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        with pytest.raises(InferenceServerException) as e:
            client.load_model("uploaded", config=json.dumps(cfg), files={"file:../../etc/x": netdef})
        assert "must be" in str(e.value)
        client.load_model("uploaded", config=json.dumps(cfg), files={"file:1/model.netdef": netdef})
        a, b, ins = simple_inputs(4)
        check_simple(client.infer("uploaded", ins), a, b)
        # Loaded, failed (a bad net) and refused (a bad file name) uploads leave no folder behind.
        with pytest.raises(InferenceServerException):
            client.load_model("uploaded2", config=json.dumps(dict(cfg, name="uploaded2")),
                              files={"file:1/model.netdef": b"\xff not a net"})
        assert [p.name for p in server_tmp.iterdir() if p.name.startswith("hetnet-upload-")] == []
        check_simple(client.infer("uploaded", ins), a, b)  # the loaded model needs none of it
        s.stop()


def test_deeply_nested_text_netdefs_fail_their_load_and_the_server_stays_up(tmp_path):
    """A model.pbtxt nested 100,000 deep (op { arg { n { op { ...) made protobuf's text parser, which
    has no recursion limit of its own, overflow the stack: `hetnet serve` died at startup, or on a
    load request carrying the file. Now the load fails with the nesting cap named."""
    depth = 100000
    deep = ('name: "deep"\n' + 'op { type: "Relu" arg { name: "a" n { ' * depth + "} } " * depth).encode()
    cfg_text = su.SIMPLE_CONFIG.replace('name: "simple"', 'name: "deep"') + '\ndefault_model_filename: "model.pbtxt"\n'
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    (repo / "deep" / "1").mkdir(parents=True)
    (repo / "deep" / "config.pbtxt").write_text(cfg_text)
    (repo / "deep" / "1" / "model.pbtxt").write_bytes(deep)
    with su.ServerProcess(repo, ["--model-control-mode", "explicit", "--load-model", "*",
                                 "--strict-readiness=false"]) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        models = {m["name"]: m for m in client.get_model_repository_index()}
        assert models["deep"]["state"] == "UNAVAILABLE"
        assert "nest deeper than the nesting-depth cap" in models["deep"]["reason"]
        cfg = {"name": "uploaded", "platform": "caffe2_netdef", "max_batch_size": 8,
               "default_model_filename": "model.pbtxt",
               "input": [{"name": "INPUT0", "data_type": "TYPE_INT32", "dims": [16]}],
               "output": [{"name": "OUTPUT0", "data_type": "TYPE_INT32", "dims": [16]}]}
        with pytest.raises(InferenceServerException) as e:
            client.load_model("uploaded", config=json.dumps(cfg), files={"file:1/model.pbtxt": deep})
        assert "nest deeper than the nesting-depth cap" in str(e.value)
        a, b, ins = simple_inputs(2)
        check_simple(client.infer("simple", ins), a, b)  # still serving
        assert s.stop() == 0


def test_a_flood_of_load_requests_is_refused_past_the_queue_not_given_threads(tmp_path):
    """300 concurrent gRPC load requests once held a thread each (315 threads for 36 s); now one
    worker takes 64 at most and the rest are answered UNAVAILABLE at once. HTTP shares the rule."""
    import grpc
    from tritonclient.grpc import service_pb2, service_pb2_grpc

    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_mlp_model(repo, "mlp", sizes=(784, 1024, 10))
    with su.ServerProcess(repo, ["--model-control-mode", "explicit"]) as s:
        def threads():
            with open("/proc/%d/status" % s.proc.pid) as f:
                return int(next(line for line in f if line.startswith("Threads")).split()[1])

        def load_request(i):
            r = service_pb2.RepositoryModelLoadRequest(model_name="mlp")
            # A config that differs from the last makes each load a real reload.
            r.parameters["config"].string_param = json.dumps({
                "max_batch_size": 8 + i % 2,
                "input": [{"name": "data", "data_type": "TYPE_FP32", "dims": [784]}],
                "output": [{"name": "prob", "data_type": "TYPE_FP32", "dims": [10]}]})
            return r

        base = threads()
        with grpc.insecure_channel(s.grpc_url) as ch:
            stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
            futures = [stub.RepositoryModelLoad.future(load_request(i), timeout=300) for i in range(300)]
            peak = base
            while not all(f.done() for f in futures):
                peak = max(peak, threads())
                time.sleep(0.02)
            ok, busy = 0, 0
            for f in futures:
                try:
                    f.result()
                    ok += 1
                except grpc.RpcError as e:
                    assert e.code() == grpc.StatusCode.UNAVAILABLE, (e.code(), e.details())
                    assert e.details() == "too many repository requests are in progress (64 wait or run); retry later"
                    busy += 1
            assert ok >= 64 and busy > 0 and ok + busy == 300, (ok, busy)
            assert peak - base < 16, (base, peak)
            # The worker is free again: a load, then an inference.
            stub.RepositoryModelLoad(load_request(0), timeout=60)
        # HTTP: 100 load requests on 100 connections against the same cap.
        results = []

        def http_load(i):
            body = json.dumps({"parameters": {"config": load_request(i).parameters["config"].string_param}}).encode()
            req = urllib.request.Request("http://%s/v2/repository/models/mlp/load" % s.http_url, data=body,
                                         method="POST")
            try:
                with urllib.request.urlopen(req, timeout=300) as r:
                    results.append(r.status)
            except urllib.error.HTTPError as e:
                results.append((e.code, json.loads(e.read())["error"]))

        workers = [threading.Thread(target=http_load, args=(i,)) for i in range(100)]
        for t in workers:
            t.start()
        for t in workers:
            t.join(300)
        busy = [r for r in results if r != 200]
        assert len(results) == 100 and len(busy) < 100 - 63, results[:5]
        for r in busy:
            assert r == (503, "too many repository requests are in progress (64 wait or run); retry later"), r
        client = httpclient.InferenceServerClient(s.http_url)
        x = np.random.RandomState(0).rand(1, 784).astype(np.float32)
        inp = httpclient.InferInput("data", [1, 784], "FP32")
        inp.set_data_from_numpy(x)
        np.testing.assert_allclose(client.infer("mlp", [inp]).as_numpy("prob"),
                                   su.mlp_reference(x, su.mlp_weights((784, 1024, 10))), rtol=1e-4, atol=1e-5)
        assert s.stop() == 0
