"""gRPC ModelStreamInfer against a real `hetnet serve`, through tritonclient's stream API
(start_stream / async_stream_infer / stop_stream) and raw grpcio streams. Loopback only."""
import queue
import threading
import time

import grpc
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
from tritonclient.grpc import service_pb2, service_pb2_grpc

import serving_util as su


def metric(server, name):
    import re
    import urllib.request
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=10) as r:
        text = r.read().decode()
    m = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    assert m, "%s missing from /metrics" % name
    return float(m.group(1))


def simple_inputs(a, b):
    i0 = grpcclient.InferInput("INPUT0", list(a.shape), "INT32")
    i0.set_data_from_numpy(a)
    i1 = grpcclient.InferInput("INPUT1", list(b.shape), "INT32")
    i1.set_data_from_numpy(b)
    return [i0, i1]


def simple_request(a, b, request_id="", model="simple"):
    req = service_pb2.ModelInferRequest(model_name=model, id=request_id)
    for name, x in (("INPUT0", a), ("INPUT1", b)):
        t = req.inputs.add()
        t.name, t.datatype = name, "INT32"
        t.shape.extend(x.shape)
        req.raw_input_contents.append(x.tobytes())
    return req


def test_tritonclient_stream_answers_every_request_with_its_id(server):
    client = grpcclient.InferenceServerClient(server.grpc_url)
    answers = queue.Queue()
    client.start_stream(callback=lambda result, error: answers.put((result, error)))
    try:
        sent = {}
        for i in range(50):
            a = np.full((1, 16), i, dtype=np.int32)
            b = np.arange(16, dtype=np.int32).reshape(1, 16)
            sent["r%d" % i] = (a, b)
            client.async_stream_infer("simple", simple_inputs(a, b), request_id="r%d" % i)
        # One request that fails (unknown model) is answered with its error; the stream goes on.
        client.async_stream_infer("no_such_model", simple_inputs(a, b), request_id="bad")
        ones = np.ones((1, 16), dtype=np.int32)
        client.async_stream_infer("simple", simple_inputs(ones, ones), request_id="after")
        got, errors = {}, []
        for _ in range(52):
            result, error = answers.get(timeout=30)
            if error is not None:
                errors.append(str(error))
            else:
                got[result.get_response().id] = result
        assert len(errors) == 1 and "no_such_model" in errors[0], errors
        assert set(got) == set(sent) | {"after"}
        for rid, (x, y) in sent.items():
            np.testing.assert_array_equal(got[rid].as_numpy("OUTPUT0"), x + y)
            np.testing.assert_array_equal(got[rid].as_numpy("OUTPUT1"), x - y)
        np.testing.assert_array_equal(got["after"].as_numpy("OUTPUT0"), 2 * ones)
    finally:
        client.stop_stream()
    # The unary path still works on the same client.
    np.testing.assert_array_equal(client.infer("simple", simple_inputs(ones, ones)).as_numpy("OUTPUT0"), 2 * ones)


def test_raw_stream_half_close_gets_every_answer_then_ok(server):
    channel = grpc.insecure_channel(server.grpc_url)
    stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    requests = [simple_request(a, a, "q%d" % i) for i in range(20)]
    bad = service_pb2.ModelInferRequest(model_name="simple", id="short")
    t = bad.inputs.add()
    t.name, t.datatype = "INPUT0", "INT32"
    t.shape.extend([1, 16])
    bad.raw_input_contents.append(b"\0" * 8)  # 8 bytes for 64
    responses = list(stub.ModelStreamInfer(iter(requests + [bad]), timeout=30))
    assert len(responses) == 21
    by_id = {r.infer_response.id: r for r in responses}
    assert "has 8 bytes of data" in by_id["short"].error_message
    for i in range(20):
        r = by_id["q%d" % i]
        assert r.error_message == ""
        np.testing.assert_array_equal(np.frombuffer(r.infer_response.raw_output_contents[0], np.int32).reshape(1, 16),
                                      2 * a)
    channel.close()


def test_malformed_stream_message_is_answered_not_fatal(server):
    """A message that is not a ModelInferRequest gets an error answer; the stream reads on."""
    channel = grpc.insecure_channel(server.grpc_url)
    call = channel.stream_stream("/inference.GRPCInferenceService/ModelStreamInfer",
                                 request_serializer=lambda b: b,
                                 response_deserializer=service_pb2.ModelStreamInferResponse.FromString)
    a = np.ones((1, 16), dtype=np.int32)
    good = simple_request(a, a, "good").SerializeToString()
    responses = list(call(iter([b"\x0a\xff\xff\xff\xff\x0f", good]), timeout=30))
    assert len(responses) == 2
    assert "malformed ModelInferRequest" in responses[0].error_message
    assert responses[1].infer_response.id == "good" and responses[1].error_message == ""
    channel.close()


