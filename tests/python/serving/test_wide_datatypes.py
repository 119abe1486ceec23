"""UINT32, UINT64 and BF16 tensors through `hetnet serve` with the PyPI Triton clients (HTTP and gRPC):
Triton's "simple" model (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1) declared with each
type, against numpy (unsigned wrap-around) and ml_dtypes (bfloat16, rounded once per op). Also FP64
values sent as JSON text: read exactly, and hostile numbers answered without harm."""
import json
import urllib.error
import urllib.request

import ml_dtypes
import numpy as np
import pytest
import tritonclient.grpc as grpcclient
import tritonclient.http as httpclient

import serving_util

TYPES = {"UINT32": np.uint32, "UINT64": np.uint64, "BF16": ml_dtypes.bfloat16}


@pytest.fixture(scope="module")
def wide_server(tmp_path_factory):
    repo = tmp_path_factory.mktemp("wide") / "repo"
    repo.mkdir()
    for name in TYPES:
        config = serving_util.SIMPLE_CONFIG.replace("TYPE_INT32", "TYPE_" + name)
        serving_util.write_simple_model(repo, name="simple_" + name.lower(), config=config)
    config = serving_util.SIMPLE_CONFIG.replace("TYPE_INT32", "TYPE_FP64")
    serving_util.write_simple_model(repo, name="simple_fp64", config=config)
    with serving_util.ServerProcess(repo) as s:
        yield s
        s.stop()


def _inputs(datatype, batch=2):
    rng = np.random.default_rng(7)
    np_type = TYPES[datatype]
    if datatype == "BF16":
        a = rng.standard_normal((batch, 16)).astype(np.float32).astype(np_type)
        b = rng.standard_normal((batch, 16)).astype(np.float32).astype(np_type)
    else:
        top = np.iinfo(np_type).max
        a = rng.integers(0, top, size=(batch, 16), dtype=np_type, endpoint=True)
        b = rng.integers(0, top, size=(batch, 16), dtype=np_type, endpoint=True)
        a[0, :2] = [top, 0]  # top + b wraps, 0 - b wraps
    return a, b


def _expected(a, b):
    with np.errstate(over="ignore"):
        if a.dtype == ml_dtypes.bfloat16:  # computed in float32, rounded once
            f32 = lambda x: x.astype(np.float32)  # noqa: E731
            return (f32(a) + f32(b)).astype(a.dtype), (f32(a) - f32(b)).astype(a.dtype)
        return a + b, a - b


@pytest.mark.parametrize("datatype", sorted(TYPES))
@pytest.mark.parametrize("protocol", ["http", "grpc"])
def test_wide_types_round_trip(wide_server, datatype, protocol):
    mod = httpclient if protocol == "http" else grpcclient
    url = wide_server.http_url if protocol == "http" else wide_server.grpc_url
    client = mod.InferenceServerClient(url)
    model = "simple_" + datatype.lower()
    md = client.get_model_metadata(model)
    inputs_md = md["inputs"] if protocol == "http" else [{"datatype": t.datatype} for t in md.inputs]
    assert {t["datatype"] for t in inputs_md} == {datatype}
    a, b = _inputs(datatype)
    ins = []
    for name, x in (("INPUT0", a), ("INPUT1", b)):
        t = mod.InferInput(name, list(x.shape), datatype)
        if protocol == "http":
            t.set_data_from_numpy(x, binary_data=True)
        else:
            t.set_data_from_numpy(x)
        ins.append(t)
    res = client.infer(model, ins)
    want_sum, want_diff = _expected(a, b)
    for name, want in (("OUTPUT0", want_sum), ("OUTPUT1", want_diff)):
        got = res.as_numpy(name)
        assert got.dtype == want.dtype, (name, got.dtype)
        assert got.shape == want.shape
        np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8), err_msg=name)


def test_json_refuses_bf16_data(wide_server):
    body = {"inputs": [{"name": n, "shape": [1, 16], "datatype": "BF16", "data": [1.0] * 16}
                       for n in ("INPUT0", "INPUT1")]}
    req = urllib.request.Request("http://%s/v2/models/simple_bf16/infer" % wide_server.http_url,
                                 data=json.dumps(body).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 400
    assert "binary" in json.loads(e.value.read())["error"]


def test_json_fp64_values_read_exactly(wide_server):
    """Doubles the client prints as JSON (Python's shortest repr) come back bit for bit: x + 0 = x."""
    rng = np.random.default_rng(11)
    a = rng.integers(0, 2**64, size=(4, 16), dtype=np.uint64).view(np.float64)
    a[~np.isfinite(a)] = 0.1
    a[0, :6] = [2.220446049250313e-16, 5e-324, 1.7976931348623157e308, -0.0, 0.1, 2.2250738585072014e-308]
    client = httpclient.InferenceServerClient(wide_server.http_url)
    ins = []
    for name, x in (("INPUT0", a), ("INPUT1", np.zeros_like(a))):
        t = httpclient.InferInput(name, list(x.shape), "FP64")
        t.set_data_from_numpy(x, binary_data=False)
        ins.append(t)
    res = client.infer("simple_fp64", ins, outputs=[httpclient.InferRequestedOutput("OUTPUT0", binary_data=True)])
    got = res.as_numpy("OUTPUT0")
    np.testing.assert_array_equal(got.view(np.uint64), (a + 0.0).view(np.uint64))


def _post_fp64(server, number_text):
    data = "[" + number_text + ", 0" * 15 + "]"
    body = ('{"inputs": [{"name": "INPUT0", "shape": [1, 16], "datatype": "FP64", "data": %s},'
            ' {"name": "INPUT1", "shape": [1, 16], "datatype": "FP64", "data": %s}]}' % (data, "[0" + ", 0" * 15 + "]")
            ).encode()
    req = urllib.request.Request("http://%s/v2/models/simple_fp64/infer" % server.http_url, data=body, method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, json.loads(r.read())
    except urllib.error.HTTPError as e:
        return e.code, json.loads(e.read())


def test_json_hostile_numbers_answered_and_server_stays_up(wide_server):
    """The ~530-digit number with e-444 that crashed RapidJSON 1.1.0's full-precision conversion (and
    so, before the fix, the whole server) is a valid JSON number: it reads as 0. Numbers past the
    double range are refused with 400."""
    crash = ("10999999999999998." + "99999999999999919999999900000000000020" + "9" * 450
             + "909999999999999999990444442e-444")
    for text in (crash, "-" + crash, "128.74836467836484838364836483643636483648e-336"):
        status, reply = _post_fp64(wide_server, text)
        assert status == 200, reply
        out = {o["name"]: o["data"] for o in reply["outputs"]}
        assert out["OUTPUT0"] == [0.0] * 16
    for text in ("1e400", "-1.8e308", "9" * 400):
        status, reply = _post_fp64(wide_server, text)
        assert status == 400
        assert reply["error"].startswith("failed to parse the request JSON buffer: Number too big"), reply
    status, reply = _post_fp64(wide_server, "1.5")
    assert status == 200
    assert {o["name"]: o["data"] for o in reply["outputs"]}["OUTPUT0"] == [1.5] + [0.0] * 15
