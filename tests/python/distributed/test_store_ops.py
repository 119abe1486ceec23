"""Store handler ops across real processes (Caffe2's file_store_handler_op_test.py and
store_ops_test_util.py patterns): processes forked after ``import caffe2`` rendezvous through a
file store, a TCP store on a free loopback port, or Redis when ``redis-server`` is installed.
Every child runs under a deadline and is killed if it overruns; results and exceptions come back
through a multiprocessing.Queue (so the errors must pickle)."""
import multiprocessing
import os
import pickle
import shutil
import socket
import subprocess
import tempfile
import time

import numpy as np
import pytest

import hetnet
from caffe2.distributed.python import StoreHandlerTimeoutError
from caffe2.proto import caffe2_pb2
from caffe2.python import core, workspace

CHILD_DEADLINE_S = 30  # every test finishes in seconds; this only bounds a broken one
CTX = multiprocessing.get_context("fork")  # fork after import must work (distributed-facts §8.15)


def _run_child(queue, fn, rank, args, reset):
    try:
        if reset:
            workspace.ResetWorkspace()
        queue.put((rank, "ok", fn(rank, *args)))
    except BaseException as e:  # noqa: B902 - everything goes back to the parent
        queue.put((rank, "error", e))


def run_processes(fn, num_procs, *args, reset=True):
    """Runs fn(rank, *args) in num_procs forked processes (each with a fresh workspace unless
    reset=False); returns results by rank, re-raising the first child exception in the parent."""
    queue = CTX.Queue()
    procs = [CTX.Process(target=_run_child, args=(queue, fn, r, args, reset)) for r in range(num_procs)]
    for p in procs:
        p.start()
    results, deadline = {}, time.monotonic() + CHILD_DEADLINE_S
    try:
        while len(results) < num_procs:
            rank, status, value = queue.get(timeout=max(0.1, deadline - time.monotonic()))
            if status == "error":
                raise value
            results[rank] = value
    finally:
        for p in procs:
            p.join(timeout=max(0.1, deadline - time.monotonic()))
            if p.is_alive():
                p.kill()
                p.join()
    return [results[r] for r in range(num_procs)]


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture
def store_dir():
    d = tempfile.mkdtemp(prefix="hetnet_store_test_")
    yield d
    shutil.rmtree(d, ignore_errors=True)


# ---- store handler factories (run in the child) ----

def file_store(path, prefix="test"):
    def create(rank):
        workspace.RunOperatorOnce(core.CreateOperator(
            "FileStoreHandlerCreate", [], ["store_handler"], path=path, prefix=prefix))
        return "store_handler"
    return create


def tcp_store(port):
    def create(rank):
        workspace.RunOperatorOnce(core.CreateOperator(
            "TCPStoreHandlerCreate", [], ["store_handler"], host="127.0.0.1", port=port, rank=rank,
            timeout_ms=10000))
        return "store_handler"
    return create


def _hold_server_until_done(handler, rank, num_procs):
    """The serving rank outlives the others' requests: everyone adds to 'done', the server waits."""
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", [handler], ["n_done"], blob_name="done"))
    if rank == 0:
        deadline = time.monotonic() + 20
        while workspace.FetchBlob("n_done")[0] < num_procs and time.monotonic() < deadline:
            time.sleep(0.01)
            workspace.RunOperatorOnce(core.CreateOperator(
                "StoreAdd", [handler], ["n_done"], blob_name="done", add_value=0))


# ---- the scenarios (run in every child) ----

VALUE = {"rank0 says": ["hello", 1, 2.5], "bytes": b"\x00\xff"}


def set_get(rank, num_procs, create):
    """Caffe2's pattern: the last rank sets (the others are already waiting), everyone gets."""
    handler = create(rank)
    if rank == num_procs - 1:
        workspace.FeedBlob("pickled", pickle.dumps(VALUE))
        workspace.RunOperatorOnce(core.CreateOperator("StoreSet", [handler, "pickled"], [], blob_name="py"))
        workspace.FeedBlob("tensor", np.arange(6, dtype=np.float32).reshape(2, 3) * (rank + 1))
        workspace.RunOperatorOnce(core.CreateOperator("StoreSet", [handler, "tensor"], []))
    workspace.RunOperatorOnce(core.CreateOperator("StoreGet", [handler], ["got"], blob_name="py"))
    got = pickle.loads(workspace.FetchBlob("got"))
    workspace.RunOperatorOnce(core.CreateOperator("StoreGet", [handler], ["tensor"]))
    tensor = workspace.FetchBlob("tensor")
    _hold_server_until_done(handler, rank, num_procs)
    return got, tensor


