"""UINT32, UINT64 and BF16 tensors through `hetnet serve` with the PyPI Triton clients (HTTP and gRPC):
Triton's "simple" model (OUTPUT0 = INPUT0 + INPUT1, OUTPUT1 = INPUT0 - INPUT1) declared with each
type, against numpy (unsigned wrap-around) and ml_dtypes (bfloat16, rounded once per op)."""
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
    import json
    import urllib.error
    import urllib.request
    body = {"inputs": [{"name": n, "shape": [1, 16], "datatype": "BF16", "data": [1.0] * 16}
                       for n in ("INPUT0", "INPUT1")]}
    req = urllib.request.Request("http://%s/v2/models/simple_bf16/infer" % wide_server.http_url,
                                 data=json.dumps(body).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(req, timeout=10)
    assert e.value.code == 400
    assert "binary" in json.loads(e.value.read())["error"]
