"""GPU behaviour: skipped, with the reason shown, on machines without a CUDA device."""
import numpy as np
import pytest

from hetnet import core, workspace
from hetnet.proto import caffe2_pb2

pytestmark = pytest.mark.skipif(workspace.NumCudaDevices() == 0,
                                reason="no CUDA device on this machine (NumCudaDevices() == 0)")


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int32, np.int64, np.uint8,
                                   np.bool_])
def test_feed_to_gpu_and_fetch_back(ws, dtype):
    arr = (np.arange(12).reshape(3, 4) % 5).astype(dtype)
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        ws.FeedBlob("g", arr)
    assert ws.BlobInfo("g")["device"] == (1, 0)
    out = ws.FetchBlob("g")
    assert out.dtype == arr.dtype
    np.testing.assert_array_equal(out, arr)


def test_explicit_device_option_wins_over_scope(ws):
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU)):
        ws.FeedBlob("g", np.ones(3, np.float32), device_option=core.DeviceOption(caffe2_pb2.CUDA, 0))
    assert ws.BlobInfo("g")["device"] == (1, 0)


def test_relu_on_gpu(ws):
    net = core.Net("gpu_relu")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        net.Relu("x", "y")
        ws.FeedBlob("x", np.array([-1.0, 3.0], np.float32))
    ws.RunNetOnce(net)
    assert ws.BlobInfo("y")["device"] == (1, 0)
    np.testing.assert_array_equal(ws.FetchBlob("y"), [0.0, 3.0])


def test_missing_gpu_id_is_unsupported(ws):
    import hetnet
    bad = workspace.NumCudaDevices()
    with pytest.raises(hetnet.UnsupportedError):
        ws.FeedBlob("x", np.ones(1, np.float32), device_option=core.DeviceOption(caffe2_pb2.CUDA, bad))


def test_refeeding_a_cpu_blob_that_a_gpu_copy_reads(ws):
    # After the first run the CPU blob x lives in page-locked memory (FeedBlob keeps it there): every
    # run must still see the values fed last, also across shape changes.
    net = core.Net("refeed")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 0)):
        net.Relu("x", "y")
    ws.FeedBlob("x", np.array([-1.0, 2.0, 3.0], np.float32))
    ws.CreateNet(net)
    for k, value in enumerate([[-1.0, 2.0, 3.0], [4.0, -5.0, 6.0], [7.0, 8.0], [1.0, -1.0, 2.0, 9.0]]):
        x = np.array(value, np.float32)
        ws.FeedBlob("x", x)
        ws.RunNet("refeed")
        np.testing.assert_array_equal(ws.FetchBlob("y"), np.maximum(x, 0), err_msg="run {}".format(k))
        assert ws.BlobInfo("x")["device"] == (0, 0)
