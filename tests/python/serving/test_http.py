"""HTTP/REST front end of `hetnet serve` (KServe v2 / Triton REST, serving-facts §2.1-2.4, §2.7,
requirements 14-27 and 32-35), driven by the real tritonclient.http and by raw HTTP for the error table.

Run with PYTHONPATH=<build>/python (the fixtures build the model repository with hetnet.proto)."""
import gzip
import http.client
import json
import re
import socket
import struct
import time
import zlib

import numpy as np
import pytest
import tritonclient.http as httpclient  # a missing client fails the module; it never skips
from tritonclient.utils import InferenceServerException

import serving_util


# ---------------------------------------------------------------------------------------------------
# fixtures and helpers

STRINGS_CONFIG = """
name: "strings"
platform: "caffe2_netdef"
max_batch_size: 4
input [ { name: "IN" data_type: TYPE_STRING dims: [ -1 ] } ]
output [ { name: "OUT" data_type: TYPE_STRING dims: [ -1 ] } ]
"""

COPY_ANY_CONFIG = """
name: "copy_any"
platform: "caffe2_netdef"
max_batch_size: 0
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ 1, -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ 1, -1 ] } ]
"""

# "simple" whose queue holds 2 requests for 1 s: concurrent requests overflow it.
QUEUED_CONFIG = serving_util.SIMPLE_CONFIG + """
dynamic_batching { max_queue_delay_microseconds: 1000000 preferred_batch_size: [ 8 ]
                   default_queue_policy { max_queue_size: 2 } }
"""


@pytest.fixture(scope="module")
def model_repo(tmp_path_factory):
    """conftest's repository ("simple", "mlp") plus "strings", a BYTES pass-through (Copy), "queued" and
    "copy_any" (INT32 [1, -1] pass-through)."""
    repo = tmp_path_factory.mktemp("models") / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    serving_util.write_mlp_model(repo)
    net = serving_util._net("strings", [serving_util._op("Copy", ["IN"], ["OUT"])], ["IN"], ["OUT"])
    serving_util.write_model(repo, "strings", net, None, STRINGS_CONFIG)
    serving_util.write_simple_model(repo, name="queued", config=QUEUED_CONFIG)
    net = serving_util._net("copy_any", [serving_util._op("Copy", ["INPUT0"], ["OUTPUT0"])], ["INPUT0"], ["OUTPUT0"])
    serving_util.write_model(repo, "copy_any", net, None, COPY_ANY_CONFIG)
    return repo



