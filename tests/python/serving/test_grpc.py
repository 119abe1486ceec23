"""gRPC front end of `hetnet serve`, driven by the real tritonclient.grpc (KServe v2 / Triton gRPC
protocol) and, for what tritonclient cannot send, by raw grpc calls with tritonclient's own stubs."""
import json
import os
import queue
import re
import signal
import socket
import subprocess
import time
import urllib.error
import urllib.request

import grpc
import numpy as np
import pytest

import tritonclient.grpc as grpcclient
from tritonclient.grpc import model_config_pb2, service_pb2, service_pb2_grpc
from tritonclient.utils import InferenceServerException

import serving_util

ALLOWED_EXTENSIONS = {"binary_tensor_data", "model_configuration", "model_repository", "statistics",
                      "schedule_policy", "parameters", "system_shared_memory", "cuda_shared_memory",
                      "hetnet_placement"}


@pytest.fixture(scope="module")
def client(server):
    c = grpcclient.InferenceServerClient(server.grpc_url)
    wait_grpc_live(c, server, None)
    yield c
    c.close()


@pytest.fixture(scope="module")
def stub(server, client):  # client: the gRPC endpoint is up
    channel = grpc.insecure_channel(server.grpc_url, options=[("grpc.max_send_message_length", -1),
                                                              ("grpc.max_receive_message_length", -1)])
    yield service_pb2_grpc.GRPCInferenceServiceStub(channel)
    channel.close()


def simple_inputs(a, b, dtype="INT32"):
    i0 = grpcclient.InferInput("INPUT0", list(a.shape), dtype)
    i0.set_data_from_numpy(a)
    i1 = grpcclient.InferInput("INPUT1", list(b.shape), dtype)
    i1.set_data_from_numpy(b)
    return [i0, i1]


def mlp_input(x):
    i = grpcclient.InferInput("data", list(x.shape), "FP32")
    i.set_data_from_numpy(x)
    return [i]


def expect_error(fn, status, message=None, pattern=None):
    with pytest.raises(InferenceServerException) as e:
        fn()
    assert e.value.status() == "StatusCode." + status, (e.value.status(), e.value.message())
    if message is not None:
        assert e.value.message() == message
    if pattern is not None:
        assert re.search(pattern, e.value.message()), e.value.message()
    return e.value


def expect_rpc_error(fn, code, pattern=None):
    with pytest.raises(grpc.RpcError) as e:
        fn()
    assert e.value.code() == code, (e.value.code(), e.value.details())
    if pattern is not None:
        assert re.search(pattern, e.value.details()), e.value.details()
    return e.value


# ---------------------------------------------------------------- health and metadata

def test_live_and_ready(client):
    assert client.is_server_live() is True
    assert client.is_server_ready() is True


def test_model_ready(client):
    assert client.is_model_ready("simple") is True
    assert client.is_model_ready("mlp") is True
    assert client.is_model_ready("simple", "1") is True


def test_model_ready_unknown_model_is_not_found(client):
    expect_error(lambda: client.is_model_ready("no_such_model"), "NOT_FOUND",
                 "Request for unknown model: 'no_such_model' is not found")
    expect_error(lambda: client.is_model_ready("simple", "7"), "NOT_FOUND",
                 "Request for unknown model: 'simple' version 7 is not found")


def test_server_metadata(client):
    md = client.get_server_metadata()
    assert md.name == "hetnet"
    assert re.match(r"^\d+\.\d+\.\d+", md.version), md.version
    assert set(md.extensions) <= ALLOWED_EXTENSIONS, md.extensions
    assert "model_configuration" in md.extensions and "statistics" in md.extensions
    as_json = client.get_server_metadata(as_json=True)
    assert as_json["name"] == "hetnet"


