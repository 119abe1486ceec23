"""The README's two quick-start lines: deploy/make_example_repository.py writes the bundled example
models, `hetnet serve` serves them, and the README's JSON request gets the answer the script prints."""
import json
import os
import re
import subprocess
import sys
import urllib.request

import numpy as np

import serving_util as su

SCRIPT = os.path.join(su.REPO_ROOT, "deploy", "make_example_repository.py")
README_BODY = {"inputs": [{"name": "data", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}


def test_readme_quick_start_serves_the_example_model(tmp_path):
    repo = tmp_path / "models"
    r = subprocess.run([sys.executable, SCRIPT, str(repo)], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    expected = [float(v) for v in re.search(r"expected mlp output for data \[1,2,3,4\]: \[([^\]]*)\]",
                                            r.stdout).group(1).split(",")]
    assert len(expected) == 3 and abs(sum(expected) - 1) < 1e-5  # a softmax
    assert sorted(p.name for p in repo.iterdir()) == ["mlp", "simple"]
    with su.ServerProcess(repo) as s:
        req = urllib.request.Request("http://%s/v2/models/mlp/infer" % s.http_url,
                                     data=json.dumps(README_BODY).encode(), method="POST")
        with urllib.request.urlopen(req, timeout=10) as resp:
            answer = json.loads(resp.read())
        out = answer["outputs"][0]
        assert answer["model_name"] == "mlp" and out["name"] == "prob" and out["shape"] == [1, 3]
        np.testing.assert_allclose(out["data"], expected, rtol=1e-5, atol=1e-6)
        assert s.stop() == 0
