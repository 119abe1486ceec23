"""Runs a function in N forked rank processes (after ``import caffe2``, as Caffe2's gloo_test did)
and collects each rank's result or exception; children that overrun the deadline are killed.
Shared by the multi-process tests of this folder."""
import multiprocessing
import queue as queue_module
import time

from caffe2.python import workspace

CHILD_DEADLINE_S = 60  # bounds a broken test only; each finishes in seconds
CTX = multiprocessing.get_context("fork")


def _run_child(queue, fn, rank, args):
    try:
        workspace.ResetWorkspace()
        queue.put((rank, "ok", fn(rank, *args)))
    except BaseException as e:  # noqa: B902 - everything goes back to the parent
        queue.put((rank, "error", e))


def run_ranks(fn, size, *args, expect=None):
    """Runs fn(rank, *args) in `size` forked processes; returns {rank: ("ok"|"error", value)} for
    the ranks in `expect` (default all). Children still alive at the end are killed."""
    expect = set(range(size)) if expect is None else set(expect)
    q = CTX.Queue()
    procs = [CTX.Process(target=_run_child, args=(q, fn, r, args)) for r in range(size)]
    for p in procs:
        p.start()
    results, deadline = {}, time.monotonic() + CHILD_DEADLINE_S
    try:
        while not expect <= set(results):
            try:
                rank, status, value = q.get(timeout=max(0.1, deadline - time.monotonic()))
            except queue_module.Empty:
                raise AssertionError("ranks %s did not report within %d s" % (expect - set(results), CHILD_DEADLINE_S))
            results[rank] = (status, value)
    finally:
        for p in procs:
            p.join(timeout=max(0.1, min(5, deadline - time.monotonic())))
            if p.is_alive():
                p.kill()
                p.join()
    return results


def ok_results(results):
    for rank, (status, value) in sorted(results.items()):
        if status == "error":
            raise value
    return [results[r][1] for r in sorted(results)]
