"""Soak test for `hetnet serve`: C concurrent connections for S seconds, answers checked, the
server's RSS sampled every second.

    PYTHONPATH=build/python python3 benchmarks/serving/soak.py --seconds 60 --concurrency 64

Starts its own server (MLP 784-512-512-10, dynamic batching, on free 127.0.0.1 ports) unless
--url and --pid name a running one. Exit status 1 when any accepted request failed (transport
error, timeout, a status other than 200/429/503, or a wrong answer), when the server died, or when
its RSS at the end is more than --max-rss-growth (5%) above its RSS at the end of the warm-up
(the first --warmup seconds, default max(5 s, 10% of the run)). 429/503 answers (queue full or
shutting down) are counted as rejected, not failed: the server refused them before accepting them.
Load (--load): "wrk" (default when wrk is installed) drives the C connections with wrk, where every
non-2xx answer, timeout or socket error counts as failed, while 2 more Python connections check every
answer they get against the numpy reference (1e-5); "python" runs C aiohttp clients that check every
answer (the Python client then limits the rate to well under what the server sustains).
Everything is bounded in time: the load stops at --seconds, every request has a timeout.
"""
import argparse
import asyncio
import json
import os
import sys
import shutil
import tempfile
import time

import numpy as np

import common
from common import serving_util


async def run_load(url, body, header_len, expected, concurrency, seconds, timeout_s, pid, counters, rss):
    import aiohttp
    headers = {"Content-Type": "application/octet-stream", "Inference-Header-Content-Length": str(header_len)}
    deadline = time.monotonic() + seconds
    latencies = []

    async def client(session):
        while time.monotonic() < deadline:
            t0 = time.monotonic()
            try:
                async with session.post(url, data=body, headers=headers) as resp:
                    data = await resp.read()
                    if resp.status in (429, 503):
                        counters["rejected"] += 1
                        await asyncio.sleep(0.001)
                        continue
                    if resp.status != 200:
                        counters["failed"] += 1
                        counters.setdefault("statuses", {}).setdefault(str(resp.status), 0)
                        counters["statuses"][str(resp.status)] += 1
                        if counters["failed"] <= 5:
                            print("soak: HTTP %d: %s" % (resp.status, data[:200]), file=sys.stderr)
                        continue
                    hl = resp.headers.get("Inference-Header-Content-Length")
                    y = common.parse_infer_response(data, int(hl) if hl is not None else None)
                    if y.shape != expected.shape or float(np.abs(y - expected).max()) > 1e-5:
                        counters["wrong"] += 1
                        counters["failed"] += 1
                        continue
                    counters["ok"] += 1
                    latencies.append(time.monotonic() - t0)
            except (aiohttp.ClientError, asyncio.TimeoutError, OSError, ValueError) as e:
                counters["failed"] += 1
                if counters["failed"] <= 5:
                    print("soak: %s: %s" % (type(e).__name__, e), file=sys.stderr)
                await asyncio.sleep(0.01)

    async def sampler():
        start = time.monotonic()
        while time.monotonic() < deadline:
            try:
                rss.append((round(time.monotonic() - start, 1), common.rss_kib(pid)))
            except (OSError, RuntimeError):
                counters["server_gone"] = True
                return
            await asyncio.sleep(1.0)
        rss.append((round(time.monotonic() - start, 1), common.rss_kib(pid)))

    conn = aiohttp.TCPConnector(limit=concurrency, force_close=False)
    timeout = aiohttp.ClientTimeout(total=timeout_s)
    async with aiohttp.ClientSession(connector=conn, timeout=timeout) as session:
        await asyncio.wait_for(asyncio.gather(sampler(), *[client(session) for _ in range(concurrency)]),
                               seconds + timeout_s + 30)
    return latencies


