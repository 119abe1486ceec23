"""data_parallel_model and sync batch norm across real processes over loopback TCP, launched with
hetnet.distributed.run (torchrun's environment, a TCP store on MASTER_ADDR:MASTER_PORT, Gloo pairs):

- data-parallel LeNet on 2 and 4 ranks (and 2 ranks x 2 CPU devices) trains exactly like 1 rank with
  the whole batch (params within 1e-5 after 10 steps), and the same run twice gives identical bits;
- the same LeNet across two network namespaces joined by a veth pair (two "hosts": the address
  that routes to MASTER_ADDR is advertised, not the hostname's 127.0.0.1);
- a rank that dies makes the next collective of the others raise IoError instead of hanging;
- Parallelize_BMUF's block update gives every replica of every rank the average of all replicas;
- the pre-training barrier net and Synchronize make rank 0 wait for a late rank (fork children
  after `import hetnet`, rendezvous through FileStoreHandlerCreate);
- the initial params are rank 0's on every rank (the Broadcast in the param init net), and so are
  values loaded on each rank after FinalizeAfterCheckpoint;
- sync batch norm over 2-3 processes equals single-process SpatialBN on the concatenated batch
  (outputs, running statistics, saved stats, dX, dscale, dbias), with equal and unequal batches,
  through hetnet.distributed.sync_batch_norm and through Parallelize(combine_spatial_bn=True).

The workers are in dpm_workers.py.
"""
import os
import subprocess
import sys

import numpy as np
import pytest

from dpm_workers import BN_BLOBS, PARAMS, _bn_batches, _bn_feed_params, _bn_net, _lenet, _step_batch

WORKER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "dpm_workers.py")


# ---------------------------------------------------------------- the tests

def _run(tmp_path, nproc, *worker_args, timeout=90):
    """Runs this file's worker on nproc ranks; returns [rank's npz as dict]."""
    import hetnet
    out = tmp_path / "{}_{}".format(worker_args[0], nproc)
    out.mkdir(parents=True, exist_ok=True)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(hetnet.__file__)))
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    cmd = [sys.executable, "-m", "hetnet.distributed.run", "--nproc", str(nproc), "--timeout", str(timeout - 10),
           "--grace", "2", WORKER] + list(worker_args[:1]) + [str(out)] + [str(a) for a in worker_args[1:]]
    proc = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, timeout=timeout)
    assert proc.returncode == 0, proc.stdout.decode(errors="replace")[-4000:]
    results = []
    for r in range(nproc):
        with np.load(str(out / "rank{}.npz".format(r))) as f:
            results.append({k: f[k] for k in f.files})
    return results


@pytest.fixture(scope="module")
def lenet_one_rank(tmp_path_factory):
    return _run(tmp_path_factory.mktemp("lenet"), 1, "lenet", 1)[0]


@pytest.mark.parametrize("nproc,devices", [(2, 1), (4, 1), (2, 2)])
def test_data_parallel_lenet_on_n_ranks_equals_one_rank(tmp_path, lenet_one_rank, nproc, devices):
    results = _run(tmp_path, nproc, "lenet", devices)
    for p in PARAMS:
        for r in range(1, nproc):  # the param init net's Broadcast gave every rank rank 0's init
            np.testing.assert_array_equal(results[r]["init_" + p], results[0]["init_" + p])
        assert not np.allclose(results[0][p], 0.0)
        for r in range(nproc):
            np.testing.assert_allclose(results[r][p], lenet_one_rank[p], rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(results[r][p], results[0][p])


def test_data_parallel_lenet_is_reproducible(tmp_path):
    first = _run(tmp_path / "a", 2, "lenet", 1)
    second = _run(tmp_path / "b", 2, "lenet", 1)
    for p in PARAMS:
        np.testing.assert_array_equal(first[0][p], second[0][p])


def test_finalize_after_checkpoint_across_ranks(tmp_path):
    results = _run(tmp_path, 2, "ckpt")
    for r in results:
        for d in (0, 1):
            np.testing.assert_array_equal(r["fc_b_{}".format(d)], np.full(10, 5, np.float32))
    np.testing.assert_array_equal(results[0]["fc_w"], results[1]["fc_w"])


def _barrier_child(rank, store_dir, delay, queue):
    """A fork child: Parallelize with a FileStoreHandlerCreate rendezvous, then the pre-training
    barrier net and Synchronize, rank 1 arriving `delay` s late each time."""
    import time
    try:
        from caffe2.python import core, data_parallel_model as dpm, model_helper, optimizer, workspace
        workspace.ResetWorkspace()
        workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=store_dir,
                                                      prefix="barrier"))
        rdv = {"kv_handler": "store", "shard_id": rank, "num_shards": 2, "engine": "GLOO", "exit_nets": None}
        model = model_helper.ModelHelper(name="barrier")
        dpm.Parallelize_CPU(model, lambda m: None, _lenet, rendezvous=rdv, devices=[0],
                            optimizer_builder_fun=lambda m: optimizer.build_sgd(m, 0.1), barrier_net_timeout_sec=20)
        data, label = _step_batch(0)
        workspace.FeedBlob("cpu_0/data", data[rank * 4:(rank + 1) * 4])
        workspace.FeedBlob("cpu_0/label", label[rank * 4:(rank + 1) * 4])
        dpm.RunInitNet(model)
        waits = []
        for _ in range(2):
            if rank == 1:
                time.sleep(delay)
            start = time.monotonic()
            if not waits:
                workspace.RunNet(model._barrier_net)  # RunNet's first net
            else:
                dpm.Synchronize(model, timeout_sec=20)
            waits.append(time.monotonic() - start)
        queue.put((rank, waits, None))
    except BaseException as e:  # reported to the parent, which fails the test
        queue.put((rank, None, repr(e)))
    finally:
        queue.close()
        queue.join_thread()  # the feeder thread must write before the exit
        os._exit(0)