def add_counts(rank, num_procs, create, adds):
    handler = create(rank)
    for _ in range(adds):
        workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", [handler], ["count"], blob_name="counter"))
    workspace.FeedBlob("flag", b"1")
    workspace.RunOperatorOnce(core.CreateOperator("StoreSet", [handler, "flag"], [], blob_name="done%d" % rank))
    # StoreWait with names as an argument, then with names as a string tensor input.
    names = ["done%d" % r for r in range(num_procs)]
    workspace.RunOperatorOnce(core.CreateOperator("StoreWait", [handler], [], blob_names=names))
    workspace.FeedBlob("names", np.array(names, dtype=object))
    workspace.RunOperatorOnce(core.CreateOperator("StoreWait", [handler, "names"], []))
    workspace.RunOperatorOnce(core.CreateOperator(
        "StoreAdd", [handler], ["count"], blob_name="counter", add_value=0))
    total = int(workspace.FetchBlob("count")[0])
    _hold_server_until_done(handler, rank, num_procs)
    return total


def get_missing(rank, create):
    handler = create(rank)
    t0 = time.monotonic()
    with pytest.raises(StoreHandlerTimeoutError) as info:
        workspace.RunOperatorOnce(core.CreateOperator(
            "StoreGet", [handler], ["x"], blob_name="never_set", timeout_ms=200))
    elapsed = time.monotonic() - t0
    # The child sends the exception itself back: it must pickle with its type and message.
    return info.value, elapsed


@pytest.mark.parametrize("kind", ["file", "tcp"])
def test_set_get_across_processes(store_dir, kind):
    create = file_store(store_dir) if kind == "file" else tcp_store(free_port())
    results = run_processes(set_get, 3, 3, create)
    for got, tensor in results:
        assert got == VALUE
        np.testing.assert_array_equal(tensor, np.arange(6, dtype=np.float32).reshape(2, 3) * 3)


@pytest.mark.parametrize("kind", ["file", "tcp"])
def test_add_and_wait_across_processes(store_dir, kind):
    create = file_store(store_dir) if kind == "file" else tcp_store(free_port())
    num_procs, adds = 4, 25
    assert run_processes(add_counts, num_procs, num_procs, create, adds) == [num_procs * adds] * num_procs


@pytest.mark.parametrize("kind", ["file", "tcp"])
def test_get_timeout_raises_store_handler_timeout_error(store_dir, kind):
    create = file_store(store_dir) if kind == "file" else tcp_store(free_port())
    [(err, elapsed)] = run_processes(get_missing, 1, create)
    assert type(err) is StoreHandlerTimeoutError
    assert isinstance(err, RuntimeError) and isinstance(err, hetnet.DeadlineExceededError)
    assert "Wait timeout for name(s): never_set" in str(err)
    assert elapsed < 5


def test_errors_pickle_across_queues():
    queue = CTX.Queue()
    for cls in (StoreHandlerTimeoutError, hetnet.IoError):
        err = cls("Wait timeout for name(s): a", "cause", ["in op StoreGet"])
        queue.put(err)
        back = queue.get(timeout=5)
        assert type(back) is cls and str(back) == str(err) and back.context == ["in op StoreGet"]


def test_file_store_requires_path():
    with pytest.raises(hetnet.InvalidArgumentError, match="path is a required argument"):
        workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["h"]))


def test_tcp_store_dead_server_is_io_error():
    port = free_port()  # nothing listens there
    workspace.RunOperatorOnce(core.CreateOperator(
        "TCPStoreHandlerCreate", [], ["h"], host="127.0.0.1", port=port, is_server=0, timeout_ms=300))
    workspace.FeedBlob("v", b"x")
    t0 = time.monotonic()
    with pytest.raises(hetnet.IoError, match="127.0.0.1:%d" % port):
        workspace.RunOperatorOnce(core.CreateOperator("StoreSet", ["h", "v"], []))
    assert time.monotonic() - t0 < 5


def _env_rendezvous(rank, port):
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank))
    workspace.RunOperatorOnce(core.CreateOperator("TCPStoreHandlerCreate", [], ["h"]))
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["n"], blob_name="arrived"))
    workspace.RunOperatorOnce(core.CreateOperator("StoreWait", ["h"], [], blob_names=["arrived"]))
    workspace.FeedBlob("mine", ("rank %d" % rank).encode())
    workspace.RunOperatorOnce(core.CreateOperator("StoreSet", ["h", "mine"], [], blob_name="r%d" % rank))
    other = 1 - rank
    workspace.RunOperatorOnce(core.CreateOperator("StoreGet", ["h"], ["theirs"], blob_name="r%d" % other))
    theirs = workspace.FetchBlob("theirs")
    _hold_server_until_done("h", rank, 2)
    return theirs


def test_tcp_store_from_env():
    assert run_processes(_env_rendezvous, 2, free_port()) == [b"rank 1", b"rank 0"]