def run_wrk_load(url, body, header_len, concurrency, seconds, timeout_s):
    """The bulk load with wrk (C keep-alive connections); every non-2xx answer, timeout or socket
    error counts as failed (the soak's model has no queue limit, so the server has no reason to refuse)."""
    import subprocess
    import threading
    path = os.path.join(tempfile.mkdtemp(prefix="hetnet-soak-body-"), "body.bin")
    with open(path, "wb") as f:
        f.write(body)
    out = {}

    def go():
        try:
            out["r"] = common.run_wrk(url, path, header_len, concurrency, int(round(seconds)), threads=1,
                                      timeout_s=int(timeout_s))
        except Exception as e:  # reported as a failure below
            out["error"] = str(e)
    t = threading.Thread(target=go, daemon=True)
    t.start()
    return t, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--concurrency", type=int, default=64)
    ap.add_argument("--warmup", type=float, default=None, help="seconds; default max(5, 10%% of --seconds)")
    ap.add_argument("--max-rss-growth", type=float, default=0.05)
    ap.add_argument("--timeout", type=float, default=10, help="per-request timeout, seconds")
    ap.add_argument("--queue-delay-us", type=int, default=500, help="dynamic batching delay of the model it starts")
    ap.add_argument("--omp-threads", default="1",
                    help="OMP_NUM_THREADS of the server it starts ('default': unset; see RESULTS.md on why 1)")
    ap.add_argument("--url", default=None, help="infer URL of a running server serving the MLP (with --pid)")
    ap.add_argument("--pid", type=int, default=None, help="pid of that server (for its RSS)")
    ap.add_argument("--json", default=None, help="write the result here")
    ap.add_argument("--load", choices=["wrk", "python"], default="wrk" if shutil.which("wrk") else "python",
                    help="wrk: wrk drives the C connections and 2 Python clients check every answer they get "
                         "(C+2 connections); python: C aiohttp clients, every answer checked (slower client)")
    args = ap.parse_args()
    if args.seconds <= 0 or args.seconds > 24 * 3600:
        ap.error("--seconds must be in (0, 86400]")
    warmup = args.warmup if args.warmup is not None else max(5.0, 0.1 * args.seconds)

    x = common.sample_input()
    body, header_len = common.binary_body(x)
    expected = serving_util.mlp_reference(x, serving_util.mlp_weights(common.MLP_SIZES, common.SEED)).astype(
        np.float32)

    server = None
    if args.url:
        if args.pid is None:
            ap.error("--url needs --pid")
        url, pid = args.url, args.pid
    else:
        workdir = tempfile.mkdtemp(prefix="hetnet-soak-")
        repo = os.path.join(workdir, "repo")
        common.write_mlp_repo(repo, "mlp", queue_delay_us=args.queue_delay_us)
        saved = os.environ.pop("OMP_NUM_THREADS", None)
        if args.omp_threads != "default":
            os.environ["OMP_NUM_THREADS"] = str(int(args.omp_threads))
        try:
            server = serving_util.ServerProcess(repo)
        finally:
            os.environ.pop("OMP_NUM_THREADS", None)
            if saved is not None:
                os.environ["OMP_NUM_THREADS"] = saved
        url = "http://%s/v2/models/mlp/infer" % server.http_url
        pid = server.proc.pid
        common.wait_http("http://%s/v2/models/mlp/ready" % server.http_url, 60, server.proc)

    counters = {"ok": 0, "failed": 0, "rejected": 0, "wrong": 0}
    rss = []
    t0 = time.time()
    exit_code = None
    wrk_thread, wrk_out = None, {}
    try:
        if args.load == "wrk":
            wrk_thread, wrk_out = run_wrk_load(url, body, header_len, args.concurrency, args.seconds, args.timeout)
        checkers = 2 if args.load == "wrk" else args.concurrency
        latencies = asyncio.run(run_load(url, body, header_len, expected, checkers, args.seconds,
                                         args.timeout, pid, counters, rss))
        if wrk_thread is not None:
            wrk_thread.join(args.timeout + 90)
    finally:
        if server is not None:
            exit_code = server.stop()
    wall = time.time() - t0

    checked = {"ok": counters["ok"], "failed": counters["failed"]}
    if args.load == "wrk":
        r = wrk_out.get("r")
        if r is None:
            counters["failed"] += 1
            counters["wrk_error"] = wrk_out.get("error", "wrk did not finish")
        else:
            counters["ok"] += r["requests"] - r["errors"]
            counters["failed"] += r["errors"]
            counters["wrk"] = {k: r[k] for k in ("requests", "rps", "p50_us", "p99_us", "err_connect", "err_read",
                                                 "err_write", "err_status", "err_timeout")}
    after = [kib for t, kib in rss if t >= warmup]
    baseline = after[0] if after else None
    final = rss[-1][1] if rss else None
    growth = (final / baseline - 1.0) if baseline else None
    lat = np.asarray(latencies) * 1e6 if latencies else np.zeros(1)
    result = {
        "seconds": args.seconds, "concurrency": args.concurrency, "load": args.load, "warmup_s": warmup,
        "server_omp_threads": None if args.url else args.omp_threads,
        "wall_s": round(wall, 1), "checked_answers": checked, "wrk": counters.get("wrk"),
        "wrk_error": counters.get("wrk_error"),
        "ok": counters["ok"], "failed": counters["failed"], "wrong_answers": counters["wrong"],
        "rejected_429_503": counters["rejected"], "statuses": counters.get("statuses", {}),
        "requests_per_s": round(counters["ok"] / args.seconds, 1),
        "p50_us": counters["wrk"]["p50_us"] if counters.get("wrk") else round(float(np.percentile(lat, 50))),
        "p99_us": counters["wrk"]["p99_us"] if counters.get("wrk") else round(float(np.percentile(lat, 99))),
        "rss_kib_first": rss[0][1] if rss else None, "rss_kib_after_warmup": baseline, "rss_kib_final": final,
        "rss_kib_peak": max(kib for _, kib in rss) if rss else None,
        "rss_growth_after_warmup": None if growth is None else round(growth, 4),
        "server_exit_code": exit_code, "server_gone": counters.get("server_gone", False),
        "rss_samples": rss,
    }
    problems = []
    if counters["failed"]:
        problems.append("%d accepted request(s) failed" % counters["failed"])
    if counters["ok"] == 0 or checked["ok"] == 0:
        problems.append("no request succeeded" if counters["ok"] == 0 else "no answer was checked")
    if counters.get("server_gone"):
        problems.append("the server went away")
    if growth is None:
        problems.append("no RSS sample after the warm-up")
    elif growth > args.max_rss_growth:
        problems.append("RSS grew %.1f%% after the warm-up (limit %.0f%%)" % (100 * growth, 100 * args.max_rss_growth))
    if exit_code not in (None, 0):
        problems.append("the server exited with %s on SIGTERM" % exit_code)
    result["problems"] = problems
    result["passed"] = not problems
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=1)
    summary = {k: v for k, v in result.items() if k != "rss_samples"}
    print(json.dumps(summary))
    print("soak %s: %d ok, %d failed, %d rejected in %.0f s at concurrency %d (%.0f req/s, p50 %d us, p99 %d us); "
          "RSS %s -> %s KiB after warm-up (%s), peak %s KiB" % (
              "PASSED" if not problems else "FAILED", counters["ok"], counters["failed"], counters["rejected"],
              args.seconds, args.concurrency, result["requests_per_s"], result["p50_us"], result["p99_us"],
              baseline, final, "n/a" if growth is None else "%+.2f%%" % (100 * growth), result["rss_kib_peak"]))
    for p in problems:
        print("soak: " + p, file=sys.stderr)
    return 0 if not problems else 1


if __name__ == "__main__":
    sys.exit(main())
