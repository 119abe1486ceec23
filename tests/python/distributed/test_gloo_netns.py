"""Interface selection across network namespaces (distributed-facts §7): two namespaces joined by a
veth pair (10.77.0.1 / 10.77.0.2), one rank in each, a file store in a shared temp dir. In every
namespace the hostname resolves to 127.0.0.1, the trap that makes Gloo advertise loopback. Checks:
- HETNET_SOCKET_IFNAME naming the veth: the ranks train together (SGD with allreduced gradients);
- no interface named, MASTER_ADDR set: the address that routes to MASTER_ADDR is used;
- HETNET_SOCKET_IFNAME=lo with a remote MASTER_ADDR: both fail fast with "would advertise 127.0.0.1";
- neither: Gloo's hostname default advertises 127.0.0.1 and the ranks fail, bounded by Gloo's
  connect timeout (5 x timeout_ms).
Needs root and `ip netns` (skipped with the reason otherwise); namespaces are deleted in finally."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import numpy as np
import pytest

TAG = "%d" % (os.getpid() % 100000)
NS = ["hn_a" + TAG, "hn_b" + TAG]
VETH = ["hnva" + TAG, "hnvb" + TAG]
ADDR = ["10.77.0.1", "10.77.0.2"]
BUILD_PYTHON = os.environ.get("PYTHONPATH", "")

CHILD = r"""
import json, os, sys, time
import numpy as np
import hetnet
from caffe2.python import core, workspace

rank, size = int(os.environ["RANK"]), int(os.environ["WORLD_SIZE"])
start = time.monotonic()
try:
    workspace.RunOperatorOnce(core.CreateOperator(
        "FileStoreHandlerCreate", [], ["store"], path=os.environ["STORE_DIR"], prefix=os.environ["STORE_PREFIX"]))
    workspace.RunOperatorOnce(core.CreateOperator(
        "CreateCommonWorld", ["store"], ["cw"], name="netns_cw", engine="GLOO", size=size, rank=rank,
        timeout_ms=int(os.environ["TIMEOUT_MS"])))
    # Linear regression, data split by rank; gradients summed by Allreduce.
    rs = np.random.RandomState(0)
    X = rs.randn(64, 3).astype(np.float32)
    y = X @ np.array([1.5, -2.0, 0.5], dtype=np.float32)
    Xs, ys = X[rank::size], y[rank::size]
    w = np.zeros(3, dtype=np.float32)
    for step in range(20):
        grad = 2 * Xs.T @ (Xs @ w - ys) / len(X)
        workspace.FeedBlob("grad", grad.astype(np.float32))
        workspace.RunOperatorOnce(core.CreateOperator("Allreduce", ["cw", "grad"], ["grad"], engine="GLOO"))
        w -= 0.1 * workspace.FetchBlob("grad")
    print(json.dumps({"ok": True, "w": w.tolist(), "seconds": time.monotonic() - start}))
except Exception as e:
    print(json.dumps({"ok": False, "type": type(e).__name__, "message": str(e),
                      "seconds": time.monotonic() - start}))