def _use_inherited_handler(rank):
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["n"], blob_name="forked"))
    workspace.FeedBlob("mine", b"child %d" % rank)
    workspace.RunOperatorOnce(core.CreateOperator("StoreSet", ["h", "mine"], [], blob_name="child%d" % rank))
    # Many requests at once from every child: a connection shared with the parent or a sibling
    # would hand replies to the wrong process.
    for i in range(40):
        workspace.FeedBlob("v", b"%d-%d" % (rank, i) * (i + 1))
        workspace.RunOperatorOnce(core.CreateOperator("StoreSet", ["h", "v"], [], blob_name="k%d-%d" % (rank, i)))
        workspace.RunOperatorOnce(core.CreateOperator("StoreGet", ["h"], ["back"], blob_name="k%d-%d" % (rank, i)))
        assert workspace.FetchBlob("back") == b"%d-%d" % (rank, i) * (i + 1)
    workspace.ResetWorkspace()  # destroys the child's copy of the handler (and of the server)
    return True


@pytest.mark.parametrize("kind", ["file", "tcp"])
def test_children_forked_after_store_creation_use_it(store_dir, kind):
    """Fork after creating a store (the server thread lives in the parent): children use the
    inherited handler over their own connections, and destroying their copies leaves the
    parent's server and connections working."""
    workspace.ResetWorkspace()
    if kind == "file":
        workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["h"], path=store_dir))
    else:
        workspace.RunOperatorOnce(core.CreateOperator(
            "TCPStoreHandlerCreate", [], ["h"], host="127.0.0.1", port=0, is_server=1, timeout_ms=5000))
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["n"], blob_name="forked"))  # a pooled connection
    assert run_processes(_use_inherited_handler, 4, reset=False) == [True] * 4
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["n"], blob_name="forked", add_value=0))
    assert workspace.FetchBlob("n")[0] == 5
    for r in range(4):
        workspace.RunOperatorOnce(core.CreateOperator("StoreGet", ["h"], ["got"], blob_name="child%d" % r))
        assert workspace.FetchBlob("got") == b"child %d" % r
    workspace.ResetWorkspace()


def test_string_blobs_feed_fetch_serialize():
    workspace.FeedBlob("b", b"\x80\x04pickle\x00bytes")
    assert workspace.FetchBlob("b") == b"\x80\x04pickle\x00bytes"
    workspace.FeedBlob("s", "héllo")
    assert workspace.FetchBlob("s") == "héllo".encode("utf-8")
    assert "string" in workspace.BlobInfo("s")["type"]
    serialized = hetnet._C.serialize_blob("b")
    proto = caffe2_pb2.BlobProto()
    proto.ParseFromString(serialized)
    assert proto.type == "std::string" and proto.content == b"\x80\x04pickle\x00bytes" and proto.name == "b"
    hetnet._C.deserialize_blob("b2", serialized)
    assert workspace.FetchBlob("b2") == b"\x80\x04pickle\x00bytes"
    workspace.FeedBlob("t", np.array([[1.5, 2.5]], dtype=np.float32))
    hetnet._C.deserialize_blob("t2", hetnet._C.serialize_blob("t"))
    np.testing.assert_array_equal(workspace.FetchBlob("t2"), [[1.5, 2.5]])


# ---- Redis (Gloo's RedisStore), only where redis-server is installed ----

@pytest.fixture
def redis_port():
    exe = shutil.which("redis-server")
    if exe is None:
        pytest.skip("redis-server is not installed (apt-get install redis-server)")
    if "RedisStoreHandlerCreate" not in hetnet._C.registered_operators():
        pytest.skip("this build has no RedisStoreHandlerCreate (built without Gloo)")
    port = free_port()
    proc = subprocess.Popen([exe, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                             "--appendonly", "no"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.fail("redis-server did not start")
                time.sleep(0.05)
        yield port
    finally:
        proc.kill()
        proc.wait(timeout=10)


def redis_store(port, prefix):
    def create(rank):
        workspace.RunOperatorOnce(core.CreateOperator(
            "RedisStoreHandlerCreate", [], ["store_handler"], host="127.0.0.1", port=port, prefix=prefix))
        return "store_handler"
    return create


def test_redis_store_across_processes(redis_port):
    results = run_processes(set_get, 3, 3, redis_store(redis_port, "setget"))
    assert all(got == VALUE for got, _ in results)
    assert run_processes(add_counts, 3, 3, redis_store(redis_port, "add"), 10) == [30] * 3
    [(err, _)] = run_processes(get_missing, 1, redis_store(redis_port, "timeout"))
    assert type(err) is StoreHandlerTimeoutError and "Wait timeout for name(s): never_set" in str(err)


def test_redis_children_forked_after_store_creation_use_it(redis_port):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator(
        "RedisStoreHandlerCreate", [], ["h"], host="127.0.0.1", port=redis_port, prefix="fork/"))
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["n"], blob_name="forked"))
    assert run_processes(_use_inherited_handler, 3, reset=False) == [True] * 3
    workspace.RunOperatorOnce(core.CreateOperator("StoreAdd", ["h"], ["n"], blob_name="forked", add_value=0))
    assert workspace.FetchBlob("n")[0] == 4
    workspace.RunOperatorOnce(core.CreateOperator("StoreGet", ["h"], ["got"], blob_name="child2"))
    assert workspace.FetchBlob("got") == b"child 2"
    workspace.ResetWorkspace()
