"""The server's request memory limit (--max-request-memory) against a real `hetnet serve`, loopback
only. Before it, 20 connections each holding 60 MB of an unfinished body made the server hold 1.36 GB
(1,024 connections would have held 64 GB, and the kernel would have killed it); a JSON body of
"0,0,..." parsed into about 14 times its size; gRPC messages queued behind a batcher's delay were
held without bound."""
import json
import re
import socket
import time
import urllib.request

import grpc
import numpy as np
import tritonclient.http as httpclient
from tritonclient.grpc import service_pb2, service_pb2_grpc

import serving_util as su

VARIABLE_CONFIG = """
name: "simple"
platform: "caffe2_netdef"
max_batch_size: %d
input [ { name: "INPUT0" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "INPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
output [ { name: "OUTPUT0" data_type: TYPE_INT32 dims: [ -1 ] }, { name: "OUTPUT1" data_type: TYPE_INT32 dims: [ -1 ] } ]
%s
"""


GRPC_CALL_BYTES = 32 * 1024  # serving/request_memory.h kGrpcCallBytes: charged per inference call in flight


def metric(server, name):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=10) as r:
        text = r.read().decode()
    m = re.search(r"^%s (\S+)$" % name, text, re.M)
    assert m, "%s missing from /metrics" % name
    return float(m.group(1))


def wait_for_metric(server, name, value, timeout=20):
    deadline = time.time() + timeout
    while metric(server, name) != value:
        assert time.time() < deadline, "%s stayed %s, expected %s" % (name, metric(server, name), value)
        time.sleep(0.05)