"""


def sh(*args, check=True):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=20, check=check)


@pytest.fixture(scope="module")
def namespaces():
    if os.geteuid() != 0:
        pytest.skip("network namespaces need root")
    if shutil.which("ip") is None:
        pytest.skip("iproute2 (`ip`) is not installed")
    made = []
    try:
        for ns in NS:
            r = sh("ip", "netns", "add", ns, check=False)
            if r.returncode != 0:
                pytest.skip("`ip netns add` is not permitted here: " + r.stderr.strip())
            made.append(ns)
            r = sh("ip", "netns", "exec", ns, "true", check=False)
            if r.returncode != 0:
                pytest.skip("`ip netns exec` is not permitted here: " + r.stderr.strip())
        sh("ip", "link", "add", VETH[0], "type", "veth", "peer", "name", VETH[1])
        for ns, veth, addr in zip(NS, VETH, ADDR):
            sh("ip", "link", "set", veth, "netns", ns)
            sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", veth)
            sh("ip", "-n", ns, "link", "set", veth, "up")
            sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield
    finally:
        for ns in made:
            sh("ip", "netns", "del", ns, check=False)  # takes its end of the veth pair with it


def run_pair(env_per_rank, timeout_ms=5000):
    """Starts rank 0 in NS[0] and rank 1 in NS[1]; returns their JSON results."""
    store = tempfile.mkdtemp(prefix="hetnet_netns_")
    prefix = "p%f" % time.time()
    procs = []
    try:
        for rank in range(2):
            env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "PYTHONPATH": BUILD_PYTHON,
                   "RANK": str(rank), "WORLD_SIZE": "2", "STORE_DIR": store, "STORE_PREFIX": prefix,
                   "TIMEOUT_MS": str(timeout_ms)}
            # Sanitizer runs preload their runtime and set its options: the children need them too.
            env.update({k: v for k, v in os.environ.items() if k == "LD_PRELOAD" or k.endswith("SAN_OPTIONS")})
            env.update(env_per_rank[rank])
            procs.append(subprocess.Popen(["ip", "netns", "exec", NS[rank], sys.executable, "-c", CHILD], env=env,
                                          stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True))
        results = []
        for p in procs:
            out, err = p.communicate(timeout=timeout_ms / 1000 + 30)
            lines = [ln for ln in out.splitlines() if ln.startswith("{")]
            assert lines, "child printed no result; stderr:\n" + err
            results.append(json.loads(lines[-1]))
        return results
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
        shutil.rmtree(store, ignore_errors=True)


def expected_weights():
    rs = np.random.RandomState(0)
    X = rs.randn(64, 3).astype(np.float32)
    y = X @ np.array([1.5, -2.0, 0.5], dtype=np.float32)
    w = np.zeros(3, dtype=np.float32)
    for _ in range(20):
        w -= 0.1 * (2 * X.T @ (X @ w - y) / len(X))
    return w


def test_ranks_train_together_when_the_interface_names_the_veth(namespaces):
    results = run_pair([{"MASTER_ADDR": ADDR[0], "HETNET_SOCKET_IFNAME": VETH[0]},
                        {"MASTER_ADDR": ADDR[0], "HETNET_SOCKET_IFNAME": VETH[1]}])
    for r in results:
        assert r["ok"], r
        np.testing.assert_allclose(r["w"], expected_weights(), rtol=1e-4, atol=1e-5)
    assert results[0]["w"] == results[1]["w"]


def test_the_route_to_master_addr_picks_the_veth(namespaces):
    results = run_pair([{"MASTER_ADDR": ADDR[0]}, {"MASTER_ADDR": ADDR[0]}])
    for r in results:
        assert r["ok"], r
        np.testing.assert_allclose(r["w"], expected_weights(), rtol=1e-4, atol=1e-5)


def test_loopback_with_a_remote_master_fails_fast(namespaces):
    results = run_pair([{"MASTER_ADDR": ADDR[0], "HETNET_SOCKET_IFNAME": "lo"},
                        {"MASTER_ADDR": ADDR[0], "HETNET_SOCKET_IFNAME": "lo"}], timeout_ms=20000)
    for r in results:
        assert not r["ok"], r
        assert "would advertise 127.0.0.1 to remote peers; set HETNET_SOCKET_IFNAME" in r["message"], r
        assert r["seconds"] < 5, r  # before any rendezvous wait, not after the 20 s timeout


def test_hostname_default_advertises_loopback_and_fails_within_the_timeout(namespaces):
    results = run_pair([{}, {}], timeout_ms=2000)
    for r in results:
        assert not r["ok"], r
        assert r["type"] in ("IoError", "DeadlineExceededError"), r
        # Gloo's TCP connect waits 5 x the pair timeout (gloo/transport/tcp/pair.h waitUntil).
        assert r["seconds"] < 5 * 2 + 8, r["message"]
        assert "127.0.0.1" in r["message"], r["message"]
