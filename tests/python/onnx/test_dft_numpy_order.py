"""DFT (operators/dft_op.cc, operators/dft_fft_passes.*) computes as numpy's FFT does, bit for bit where
numpy's pocketfft runs radix passes 2-11: numpy 2.x computes a complex64 inverse FFT in float32 (its 1/n is a
float32) and a complex64 forward FFT in float64, rounded at the end; complex128 in float64. Exact equality
catches what ONNX's conformance case test_dft_inverse needs: numpy's float32 rounding noise (about 2e-7)
where the exact inverse is 0, which a transform computed in float64 gives as about 1e-15. Lengths with a
larger prime factor fall back to the O(n^2) sum in float64 (close, not equal). The references are numpy's.
"""
import numpy as np
import onnx
import onnx.helper as oh
import pytest
from onnx import TensorProto

from hetnet.onnx.backend import HetnetBackend

def _Smooth(m):  # every prime factor <= 11
    for p in (2, 3, 5, 7, 11):
        while m % p == 0:
            m //= p
    return m == 1


FAST_LENGTHS = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 14, 15, 16, 20, 22, 24, 25, 27, 30, 32, 40, 48, 49, 55, 64,
                77, 100, 120, 121, 128, 256, 360]
SLOW_LENGTHS = [13, 17, 26, 39]  # a prime factor > 11: numpy's generic pass, here the O(n^2) sum
assert all(_Smooth(m) for m in FAST_LENGTHS) and not any(_Smooth(m) for m in SLOW_LENGTHS)


def _Dft(x, axis, inverse=0, onesided=0, length=None):
    """Runs one DFT node (opset 19) over x ([..., 1 or 2] float32/64) through hetnet's ONNX backend."""
    elem = TensorProto.FLOAT if x.dtype == np.float32 else TensorProto.DOUBLE
    inputs = ["x"] + (["n"] if length is not None else [])
    node = oh.make_node("DFT", inputs, ["y"], axis=axis, inverse=inverse, onesided=onesided)
    ins = [oh.make_tensor_value_info("x", elem, list(x.shape))]
    feeds = [x]
    if length is not None:
        ins.append(oh.make_tensor_value_info("n", TensorProto.INT64, []))
        feeds.append(np.array(length, dtype=np.int64))
    graph = oh.make_graph([node], "g", ins, [onnx.ValueInfoProto(name="y")])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 19)])
    (y,) = HetnetBackend.run_model(model, feeds)
    return y


def _Pack(z):  # complex [...] -> real [..., 2]
    return np.stack((z.real, z.imag), axis=-1)


def _Signals(n, dtype, kind):
    rng = np.random.default_rng(n)
    if kind == "arange":
        return np.arange(n * 6, dtype=dtype).reshape(n, 6)
    return (rng.standard_normal((n, 6)) + 1j * rng.standard_normal((n, 6))).astype(dtype)


def _AssertBitEqual(got, want):
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    assert np.array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("n", FAST_LENGTHS)
@pytest.mark.parametrize("inverse", [0, 1])
@pytest.mark.parametrize("kind", ["arange", "random"])
@pytest.mark.parametrize("ctype", [np.complex64, np.complex128])
def test_complex_dft_equals_numpy_bit_for_bit(n, inverse, kind, ctype):
    z = _Signals(n, ctype, kind)  # signals along axis 0, as the conformance case
    want = (np.fft.ifft if inverse else np.fft.fft)(z, axis=0)
    assert want.dtype == ctype
    got = _Dft(_Pack(z), axis=0, inverse=inverse)
    _AssertBitEqual(got, _Pack(want))


def test_conformance_case_inverse_noise_where_exact_answer_is_zero():
    # ONNX's test_dft_inverse: numpy's float32 noise at frequency 5 is not 0; the float64 answer would be.
    z = np.arange(0, 100, dtype=np.complex64).reshape(10, 10)
    want = np.fft.ifft(z, axis=0)
    exact = np.fft.ifft(z.astype(np.complex128), axis=0)
    assert np.all(want.imag[5] != 0) and np.all(np.abs(exact.imag[5]) < 1e-12)
    got = _Dft(_Pack(z)[None], axis=1, inverse=1)
    _AssertBitEqual(got, _Pack(want)[None])


@pytest.mark.parametrize("n", FAST_LENGTHS[1:12])
def test_inverse_with_dft_length_pads_and_truncates_like_numpy(n):
    z = _Signals(n, np.complex64, "random")
    for length in [m for m in (n + 2, max(1, n - 1), 2 * n) if _Smooth(m)]:
        want = np.fft.ifft(z, n=length, axis=0)
        _AssertBitEqual(_Dft(_Pack(z), axis=0, inverse=1, length=length), _Pack(want))


@pytest.mark.parametrize("n", SLOW_LENGTHS)
@pytest.mark.parametrize("inverse", [0, 1])
def test_other_lengths_fall_back_close_to_numpy(n, inverse):
    z = _Signals(n, np.complex64, "random")
    want = (np.fft.ifft if inverse else np.fft.fft)(z, axis=0)
    got = _Dft(_Pack(z), axis=0, inverse=inverse)
    scale = np.abs(want).max()
    np.testing.assert_allclose(got, _Pack(want), rtol=1e-5, atol=1e-6 * scale)


@pytest.mark.parametrize("n", [4, 9, 10, 16, 25, 13])
def test_one_sided_forward_and_inverse_close_to_numpy(n):
    # numpy's rfft / irfft run pocketfft's real transforms (not reproduced): close, not bit-equal.
    x = np.random.default_rng(n).standard_normal((n, 5)).astype(np.float32)
    want = np.fft.rfft(x, axis=0)
    got = _Dft(x[..., None], axis=0, onesided=1)
    np.testing.assert_allclose(got, _Pack(want), rtol=1e-5, atol=1e-5 * np.abs(want).max())
    spec = want.astype(np.complex64)
    back = np.fft.irfft(spec, n=n, axis=0)
    got = _Dft(_Pack(spec), axis=0, inverse=1, onesided=1, length=n)
    np.testing.assert_allclose(got[..., 0], back, rtol=1e-5, atol=1e-5 * np.abs(back).max())