def read_answer(sock):
    """Reads one response (head and Content-Length body) from a socket."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = sock.recv(65536)
        assert chunk, "connection closed before an answer: %r" % data
        data += chunk
    head, body = data.split(b"\r\n\r\n", 1)
    length = int(re.search(rb"Content-Length: (\d+)", head).group(1))
    while len(body) < length:
        chunk = sock.recv(65536)
        assert chunk
        body += chunk
    return head.decode(), json.loads(body[:length]) if length else None


def infer_simple_http(server, n):
    a = np.arange(n, dtype=np.int32)
    client = httpclient.InferenceServerClient(server.http_url)
    ins = [httpclient.InferInput("INPUT0", [n], "INT32"), httpclient.InferInput("INPUT1", [n], "INT32")]
    ins[0].set_data_from_numpy(a, binary_data=True)
    ins[1].set_data_from_numpy(a, binary_data=True)
    np.testing.assert_array_equal(client.infer("simple", ins).as_numpy("OUTPUT0"), 2 * a)


def test_unfinished_bodies_over_the_limit_are_refused_and_the_server_serves_on(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo, config=VARIABLE_CONFIG % (0, ""))
    size = 12_000_000
    with su.ServerProcess(repo, ["--max-request-memory", str(4 * size)]) as s:
        assert metric(s, "hetnet_request_memory_limit_bytes") == 4 * size
        holders = []
        try:
            # Four clients send all but the last byte of a 12 MB body and hold on: they fill the budget.
            for _ in range(4):
                c = socket.create_connection(("127.0.0.1", s.http_port), timeout=20)
                c.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % size)
                c.sendall(b"x" * (size - 1))
                holders.append(c)
            assert metric(s, "hetnet_request_memory_bytes") == 4 * size
            # The next body is answered at once, before it is sent: 503, retry later.
            for _ in range(2):
                with socket.create_connection(("127.0.0.1", s.http_port), timeout=20) as c:
                    c.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n")
                    head, body = read_answer(c)
                assert head.startswith("HTTP/1.1 503"), head
                assert "Retry-After: 1" in head
                assert body["error"] == ("the server is at its request memory limit: this request needs 100 bytes and "
                                         "requests in flight hold 48000000 of 48000000 bytes (--max-request-memory); "
                                         "retry later")
            # A chunked body is charged chunk by chunk: its first chunk of 256 bytes does not fit.
            with socket.create_connection(("127.0.0.1", s.http_port), timeout=20) as c:
                c.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n"
                          b"100\r\n")
                head, body = read_answer(c)
            assert head.startswith("HTTP/1.1 503"), head
            assert body["error"].startswith("the server is at its request memory limit: this request needs 256 bytes")
            assert metric(s, "hetnet_request_memory_refusals_total") == 3
            # Requests without a body still pass (health, metadata).
            assert httpclient.InferenceServerClient(s.http_url).is_server_live()
        finally:
            for c in holders:
                c.close()
        wait_for_metric(s, "hetnet_request_memory_bytes", 0)
        infer_simple_http(s, 1000)
        assert s.stop() == 0


def test_the_json_parse_is_charged_and_a_body_that_never_fits_says_which_flag(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo, config=VARIABLE_CONFIG % (0, ""))
    limit = 80_000_000
    with su.ServerProcess(repo, ["--max-request-memory", str(limit)]) as s:
        def json_infer(n):
            zeros = ",".join(["0"] * n)
            body = ('{"inputs":[{"name":"INPUT0","datatype":"INT32","shape":[%d],"data":[%s]},'
                    '{"name":"INPUT1","datatype":"INT32","shape":[%d],"data":[%s]}]}' % (n, zeros, n, zeros)).encode()
            with socket.create_connection(("127.0.0.1", s.http_port), timeout=30) as c:
                c.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)
                          + body)
                return len(body), read_answer(c)

        # 4 MB of JSON: 4 MB of body + 16 x 4 MB of parse = 68 MB, under the limit; then the body and
        # the two 4 MB tensors decoded from it.
        n, (head, answer) = json_infer(1_000_000)
        assert head.startswith("HTTP/1.1 200"), (head, answer)
        assert answer["outputs"][0]["data"][:3] == [0, 0, 0] and len(answer["outputs"][0]["data"]) == 1_000_000
        # 6 MB: 102 MB > 80 MB, at any time: 400, naming the flag that raises the limit.
        n, (head, answer) = json_infer(1_500_000)
        assert head.startswith("HTTP/1.1 400"), head
        assert answer["error"] == ("the request's JSON needs %d bytes of request memory, more than the server's "
                                   "limit of %d bytes; raise it with --max-request-memory" % (17 * n, limit))
        wait_for_metric(s, "hetnet_request_memory_bytes", 0)
        infer_simple_http(s, 1000)
        assert s.stop() == 0


def test_credentials_are_checked_before_the_body_is_read(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    token = tmp_path / "token"
    token.write_text("tok\n")
    with su.ServerProcess(repo, ["--auth-token-file", str(token), "--auth-health-open"]) as s:
        # A 50 MB body is declared and never sent: the 401 comes at once, not after a body or a timeout.
        with socket.create_connection(("127.0.0.1", s.http_port), timeout=10) as c:
            t0 = time.time()
            c.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 50000000\r\n\r\n")
            head, body = read_answer(c)
            assert time.time() - t0 < 5
        assert head.startswith("HTTP/1.1 401"), head
        assert "WWW-Authenticate: Bearer" in head
        assert body == {"error": "Unauthorized"}
        assert metric(s, "hetnet_request_memory_bytes") == 0
        # With the token, the same server answers.
        a = np.arange(16, dtype=np.int32).reshape(1, 16)
        client = httpclient.InferenceServerClient(s.http_url)
        ins = [httpclient.InferInput("INPUT0", [1, 16], "INT32"), httpclient.InferInput("INPUT1", [1, 16], "INT32")]
        ins[0].set_data_from_numpy(a)
        ins[1].set_data_from_numpy(a)
        out = client.infer("simple", ins, headers={"Authorization": "Bearer tok"}).as_numpy("OUTPUT0")
        np.testing.assert_array_equal(out, 2 * a)
        assert s.stop() == 0


def infer_request(n):
    """A ModelInferRequest of two INT32 inputs of n elements each: a message of 8n bytes and a little more."""
    req = service_pb2.ModelInferRequest(model_name="simple")
    a = np.arange(n, dtype=np.int32)
    for name in ("INPUT0", "INPUT1"):
        t = req.inputs.add()
        t.name, t.datatype = name, "INT32"
        t.shape.extend([1, n])
        req.raw_input_contents.append(a.tobytes())
    return req, a


def hold_two_calls_then_send_a_third(tmp_path, limit, held_n, third_n):
    """Two calls wait in a batcher's queue holding most of the request memory limit; a third,
    which fits the limit alone but not beside them, is answered UNAVAILABLE at once, and the two are
    answered. gRPC's own receive buffers must not be the tighter limit: when they were (its
    ResourceQuota sized to the limit itself, until 2026-11-28), gRPC made room for the third message
    by resetting streams, RESOURCE_EXHAUSTED "Buffers full", and under TSan it once reset a call
    already accepted and queued."""
    repo = tmp_path / "repo"
    repo.mkdir()
    # Requests wait up to 3 s for a batch, holding their messages.
    batching = "dynamic_batching { max_queue_delay_microseconds: 3000000 preferred_batch_size: [ 64 ] }"
    su.write_simple_model(repo, config=VARIABLE_CONFIG % (64, batching))
    with su.ServerProcess(repo, ["--max-request-memory", str(limit)]) as s:
        req, a = infer_request(held_n)
        third, b = infer_request(third_n)
        opts = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
        channel = grpc.insecure_channel(s.grpc_url, options=opts)
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        # Two calls, one after the other, wait in the queue.
        held = [stub.ModelInfer.future(req, timeout=60)]
        deadline = time.time() + 20
        while metric(s, "hetnet_request_memory_bytes") == 0:
            assert time.time() < deadline
            time.sleep(0.05)
        size = metric(s, "hetnet_request_memory_bytes")
        # A call holds the bound of its message's parse and the call's own state (kGrpcCallBytes).
        assert req.ByteSize() + GRPC_CALL_BYTES <= size < req.ByteSize() + GRPC_CALL_BYTES + 10_000
        held.append(stub.ModelInfer.future(req, timeout=60))
        wait_for_metric(s, "hetnet_request_memory_bytes", 2 * size)
        # The third needs about its message's size: it fits alone, not beside the two.
        need = third.ByteSize() + GRPC_CALL_BYTES
        assert 2 * size + need > limit and need + 10_000 < limit
        try:
            stub.ModelInfer(third, timeout=60)
            raise AssertionError("a call over the request memory limit succeeded")
        except grpc.RpcError as e:
            assert e.code() == grpc.StatusCode.UNAVAILABLE, (e.code(), e.details())
            m = re.fullmatch(r"the server is at its request memory limit: this request needs (\d+) bytes and requests "
                             r"in flight hold (\d+) of %d bytes \(--max-request-memory\); retry later" % limit,
                             e.details())
            assert m, e.details()
            assert need <= int(m.group(1)) < need + 10_000 and int(m.group(2)) == 2 * size
        for f in held:
            np.testing.assert_array_equal(np.frombuffer(f.result().raw_output_contents[0], dtype=np.int32), 2 * a)
        assert metric(s, "hetnet_request_memory_refusals_total") == 1
        wait_for_metric(s, "hetnet_request_memory_bytes", 0)
        # With the budget back, the third call succeeds.
        r = stub.ModelInfer(third, timeout=60)
        np.testing.assert_array_equal(np.frombuffer(r.raw_output_contents[0], dtype=np.int32), 2 * b)
        channel.close()
        assert s.stop() == 0


def test_grpc_calls_held_in_a_queue_are_bounded_and_the_next_answered_unavailable(tmp_path):
    # Messages of 12 MB: the 30 MB budget takes two of them.
    hold_two_calls_then_send_a_third(tmp_path, 30_000_000, 1_500_000, 1_500_000)


def test_a_grpc_message_nearly_the_whole_limit_is_refused_by_hetnet_not_reset_by_grpc(tmp_path):
    # Two 6 MB calls are held, and a 13.6 MB message arrives under a 14 MB limit: gRPC has to hold
    # it whole before hetnet can read its size and refuse it.
    hold_two_calls_then_send_a_third(tmp_path, 14_000_000, 125_000, 1_740_000)


def test_a_flood_of_tiny_grpc_calls_is_bounded_by_the_calls_own_cost(tmp_path):
    """A queued call costs the server 21-33 KB beyond its message (measured); it used to be charged
    only its ~100-byte message, so HTTP/2's unlimited streams could queue calls until the kernel
    killed the server. Each call now holds GRPC_CALL_BYTES: past the limit, UNAVAILABLE at once."""
    repo = tmp_path / "repo"
    repo.mkdir()
    # Requests wait 3 s for a batch of 4096 that never fills.
    batching = "dynamic_batching { max_queue_delay_microseconds: 3000000 preferred_batch_size: [ 4096 ] }"
    su.write_simple_model(repo, config=VARIABLE_CONFIG % (4096, batching))
    limit = 4_000_000
    with su.ServerProcess(repo, ["--max-request-memory", str(limit)]) as s:
        req = service_pb2.ModelInferRequest(model_name="simple")
        a = np.arange(4, dtype=np.int32)
        for name in ("INPUT0", "INPUT1"):
            t = req.inputs.add()
            t.name, t.datatype = name, "INT32"
            t.shape.extend([1, 4])
            req.raw_input_contents.append(a.tobytes())
        channel = grpc.insecure_channel(s.grpc_url)
        stub = service_pb2_grpc.GRPCInferenceServiceStub(channel)
        calls = [stub.ModelInfer.future(req, timeout=60) for _ in range(400)]
        ok, refused = 0, 0
        for c in calls:
            try:
                r = c.result()
                np.testing.assert_array_equal(np.frombuffer(r.raw_output_contents[0], dtype=np.int32), 2 * a)
                ok += 1
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.UNAVAILABLE, e
                assert "at its request memory limit" in e.details() and "retry later" in e.details()
                refused += 1
        # At most limit / GRPC_CALL_BYTES = 122 waited at once; the others were refused.
        assert ok + refused == 400
        assert 100 <= ok <= limit // GRPC_CALL_BYTES, (ok, refused)
        assert metric(s, "hetnet_request_memory_refusals_total") >= refused
        wait_for_metric(s, "hetnet_request_memory_bytes", 0)
        assert stub.ModelInfer(req, timeout=60).raw_output_contents[0] == (2 * a).tobytes()
        channel.close()


def test_grpc_messages_that_parse_into_far_more_than_their_size_are_refused_before_parsing(tmp_path):
    """20 M empty bytes_contents entries are 40 MB on the wire and 1.3 GB once parsed (the server
    peaked at 1.32 GB before the bound was charged first); at a 200 MB limit the call is refused
    before protobuf builds anything."""
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    with su.ServerProcess(repo, ["--max-request-memory", "200000000"]) as s:
        def rss_peak_kb():
            with open("/proc/%d/status" % s.proc.pid) as f:
                return int(next(line for line in f if line.startswith("VmHWM")).split()[1])

        before = rss_peak_kb()
        req = service_pb2.ModelInferRequest(model_name="simple")
        t = req.inputs.add(name="INPUT0", datatype="BYTES", shape=[1, 16])
        t.contents.bytes_contents.extend([b""] * 20_000_000)
        opts = [("grpc.max_send_message_length", -1), ("grpc.max_receive_message_length", -1)]
        with grpc.insecure_channel(s.grpc_url, options=opts) as ch:
            stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
            try:
                stub.ModelInfer(req, timeout=120)
                raise AssertionError("the call succeeded")
            except grpc.RpcError as e:
                assert e.code() == grpc.StatusCode.INVALID_ARGUMENT
                m = re.fullmatch(r"this request needs (\d+) bytes of request memory, more than the server's limit of "
                                 r"200000000 bytes; raise it with --max-request-memory", e.details())
                assert m, e.details()
                assert int(m.group(1)) > 20_000_000 * 32  # a std::string per entry, at least
            # The wire bytes (40 MB) were read; the 1.3 GB parse never happened.
            assert rss_peak_kb() - before < 400_000
            # Typed contents within the limit still work.
            ok = service_pb2.ModelInferRequest(model_name="simple")
            for name in ("INPUT0", "INPUT1"):
                ok.inputs.add(name=name, datatype="INT32", shape=[1, 16]).contents.int_contents.extend(range(16))
            r = stub.ModelInfer(ok, timeout=60)
            np.testing.assert_array_equal(np.frombuffer(r.raw_output_contents[0], dtype="<i4"), 2 * np.arange(16))
        wait_for_metric(s, "hetnet_request_memory_bytes", 0)
        assert s.stop() == 0


def test_every_grpc_method_parses_under_the_limit_and_unimplemented_ones_never_parse(tmp_path):
    """1 M empty map entries are 2 MB on the wire and ~150 MB parsed: refused before parsing by the
    methods hetnet implements, answered UNIMPLEMENTED unread by the others."""
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    with su.ServerProcess(repo, ["--model-control-mode", "explicit", "--load-model", "simple",
                                 "--max-request-memory", "50000000"]) as s:
        with grpc.insecure_channel(s.grpc_url) as ch:
            def raw(method, wire):
                call = ch.unary_unary("/inference.GRPCInferenceService/" + method,
                                      request_serializer=lambda x: x, response_deserializer=lambda x: x)
                try:
                    call(wire, timeout=60)
                    raise AssertionError("%s succeeded" % method)
                except grpc.RpcError as e:
                    return e

            e = raw("RepositoryModelUnload", b"\x12\x06simple" + b"\x1a\x00" * 1_000_000)
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT, e.details()
            assert re.fullmatch(r"this unload request needs \d+ bytes of request memory, more than the server's "
                                r"limit of 50000000 bytes; raise it with --max-request-memory", e.details())
            e = raw("ModelMetadata", b"\x0a\x06simple" + b"\xa2\x06\x00" * 1_000_000)  # unknown field 100
            assert e.code() == grpc.StatusCode.INVALID_ARGUMENT and "needs" in e.details(), e.details()
            e = raw("TraceSetting", b"\x0a\x00" * 1_000_000)
            assert e.code() == grpc.StatusCode.UNIMPLEMENTED
            assert e.details() == "TraceSetting is not supported by hetnet"
            # The model is still loaded (the unload never ran) and the same methods answer small calls.
            stub = service_pb2_grpc.GRPCInferenceServiceStub(ch)
            md = stub.ModelMetadata(service_pb2.ModelMetadataRequest(name="simple"), timeout=10)
            assert md.name == "simple" and md.platform == "caffe2_netdef"
            stub.RepositoryModelUnload(service_pb2.RepositoryModelUnloadRequest(model_name="simple"), timeout=30)
            assert not stub.ModelReady(service_pb2.ModelReadyRequest(name="simple"), timeout=10).ready
        wait_for_metric(s, "hetnet_request_memory_bytes", 0)
        assert s.stop() == 0