def request(port, method, path, body=None, headers=None, timeout=10):
    """One request on a fresh connection: (status, headers dict (lower-case keys), body bytes)."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        conn.request(method, path, body=body, headers=headers or {})
        r = conn.getresponse()
        data = r.read()
        return r.status, {k.lower(): v for k, v in r.getheaders()}, data
    finally:
        conn.close()


def error_of(body):
    doc = json.loads(body)
    assert set(doc) == {"error"}, doc
    assert isinstance(doc["error"], str) and doc["error"]
    return doc["error"]


def assert_alive(server):
    status, _, body = request(server.http_port, "GET", "/v2/health/live")
    assert status == 200 and json.loads(body) == {"live": True}
    status, _, body = request(server.http_port, "GET", "/v2/models/simple/ready")
    assert status == 200 and json.loads(body) == {"name": "simple", "ready": True}


def simple_json(inputs=None, outputs=None, **extra):
    a = list(range(16))
    if inputs is None:
        inputs = [
            {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": a},
            {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16},
        ]
    doc = {"inputs": inputs}
    if outputs is not None:
        doc["outputs"] = outputs
    doc.update(extra)
    return json.dumps(doc).encode()


def post_infer(server, body, headers=None, model="simple", port=None):
    return request(port or server.http_port, "POST", "/v2/models/%s/infer" % model, body, headers)


def split_binary(headers, body):
    """(json header, binary rest) of an infer response."""
    n = int(headers.get("inference-header-content-length", len(body)))
    return json.loads(body[:n]), body[n:]


@pytest.fixture(scope="module")
def client(server):
    c = httpclient.InferenceServerClient(server.http_url, concurrency=4)
    yield c
    c.close()


def _simple_inputs(a, b, binary0=True, binary1=True):
    i0 = httpclient.InferInput("INPUT0", list(a.shape), "INT32")
    i0.set_data_from_numpy(a, binary_data=binary0)
    i1 = httpclient.InferInput("INPUT1", list(b.shape), "INT32")
    i1.set_data_from_numpy(b, binary_data=binary1)
    return [i0, i1]


# ---------------------------------------------------------------------------------------------------
# tritonclient: health, metadata, config


def test_health_with_tritonclient(client):
    assert client.is_server_live() is True
    assert client.is_server_ready() is True
    assert client.is_model_ready("simple") is True
    assert client.is_model_ready("simple", "1") is True
    assert client.is_model_ready("mlp") is True
    assert client.is_model_ready("no_such_model") is False
    assert client.is_model_ready("simple", "7") is False


def test_health_bodies(server):
    port = server.http_port
    assert request(port, "GET", "/v2/health/live")[::2] == (200, b'{"live":true}')
    status, headers, body = request(port, "GET", "/v2/health/ready")
    assert status == 200 and json.loads(body) == {"ready": True}
    assert headers["content-type"] == "application/json"
    status, _, body = request(port, "GET", "/v2/models/simple/versions/1/ready")
    assert status == 200 and json.loads(body) == {"name": "simple", "ready": True}
    status, _, body = request(port, "GET", "/v2/models/no_such_model/ready")
    assert status == 404
    assert error_of(body) == "Request for unknown model: 'no_such_model' is not found"


def test_server_metadata(client):
    md = client.get_server_metadata()
    assert md["name"] == "hetnet"
    assert isinstance(md["version"], str) and md["version"]
    for ext in ("binary_tensor_data", "model_configuration", "model_repository", "statistics"):
        assert ext in md["extensions"]


def test_model_metadata(client):
    for version in ("", "1"):
        md = client.get_model_metadata("simple", version)
        assert md["name"] == "simple"
        assert md["versions"] == ["1"]
        assert md["platform"] == "caffe2_netdef"
        assert [(t["name"], t["datatype"], t["shape"]) for t in md["inputs"]] == [
            ("INPUT0", "INT32", [-1, 16]), ("INPUT1", "INT32", [-1, 16])]
        assert [(t["name"], t["datatype"], t["shape"]) for t in md["outputs"]] == [
            ("OUTPUT0", "INT32", [-1, 16]), ("OUTPUT1", "INT32", [-1, 16])]
    md = client.get_model_metadata("mlp")
    assert md["inputs"][0]["name"] == "data" and md["inputs"][0]["shape"] == [-1, 784]
    with pytest.raises(InferenceServerException, match="Request for unknown model: 'nope' is not found"):
        client.get_model_metadata("nope")
    with pytest.raises(InferenceServerException, match="Request for unknown model: 'simple' version 7 is not found"):
        client.get_model_metadata("simple", "7")


def test_model_config(client, server):
    cfg = client.get_model_config("simple")
    assert cfg["name"] == "simple"
    assert cfg["max_batch_size"] == 8 and isinstance(cfg["max_batch_size"], int)
    assert [i["name"] for i in cfg["input"]] == ["INPUT0", "INPUT1"]
    assert cfg["input"][0]["data_type"] == "TYPE_INT32"
    assert cfg["input"][0]["dims"] == [16]
    status, headers, body = request(server.http_port, "GET", "/v2/models/simple/versions/1/config")
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body)["max_batch_size"] == 8


# ---------------------------------------------------------------------------------------------------
# tritonclient: inference


@pytest.mark.parametrize("binary0,binary1,out0_binary,out1_binary", [
    (True, True, True, True),        # the client's default path: everything binary
    (False, False, False, False),    # JSON only
    (True, False, True, False),      # mixed, as simple_http_infer_client.py
    (False, True, False, True),
])
def test_infer_simple(client, binary0, binary1, out0_binary, out1_binary):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    outputs = [httpclient.InferRequestedOutput("OUTPUT0", binary_data=out0_binary),
               httpclient.InferRequestedOutput("OUTPUT1", binary_data=out1_binary)]
    result = client.infer("simple", _simple_inputs(a, b, binary0, binary1), outputs=outputs, request_id="req-7")
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)
    resp = result.get_response()
    assert resp["model_name"] == "simple" and resp["model_version"] == "1" and resp["id"] == "req-7"
    by_name = {o["name"]: o for o in resp["outputs"]}
    for name, binary in (("OUTPUT0", out0_binary), ("OUTPUT1", out1_binary)):
        o = by_name[name]
        assert o["datatype"] == "INT32" and o["shape"] == [1, 16]
        if binary:
            assert o["parameters"]["binary_data_size"] == 64 and "data" not in o
        else:
            assert "parameters" not in o or "binary_data_size" not in o["parameters"]
            assert len(o["data"]) == 16


def test_infer_batch_and_output_order(client):
    a = np.random.RandomState(1).randint(-1000, 1000, size=(5, 16)).astype(np.int32)
    b = np.random.RandomState(2).randint(-1000, 1000, size=(5, 16)).astype(np.int32)
    outputs = [httpclient.InferRequestedOutput("OUTPUT1"), httpclient.InferRequestedOutput("OUTPUT0")]
    result = client.infer("simple", _simple_inputs(a, b), outputs=outputs)
    assert [o["name"] for o in result.get_response()["outputs"]] == ["OUTPUT1", "OUTPUT0"]
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def test_infer_no_outputs_listed(client):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.arange(16, dtype=np.int32).reshape(1, 16) * 2
    result = client.infer("simple", _simple_inputs(a, b))
    resp = result.get_response()
    assert [o["name"] for o in resp["outputs"]] == ["OUTPUT0", "OUTPUT1"]  # config order
    assert all(o["parameters"]["binary_data_size"] == 64 for o in resp["outputs"])  # binary_data_output
    np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def test_infer_one_output_requested(client):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    result = client.infer("simple", _simple_inputs(a, a), outputs=[httpclient.InferRequestedOutput("OUTPUT1")])
    assert [o["name"] for o in result.get_response()["outputs"]] == ["OUTPUT1"]
    assert result.as_numpy("OUTPUT0") is None
    np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), np.zeros((1, 16), np.int32))


@pytest.mark.parametrize("binary", [True, False])
def test_infer_mlp_matches_reference(client, binary):
    weights = serving_util.mlp_weights()
    x = np.random.RandomState(5).rand(3, 784).astype(np.float32)
    inp = httpclient.InferInput("data", [3, 784], "FP32")
    inp.set_data_from_numpy(x, binary_data=binary)
    result = client.infer("mlp", [inp], outputs=[httpclient.InferRequestedOutput("prob", binary_data=binary)])
    prob = result.as_numpy("prob")
    assert prob.shape == (3, 10) and prob.dtype == np.float32
    np.testing.assert_allclose(prob, serving_util.mlp_reference(x, weights), rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("binary", [True, False])
def test_infer_bytes(client, server, binary):
    x = np.array([[b"hello", b"", "w\u00f6rld".encode(), b"a\x00b"]], dtype=np.object_)
    inp = httpclient.InferInput("IN", [1, 4], "BYTES")
    inp.set_data_from_numpy(x, binary_data=binary)
    result = client.infer("strings", [inp], outputs=[httpclient.InferRequestedOutput("OUT", binary_data=binary)])
    out = result.as_numpy("OUT")
    assert out.shape == (1, 4)
    got = [v if isinstance(v, bytes) else v.encode() for v in out.ravel()]
    assert got == list(x.ravel())
    o = result.get_response()["outputs"][0]
    assert o["datatype"] == "BYTES"
    if binary:
        assert o["parameters"]["binary_data_size"] == 4 * 4 + 5 + 0 + 6 + 3
    # JSON strings in, wrong element types refused
    body = json.dumps({"inputs": [{"name": "IN", "shape": [1, 2], "datatype": "BYTES", "data": ["x", 5]}]}).encode()
    status, _, data = post_infer(server, body, model="strings")
    assert status == 400 and "IN" in error_of(data)
    # raw binary BYTES needs input shape [1]
    status, _, data = post_infer(server, b"\x01\0\0\0a", {"Inference-Header-Content-Length": "0"}, model="strings")
    assert status == 400 and error_of(data) == "For BYTE datatype raw input 'IN', the model must have input shape [1]"


@pytest.mark.parametrize("algorithm", ["gzip", "deflate"])
def test_infer_compressed_request_and_response(client, algorithm):
    weights = serving_util.mlp_weights()
    x = np.random.RandomState(9).rand(2, 784).astype(np.float32)
    inp = httpclient.InferInput("data", [2, 784], "FP32")
    inp.set_data_from_numpy(x)
    result = client.infer("mlp", [inp], request_compression_algorithm=algorithm,
                          response_compression_algorithm=algorithm)
    np.testing.assert_allclose(result.as_numpy("prob"), serving_util.mlp_reference(x, weights), rtol=1e-4, atol=1e-6)


def test_async_infer(client):
    rng = np.random.RandomState(3)
    pending = []
    for _ in range(12):
        a = rng.randint(-50, 50, size=(2, 16)).astype(np.int32)
        b = rng.randint(-50, 50, size=(2, 16)).astype(np.int32)
        pending.append((a, b, client.async_infer("simple", _simple_inputs(a, b))))
    for a, b, handle in pending:
        result = handle.get_result(timeout=30)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + b)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT1"), a - b)


def _success_count(client, model):
    stats = client.get_inference_statistics(model)
    assert len(stats["model_stats"]) == 1
    s = stats["model_stats"][0]
    assert s["name"] == model and s["version"] == "1"
    return s["inference_stats"]["success"]["count"], s


def test_statistics_count_requests(client, server):
    before, _ = _success_count(client, "simple")
    a = np.ones((1, 16), np.int32)
    n = 7
    for _ in range(n):
        client.infer("simple", _simple_inputs(a, a))
    deadline = time.time() + 5
    after, s = _success_count(client, "simple")
    while after < before + n and time.time() < deadline:
        time.sleep(0.05)
        after, s = _success_count(client, "simple")
    assert after == before + n
    assert isinstance(after, int) and isinstance(s["inference_count"], int)
    assert isinstance(s["inference_stats"]["success"]["ns"], int) and s["inference_stats"]["success"]["ns"] > 0
    every = client.get_inference_statistics()
    assert {m["name"] for m in every["model_stats"]} >= {"simple", "mlp"}
    status, _, body = request(server.http_port, "GET", "/v2/models/simple/versions/1/stats")
    assert status == 200 and json.loads(body)["model_stats"][0]["name"] == "simple"


def test_repository_index(client, server):
    index = client.get_model_repository_index()
    assert isinstance(index, list)
    by_name = {m["name"]: m for m in index}
    assert by_name["simple"]["state"] == "READY" and by_name["mlp"]["state"] == "READY"
    status, _, body = request(server.http_port, "POST", "/v2/repository/index", b'{"ready": true}')
    assert status == 200 and {m["name"] for m in json.loads(body)} >= {"simple", "mlp"}
    status, _, body = request(server.http_port, "POST", "/v2/repository/index", b'{"ready": 3}')
    assert status == 400 and error_of(body)


def test_load_unload_refused_without_explicit_mode(client, server):
    with pytest.raises(InferenceServerException, match="explicit model load / unload is not allowed"):
        client.load_model("simple")
    status, _, body = request(server.http_port, "POST", "/v2/repository/models/simple/unload",
                              b'{"parameters":{"unload_dependents":false}}')
    assert status == 503 and "explicit model load / unload is not allowed" in error_of(body)
    assert_alive(server)


def test_placement(server):
    status, headers, body = request(server.http_port, "GET", "/v2/models/mlp/placement")
    assert status == 200 and headers["content-type"] == "application/json"
    json.loads(body)
    status, headers, body = request(server.http_port, "GET", "/v2/models/mlp/versions/1/placement?format=svg")
    if status == 200:
        assert headers["content-type"] == "image/svg+xml" and b"<svg" in body
    else:  # the server has no Graphviz: a clean 501, not a crash
        assert status == 501 and "dot" in error_of(body)
    status, _, body = request(server.http_port, "GET", "/v2/models/nope/placement")
    assert status == 404 and error_of(body) == "Request for unknown model: 'nope' is not found"


def test_metrics_endpoint(server, client):
    a = np.ones((1, 16), np.int32)
    client.infer("simple", _simple_inputs(a, a))
    status, headers, body = request(server.metrics_port, "GET", "/metrics")
    assert status == 200
    assert headers["content-type"].startswith("text/plain; version=0.0.4")
    text = body.decode()
    assert "nv_inference_request_success" in text and 'model="simple"' in text
    assert request(server.metrics_port, "GET", "/nope")[0] == 404
    assert request(server.metrics_port, "POST", "/metrics", b"")[0] == 405


# ---------------------------------------------------------------------------------------------------
# raw HTTP: routing and the error table


@pytest.mark.parametrize("method,path", [
    ("GET", "/"), ("GET", "/v2/foo"), ("GET", "/v3"), ("GET", "/v2/models"),
    ("GET", "/v2/models/simple/versions/abc"), ("GET", "/v2/models/simple/versions/1x/ready"),
    ("GET", "/v2/models/simple/nope"), ("POST", "/v2/models/simple/versions/one/infer"),
    ("GET", "/v2/health/alive"), ("GET", "/v2/systemsharedmemory/region/r/size"),
    ("POST", "/v2/systemsharedmemory/register"), ("GET", "/v2/systemsharedmemory/region//status"),
])
def test_unknown_path_404(server, method, path):
    status, headers, body = request(server.http_port, method, path)
    assert status == 404 and headers["content-type"] == "application/json"
    assert json.loads(body) == {"error": "Not Found"}
    assert_alive(server)


@pytest.mark.parametrize("method,path", [
    ("POST", "/v2/health/live"), ("PUT", "/v2/health/ready"), ("DELETE", "/v2"),
    ("GET", "/v2/models/simple/infer"), ("POST", "/v2/models/simple"), ("POST", "/v2/models/simple/config"),
    ("GET", "/v2/repository/index"), ("GET", "/v2/repository/models/simple/load"),
    ("POST", "/v2/models/stats"), ("GET", "/v2/systemsharedmemory/region/r/register"),
    ("GET", "/v2/systemsharedmemory/unregister"), ("POST", "/v2/systemsharedmemory/status"),
])
def test_wrong_verb_405(server, method, path):
    status, _, body = request(server.http_port, method, path, b"" if method != "GET" else None)
    assert status == 405
    assert error_of(body) == "Method Not Allowed"
    assert_alive(server)


def test_unknown_query_parameters_ignored(server):
    status, _, body = request(server.http_port, "GET", "/v2/models/simple?x=1&format=svg")
    assert status == 200 and json.loads(body)["name"] == "simple"


@pytest.mark.parametrize("body", [b"{", b"not json", b'{"inputs": [}', b"", b"[1, 2]", b'{"inputs": 5}',
                                  b'{"inputs": [{"name": "INPUT0"}]}'])
def test_invalid_json_400(server, body):
    status, _, data = post_infer(server, body)
    assert status == 400
    assert error_of(data)
    assert_alive(server)


def test_invalid_json_message(server):
    status, _, data = post_infer(server, b'{"inputs": [}')
    assert status == 400 and "failed to parse the request JSON buffer" in error_of(data)


def test_json_nesting_depth(server):
    deep = b"[" * 101 + b"]" * 101
    body = b'{"inputs":[{"name":"INPUT0","shape":[1,16],"datatype":"INT32","data":' + deep + b"}]}"
    status, _, data = post_infer(server, b"[" * 101 + b"]" * 101)
    assert status == 400
    assert error_of(data) == "JSON nesting depth exceeds maximum allowed limit (100)"
    status, _, data = post_infer(server, body)
    assert status == 400 and error_of(data) == "JSON nesting depth exceeds maximum allowed limit (100)"
    # 100 levels parse (the request is then refused for other reasons), and a huge depth does not crash
    status, _, data = post_infer(server, b"[" * 100 + b"]" * 100)
    assert status == 400 and "nesting depth" not in error_of(data)
    status, _, data = post_infer(server, b"[" * 1000000)
    assert status == 400 and error_of(data) == "JSON nesting depth exceeds maximum allowed limit (100)"
    assert_alive(server)


def test_wrong_datatype_400(server):
    body = simple_json(inputs=[
        {"name": "INPUT0", "shape": [1, 16], "datatype": "FP32", "data": [1.5] * 16},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}])
    status, _, data = post_infer(server, body)
    assert status == 400
    assert error_of(data) == "inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'"
    assert_alive(server)


def test_wrong_shape_400(server):
    body = simple_json(inputs=[
        {"name": "INPUT0", "shape": [1, 8], "datatype": "INT32", "data": [1] * 8},
        {"name": "INPUT1", "shape": [1, 8], "datatype": "INT32", "data": [1] * 8}])
    status, _, data = post_infer(server, body)
    assert status == 400
    assert error_of(data).startswith("unexpected shape for input 'INPUT0' for model 'simple'. Expected [-1,16]")
    # data that does not fill the declared shape
    body = simple_json(inputs=[
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [1] * 15},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}])
    status, _, data = post_infer(server, body)
    assert status == 400 and "INPUT0" in error_of(data)
    assert_alive(server)


def test_json_data_nested_and_bool_checks(server):
    nested = [[list(range(8)), list(range(8, 16))]]  # shape [1,16] given as [1][2][8]: flattened
    body = simple_json(inputs=[
        {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": nested},
        {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [[1] * 16]}],
        outputs=[{"name": "OUTPUT0", "parameters": {"binary_data": False}}])
    status, headers, data = post_infer(server, body)
    assert status == 200 and headers["content-type"] == "application/json"
    doc = json.loads(data)
    assert doc["outputs"][0]["data"] == [i + 1 for i in range(16)]
    for bad in (["x"] * 16, [1.5] * 16, [2 ** 40] * 16, [True] * 16):
        body = simple_json(inputs=[
            {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": bad},
            {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}])
        status, _, data = post_infer(server, body)
        assert status == 400 and "INPUT0" in error_of(data), bad


def test_fp16_in_json_400(server):
    body = simple_json(inputs=[{"name": "INPUT0", "shape": [1, 16], "datatype": "FP16", "data": [1.0] * 16}])
    status, _, data = post_infer(server, body)
    assert status == 400 and "FP16" in error_of(data)
    assert_alive(server)


def test_unknown_model_404(server):
    status, _, data = post_infer(server, simple_json(), model="nope")
    assert status == 404 and error_of(data) == "Request for unknown model: 'nope' is not found"
    status, _, data = request(server.http_port, "POST", "/v2/models/simple/versions/3/infer", simple_json())
    assert status == 404 and error_of(data) == "Request for unknown model: 'simple' version 3 is not found"
    status, _, data = request(server.http_port, "GET", "/v2/models/nope/stats")
    assert status == 404
    assert_alive(server)


def test_duplicate_input_and_output_400(server):
    inp = {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": [1] * 16}
    status, _, data = post_infer(server, simple_json(inputs=[inp, inp]))
    assert status == 400 and "INPUT0" in error_of(data)
    status, _, data = post_infer(server, simple_json(outputs=[{"name": "OUTPUT0"}, {"name": "OUTPUT0"}]))
    assert status == 400 and error_of(data) == "output 'OUTPUT0' already exists in request"
    status, _, data = post_infer(server, simple_json(outputs=[{"name": "OUTPUT9"}]))
    assert status == 400 and "OUTPUT9" in error_of(data)
    assert_alive(server)


def test_sequence_parameters_400(server):
    status, _, data = post_infer(server, simple_json(parameters={"sequence_id": 5, "sequence_start": True}))
    assert status == 400 and error_of(data) == "sequence batching not supported"
    status, _, data = post_infer(server, simple_json(parameters={"priority": "high"}))
    assert status == 400 and "priority" in error_of(data)
    status, headers, data = post_infer(server, simple_json(parameters={"timeout": 10000000, "custom": "x"},
                                                           id="abc"))
    assert status == 200 and json.loads(data)["id"] == "abc"
    assert_alive(server)


def _binary_request(a, b, sizes=None, header_length=None, extra=b""):
    """INPUT0 and INPUT1 binary; `sizes` overrides the declared binary_data_size values."""
    sizes = sizes or (a.nbytes, b.nbytes)
    doc = {"inputs": [
        {"name": "INPUT0", "shape": list(a.shape), "datatype": "INT32", "parameters": {"binary_data_size": sizes[0]}},
        {"name": "INPUT1", "shape": list(b.shape), "datatype": "INT32", "parameters": {"binary_data_size": sizes[1]}}],
        "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}, {"name": "OUTPUT1"}]}
    head = json.dumps(doc).encode()
    body = head + a.tobytes() + b.tobytes() + extra
    hl = str(len(head)) if header_length is None else header_length
    return body, {"Inference-Header-Content-Length": hl}


def test_binary_request_raw_http(server):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 7, np.int32)
    body, headers = _binary_request(a, b)
    status, rh, data = post_infer(server, body, headers)
    assert status == 200
    assert rh["content-type"] == "application/octet-stream"
    doc, rest = split_binary(rh, data)
    assert [o["name"] for o in doc["outputs"]] == ["OUTPUT0", "OUTPUT1"]
    assert doc["outputs"][0]["parameters"]["binary_data_size"] == 64 and "data" not in doc["outputs"][0]
    assert doc["outputs"][1]["data"] == list((a - b).ravel())
    assert len(rest) == 64
    np.testing.assert_array_equal(np.frombuffer(rest, np.int32), (a + b).ravel())


@pytest.mark.parametrize("sizes,extra", [((64, 60), b""), ((64, 64), b"xxxx"), ((64, 68), b""), ((0, 64), b""),
                                         ((64, 2 ** 62), b"")])
def test_binary_sizes_that_lie_400(server, sizes, extra):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    body, headers = _binary_request(a, a, sizes=sizes, extra=extra)
    status, _, data = post_infer(server, body, headers)
    assert status == 400 and error_of(data)
    assert_alive(server)


@pytest.mark.parametrize("value", ["abc", "12abc", "-5", "1e3", "99999999999999999999999", "100000", " "])
def test_header_length_garbage_400(server, value):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    body, headers = _binary_request(a, a, header_length=value)
    status, _, data = post_infer(server, body, headers)
    assert status == 400
    msg = error_of(data)
    assert "Inference-Header-Content-Length" in msg
    if value in ("abc", "12abc", "1e3"):
        assert msg.startswith("Unable to parse Inference-Header-Content-Length")
    assert_alive(server)


def test_binary_data_without_header_400(server):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    body, _ = _binary_request(a, a)
    status, _, data = post_infer(server, body)  # no Inference-Header-Content-Length: the JSON parse fails
    assert status == 400 and error_of(data)
    assert_alive(server)


def test_raw_binary_request(server):
    weights = serving_util.mlp_weights()
    x = np.random.RandomState(11).rand(1, 784).astype(np.float32)
    status, rh, data = post_infer(server, x.tobytes(), {"Inference-Header-Content-Length": "0"}, model="mlp")
    assert status == 200, data
    doc, rest = split_binary(rh, data)
    assert doc["outputs"][0]["name"] == "prob" and doc["outputs"][0]["shape"] == [1, 10]
    prob = np.frombuffer(rest, np.float32).reshape(1, 10)
    np.testing.assert_allclose(prob, serving_util.mlp_reference(x, weights), rtol=1e-4, atol=1e-6)
    status, _, data = post_infer(server, b"\0" * 128, {"Inference-Header-Content-Length": "0"})
    assert status == 400 and error_of(data).startswith("Raw request must only have 1 input")
    assert_alive(server)


def test_declared_huge_body_refused_without_reading(server):
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    try:
        s.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2147483648\r\n\r\n")
        s.sendall(b"{" * 1000)
        t0 = time.time()
        data = b""
        while b"\r\n\r\n" not in data or len(data.split(b"\r\n\r\n", 1)[1]) < 20:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
        assert time.time() - t0 < 5
    finally:
        s.close()
    head, body = data.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 400")
    assert b"request JSON size of 2147483648 bytes exceeds the maximum allowed input size of 67108864 bytes" in body
    assert_alive(server)


def send_until_closed(server, raw):
    """Sends raw bytes, reads until the server closes the connection; returns (head, body)."""
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    try:
        s.sendall(raw)
        data = b""
        while True:
            chunk = s.recv(65536)
            if not chunk:
                break
            data += chunk
    finally:
        s.close()
    head, body = data.split(b"\r\n\r\n", 1)
    return head, body


def test_chunked_body_over_the_limit_refused(server):
    """A chunk announcing 2^64-1 bytes: refused at once, saying which limit (the exact size is unknown)."""
    head, body = send_until_closed(server, b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\n"
                                           b"Transfer-Encoding: chunked\r\n\r\nffffffffffffffff\r\nab\r\n")
    assert head.startswith(b"HTTP/1.1 400")
    assert error_of(body).startswith("request JSON size exceeds the maximum allowed input size of 67108864 bytes")
    assert_alive(server)


def test_header_too_large_431(server):
    status, _, data = request(server.http_port, "GET", "/v2/health/live", headers={"X-Big": "a" * 20000})
    assert status == 431 and error_of(data)
    assert_alive(server)


@pytest.mark.parametrize("raw", [
    b"GARBAGE\r\n\r\n",
    b"GET /v2 HTTP/9.9\r\n\r\n",
    b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n",
    b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\n",
    b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
    b"GET /v2 HTTP/1.1\r\nBad Header Line\r\n\r\n",
])
def test_malformed_http_400(server, raw):
    head, body = send_until_closed(server, raw)
    assert head.startswith(b"HTTP/1.1 400 ") and b"Connection: close" in head
    assert error_of(body).startswith("malformed HTTP request")
    assert_alive(server)


def test_keep_alive_many_requests_one_connection(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    try:
        for i in range(50):
            conn.request("POST", "/v2/models/simple/infer", body=simple_json(id=str(i)))
            r = conn.getresponse()
            body = r.read()
            assert r.status == 200 and json.loads(body)["id"] == str(i)
            conn.request("GET", "/v2/nope")
            r = conn.getresponse()
            assert r.status == 404 and r.read() == b'{"error":"Not Found"}'
        assert conn.sock is not None  # never reconnected: http.client would have had to
    finally:
        conn.close()


def test_pipelined_requests(server):
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    try:
        req = b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n"
        s.sendall(req * 3)
        data = b""
        deadline = time.time() + 5
        while data.count(b'{"live":true}') < 3 and time.time() < deadline:
            data += s.recv(65536)
        assert data.count(b"HTTP/1.1 200 OK") == 3
    finally:
        s.close()


def test_pipelined_requests_with_bodies(server):
    """Bodies of declared length are read straight into place: what follows one (the next request,
    sent in the same packet) must stay for the next read."""
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
    try:
        reqs = b""
        for i in range(3):
            body = simple_json(id="p%d" % i)
            reqs += (b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                     + body)
        s.sendall(reqs + b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        data = b""
        deadline = time.time() + 10
        while b'{"live":true}' not in data and time.time() < deadline:
            data += s.recv(65536)
        assert data.count(b"HTTP/1.1 200 OK") == 4
        assert [data.find(b'"id":"p%d"' % i) for i in range(3)] == sorted(data.find(b'"id":"p%d"' % i) for i in range(3))
        assert data.find(b'"id":"p0"') > 0
    finally:
        s.close()


def test_a_large_body_sent_in_pieces(server):
    """A 4 MiB binary input arriving in 1,000 small sends is put together in order."""
    x = np.arange(1 << 20, dtype=np.int32).reshape(1, -1) % 1000
    header = json.dumps({"inputs": [{"name": "INPUT0", "shape": list(x.shape), "datatype": "INT32",
                                     "parameters": {"binary_data_size": x.nbytes}}],
                         "outputs": [{"name": "OUTPUT0", "parameters": {"binary_data": True}}]}).encode()
    body = header + x.tobytes()
    s = socket.create_connection(("127.0.0.1", server.http_port), timeout=30)
    try:
        s.sendall(b"POST /v2/models/copy_any/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n"
                  b"Inference-Header-Content-Length: %d\r\n\r\n" % (len(body), len(header)))
        step = len(body) // 1000 + 1
        for i in range(0, len(body), step):
            s.sendall(body[i:i + step])
        data = b""
        while b"\r\n\r\n" not in data:
            data += s.recv(65536)
        head, rest = data.split(b"\r\n\r\n", 1)
        length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
        json_len = int(re.search(rb"Inference-Header-Content-Length: (\d+)", head).group(1))
        while len(rest) < length:
            rest += s.recv(1 << 20)
        assert head.startswith(b"HTTP/1.1 200")
        np.testing.assert_array_equal(np.frombuffer(rest[json_len:length], np.int32).reshape(x.shape), x)
    finally:
        s.close()


def test_chunked_request_body(server):
    conn = http.client.HTTPConnection("127.0.0.1", server.http_port, timeout=10)
    try:
        body = simple_json()
        chunks = [body[i:i + 10] for i in range(0, len(body), 10)]
        conn.request("POST", "/v2/models/simple/infer", body=iter(chunks), encode_chunked=True,
                     headers={"Transfer-Encoding": "chunked"})
        r = conn.getresponse()
        doc = json.loads(r.read())
        assert r.status == 200 and doc["outputs"][0]["data"] == [i + 1 for i in range(16)]
    finally:
        conn.close()


def test_gzip_request_body_raw(server):
    body = gzip.compress(simple_json())
    status, _, data = post_infer(server, body, {"Content-Encoding": "gzip"})
    assert status == 200 and json.loads(data)["outputs"][1]["data"] == [i - 1 for i in range(16)]
    status, _, data = post_infer(server, zlib.compress(simple_json()), {"Content-Encoding": "deflate"})
    assert status == 200
    status, _, data = post_infer(server, b"\x1f\x8b garbage", {"Content-Encoding": "gzip"})
    assert status == 400 and error_of(data)
    assert_alive(server)


def test_client_disconnects_mid_request(server):
    a = np.random.RandomState(4).rand(64, 784).astype(np.float32)
    head = json.dumps({"inputs": [{"name": "data", "shape": [64, 784], "datatype": "FP32",
                                   "parameters": {"binary_data_size": a.nbytes}}]}).encode()
    body = head + a.tobytes()
    msg = (b"POST /v2/models/mlp/infer HTTP/1.1\r\nHost: x\r\nInference-Header-Content-Length: %d\r\n"
           b"Content-Length: %d\r\n\r\n" % (len(head), len(body))) + body
    for i in range(30):
        s = socket.create_connection(("127.0.0.1", server.http_port), timeout=10)
        if i % 3 == 0:
            s.sendall(msg)  # whole request, gone before the answer
        elif i % 3 == 1:
            s.sendall(msg[: len(msg) // 2])  # half a body
        else:
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            s.sendall(msg)  # reset
        s.close()
    time.sleep(0.5)
    assert_alive(server)
    assert server.proc.poll() is None


def overflow_queue(port, n=8):
    """n concurrent requests to "queued": [(status, Retry-After, body)]."""
    from concurrent.futures import ThreadPoolExecutor

    def one(_):
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=20)
        try:
            conn.request("POST", "/v2/models/queued/infer", simple_json())
            r = conn.getresponse()
            return r.status, r.getheader("Retry-After"), r.read()
        finally:
            conn.close()

    with ThreadPoolExecutor(n) as ex:
        return list(ex.map(one, range(n)))


def test_queue_full_503_retry_after(server):
    results = overflow_queue(server.http_port)
    statuses = [r[0] for r in results]
    assert 200 in statuses and 503 in statuses, statuses
    for status, retry_after, body in results:
        if status == 200:
            assert json.loads(body)["outputs"][0]["data"] == [i + 1 for i in range(16)]
        else:
            assert status == 503 and retry_after == "1"
            assert "Exceeds maximum queue size" in error_of(body)
    assert_alive(server)


# ---------------------------------------------------------------------------------------------------
# a second server: explicit model control, small limits


@pytest.fixture(scope="module")
def small_server(model_repo):
    args = ["--model-control-mode", "explicit", "--load-model", "simple", "--load-model", "queued",
            "--http-max-input-size", "65536", "--http-max-connections", "4", "--http-idle-timeout-secs", "2",
            "--queue-full-status", "429"]
    with serving_util.ServerProcess(model_repo, extra_args=args) as s:
        yield s
        s.stop()


def test_oversize_body_400(small_server):
    body = b'{"inputs": [' + b" " * 100000 + b"]}"
    status, _, data = post_infer(small_server, body)
    assert status == 400
    assert error_of(data) == ("request JSON size of %d bytes exceeds the maximum allowed input size of 65536 bytes. "
                              "Use --http-max-input-size to increase the limit." % len(body))
    # the limit applies after decompression
    status, _, data = post_infer(small_server, gzip.compress(body), {"Content-Encoding": "gzip"})
    assert status == 400 and "exceeds the maximum allowed input size of 65536 bytes" in error_of(data)
    # and to chunked bodies
    conn = http.client.HTTPConnection("127.0.0.1", small_server.http_port, timeout=10)
    try:
        conn.request("POST", "/v2/models/simple/infer", body=iter([body[i:i + 4096] for i in range(0, len(body), 4096)]),
                     encode_chunked=True, headers={"Transfer-Encoding": "chunked"})
        r = conn.getresponse()
        assert r.status == 400 and "exceeds the maximum allowed input size" in error_of(r.read())
    finally:
        conn.close()
    status, _, data = post_infer(small_server, simple_json())
    assert status == 200
    assert_alive(small_server)


def test_queue_full_status_429(small_server):
    results = overflow_queue(small_server.http_port, n=4)  # this server allows 4 connections
    statuses = [r[0] for r in results]
    assert 200 in statuses and 429 in statuses, statuses
    assert all(r[1] == "1" for r in results if r[0] == 429)
    assert set(statuses) <= {200, 429}


def test_explicit_load_unload(small_server):
    c = httpclient.InferenceServerClient(small_server.http_url)
    try:
        assert c.is_model_ready("simple") is True
        assert c.is_model_ready("mlp") is False
        names = {m["name"]: m for m in c.get_model_repository_index()}
        assert names["simple"]["state"] == "READY" and "mlp" in names
        c.load_model("mlp")
        assert c.is_model_ready("mlp") is True
        x = np.zeros((1, 784), np.float32)
        inp = httpclient.InferInput("data", [1, 784], "FP32")
        inp.set_data_from_numpy(x)
        assert c.infer("mlp", [inp]).as_numpy("prob").shape == (1, 10)
        c.unload_model("mlp")
        deadline = time.time() + 10
        while c.is_model_ready("mlp") and time.time() < deadline:
            time.sleep(0.05)
        assert c.is_model_ready("mlp") is False
        with pytest.raises(InferenceServerException, match="failed to load 'absent'"):
            c.load_model("absent")
        status, _, data = request(small_server.http_port, "POST", "/v2/repository/models/simple/load",
                                  b'{"parameters": {"config": 5}}')
        assert status == 400 and "config" in error_of(data)
    finally:
        c.close()


def open_live_connections(port, n, timeout=5):
    """n connections that each got an answer; retried while connections of earlier tests, closed
    by their clients, still count until the server has seen them close."""
    deadline = time.time() + timeout
    while True:
        socks = []
        try:
            for _ in range(n):
                s = socket.create_connection(("127.0.0.1", port), timeout=5)
                socks.append(s)
                s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
                if not s.recv(4096).startswith(b"HTTP/1.1 200"):
                    raise ConnectionError("closed at accept")
            return socks
        except (ConnectionError, socket.timeout):
            for s in socks:
                s.close()
            if time.time() > deadline:
                raise
            time.sleep(0.2)


def test_max_connections(small_server):
    socks = []
    try:
        socks = open_live_connections(small_server.http_port, 4)
        extra = socket.create_connection(("127.0.0.1", small_server.http_port), timeout=5)
        try:
            extra.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
            try:
                got = extra.recv(4096)
            except ConnectionResetError:
                got = b""
            assert got == b""  # closed at accept
        finally:
            extra.close()
    finally:
        for s in socks:
            s.close()
    deadline = time.time() + 5
    while time.time() < deadline:
        try:
            if request(small_server.http_port, "GET", "/v2/health/live")[0] == 200:
                break
        except (ConnectionError, http.client.HTTPException):
            time.sleep(0.1)
    assert request(small_server.http_port, "GET", "/v2/health/live")[0] == 200


def test_idle_timeout_closes_connection(small_server):
    s = socket.create_connection(("127.0.0.1", small_server.http_port), timeout=10)
    try:
        s.sendall(b"GET /v2/health/live HTTP/1.1\r\nHost: x\r\n\r\n")
        assert s.recv(4096).startswith(b"HTTP/1.1 200")
        t0 = time.time()
        assert s.recv(4096) == b""  # closed by the server after ~2 s idle
        assert 1.0 < time.time() - t0 < 8
    finally:
        s.close()


# ---------------------------------------------------------------------------------------------------
# a third server: bearer token


@pytest.fixture(scope="module")
def auth_server(model_repo, tmp_path_factory):
    token_file = tmp_path_factory.mktemp("auth") / "token"
    token_file.write_text("s3cret-token\n")
    args = ["--auth-token-file", str(token_file), "--auth-health-open"]
    with serving_util.ServerProcess(model_repo, extra_args=args) as s:
        yield s
        s.stop()


def test_auth(auth_server):
    port = auth_server.http_port
    good = {"Authorization": "Bearer s3cret-token"}
    assert request(port, "GET", "/v2/health/live")[0] == 200          # health open
    assert request(port, "GET", "/v2/models/simple/ready")[0] == 200
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": "s3cret-token"}):
        status, _, data = request(port, "GET", "/v2", headers=headers)
        assert status == 401 and json.loads(data) == {"error": "Unauthorized"}
        status, _, data = post_infer(auth_server, simple_json(), headers)
        assert status == 401
    status, _, data = request(port, "GET", "/v2", headers=good)
    assert status == 200 and json.loads(data)["name"] == "hetnet"
    c = httpclient.InferenceServerClient(auth_server.http_url)
    try:
        a = np.ones((1, 16), np.int32)
        result = c.infer("simple", _simple_inputs(a, a), headers=good)
        np.testing.assert_array_equal(result.as_numpy("OUTPUT0"), a + a)
        with pytest.raises(InferenceServerException, match="Unauthorized"):
            c.infer("simple", _simple_inputs(a, a))
    finally:
        c.close()


def test_bind_failure_names_address_and_port(model_repo):
    blocker = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    blocker.bind(("127.0.0.1", 0))
    blocker.listen(1)
    port = blocker.getsockname()[1]
    try:
        with serving_util.ServerProcess(model_repo, extra_args=["--http-port", str(port)], wait_ready=False) as s:
            rc = s.proc.wait(60)
            out = s.output()
        assert rc != 0
        assert "127.0.0.1:%d" % port in out and "HTTP" in out
    finally:
        blocker.close()