def test_barrier_net_and_synchronize_with_forked_ranks_and_a_file_store(tmp_path):
    import multiprocessing
    import queue as queue_module
    import hetnet  # noqa: F401  (imported before the fork: the children must work anyway)
    ctx = multiprocessing.get_context("fork")
    results = ctx.Queue()
    delay = 1.0
    children = [ctx.Process(target=_barrier_child, args=(r, str(tmp_path), delay, results)) for r in range(2)]
    for c in children:
        c.start()
    try:
        got = {}
        for _ in range(2):
            rank, waits, error = results.get(timeout=60)
            assert error is None, "rank {}: {}".format(rank, error)
            got[rank] = waits
    except queue_module.Empty:
        pytest.fail("the ranks did not finish within 60 s")
    finally:
        for c in children:
            c.join(timeout=5)
            if c.is_alive():
                c.kill()
                c.join()
    assert all(w >= delay * 0.8 for w in got[0]), got  # rank 0 waited for the late rank each time
    assert all(w < delay * 0.8 for w in got[1]), got


def test_bmuf_block_update_averages_every_replica_of_every_rank(tmp_path):
    results = _run(tmp_path, 2, "bmuf")
    before = [r["before_{}".format(d)] for r in results for d in (0, 1)]
    assert not np.allclose(before[0], before[2])  # replicas train (and start) apart
    for r in results:
        for d in (0, 1):  # momentum 0, block lr 1: the average of the 4 replicas
            np.testing.assert_allclose(r["after_{}".format(d)], sum(before) / 4, rtol=1e-5, atol=1e-6)


