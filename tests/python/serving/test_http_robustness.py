"""Hostile HTTP traffic against a real `hetnet serve` (loopback only, bounded): thousands of idle
connections, clients that disconnect mid-request, a 2 GiB declared body. After each the server still
answers other clients."""
import json
import resource
import socket
import struct
import time

import numpy as np
import tritonclient.http as httpclient

import serving_util as su


def raise_fd_limit(want):
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    target = min(max(soft, want), hard)
    resource.setrlimit(resource.RLIMIT_NOFILE, (target, hard))
    return target


def simple_ok(url):
    client = httpclient.InferenceServerClient(url)
    a = np.arange(16, dtype=np.int32).reshape(1, 16)
    ins = [httpclient.InferInput("INPUT0", [1, 16], "INT32"), httpclient.InferInput("INPUT1", [1, 16], "INT32")]
    ins[0].set_data_from_numpy(a)
    ins[1].set_data_from_numpy(a)
    np.testing.assert_array_equal(client.infer("simple", ins).as_numpy("OUTPUT0"), 2 * a)


def test_ten_thousand_idle_connections_leave_the_server_serving(tmp_path):
    limit = raise_fd_limit(10300)  # the server inherits it
    n = min(10000, limit - 200)
    assert n >= 1000, "RLIMIT_NOFILE hard limit too low for this test: %d" % limit
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo)
    with su.ServerProcess(repo, ["--http-max-connections", "20000"]) as s:
        socks = []
        deadline = time.time() + 60
        try:
            for _ in range(n):
                if time.time() > deadline:
                    break
                c = socket.create_connection(("127.0.0.1", s.http_port), timeout=5)
                socks.append(c)
            assert len(socks) == n
            simple_ok(s.http_url)
        finally:
            for c in socks:
                c.close()
        simple_ok(s.http_url)
        assert s.stop() == 0


def test_disconnects_mid_request_and_a_huge_declared_body(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    su.write_simple_model(repo, config=su.SIMPLE_CONFIG + "\ndynamic_batching { max_queue_delay_microseconds: 300000 }\n")
    with su.ServerProcess(repo) as s:
        body = json.dumps({"inputs": [
            {"name": "INPUT0", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))},
            {"name": "INPUT1", "shape": [1, 16], "datatype": "INT32", "data": list(range(16))}]}).encode()
        head = ("POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body)).encode()
        for i in range(50):
            c = socket.create_connection(("127.0.0.1", s.http_port), timeout=5)
            if i % 2:
                c.sendall(head + body)  # queued for 0.3 s, the client is gone when it is answered
            else:
                c.sendall(head + body[: len(body) // 2])  # gone halfway through the body
            c.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))  # reset, not FIN
            c.close()
        c = socket.create_connection(("127.0.0.1", s.http_port), timeout=10)
        c.sendall(b"POST /v2/models/simple/infer HTTP/1.1\r\nHost: x\r\nContent-Length: 2147483648\r\n\r\n{")
        reply = c.recv(4096).decode(errors="replace")
        c.close()
        assert reply.startswith("HTTP/1.1 400") or reply.startswith("HTTP/1.1 413"), reply
        assert "exceeds the maximum allowed input size" in reply
        time.sleep(0.5)
        simple_ok(s.http_url)
        assert s.stop() == 0
