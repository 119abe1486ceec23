"""FeedBlob / FetchBlob round trips for every dtype, strings, copies, and errors."""
import numpy as np
import pytest

import hetnet
from hetnet import core
from hetnet.proto import caffe2_pb2

NUMERIC_DTYPES = [np.float32, np.float64, np.float16, np.int8, np.int16, np.int32, np.int64,
                  np.uint8, np.uint16, np.uint32, np.uint64, np.bool_]


@pytest.mark.parametrize("dtype", NUMERIC_DTYPES)
def test_round_trip_every_dtype(ws, dtype):
    arr = (np.arange(24).reshape(2, 3, 4) % 7).astype(dtype)
    assert ws.FeedBlob("x", arr)
    out = ws.FetchBlob("x")
    assert out.dtype == arr.dtype
    assert out.shape == arr.shape
    np.testing.assert_array_equal(out, arr)


@pytest.mark.parametrize("shape", [(), (0,), (3, 0, 2), (5,)])
def test_round_trip_shapes(ws, shape):
    arr = np.ones(shape, dtype=np.float32)
    ws.FeedBlob("x", arr)
    out = ws.FetchBlob("x")
    assert out.shape == shape


def test_string_arrays_become_string_tensors(ws):
    ws.FeedBlob("s", np.array([b"ab", b"", b"\xff\x00z"], dtype=object))
    out = ws.FetchBlob("s")
    assert out.dtype == object
    assert list(out) == [b"ab", b"", b"\xff\x00z"]
    ws.FeedBlob("u", np.array([["hé", "x"], ["y", "z"]]))  # unicode 'U' array, stored as UTF-8
    out = ws.FetchBlob("u")
    assert out.shape == (2, 2)
    assert out[0, 0] == "hé".encode("utf-8")
    assert ws.BlobInfo("u")["dtype"] == "string"


def test_bytes_value_is_stored_as_string_blob(ws):
    proto = core.DeviceOption(caffe2_pb2.CPU, 0)
    ws.FeedBlob("p", proto)
    back = caffe2_pb2.DeviceOption()
    back.ParseFromString(ws.FetchBlob("p"))
    assert back == proto
    assert ws.BlobInfo("p")["type"] == "std::string"  # Caffe2's name, as BlobProto.type has it


def test_non_contiguous_and_byte_swapped_arrays(ws):
    base = np.arange(20, dtype=np.float32).reshape(4, 5)
    ws.FeedBlob("t", base.T)  # Fortran order
    np.testing.assert_array_equal(ws.FetchBlob("t"), base.T)
    ws.FeedBlob("s", base[::2, ::2])
    np.testing.assert_array_equal(ws.FetchBlob("s"), base[::2, ::2])
    swapped = base.astype(">f4")
    ws.FeedBlob("b", swapped)
    np.testing.assert_array_equal(ws.FetchBlob("b"), base)


def test_feed_and_fetch_copy(ws):
    """Documented: FeedBlob copies; FetchBlob returns a new writable array."""
    arr = np.zeros(4, dtype=np.float32)
    ws.FeedBlob("x", arr)
    arr[0] = 5
    first = ws.FetchBlob("x")
    assert first[0] == 0
    first[1] = 7
    assert ws.FetchBlob("x")[1] == 0
    assert first.flags.writeable and first.flags.owndata


def test_lists_and_scalars_are_converted(ws):
    ws.FeedBlob("l", [1.5, 2.5])
    assert ws.FetchBlob("l").dtype == np.float64
    ws.FeedBlob("i", 3)
    assert ws.FetchBlob("i").shape == ()


@pytest.mark.parametrize("bad", [np.zeros(3, dtype=np.complex64), np.zeros(3, dtype="datetime64[s]"),
                                 np.zeros(3, dtype=np.longdouble), np.zeros(3, dtype="V2"),
                                 np.array([1, "a", None], dtype=object)])
def test_unsupported_dtypes_raise_type_error(ws, bad):
    with pytest.raises(TypeError):
        ws.FeedBlob("x", bad)
    assert not ws.HasBlob("x")


def test_fetch_missing_blob_raises_not_found(ws):
    with pytest.raises(hetnet.NotFoundError) as info:
        ws.FetchBlob("nope")
    assert "nope" in str(info.value)
    assert isinstance(info.value, RuntimeError)
    assert info.value.kind == "not_found"


def test_fetch_empty_blob_raises(ws):
    ws.CreateBlob("empty")
    with pytest.raises(hetnet.HetnetError):
        ws.FetchBlob("empty")


def test_fetch_blobs_and_listing(ws):
    ws.FeedBlob("a", np.ones(1, np.float32))
    ws.FeedBlob("b", np.zeros(2, np.int64))
    a, b = ws.FetchBlobs(["a", "b"])
    assert a.shape == (1,) and b.dtype == np.int64
    assert ws.Blobs() == ["a", "b"]
    assert ws.HasBlob("a") and not ws.HasBlob("c")


def test_feed_uses_current_device_scope_cpu(ws):
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CPU, -1)):
        ws.FeedBlob("x", np.ones(2, np.float32))
    assert ws.BlobInfo("x")["device"] == (0, 0)


def test_feed_under_cuda_scope_without_gpu_fails_clearly(ws):
    if ws.NumCudaDevices() > 0:
        pytest.skip("this machine has a GPU; see test_gpu.py")
    with core.DeviceScope(core.DeviceOption(ws.GpuDeviceType, 0)):
        with pytest.raises(hetnet.UnsupportedError) as info:
            ws.FeedBlob("x", np.ones(2, np.float32))
    assert "cuda:0" in str(info.value)
