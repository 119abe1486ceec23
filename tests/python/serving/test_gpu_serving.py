"""A mixed CPU/GPU model served on a GPU: its FC ops run on cuda:0, the runtime's copies move the
activations, the copy-byte metrics equal the placement report's bytes times the requests, and the
copy-time metric is positive per direction.
Skipped, with the reason, on machines without a GPU (never run there)."""
import json
import re
import urllib.request

import numpy as np
import pytest
import tritonclient.http as httpclient

import serving_util as su


def gpu_count():
    from hetnet import workspace
    return workspace.NumCudaDevices()


pytestmark = pytest.mark.skipif(gpu_count() == 0, reason="no CUDA GPU on this machine (cudaGetDeviceCount: 0)")


def copy_metric(server, family="hetnet_copy_bytes_total"):
    with urllib.request.urlopen("http://127.0.0.1:%d/metrics" % server.metrics_port, timeout=10) as r:
        text = r.read().decode()
    out = {}
    for m in re.finditer(r'^%s\{([^}]*)\} (\S+)$' % family, text, re.M):
        labels = dict(re.findall(r'(\w+)="([^"]*)"', m.group(1)))
        out[(labels["src"], labels["dst"])] = float(m.group(2))
    return out


def test_copy_bytes_equal_placement_bytes_times_requests(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    cfg = """
name: "mixed"
platform: "caffe2_netdef"
max_batch_size: 16
input [ { name: "data" data_type: TYPE_FP32 dims: [ 64 ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ 10 ] } ]
instance_group [ { kind: KIND_MODEL } ]
"""
    weights = su.write_mlp_model(repo, "mixed", sizes=(64, 32, 10), config=cfg, gpu_ops=True)
    with su.ServerProcess(repo) as s:
        client = httpclient.InferenceServerClient(s.http_url)
        x = np.random.RandomState(0).rand(4, 64).astype(np.float32)
        inp = httpclient.InferInput("data", [4, 64], "FP32")
        inp.set_data_from_numpy(x)
        n = 5
        for _ in range(n):
            np.testing.assert_allclose(client.infer("mixed", [inp]).as_numpy("prob"), su.mlp_reference(x, weights),
                                       rtol=1e-4, atol=1e-5)
        with urllib.request.urlopen("http://%s/v2/models/mixed/placement" % s.http_url, timeout=10) as r:
            placement = json.loads(r.read())
        assert all(op["device"] == "cuda:0" for op in placement["ops"] if op["type"] == "FC")
        expected = {}
        for c in placement["copies"]:
            assert c["bytes"] > 0
            expected[(c["src"], c["dst"])] = expected.get((c["src"], c["dst"]), 0) + c["bytes"] * n
        assert expected and copy_metric(s) == expected
        # Every copy was timed on its stream: a positive duration per direction, far below the
        # requests' own time (5 requests of a few KiB each).
        durations = copy_metric(s, "hetnet_copy_duration_us")
        assert set(durations) == set(expected)
        assert all(0 < us < 5e6 for us in durations.values()), durations
        s.stop()
