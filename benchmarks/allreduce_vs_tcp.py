"""Allreduce (engine GLOO) of a float32 tensor between 2 processes over loopback TCP, against a raw
TCP loopback stream measured in the same run (distributed-facts §8 R18: the allreduce's bus
bandwidth must reach >= 50% of the raw stream's throughput).

    PYTHONPATH=build/python python3 benchmarks/allreduce_vs_tcp.py [--mib 4] [--rounds 5] [--iters 20]

Bus bandwidth (nccl-tests' definition) = 2 (n-1)/n x bytes / time: the bytes each rank sends in a
ring allreduce; for n = 2 it is bytes / time. The raw stream sends the same bytes one way through
one socket (sendall / recv_into, 16 buffers per timing). Rounds alternate the two measurements so
that load from other processes hits both alike; medians are reported. Prints Markdown."""
import argparse
import multiprocessing
import shutil
import socket
import statistics
import tempfile
import time

import numpy as np

CTX = multiprocessing.get_context("fork")


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--mib", type=float, default=4.0, help="tensor size in MiB")
    p.add_argument("--rounds", type=int, default=5, help="alternating allreduce / TCP rounds")
    p.add_argument("--iters", type=int, default=20, help="allreduces (or stream buffers) per round")
    return p.parse_args()


def allreduce_rank(rank, store_dir, nbytes, iters, rounds, conn):
    from caffe2.python import core, workspace
    workspace.RunOperatorOnce(core.CreateOperator(
        "FileStoreHandlerCreate", [], ["store"], path=store_dir, prefix="bench"))
    workspace.RunOperatorOnce(core.CreateOperator(
        "CreateCommonWorld", ["store"], ["cw"], name="bench_cw", engine="GLOO", size=2, rank=rank,
        timeout_ms=60000))
    workspace.FeedBlob("x", np.zeros(nbytes // 4, dtype=np.float32))
    net = core.Net("allreduce_bench")
    net.Allreduce(["cw", "x"], ["x"], engine="GLOO")
    barrier = core.Net("barrier_bench")
    barrier.Barrier(["cw"], [], engine="GLOO")
    workspace.CreateNet(net)
    workspace.CreateNet(barrier)
    for _ in range(3):  # warm-up: binding, TCP buffers
        workspace.RunNet(net.Name())
    for _ in range(rounds):
        conn.recv()  # the parent says go (after its TCP round)
        workspace.RunNet(barrier.Name())
        times = []
        for _ in range(iters):
            t0 = time.perf_counter()
            workspace.RunNet(net.Name())
            times.append(time.perf_counter() - t0)
        conn.send(times)
    conn.send("done")


def tcp_receiver(port_conn, nbytes, total):
    srv = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    port_conn.send(srv.getsockname()[1])
    c, _ = srv.accept()
    buf = bytearray(nbytes)
    view = memoryview(buf)
    while True:
        got = 0
        while got < total:
            n = c.recv_into(view[: min(nbytes, total - got)])
            if n == 0:
                return
            got += n
        c.sendall(b"k")


def tcp_round(sock, payload, buffers):
    t0 = time.perf_counter()
    for _ in range(buffers):
        sock.sendall(payload)
    assert sock.recv(1) == b"k"
    return time.perf_counter() - t0


def main():
    args = parse_args()
    nbytes = int(args.mib * 1024 * 1024) // 4 * 4
    store_dir = tempfile.mkdtemp(prefix="hetnet_bench_")
    procs, conns = [], []
    try:
        for rank in range(2):
            parent, child = CTX.Pipe()
            p = CTX.Process(target=allreduce_rank, args=(rank, store_dir, nbytes, args.iters, args.rounds, child))
            p.start()
            procs.append(p)
            conns.append(parent)
        port_parent, port_child = CTX.Pipe()
        stream_buffers = 16
        recv = CTX.Process(target=tcp_receiver, args=(port_child, nbytes, nbytes * stream_buffers))
        recv.start()
        procs.append(recv)
        sock = socket.create_connection(("127.0.0.1", port_parent.recv()))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        payload = np.ones(nbytes, dtype=np.uint8).tobytes()
        tcp_round(sock, payload, stream_buffers)  # warm-up
        allreduce_s, tcp_s = [], []
        for _ in range(args.rounds):
            tcp_s.append(tcp_round(sock, payload, stream_buffers) / stream_buffers)
            for c in conns:
                c.send("go")
            rank_times = [c.recv() for c in conns]
            # An allreduce ends when the slower rank ends: per iteration, the larger of the two.
            allreduce_s.extend(max(a, b) for a, b in zip(*rank_times))
        for c in conns:
            assert c.recv() == "done"
        sock.close()
    finally:
        for p in procs:
            p.join(timeout=10)
            if p.is_alive():
                p.kill()
        shutil.rmtree(store_dir, ignore_errors=True)

    mib = nbytes / 2**20
    ar = statistics.median(allreduce_s)
    tcp = statistics.median(tcp_s)
    busbw = nbytes / ar / 2**20  # 2 (n-1)/n = 1 for n = 2
    stream = nbytes / tcp / 2**20
    print("| measurement | median time per %.1f MiB | throughput (MiB/s) |" % mib)
    print("|---|---:|---:|")
    print("| Allreduce (GLOO, 2 processes, loopback), bus bandwidth | %.2f ms | %.0f |" % (ar * 1e3, busbw))
    print("| raw TCP loopback stream, one way | %.2f ms | %.0f |" % (tcp * 1e3, stream))
    print()
    print("allreduce bus bandwidth / raw TCP stream = %.2f (bar: >= 0.50); %d allreduces, %d stream rounds"
          % (busbw / stream, len(allreduce_s), len(tcp_s)))


if __name__ == "__main__":
    main()