def test_model_metadata(client):
    md = client.get_model_metadata("simple")
    assert md.name == "simple"
    assert list(md.versions) == ["1"]
    assert md.platform == "caffe2_netdef"
    assert [(t.name, t.datatype, list(t.shape)) for t in md.inputs] == [
        ("INPUT0", "INT32", [-1, 16]), ("INPUT1", "INT32", [-1, 16])]
    assert [(t.name, t.datatype, list(t.shape)) for t in md.outputs] == [
        ("OUTPUT0", "INT32", [-1, 16]), ("OUTPUT1", "INT32", [-1, 16])]
    md = client.get_model_metadata("mlp", "1")
    assert [(t.name, t.datatype, list(t.shape)) for t in md.inputs] == [("data", "FP32", [-1, 784])]
    assert [(t.name, t.datatype, list(t.shape)) for t in md.outputs] == [("prob", "FP32", [-1, 10])]
    expect_error(lambda: client.get_model_metadata("no_such_model"), "NOT_FOUND",
                 "Request for unknown model: 'no_such_model' is not found")


def test_model_config(client):
    cfg = client.get_model_config("simple").config
    assert isinstance(cfg, model_config_pb2.ModelConfig)
    assert cfg.name == "simple"
    assert cfg.max_batch_size == 8
    assert [(i.name, i.data_type, list(i.dims)) for i in cfg.input] == [
        ("INPUT0", model_config_pb2.TYPE_INT32, [16]), ("INPUT1", model_config_pb2.TYPE_INT32, [16])]
    assert [o.name for o in cfg.output] == ["OUTPUT0", "OUTPUT1"]
    assert not cfg.HasField("dynamic_batching")
    cfg = client.get_model_config("mlp").config
    assert cfg.max_batch_size == 64
    assert cfg.WhichOneof("scheduling_choice") == "dynamic_batching"
    assert cfg.dynamic_batching.max_queue_delay_microseconds == 2000
    as_json = client.get_model_config("simple", as_json=True)
    assert as_json["config"]["max_batch_size"] == 8
    assert as_json["config"]["input"][0]["data_type"] == "TYPE_INT32"
    expect_error(lambda: client.get_model_config("no_such_model"), "NOT_FOUND",
                 "Request for unknown model: 'no_such_model' is not found")


# ---------------------------------------------------------------- inference