def test_a_client_that_sends_and_never_reads_is_held_to_the_backlog(model_repo):
    """Requests keep coming but no answer is taken: once the client's transport takes no more answers,
    the stream stops reading at its backlog (256), so the server runs no more and holds a bounded
    amount; cancelling ends it, and the server serves on."""
    with su.ServerProcess(model_repo) as s:
        channel = grpc.insecure_channel(s.grpc_url)
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        a = np.zeros((1, 16), dtype=np.int32)
        sent = [0]
        stop = threading.Event()

        def requests():
            while not stop.is_set() and sent[0] < 100000:
                sent[0] += 1
                yield simple_request(a, a, str(sent[0]))

        call = stub.ModelStreamInfer(requests(), timeout=60)  # answers never read
        # The server stops reading once its backlog fills: the count of requests it ran comes to a
        # stand (the client's own transport buffers what it sends on), and so does what they hold.
        success = 'nv_inference_request_success{model="simple",version="1"}'
        ran, deadline = -1, time.time() + 30
        while metric(s, success) != ran:
            assert time.time() < deadline, "the server kept running the stream's requests"
            ran = metric(s, success)
            time.sleep(1)
        held = metric(s, "hetnet_request_memory_bytes")
        # 256 requests of the backlog (each its 32 KiB call and ~1.6 KB of parse bound) and the stream.
        assert held <= 256 * (32 * 1024 + 2048) + 32 * 1024, held
        assert 0 < ran < sent[0], (ran, sent[0])  # answers the client's transport took, then no more
        # 256 requests of the backlog (each its 32 KiB call and ~1.6 KB of parse bound) and the stream.
        assert held <= 256 * (32 * 1024 + 2048) + 32 * 1024, held
        call.cancel()
        stop.set()
        client = grpcclient.InferenceServerClient(s.grpc_url)
        np.testing.assert_array_equal(client.infer("simple", simple_inputs(a + 1, a)).as_numpy("OUTPUT0"), a + 1)
        channel.close()
        assert s.stop() == 0


def test_stream_needs_credentials_when_the_server_has_a_token(model_repo, tmp_path):
    token = tmp_path / "token"
    token.write_text("s3cret")
    with su.ServerProcess(model_repo, ["--auth-token-file", str(token)], wait_ready="bound") as s:
        channel = grpc.insecure_channel(s.grpc_url)
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        a = np.ones((1, 16), dtype=np.int32)
        with pytest.raises(grpc.RpcError) as e:
            list(stub.ModelStreamInfer(iter([simple_request(a, a)]), timeout=30))
        assert e.value.code() == grpc.StatusCode.UNAUTHENTICATED
        deadline = time.time() + 30
        while True:  # the model may still be loading
            r = list(stub.ModelStreamInfer(iter([simple_request(a, a, "t")]), timeout=30,
                                           metadata=[("authorization", "Bearer s3cret")]))
            if r[0].error_message == "" or time.time() > deadline:
                break
            time.sleep(0.2)
        assert r[0].error_message == "" and r[0].infer_response.id == "t"
        channel.close()


def test_sigterm_with_a_stream_open_exits_cleanly(model_repo):
    """A stream the client keeps open does not hold the server past its exit timeout: it is ended
    and the server exits 0 after answering what the stream had sent."""
    with su.ServerProcess(model_repo, ["--exit-timeout-secs", "3"]) as s:
        channel = grpc.insecure_channel(s.grpc_url)
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        a = np.ones((1, 16), dtype=np.int32)
        release = threading.Event()

        def requests():
            for i in range(5):
                yield simple_request(a, a, str(i))
            release.wait(60)  # the client keeps the stream open

        answers = stub.ModelStreamInfer(requests(), timeout=60)
        assert sorted(next(answers).infer_response.id for _ in range(5)) == ["0", "1", "2", "3", "4"]
        t0 = time.time()
        assert s.stop(timeout=30) == 0
        assert time.time() - t0 < 20
        with pytest.raises(grpc.RpcError):
            next(answers)
        release.set()
        channel.close()
