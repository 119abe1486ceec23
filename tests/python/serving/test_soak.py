"""The 30-second soak of issue 12 (benchmarks/serving/soak.py, whose 60 s and 10 min runs are in
benchmarks/RESULTS.md), run by CI: `hetnet serve` with dynamic batching under 64 concurrent
connections on 127.0.0.1 (wrk where installed, aiohttp clients otherwise) plus clients that check
every answer against numpy. It passes only with zero failed accepted requests, resident memory
within 5% of its value after the warm-up, and exit 0 on SIGTERM. Bounded: 30 s of load, a
per-request timeout, and a hard limit on the whole script."""
import json
import os
import subprocess
import sys

import serving_util as su

SOAK = os.path.join(su.REPO_ROOT, "benchmarks", "serving", "soak.py")


def test_soak_30_seconds_concurrency_64(tmp_path):
    out = tmp_path / "soak.json"
    r = subprocess.run([sys.executable, SOAK, "--seconds", "30", "--concurrency", "64", "--json", str(out)],
                       capture_output=True, text=True, timeout=240, env=dict(os.environ))
    assert out.exists(), r.stdout[-2000:] + r.stderr[-2000:]
    result = json.loads(out.read_text())
    assert r.returncode == 0 and result["passed"], (result["problems"], r.stderr[-2000:])
    assert result["failed"] == 0 and result["wrong_answers"] == 0
    assert result["ok"] > 1000  # it really ran under load (the 2-core host does ~18k/s; 1000 is a floor)
    assert result["checked_answers"]["ok"] > 0
    assert result["rss_growth_after_warmup"] <= 0.05
    assert result["server_exit_code"] == 0
