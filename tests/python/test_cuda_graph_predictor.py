"""A Predictor whose predict net has type "cuda_graph" (device/cuda/cuda_graph_net.cc): the same
outputs as the sequential executor, and executor_notes() saying what was replayed. The GPU case skips,
with its reason shown, without a CUDA device; both need a build with CUDA (the executor is CUDA code)."""
import numpy as np
import pytest

from hetnet import _C, core, workspace
from hetnet.proto import caffe2_pb2


def _nets(device):
    rng = np.random.RandomState(0)
    init = core.Net("init")
    for name, shape in (("w1", (32, 20)), ("b1", (32,)), ("w2", (10, 32)), ("b2", (10,))):
        init.GivenTensorFill([], name, shape=list(shape), values=rng.rand(*shape).astype(np.float32).ravel().tolist())
    pred = core.Net("mlp")
    with core.DeviceScope(device):
        pred.FC(["data", "w1", "b1"], "h")
        pred.Relu("h", "r")
        pred.FC(["r", "w2", "b2"], "o")
        pred.Softmax("o", "prob")
    pred.Proto().external_input.extend(["data", "w1", "b1", "w2", "b2"])
    pred.Proto().external_output.append("prob")
    return init.Proto(), pred.Proto()


def _both(device):
    init, pred = _nets(device)
    graph = caffe2_pb2.NetDef()
    graph.CopyFrom(pred)
    graph.type = "cuda_graph"
    return workspace.Predictor(init, pred), workspace.Predictor(init, graph)


def _same_outputs(plain, graph, batches):
    for i, batch in enumerate(batches):
        x = np.random.RandomState(10 + i).rand(batch, 20).astype(np.float32)
        np.testing.assert_array_equal(plain.run([x])[0], graph.run([x])[0])


needs_cuda_build = pytest.mark.skipif(not _C.has_cuda_support(), reason="this build has no CUDA (no cuda_graph executor)")


@needs_cuda_build
def test_cpu_net_as_cuda_graph_runs_as_before_and_says_nothing_was_captured():
    plain, graph = _both(core.DeviceOption(caffe2_pb2.CPU))
    _same_outputs(plain, graph, [4, 4, 4, 7])
    assert plain.executor_notes() == ""
    notes = graph.executor_notes()
    assert "cuda graph: 0 of" in notes and "no operator runs on a GPU" in notes


@pytest.mark.skipif(workspace.NumCudaDevices() == 0, reason="no CUDA device on this machine (NumCudaDevices() == 0)")
def test_gpu_mlp_predictor_replays_one_graph_with_the_same_outputs():
    plain, graph = _both(core.DeviceOption(caffe2_pb2.CUDA, 0))
    _same_outputs(plain, graph, [4, 4, 4, 4])
    assert "replayed as one graph (captured 1x)" in graph.executor_notes()
    _same_outputs(plain, graph, [2, 2, 2])  # another batch: captured again
    assert "replayed as one graph (captured 2x)" in graph.executor_notes()