def test_infer_simple(client):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.full((1, 16), 3, dtype=np.int32)
    outputs = [grpcclient.InferRequestedOutput("OUTPUT0"), grpcclient.InferRequestedOutput("OUTPUT1")]
    r = client.infer("simple", simple_inputs(a, b), outputs=outputs, request_id="req-42")
    np.testing.assert_array_equal(r.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT1"), a - b)
    resp = r.get_response()
    assert resp.id == "req-42"
    assert resp.model_name == "simple"
    assert resp.model_version == "1"
    assert len(resp.raw_output_contents) == 2
    assert [o.datatype for o in resp.outputs] == ["INT32", "INT32"]


def test_infer_simple_batch_and_default_outputs(client):
    rng = np.random.RandomState(1)
    a = rng.randint(-1000, 1000, size=(5, 16)).astype(np.int32)
    b = rng.randint(-1000, 1000, size=(5, 16)).astype(np.int32)
    r = client.infer("simple", simple_inputs(a, b))  # no outputs listed: every output, config order
    assert [o.name for o in r.get_response().outputs] == ["OUTPUT0", "OUTPUT1"]
    assert list(r.get_response().outputs[0].shape) == [5, 16]
    np.testing.assert_array_equal(r.as_numpy("OUTPUT0"), a + b)
    np.testing.assert_array_equal(r.as_numpy("OUTPUT1"), a - b)


def test_infer_requested_output_order_and_subset(client):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    b = np.arange(16, dtype=np.int32).reshape(1, 16) * 2
    r = client.infer("simple", simple_inputs(a, b), outputs=[grpcclient.InferRequestedOutput("OUTPUT1")])
    assert [o.name for o in r.get_response().outputs] == ["OUTPUT1"]
    assert r.as_numpy("OUTPUT0") is None
    np.testing.assert_array_equal(r.as_numpy("OUTPUT1"), a - b)
    r = client.infer("simple", simple_inputs(a, b), outputs=[grpcclient.InferRequestedOutput("OUTPUT1"),
                                                              grpcclient.InferRequestedOutput("OUTPUT0")])
    assert [o.name for o in r.get_response().outputs] == ["OUTPUT1", "OUTPUT0"]
    np.testing.assert_array_equal(r.as_numpy("OUTPUT0"), a + b)


def test_infer_gzip_request(client):
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    r = client.infer("simple", simple_inputs(a, a), compression_algorithm="gzip")
    np.testing.assert_array_equal(r.as_numpy("OUTPUT0"), 2 * a)


def test_infer_mlp_matches_reference(client):
    x = np.random.RandomState(3).rand(4, 784).astype(np.float32)
    r = client.infer("mlp", mlp_input(x))
    prob = r.as_numpy("prob")
    assert prob.shape == (4, 10) and prob.dtype == np.float32
    np.testing.assert_allclose(prob, serving_util.mlp_reference(x, serving_util.mlp_weights()), rtol=1e-4, atol=1e-5)


def test_async_infer_concurrent(client):
    weights = serving_util.mlp_weights()
    results = queue.Queue()
    xs = [np.random.RandomState(100 + i).rand(1 + i % 3, 784).astype(np.float32) for i in range(24)]
    for i, x in enumerate(xs):
        client.async_infer("mlp", mlp_input(x), partial_callback(results, i), request_id=str(i))
    seen = set()
    for _ in xs:
        i, result, error = results.get(timeout=60)
        assert error is None, error
        assert result.get_response().id == str(i)
        np.testing.assert_allclose(result.as_numpy("prob"), serving_util.mlp_reference(xs[i], weights),
                                   rtol=1e-4, atol=1e-5)
        seen.add(i)
    assert seen == set(range(len(xs)))


def partial_callback(q, i):
    return lambda result, error: q.put((i, result, error))


def test_typed_contents_request(stub):
    """Triton's explicit-content clients send typed `contents` instead of raw bytes."""
    req = service_pb2.ModelInferRequest(model_name="simple", id="typed")
    for name, values in (("INPUT0", list(range(16))), ("INPUT1", [5] * 16)):
        t = req.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        t.contents.int_contents.extend(values)
    resp = stub.ModelInfer(req, timeout=30)
    assert resp.id == "typed"
    assert [o.name for o in resp.outputs] == ["OUTPUT0", "OUTPUT1"]
    assert len(resp.raw_output_contents) == 2  # answers are always raw
    out0 = np.frombuffer(resp.raw_output_contents[0], dtype="<i4")
    out1 = np.frombuffer(resp.raw_output_contents[1], dtype="<i4")
    np.testing.assert_array_equal(out0, np.arange(16) + 5)
    np.testing.assert_array_equal(out1, np.arange(16) - 5)


def test_typed_fp32_contents_mlp(stub):
    x = np.random.RandomState(9).rand(2, 784).astype(np.float32)
    req = service_pb2.ModelInferRequest(model_name="mlp")
    req.inputs.add(name="data", datatype="FP32", shape=[2, 784]).contents.fp32_contents.extend(x.ravel().tolist())
    req.parameters["timeout"].int64_param = 30_000_000  # µs, as tritonclient sends it
    resp = stub.ModelInfer(req, timeout=30)
    assert [(o.name, o.datatype, list(o.shape)) for o in resp.outputs] == [("prob", "FP32", [2, 10])]
    prob = np.frombuffer(resp.raw_output_contents[0], dtype="<f4").reshape(2, 10)
    np.testing.assert_allclose(prob, serving_util.mlp_reference(x, serving_util.mlp_weights()), rtol=1e-4, atol=1e-5)


def test_malformed_infer_and_load_messages_are_invalid_and_say_why(server, client):
    """Raw bytes that are no ModelInferRequest / RepositoryModelLoadRequest: INVALID_ARGUMENT naming
    the message and the fault, never INTERNAL; the server answers the next call."""
    cases = [
        ("/inference.GRPCInferenceService/ModelInfer", b"\x0a\x7fsimple", r"malformed ModelInferRequest: "
         r"a field's length runs past|malformed ModelInferRequest: truncated"),
        ("/inference.GRPCInferenceService/ModelInfer", b"\x0c", r"malformed ModelInferRequest: an end-group tag"),
        ("/inference.GRPCInferenceService/ModelInfer", b"\x0a\x02\xff\xfe",
         r"malformed ModelInferRequest: protobuf cannot parse it \(a string field that is not UTF-8\?\)"),
        ("/inference.GRPCInferenceService/RepositoryModelLoad", b"\x12\x05ab", r"malformed RepositoryModelLoadRequest"),
    ]
    with grpc.insecure_channel(server.grpc_url) as channel:
        for method, wire, pattern in cases:
            call = channel.unary_unary(method, request_serializer=lambda x: x, response_deserializer=lambda x: x)
            expect_rpc_error(lambda: call(wire, timeout=10), grpc.StatusCode.INVALID_ARGUMENT, pattern)
    assert client.is_model_ready("simple")


def test_typed_contents_in_the_wrong_field_is_invalid(stub):
    req = service_pb2.ModelInferRequest(model_name="simple")
    for name in ("INPUT0", "INPUT1"):
        req.inputs.add(name=name, datatype="INT32", shape=[1, 16]).contents.fp32_contents.extend([1.0] * 16)
    expect_rpc_error(lambda: stub.ModelInfer(req, timeout=30), grpc.StatusCode.INVALID_ARGUMENT,
                     r"'INPUT0'.*fp32_contents.*int_contents")


def test_raw_and_typed_contents_together_is_invalid(stub):
    req = service_pb2.ModelInferRequest(model_name="simple")
    for name in ("INPUT0", "INPUT1"):
        t = req.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        req.raw_input_contents.append(np.zeros(16, dtype="<i4").tobytes())
    req.inputs[1].contents.int_contents.extend([0] * 16)
    expect_rpc_error(lambda: stub.ModelInfer(req, timeout=30), grpc.StatusCode.INVALID_ARGUMENT,
                     r"contents field must not be specified when using raw_input_contents for 'INPUT1'")


def test_raw_contents_count_mismatch_is_invalid(stub):
    req = service_pb2.ModelInferRequest(model_name="simple")
    req.inputs.add(name="INPUT0", datatype="INT32", shape=[1, 16])
    req.inputs.add(name="INPUT1", datatype="INT32", shape=[1, 16])
    req.raw_input_contents.append(np.zeros(16, dtype="<i4").tobytes())
    expect_rpc_error(lambda: stub.ModelInfer(req, timeout=30), grpc.StatusCode.INVALID_ARGUMENT,
                     r"raw_input_contents")


def test_negative_priority_is_invalid(stub):
    req = service_pb2.ModelInferRequest(model_name="simple")
    for name in ("INPUT0", "INPUT1"):
        req.inputs.add(name=name, datatype="INT32", shape=[1, 16])
        req.raw_input_contents.append(np.zeros(16, dtype="<i4").tobytes())
    req.parameters["priority"].int64_param = -1
    expect_rpc_error(lambda: stub.ModelInfer(req, timeout=30), grpc.StatusCode.INVALID_ARGUMENT,
                     r"'priority' must not be negative")


def test_message_larger_than_grpc_default_limit_is_received(client):
    """gRPC's own receive limit is 4 MiB; the server raises it (INT32_MAX by default), so an 8 MiB
    request reaches validation and is refused for its size mismatch, not by the transport."""
    big = np.zeros((1, 2 * 1024 * 1024), dtype=np.int32)  # 8 MiB
    inputs = simple_inputs(big, big)
    e = expect_error(lambda: client.infer("simple", inputs), "INVALID_ARGUMENT")
    assert "INPUT0" in e.message()


# ---------------------------------------------------------------- errors (spec 21, 22, 25, 28-30)

def test_infer_wrong_datatype(client):
    a = np.zeros((1, 16), dtype=np.float32)
    expect_error(lambda: client.infer("simple", simple_inputs(a, a, "FP32")), "INVALID_ARGUMENT",
                 pattern=r"^inference input 'INPUT0' data-type is 'FP32', but model 'simple' expects 'INT32'$")


def test_infer_wrong_shape(client):
    a = np.zeros((1, 15), dtype=np.int32)
    expect_error(lambda: client.infer("simple", simple_inputs(a, a)), "INVALID_ARGUMENT",
                 pattern=r"^unexpected shape for input 'INPUT0' for model 'simple'\. "
                         r"Expected \[-1, ?16\], got \[1, ?15\]$")


def test_infer_unknown_model_and_version(client):
    a = np.zeros((1, 16), dtype=np.int32)
    expect_error(lambda: client.infer("no_such_model", simple_inputs(a, a)), "NOT_FOUND",
                 "Request for unknown model: 'no_such_model' is not found")
    expect_error(lambda: client.infer("simple", simple_inputs(a, a), model_version="9"), "NOT_FOUND",
                 "Request for unknown model: 'simple' version 9 is not found")


def test_infer_unknown_and_duplicate_output(client):
    a = np.zeros((1, 16), dtype=np.int32)
    e = expect_error(lambda: client.infer("simple", simple_inputs(a, a),
                                          outputs=[grpcclient.InferRequestedOutput("NOPE")]), "INVALID_ARGUMENT")
    assert "NOPE" in e.message()
    expect_error(lambda: client.infer("simple", simple_inputs(a, a),
                                      outputs=[grpcclient.InferRequestedOutput("OUTPUT0"),
                                               grpcclient.InferRequestedOutput("OUTPUT0")]),
                 "INVALID_ARGUMENT", "output 'OUTPUT0' already exists in request")


def test_infer_missing_input(client):
    a = np.zeros((1, 16), dtype=np.int32)
    e = expect_error(lambda: client.infer("simple", simple_inputs(a, a)[:1]), "INVALID_ARGUMENT")
    assert "INPUT1" in e.message()


def test_infer_batch_too_large(client):
    a = np.zeros((9, 16), dtype=np.int32)  # max_batch_size 8
    expect_error(lambda: client.infer("simple", simple_inputs(a, a)), "INVALID_ARGUMENT")


def test_sequence_parameters_rejected(client):
    a = np.zeros((1, 16), dtype=np.int32)
    expect_error(lambda: client.infer("simple", simple_inputs(a, a), sequence_id=7, sequence_start=True),
                 "INVALID_ARGUMENT", pattern=r"sequence batching not supported")


def test_server_stays_live_after_errors(client):
    a = np.zeros((1, 3), dtype=np.int32)
    for _ in range(3):
        expect_error(lambda: client.infer("simple", simple_inputs(a, a)), "INVALID_ARGUMENT")
    assert client.is_server_live() and client.is_server_ready()
    b = np.ones((1, 16), dtype=np.int32)
    np.testing.assert_array_equal(client.infer("simple", simple_inputs(b, b)).as_numpy("OUTPUT0"), 2 * b)


def test_unimplemented_rpcs(client, stub):
    # System shared memory is implemented (test_shared_memory.py); without --allow-client-shm no
    # region is registered.
    assert len(client.get_system_shared_memory_status().regions) == 0
    expect_error(lambda: client.get_cuda_shared_memory_status(), "UNIMPLEMENTED")
    expect_error(lambda: client.get_trace_settings(), "UNIMPLEMENTED")
    expect_error(lambda: client.get_log_settings(), "UNIMPLEMENTED")


# ---------------------------------------------------------------- statistics and repository

def _stats(client, model):
    s = client.get_inference_statistics(model)
    assert len(s.model_stats) == 1
    return s.model_stats[0]


def test_statistics_count_requests(client):
    before = _stats(client, "simple")
    n = 7
    a = np.ones((1, 16), dtype=np.int32)
    for _ in range(n):
        client.infer("simple", simple_inputs(a, a))
    after = _stats(client, "simple")
    assert after.name == "simple" and after.version == "1"
    assert after.inference_stats.success.count - before.inference_stats.success.count == n
    assert after.inference_count - before.inference_count == n
    assert after.execution_count - before.execution_count == n  # no dynamic batching on "simple"
    assert after.inference_stats.success.ns > before.inference_stats.success.ns
    assert after.last_inference >= before.last_inference > 0
    all_stats = client.get_inference_statistics()
    assert {"simple", "mlp"} <= {m.name for m in all_stats.model_stats}
    expect_error(lambda: client.get_inference_statistics("no_such_model"), "NOT_FOUND")


def test_statistics_count_failures(client):
    before = _stats(client, "simple")
    a = np.zeros((1, 3), dtype=np.int32)
    expect_error(lambda: client.infer("simple", simple_inputs(a, a)), "INVALID_ARGUMENT")
    after = _stats(client, "simple")
    assert after.inference_stats.success.count == before.inference_stats.success.count


def test_repository_index(client):
    idx = client.get_model_repository_index()
    models = {(m.name, m.version): m.state for m in idx.models}
    assert models.get(("simple", "1")) == "READY", idx
    assert models.get(("mlp", "1")) == "READY", idx
    as_json = client.get_model_repository_index(as_json=True)
    assert {m["name"] for m in as_json["models"]} >= {"simple", "mlp"}


def test_load_unload_refused_without_explicit_mode(client):
    expect_error(lambda: client.load_model("simple"), "UNAVAILABLE",
                 pattern=r"explicit model load / unload is not allowed")
    expect_error(lambda: client.unload_model("simple"), "UNAVAILABLE",
                 pattern=r"explicit model load / unload is not allowed")
    assert client.is_model_ready("simple")


# ---------------------------------------------------------------- grpc.health.v1

def health_check(url, service="", metadata=None):
    """grpc.health.v1.Health/Check with hand-encoded messages (grpcio-health-checking is optional):
    HealthCheckRequest{service=1}, HealthCheckResponse{status=1}."""
    svc = service.encode()
    request = (b"\x0a" + bytes([len(svc)]) + svc) if svc else b""
    with grpc.insecure_channel(url) as channel:
        call = channel.unary_unary("/grpc.health.v1.Health/Check",
                                   request_serializer=lambda x: x, response_deserializer=lambda x: x)
        reply = call(request, timeout=10, metadata=metadata)
    if reply == b"":
        return 0  # UNKNOWN
    assert reply[0] == 0x08, reply
    return reply[1]


SERVING, NOT_SERVING = 1, 2


def test_health_check(server, client):
    assert health_check(server.grpc_url) == SERVING
    assert health_check(server.grpc_url, "inference.GRPCInferenceService") == SERVING
    expect_rpc_error(lambda: health_check(server.grpc_url, "no.such.Service"), grpc.StatusCode.NOT_FOUND)


def test_health_check_with_grpc_health_package(server, client):
    health_pb2 = pytest.importorskip("grpc_health.v1.health_pb2")
    health_pb2_grpc = pytest.importorskip("grpc_health.v1.health_pb2_grpc")
    with grpc.insecure_channel(server.grpc_url) as channel:
        reply = health_pb2_grpc.HealthStub(channel).Check(health_pb2.HealthCheckRequest(), timeout=10)
    assert reply.status == health_pb2.HealthCheckResponse.SERVING


# ---------------------------------------------------------------- servers with other options

BROKEN_CONFIG = """
name: "broken"
platform: "tensorflow_graphdef"
max_batch_size: 0
input [ { name: "x" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "y" data_type: TYPE_FP32 dims: [ 4 ] } ]
"""


def http_ready(server):
    try:
        with urllib.request.urlopen("http://%s/v2/health/ready" % server.http_url, timeout=5) as r:
            return r.status == 200
    except urllib.error.HTTPError as e:
        return e.code == 200


def test_readiness_with_a_model_that_fails_to_load(tmp_path):
    """A model that fails to load is known but not ready: ModelReady answers OK with ready=false (not
    NOT_FOUND); the repository index says why."""
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    serving_util.write_simple_model(repo, name="broken", config=BROKEN_CONFIG)
    with serving_util.ServerProcess(repo) as s:
        with grpcclient.InferenceServerClient(s.grpc_url) as c:
            wait_grpc_live(c, s, None)
            assert c.is_model_ready("simple") is True
            assert c.is_model_ready("broken") is False
            # Strict readiness (the default, as Triton): a model that failed to load makes the server
            # not ready; ServerReady still answers OK, and Health/Check says NOT_SERVING.
            assert c.is_server_ready() is False
            assert http_ready(s) is False
            assert health_check(s.grpc_url) == NOT_SERVING
            idx = {m.name: m for m in c.get_model_repository_index().models}
            assert idx["broken"].state == "UNAVAILABLE"
            assert "tensorflow_graphdef" in idx["broken"].reason
        assert s.stop() == 0


def test_explicit_mode_load_and_unload(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    serving_util.write_mlp_model(repo)
    with serving_util.ServerProcess(repo, ["--model-control-mode", "explicit", "--load-model", "simple"]) as s:
        with grpcclient.InferenceServerClient(s.grpc_url) as c:
            wait_grpc_live(c, s, None)
            assert c.is_model_ready("simple") is True
            idx = {m.name: m.state for m in c.get_model_repository_index().models}
            assert idx.get("mlp") != "READY"
            with grpc.insecure_channel(s.grpc_url) as channel:
                ready_only = service_pb2_grpc.GRPCInferenceServiceStub(channel).RepositoryIndex(
                    service_pb2.RepositoryIndexRequest(ready=True), timeout=10)
            assert [m.name for m in ready_only.models] == ["simple"]

            c.load_model("mlp")
            assert c.is_model_ready("mlp") is True
            x = np.random.RandomState(5).rand(2, 784).astype(np.float32)
            np.testing.assert_allclose(c.infer("mlp", mlp_input(x)).as_numpy("prob"),
                                       serving_util.mlp_reference(x, serving_util.mlp_weights()),
                                       rtol=1e-4, atol=1e-5)

            # Reload with a config override (JSON, as tritonclient sends it).
            cfg = json.loads(json.dumps(c.get_model_config("mlp", as_json=True)["config"]))
            cfg["max_batch_size"] = 16
            c.load_model("mlp", config=json.dumps(cfg))
            assert c.get_model_config("mlp").config.max_batch_size == 16

            c.unload_model("mlp")
            assert c.is_model_ready("mlp") is False

            # A model sent whole over the API: config JSON + file bytes (bytes_param).
            cfg = c.get_model_config("simple", as_json=True)["config"]
            cfg["name"] = "simple_sent"
            with open(os.path.join(str(repo), "simple", "1", "model.netdef"), "rb") as f:
                files = {"file:1/model.netdef": f.read()}
            c.load_model("simple_sent", config=json.dumps(cfg), files=files)
            assert c.is_model_ready("simple_sent") is True
            a = np.arange(16, dtype=np.int32).reshape(1, 16)
            np.testing.assert_array_equal(c.infer("simple_sent", simple_inputs(a, a)).as_numpy("OUTPUT1"), 0 * a)
            expect_error(lambda: c.load_model("no_such_model"), "NOT_FOUND", pattern=r"^failed to load 'no_such_model'")
        assert s.stop() == 0


def test_auth_token_and_message_size_limit(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    token_file = tmp_path / "token"
    token_file.write_text("s3cret-token\n")
    args = ["--auth-token-file", str(token_file), "--grpc-max-message-size", str(1 << 20)]
    with serving_util.ServerProcess(repo, args, wait_ready="bound") as s:
        good = {"authorization": "Bearer s3cret-token"}
        with grpcclient.InferenceServerClient(s.grpc_url) as c:
            wait_grpc_live(c, s, good)
            expect_error(lambda: c.get_server_metadata(), "UNAUTHENTICATED")
            expect_error(lambda: c.get_server_metadata(headers={"authorization": "Bearer wrong"}), "UNAUTHENTICATED")
            expect_error(lambda: c.is_server_live(), "UNAUTHENTICATED")
            a = np.ones((1, 16), dtype=np.int32)
            expect_error(lambda: c.infer("simple", simple_inputs(a, a)), "UNAUTHENTICATED")
            assert c.get_server_metadata(headers=good).name == "hetnet"
            np.testing.assert_array_equal(c.infer("simple", simple_inputs(a, a), headers=good).as_numpy("OUTPUT0"),
                                          2 * a)
            # Over --grpc-max-message-size: refused by the transport.
            big = np.zeros((1, 512 * 1024), dtype=np.int32)  # 2 MiB per input
            expect_error(lambda: c.infer("simple", simple_inputs(big, big), headers=good), "RESOURCE_EXHAUSTED")
        assert s.stop() == 0


def test_auth_health_open(tmp_path):
    """--auth-health-open: live/ready/model-ready and Health/Check answer without the token; every
    other RPC still needs it."""
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    token_file = tmp_path / "token"
    token_file.write_text("tok\n")
    with serving_util.ServerProcess(repo, ["--auth-token-file", str(token_file), "--auth-health-open"],
                                    wait_ready="bound") as s:
        with grpcclient.InferenceServerClient(s.grpc_url) as c:
            wait_grpc_live(c, s, None)
            assert c.is_server_ready() is True
            assert c.is_model_ready("simple") is True
            assert health_check(s.grpc_url) == SERVING
            expect_error(lambda: c.get_model_metadata("simple"), "UNAUTHENTICATED")
            assert c.get_model_metadata("simple", headers={"authorization": "Bearer tok"}).name == "simple"
        assert s.stop() == 0


def wait_grpc_live(c, s, headers, timeout=60):
    deadline = time.time() + timeout
    while time.time() < deadline:
        assert s.proc.poll() is None, s.output()
        try:
            if c.is_server_live(headers=headers):
                return
        except InferenceServerException:
            pass
        time.sleep(0.05)
    raise AssertionError("gRPC endpoint not live:\n" + s.output())


def test_grpc_port_in_use_fails_start(tmp_path):
    """Requirement 1: a gRPC bind failure exits non-zero with a message naming the port (gRPC's
    default SO_REUSEPORT must not let the server share a port that is in use)."""
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as blocker:
        # SO_REUSEPORT on the holder, as gRPC servers set it by default: the kernel would then let a
        # second SO_REUSEPORT socket share the port, so only a server that turns it off fails here.
        blocker.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        blocker.bind(("127.0.0.1", 0))
        blocker.listen(1)
        port = blocker.getsockname()[1]
        args = [serving_util.hetnet_binary(), "serve", "--model-repository", str(repo),
                "--http-port", str(serving_util.free_port()), "--grpc-port", str(port),
                "--metrics-port", str(serving_util.free_port())]
        proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    assert proc.returncode != 0
    assert str(port) in proc.stdout.decode(errors="replace"), proc.stdout


def test_second_server_on_the_same_grpc_port_fails(server, client, tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_simple_model(repo)
    args = [serving_util.hetnet_binary(), "serve", "--model-repository", str(repo),
            "--http-port", str(serving_util.free_port()), "--grpc-port", str(server.grpc_port),
            "--metrics-port", str(serving_util.free_port())]
    proc = subprocess.run(args, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=60)
    assert proc.returncode != 0
    assert "cannot bind the gRPC endpoint 127.0.0.1:%d" % server.grpc_port in proc.stdout.decode(errors="replace")
    with grpcclient.InferenceServerClient(server.grpc_url) as c:
        assert c.is_server_live()


def test_sigterm_drains_grpc_requests(tmp_path):
    """Requirement 3 over gRPC: on SIGTERM, requests the server holds finish with correct answers;
    requests reaching it after the signal are refused with a retryable status; none hangs, and the
    process exits 0."""
    repo = tmp_path / "repo"
    repo.mkdir()
    serving_util.write_mlp_model(repo)
    weights = serving_util.mlp_weights()
    with serving_util.ServerProcess(repo) as s:
        with grpcclient.InferenceServerClient(s.grpc_url) as c:
            wait_grpc_live(c, s, None)
            assert c.is_model_ready("mlp")
            results = queue.Queue()
            xs = [np.random.RandomState(i).rand(8, 784).astype(np.float32) for i in range(64)]
            for i, x in enumerate(xs):
                c.async_infer("mlp", mlp_input(x), partial_callback(results, i), client_timeout=60)
            first = results.get(timeout=60)
            assert first[2] is None, first[2]
            s.proc.send_signal(signal.SIGTERM)  # the other requests are in flight or still arriving
            for _ in xs[1:]:
                i, result, error = results.get(timeout=90)
                if error is None:
                    np.testing.assert_allclose(result.as_numpy("prob"), serving_util.mlp_reference(xs[i], weights),
                                               rtol=1e-4, atol=1e-5)
                else:
                    # Refused while draining (UNAVAILABLE "Server is shutting down"), or still being
                    # uploaded when the listener closed (UNAVAILABLE / CANCELLED from the transport).
                    # Never INTERNAL, DEADLINE_EXCEEDED, or a wrong answer.
                    assert error.status() in ("StatusCode.UNAVAILABLE", "StatusCode.CANCELLED"), \
                        (error.status(), error.message())
            assert s.proc.wait(60) == 0, s.output()