def test_a_rank_that_dies_makes_the_others_fail_not_hang(tmp_path):
    out = tmp_path / "peer_dies_2"
    out.mkdir()
    import hetnet
    env = dict(os.environ)
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(hetnet.__file__)))
    env["PYTHONPATH"] = os.pathsep.join([package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    proc = subprocess.run([sys.executable, "-m", "hetnet.distributed.run", "--nproc", "2", "--timeout", "80", WORKER,
                           "peer_dies", str(out)], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                          timeout=90)
    assert proc.returncode == 0, proc.stdout.decode(errors="replace")[-3000:]
    outcome, seconds = (out / "outcome").read_text().split()
    assert outcome in ("IoError", "DeadlineExceededError") and float(seconds) < 35  # the 30 s timeout at most


# ---- two "hosts": network namespaces joined by a veth pair (distributed-facts §7) ----

_NETNS_TAG = "%d" % (os.getpid() % 100000)
_NETNS = ["hd_a" + _NETNS_TAG, "hd_b" + _NETNS_TAG]
_VETH = ["hdva" + _NETNS_TAG, "hdvb" + _NETNS_TAG]
_NETNS_ADDR = ["10.78.0.1", "10.78.0.2"]


def _sh(*args, check=True):
    return subprocess.run(list(args), capture_output=True, text=True, timeout=20, check=check)


@pytest.fixture
def two_hosts():
    import shutil
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("network namespaces need root and iproute2")
    made = []
    try:
        for ns in _NETNS:
            r = _sh("ip", "netns", "add", ns, check=False)
            if r.returncode != 0:
                pytest.skip("`ip netns add` is not permitted here: " + r.stderr.strip())
            made.append(ns)
        _sh("ip", "link", "add", _VETH[0], "type", "veth", "peer", "name", _VETH[1])
        for ns, veth, addr in zip(_NETNS, _VETH, _NETNS_ADDR):
            _sh("ip", "link", "set", veth, "netns", ns)
            _sh("ip", "-n", ns, "addr", "add", addr + "/24", "dev", veth)
            _sh("ip", "-n", ns, "link", "set", veth, "up")
            _sh("ip", "-n", ns, "link", "set", "lo", "up")
        yield
    finally:
        for ns in made:
            _sh("ip", "netns", "del", ns, check=False)


def test_data_parallel_lenet_across_two_network_namespaces(tmp_path, two_hosts, lenet_one_rank):
    """Rank 0 and rank 1 in different namespaces ("hosts"); MASTER_ADDR is rank 0's veth address; no
    interface is named, so each common world advertises the address that routes to MASTER_ADDR;
    rendezvous through hetnet.distributed.rendezvous()'s TCP store."""
    import hetnet
    package_root = os.path.dirname(os.path.dirname(os.path.abspath(hetnet.__file__)))
    procs = []
    try:
        for rank, ns in enumerate(_NETNS):
            env = {k: v for k, v in os.environ.items() if not k.endswith("SOCKET_IFNAME")}
            env.update({"RANK": str(rank), "WORLD_SIZE": "2", "LOCAL_RANK": "0", "MASTER_ADDR": _NETNS_ADDR[0],
                        "MASTER_PORT": "29611", "PYTHONPATH": os.pathsep.join(
                            [package_root] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])})
            procs.append(subprocess.Popen(["ip", "netns", "exec", ns, sys.executable, WORKER, "lenet", str(tmp_path),
                                           "1"], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
        outputs = [p.communicate(timeout=90)[0].decode(errors="replace") for p in procs]
    finally:
        for p in procs:
            if p.poll() is None:
                p.kill()
                p.wait()
    assert [p.returncode for p in procs] == [0, 0], "\n".join(o[-2000:] for o in outputs)
    for rank in range(2):
        with np.load(str(tmp_path / "rank{}.npz".format(rank))) as f:
            for p in PARAMS:
                np.testing.assert_allclose(f[p], lenet_one_rank[p], rtol=1e-5, atol=1e-5)


def _single_process_bn(sizes, order):
    from caffe2.python import workspace
    workspace.ResetWorkspace()
    x, w = _bn_batches(sizes, order)
    net = _bn_net(order)
    _bn_feed_params(workspace)
    workspace.FeedBlob("x", x)
    workspace.FeedBlob("w", w)
    workspace.RunNetOnce(net)
    result = {b: workspace.FetchBlob(b) for b in BN_BLOBS}
    workspace.ResetWorkspace()
    return result


@pytest.mark.parametrize("sizes,order", [("2,2", "NCHW"), ("1,3,2", "NCHW"), ("3,1", "NHWC")])
def test_sync_batch_norm_across_processes_equals_bn_on_the_whole_batch(tmp_path, sizes, order):
    n = len(sizes.split(","))
    results = _run(tmp_path, n, "bn", sizes, order)
    whole = _single_process_bn([int(s) for s in sizes.split(",")], order)
    for b in ("y", "x_grad"):
        np.testing.assert_allclose(np.concatenate([r[b] for r in results]), whole[b], rtol=1e-4, atol=1e-4)
    for b in ("rm", "rv", "sm", "siv"):
        for r in results:
            np.testing.assert_allclose(r[b], whole[b], rtol=1e-5, atol=1e-5)
    for b in ("s_grad", "b_grad"):  # each rank outputs the whole batch's / number of replicas
        for r in results:
            np.testing.assert_allclose(r[b] * n, whole[b], rtol=1e-4, atol=1e-3)


def test_combine_spatial_bn_across_ranks_and_devices(tmp_path):
    """2 ranks x 2 CPU devices, 2 samples each: BN over all 8 samples; loss_scale is 1/4."""
    results = _run(tmp_path, 2, "dpm_bn")
    whole = _single_process_bn([8], "NCHW")
    replicas = [(r, d) for r in results for d in (0, 1)]
    np.testing.assert_allclose(np.concatenate([r["y_{}".format(d)] for r, d in replicas]), whole["y"],
                               rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(np.concatenate([r["x_grad_{}".format(d)] for r, d in replicas]) * 4,
                               whole["x_grad"], rtol=1e-4, atol=1e-4)
    for r, d in replicas:
        np.testing.assert_allclose(r["y_rm_{}".format(d)], whole["rm"], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(r["y_riv_{}".format(d)], whole["rv"], rtol=1e-5, atol=1e-5)
        # after the gradient allreduce every replica holds the sum: the whole batch's gradient / 4
        np.testing.assert_allclose(r["y_s_grad_{}".format(d)] * 4, whole["s_grad"], rtol=1e-4, atol=1e-3)
        np.testing.assert_allclose(r["y_b_grad_{}".format(d)] * 4, whole["b_grad"], rtol=1e-4, atol=1e-3)
