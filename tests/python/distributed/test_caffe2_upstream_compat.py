"""What Caffe2's gloo_test.py (see docs/caffe2_upstream_tests.md) relies on, across real processes
over loopback: a CreateCommonWorld made by core.CreateOperator without a name (the field is present
and empty, as Caffe2 checked it), and ReduceScatter leaving rank r's part of the sum at the front of
each output, with recvCounts that may sum to fewer elements than the tensors hold (gloo_test's
Python 3 float division gives such counts). Children are forked after import and killed when they
overrun their deadline."""
import shutil
import tempfile

import numpy as np
import pytest

import hetnet
from caffe2.python import core, workspace

from rank_runner import ok_results, run_ranks as _run_ranks  # noqa: E402


def run_ranks(fn, size, *args):
    """{rank: fn's value}; any rank's exception fails the test."""
    return dict(enumerate(ok_results(_run_ranks(fn, size, *args))))


@pytest.fixture
def store_dir():
    d = tempfile.mkdtemp(prefix="hetnet_upstream_")
    yield d
    shutil.rmtree(d, ignore_errors=True)


def unnamed_world(rank, size, path):
    workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=path))
    op = core.CreateOperator("CreateCommonWorld", ["store"], ["cw"], size=size, rank=rank, sync=True,
                             engine="GLOO", timeout_ms=20000)
    assert op.HasField("name") and op.name == ""
    workspace.RunOperatorOnce(op)


def gloo_test_counts(numel, size):
    # gloo_test.py's recvCounts under Python 3 ('/' is float division; int32 truncates each count).
    counts, remaining, chunk = np.zeros(size, dtype=np.int32), numel, (numel + size - 1) / size
    for i in range(size):
        counts[i] = min(chunk, remaining)
        remaining = remaining - chunk if remaining > chunk else 0
    return counts


def reduce_scatter_child(rank, size, path, numel):
    unnamed_world(rank, size, path)
    workspace.FeedBlob("a", np.full(numel, 2 * rank, np.float32))
    workspace.FeedBlob("b", np.full(numel, 2 * rank + 1, np.float32))
    workspace.FeedBlob("counts", gloo_test_counts(numel, size))
    net = core.Net("rs")
    net.ReduceScatter(["cw", "a", "b", "counts"], ["a", "b", "counts"], engine="GLOO")
    workspace.CreateNet(net)
    out = []
    for _ in range(3):  # later runs too (gloo_test reruns every net)
        workspace.FeedBlob("a", np.arange(numel, dtype=np.float32) + rank)
        workspace.FeedBlob("b", np.arange(numel, dtype=np.float32) * (rank + 1))
        workspace.RunNet(net.Name())
        out.append((workspace.FetchBlob("a").tolist(), workspace.FetchBlob("b").tolist()))
    return out


@pytest.mark.parametrize("size,numel", [(2, 1000), (3, 1000), (3, 10)])
def test_unnamed_world_and_reduce_scatter_puts_each_rank_part_first(store_dir, size, numel):
    counts = gloo_test_counts(numel, size)
    assert counts.sum() <= numel
    ranks = np.arange(size)
    sum_a = size * np.arange(numel) + ranks.sum()
    sum_b = np.arange(numel) * (ranks + 1).sum()
    total = sum_a + sum_b  # as in Gloo, every input of every rank goes into one sum
    outs = run_ranks(reduce_scatter_child, size, size, store_dir, numel)
    for r, runs in outs.items():
        lo = int(counts[:r].sum())
        n = int(counts[r])
        for a, b in runs:
            np.testing.assert_array_equal(np.array(a[:n]), total[lo:lo + n])
            np.testing.assert_array_equal(np.array(b[:n]), total[lo:lo + n])


def too_many_counts_child(rank, size, path):
    unnamed_world(rank, size, path)
    workspace.FeedBlob("a", np.ones(3, np.float32))
    workspace.FeedBlob("counts", np.array([2, 2], np.int32))
    try:
        workspace.RunOperatorOnce(core.CreateOperator("ReduceScatter", ["cw", "a", "counts"], ["a", "counts"],
                                                      engine="GLOO"))
    except hetnet.InvalidArgumentError as e:
        return str(e)
    return "no error"


def test_reduce_scatter_counts_beyond_numel_are_an_error(store_dir):
    for msg in run_ranks(too_many_counts_child, 2, 2, store_dir).values():
        assert "recvCounts sum to 4 but the tensors have only 3 elements" in msg


def test_a_world_without_a_name_field_is_still_refused(store_dir):
    workspace.ResetWorkspace()
    workspace.RunOperatorOnce(core.CreateOperator("FileStoreHandlerCreate", [], ["store"], path=store_dir))
    op = core.CreateOperator("CreateCommonWorld", ["store"], ["cw"], size=1, rank=0, engine="GLOO")
    op.ClearField("name")
    with pytest.raises(hetnet.InvalidArgumentError, match="CreateCommonWorld operator requires name"):
        workspace.RunOperatorOnce(op)
