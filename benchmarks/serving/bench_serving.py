"""hetnet serve vs the KServe Python model server (kserve + onnxruntime) on the same model (the MLP
784-512-512-10, or --model lenet), plus hetnet's overhead over the in-process Predictor and dynamic
batching vs none.

    PYTHONPATH=build/python python3 benchmarks/serving/bench_serving.py \
        --kserve-python /tmp/hetnet-kserve-venv/bin/python --duration 10 --out /tmp/serving-bench.json

Load: wrk (Debian package), one thread, C keep-alive connections in a closed loop (each sends its
next request when the previous answer arrives), over 127.0.0.1, for a fixed duration per point.
Requests: KServe v2 REST, batch 1, binary tensor data extension for the input and the output
(both servers accept it). Everything runs on the same host: wrk competes with the server for cores.

Server overhead at concurrency 1 is given three ways: the p50 over wrk minus the in-process Predictor's
p50 (the issue's definition: it includes the loopback round trip and the client), the same minus a
bodiless `GET /v2/health/live` measured the same way (the transport floor), and the server's own
statistics (request duration minus compute_infer, what perf_analyzer calls server overhead plus queue).
--latency-qos holds /dev/cpu_dma_latency at 0 for the whole run (as tuned's latency-performance
profile does on serving hosts): an idle vCPU then polls instead of halting, so a wake-up costs
microseconds, not the ~50 us a halted vCPU of this VM takes; every measurement of the run, the
in-process one included, runs under it.
"""
import argparse
import datetime
import json
import os
import resource
import signal
import subprocess
import sys
import tempfile
import threading
import time

import numpy as np

import common
from common import serving_util

MODEL = "mlp"  # set from --model in main()
SPEC = common.MODELS[MODEL]


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def build_running():
    return subprocess.run(["pgrep", "-x", "ninja"], capture_output=True).returncode == 0


def wait_for_no_build(max_wait_s=1800):
    """Benchmarks are meaningless while a build shares the 2 cores: wait (bounded) for ninja to end."""
    deadline = time.time() + max_wait_s
    while time.time() < deadline:
        if not build_running():
            return
        log("a build (ninja) is running; waiting...")
        time.sleep(15)
    log("warning: ninja still running after %ds; measuring anyway" % max_wait_s)


class Body:
    def __init__(self, workdir, x):
        self.binary, self.header_len = common.binary_body(x)
        self.path = os.path.join(workdir, "body.bin")
        with open(self.path, "wb") as f:
            f.write(self.binary)


def busy_jiffies():
    """(busy, total) jiffies of the whole machine from /proc/stat."""
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    idle = v[3] + v[4]
    return sum(v) - idle, sum(v)


def wait_for_quiet(threshold_cores=0.3, max_wait_s=30):
    """Waits (bounded) until other processes use < threshold_cores for one second; returns what was seen.
    Other engineers share this 2-core host: a point measured next to their load is marked as such."""
    deadline = time.time() + max_wait_s
    tick = os.sysconf("SC_CLK_TCK")
    while True:
        b0, _ = busy_jiffies()
        time.sleep(1.0)
        b1, _ = busy_jiffies()
        cores = (b1 - b0) / tick
        if cores < threshold_cores or time.time() > deadline:
            return cores
        log("  host busy (%.2f cores used by others); waiting..." % cores)


def stats_snapshot(stats_url):
    if not stats_url:
        return None
    st = json.loads(urlopen_text(stats_url))["model_stats"][0]
    out = {"inference_count": int(st["inference_count"]), "execution_count": int(st["execution_count"])}
    for k, v in st["inference_stats"].items():
        out[k + "_ns"] = int(v["ns"])
        out[k + "_count"] = int(v["count"])
    return out


def stats_delta(a, b):
    """Per-request means (us) of hetnet's own statistics between two snapshots."""
    if not a or not b:
        return None
    n = max(1, b["success_count"] - a["success_count"])
    d = {k: (b[k + "_ns"] - a[k + "_ns"]) / n / 1e3 for k in
         ("success", "queue", "compute_input", "compute_infer", "compute_output")}
    d["mean_batch"] = (b["inference_count"] - a["inference_count"]) / max(
        1, b["execution_count"] - a["execution_count"])
    return d


def measure_point(url, pid, body, c, seconds, stats_url=None):
    wait_for_no_build()
    quiet_before = wait_for_quiet()
    seen, stop_watch = [], threading.Event()

    def watch():  # notes any build that starts during the point (it would skew the numbers)
        while not stop_watch.wait(0.5):
            if build_running():
                seen.append(time.time())

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    st0 = stats_snapshot(stats_url)
    cpu0 = common.cpu_seconds(pid)
    ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    me0 = resource.getrusage(resource.RUSAGE_SELF)
    busy0, _ = busy_jiffies()
    t0 = time.time()
    try:
        r = common.run_wrk(url, body.path if body else "GET", body.header_len if body else None, c, seconds)
    finally:
        stop_watch.set()
        watcher.join()
    wall = time.time() - t0
    busy1, _ = busy_jiffies()
    cpu1 = common.cpu_seconds(pid)
    ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    me1 = resource.getrusage(resource.RUSAGE_SELF)
    st1 = stats_snapshot(stats_url)
    server_cpu = cpu1 - cpu0
    wrk_cpu = (ru1.ru_utime + ru1.ru_stime) - (ru0.ru_utime + ru0.ru_stime)
    me_cpu = (me1.ru_utime + me1.ru_stime) - (me0.ru_utime + me0.ru_stime)
    machine = (busy1 - busy0) / os.sysconf("SC_CLK_TCK")
    r["server_cpu_us_per_req"] = server_cpu * 1e6 / max(1, r["requests"])
    r["server_cores"] = server_cpu / wall
    r["wrk_cores"] = wrk_cpu / wall
    r["other_cores"] = max(0.0, machine - server_cpu - wrk_cpu - me_cpu) / wall
    r["other_cores_before"] = quiet_before
    r["build_ran_during"] = bool(seen)
    r["server_stats_us"] = stats_delta(st0, st1)
    return r


def sweep(name, url, pid, body, concurrencies, seconds, warmup_s, repeats=1, stats_url=None):
    """wrk at each concurrency, `repeats` times; keeps the run with the median requests/s."""
    common.run_wrk(url, body.path if body else "GET", body.header_len if body else None, max(concurrencies),
                   warmup_s)  # warm-up, discarded
    rows = []
    for c in concurrencies:
        runs = [measure_point(url, pid, body, c, seconds, stats_url) for _ in range(repeats)]
        runs.sort(key=lambda x: x["rps"])
        r = dict(runs[len(runs) // 2])
        r["server"] = name
        r["repeats"] = [{k: x[k] for k in ("rps", "p50_us", "p99_us", "errors", "other_cores")} for x in runs]
        log("  %-28s c=%-3d %8.0f req/s  p50 %7.0f us  p99 %7.0f us  errors %d  server CPU %.0f us/req  "
            "(others used %.2f cores)%s   runs: %s" % (
                name, c, r["rps"], r["p50_us"], r["p99_us"], r["errors"], r["server_cpu_us_per_req"],
                r["other_cores"], "  (A BUILD RAN DURING THIS POINT)" if r["build_ran_during"] else "",
                ", ".join("%.0f/s p50 %d" % (x["rps"], x["p50_us"]) for x in runs)))
        rows.append(r)
    return rows


def start_hetnet(workdir, tag, queue_delay_us=None, instances=1, extra_args=(), omp_threads=None):
    """omp_threads: OMP_NUM_THREADS for the server (None: unset, OpenMP's default = cores)."""
    repo = os.path.join(workdir, "repo-" + tag)
    SPEC.write_repo(repo, queue_delay_us=queue_delay_us, instances=instances)
    saved = os.environ.pop("OMP_NUM_THREADS", None)
    if omp_threads is not None:
        os.environ["OMP_NUM_THREADS"] = str(omp_threads)
    try:
        server = serving_util.ServerProcess(repo, extra_args=list(extra_args))
    finally:
        os.environ.pop("OMP_NUM_THREADS", None)
        if saved is not None:
            os.environ["OMP_NUM_THREADS"] = saved
    url = "http://%s/v2/models/%s/infer" % (server.http_url, MODEL)
    common.wait_http("http://%s/v2/models/%s/ready" % (server.http_url, MODEL), 60, server.proc)
    server.stats_url = "http://%s/v2/models/%s/stats" % (server.http_url, MODEL)
    return server, url, repo


def start_kserve(workdir, python, onnx_path, ort_threads):
    port = serving_util.free_port()
    logf = open(os.path.join(workdir, "kserve-%d.log" % port), "wb")
    cmd = [python, os.path.join(common.HERE, "kserve_onnx_server.py"), "--onnx", onnx_path, "--model_name", MODEL,
           "--http_port", str(port), "--enable_grpc", "false", "--enable_latency_logging", "false",
           "--ort-threads", str(ort_threads)]
    proc = subprocess.Popen(cmd, stdout=logf, stderr=subprocess.STDOUT)
    common.wait_http("http://127.0.0.1:%d/v2/models/%s/ready" % (port, MODEL), 90, proc)
    return proc, "http://127.0.0.1:%d/v2/models/%s/infer" % (port, MODEL)


def stop(proc):
    if proc.poll() is None:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def inprocess_predictor(repo, x, seconds):
    """hetnet.workspace.Predictor on the served model's own files, batch 1, one thread."""
    from hetnet import workspace
    from hetnet.proto import caffe2_pb2
    nets = []
    for fname in ("init_model.netdef", "model.netdef"):
        net = caffe2_pb2.NetDef()
        with open(os.path.join(repo, MODEL, "1", fname), "rb") as f:
            net.ParseFromString(f.read())
        nets.append(net)
    predictor = workspace.Predictor(nets[0], nets[1])
    for _ in range(500):
        predictor.run({"data": x})
    times = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline and len(times) < 2_000_000:
        t0 = time.perf_counter_ns()
        y = predictor.run({"data": x})
        times.append(time.perf_counter_ns() - t0)
    t = np.asarray(times) / 1e3
    return {"calls": len(times), "p50_us": float(np.percentile(t, 50)), "p99_us": float(np.percentile(t, 99)),
            "mean_us": float(t.mean()), "output": np.asarray(y[0]).tolist()}


def inprocess_in_child(repo, seconds, omp_threads):
    """inprocess_predictor in a fresh Python with the server's OMP_NUM_THREADS (read at OpenMP start-up)."""
    env = dict(os.environ)
    env.pop("OMP_NUM_THREADS", None)
    if omp_threads is not None:
        env["OMP_NUM_THREADS"] = str(omp_threads)
    env["PYTHONPATH"] = os.pathsep.join([common.HERE] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
    code = ("import json, common, bench_serving as b; b.MODEL = %r; "
            "print('INPROCESS', json.dumps(b.inprocess_predictor(%r, common.MODELS[%r].sample_input(), %d)))"
            % (MODEL, repo, MODEL, seconds))
    wait_for_no_build()
    wait_for_quiet()
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=seconds + 120)
    for line in out.stdout.splitlines():
        if line.startswith("INPROCESS "):
            return json.loads(line[len("INPROCESS "):])
    raise RuntimeError("in-process run failed: %s %s" % (out.stdout, out.stderr))


def hold_cpu_latency_zero():
    """PM QoS: asks for 0 us CPU wake-up latency while the returned descriptor stays open."""
    import struct
    fd = os.open("/dev/cpu_dma_latency", os.O_WRONLY)
    os.write(fd, struct.pack("i", 0))
    log("holding /dev/cpu_dma_latency at 0 (idle CPUs poll)")
    return fd


def omp(value):
    return None if str(value) == "default" else int(value)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", default="mlp", choices=sorted(common.MODELS))
    ap.add_argument("--duration", type=int, default=10, help="seconds per measured point")
    ap.add_argument("--warmup", type=int, default=2, help="seconds of discarded load before each sweep")
    ap.add_argument("--concurrency", default="1,16,64")
    ap.add_argument("--repeats", type=int, default=3, help="runs per point; the median (by requests/s) is kept")
    ap.add_argument("--kserve-python", default="/tmp/hetnet-kserve-venv/bin/python",
                    help="python with kserve, onnx, onnxruntime ('none' skips the KServe runs)")
    ap.add_argument("--ort-threads", type=int, default=1, help="onnxruntime intra-op threads")
    ap.add_argument("--batch-delay-us", type=int, default=500, help="max_queue_delay_microseconds when batching")
    ap.add_argument("--latency-qos", action="store_true",
                    help="hold /dev/cpu_dma_latency at 0 during the run (root; idle CPUs poll instead of halting)")
    ap.add_argument("--omp-threads", default="1",
                    help="OMP_NUM_THREADS of the hetnet server in the comparison ('default': unset)")
    ap.add_argument("--batching-omp-threads", default="default,1",
                    help="OMP_NUM_THREADS values the batching matrix is run with")
    ap.add_argument("--parts", default="compare,overhead,batching")
    ap.add_argument("--workdir", default=None)
    ap.add_argument("--out", default=None, help="write all results as JSON here")
    args = ap.parse_args()
    global MODEL, SPEC
    MODEL, SPEC = args.model, common.MODELS[args.model]
    concurrencies = [int(c) for c in args.concurrency.split(",")]
    parts = set(args.parts.split(","))
    workdir = args.workdir or tempfile.mkdtemp(prefix="hetnet-serving-bench-")
    os.makedirs(workdir, exist_ok=True)
    wait_for_no_build()
    # Kept open until the process exits: the kernel drops the request when the file is closed.
    qos_fd = hold_cpu_latency_zero() if args.latency_qos else None

    x = SPEC.sample_input()
    body = Body(workdir, x)
    reference = SPEC.reference(x) if SPEC.reference else None
    results = {"date": datetime.datetime.utcnow().strftime("%Y-%m-%d %H:%M UTC"), "host_cores": os.cpu_count(),
               "duration_s": args.duration, "repeats": args.repeats, "model": {
                   "mlp": "MLP 784-512-512-10 (FC/Relu/Softmax), FP32, batch 1",
                   "lenet": "LeNet Conv/MaxPool/Conv/MaxPool/FC/Relu/FC/Softmax, FP32 1x28x28, batch 1"}[MODEL],
               "load": "wrk -t1 -cC, HTTP/1.1 keep-alive, KServe v2 REST, binary tensor data in and out",
               "batch_delay_us": args.batch_delay_us, "latency_qos": qos_fd is not None}

    # ---- hetnet, no dynamic batching, one instance: the head-to-head configuration ----
    if parts & {"compare", "overhead"}:
        log("hetnet serve (no dynamic batching, 1 instance, OMP_NUM_THREADS=%s)" % args.omp_threads)
        server, url, repo = start_hetnet(workdir, "plain", omp_threads=omp(args.omp_threads))
        try:
            y = common.infer_once(url, body.binary, body.header_len)
            if reference is not None:
                results["hetnet_max_abs_err_vs_numpy"] = float(np.abs(y - reference).max())
            results["hetnet_output"] = y.ravel().tolist()
            results["hetnet"] = sweep("hetnet serve", url, server.proc.pid, body, concurrencies, args.duration,
                                      args.warmup, args.repeats, server.stats_url)
            results["hetnet_rss_kib"] = common.rss_kib(server.proc.pid)
        finally:
            server.stop()
        if "overhead" in parts:
            server, url, _ = start_hetnet(workdir, "floor", omp_threads=omp(args.omp_threads))
            try:
                health = url.rsplit("/v2/", 1)[0] + "/v2/health/live"
                results["health_c1"] = sweep("GET /v2/health/live", health, server.proc.pid, None, [1], args.duration,
                                             args.warmup, args.repeats)[0]
            finally:
                server.stop()
            log("in-process hetnet.workspace.Predictor")
            ip = inprocess_in_child(repo, max(3, args.duration // 2), omp(args.omp_threads))
            results["inprocess"] = ip
            log("  in-process p50 %.1f us p99 %.1f us (%d calls)" % (ip["p50_us"], ip["p99_us"], ip["calls"]))
            c1 = [r for r in results["hetnet"] if r["connections"] == 1]
            if c1:
                results["server_overhead_p50_us"] = c1[0]["p50_us"] - ip["p50_us"]
                results["server_overhead_over_floor_us"] = results["server_overhead_p50_us"] - results[
                    "health_c1"]["p50_us"]
                st = c1[0].get("server_stats_us")
                if st:
                    results["server_own_overhead_us"] = st["success"] - st["compute_infer"]
                log("  server overhead at c=1: %.1f us (%.1f over the health floor; own statistics %.1f us)" % (
                    results["server_overhead_p50_us"], results["server_overhead_over_floor_us"],
                    results.get("server_own_overhead_us", float("nan"))))

    # ---- KServe Python server + onnxruntime on the same weights ----
    if "compare" in parts and args.kserve_python != "none":
        onnx_path = os.path.join(workdir, MODEL + ".onnx")
        subprocess.run([args.kserve_python, "-c", "import sys; sys.path.insert(0, %r); import common; "
                        "common.MODELS[%r].write_onnx_file(%r)" % (common.HERE, MODEL, onnx_path)], check=True)
        log("KServe Python model server + onnxruntime (%d intra-op thread(s))" % args.ort_threads)
        proc, url = start_kserve(workdir, args.kserve_python, onnx_path, args.ort_threads)
        try:
            y = common.infer_once(url, body.binary, body.header_len)
            if reference is not None:
                results["kserve_max_abs_err_vs_numpy"] = float(np.abs(y - reference).max())
            if "hetnet_output" in results:
                results["kserve_vs_hetnet_max_abs_diff"] = float(
                    np.abs(y.ravel() - np.asarray(results["hetnet_output"])).max())
                log("  max |kserve - hetnet| = %.3g" % results["kserve_vs_hetnet_max_abs_diff"])
                assert results["kserve_vs_hetnet_max_abs_diff"] < 1e-5, "the two servers disagree"
            results["kserve"] = sweep("kserve+onnxruntime", url, proc.pid, body, concurrencies, args.duration,
                                      args.warmup, args.repeats)
            results["kserve_rss_kib"] = common.rss_kib(proc.pid)
            results["kserve_versions"] = subprocess.run(
                [args.kserve_python, "-c", "import kserve, onnxruntime; print(kserve.__version__, "
                 "onnxruntime.__version__)"], capture_output=True, text=True).stdout.strip()
        finally:
            stop(proc)

    # ---- dynamic batching vs none, concurrency 64 ----
    if "batching" in parts:
        rows = []
        configs = [(threads, delay, instances) for threads in args.batching_omp_threads.split(",")
                   for delay in (None, args.batch_delay_us) for instances in (1, 2)]
        for threads, delay, instances in configs:
            tag = "%s-i%d-omp%s" % ("none" if delay is None else "db%d" % delay, instances, threads)
            log("hetnet serve, %s" % tag)
            server, url, _ = start_hetnet(workdir, tag, queue_delay_us=delay, instances=instances,
                                          omp_threads=omp(threads))
            try:
                r = sweep("hetnet " + tag, url, server.proc.pid, body, [64], args.duration, args.warmup,
                          args.repeats, server.stats_url)[0]
                r["dynamic_batching_delay_us"] = delay
                r["instances"] = instances
                r["omp_num_threads"] = threads
                rows.append(r)
            finally:
                server.stop()
        results["batching"] = rows

    if args.out:
        with open(args.out, "w") as f:
            json.dump(results, f, indent=1)
    print(render_markdown(results))


def urlopen_text(url):
    import urllib.request
    with urllib.request.urlopen(url, timeout=10) as r:
        return r.read().decode()


def render_markdown(r):
    out = []
    if "hetnet" in r or "kserve" in r:
        out.append("| server | concurrency | requests/s | p50 (us) | p99 (us) | errors | server CPU us/request | "
                   "other load (cores) |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|")
        for key, label in (("hetnet", "hetnet serve"), ("kserve", "KServe Python + onnxruntime")):
            for row in r.get(key, []):
                out.append("| %s | %d | %.0f | %d | %d | %d | %.0f | %.2f |" % (
                    label, row["connections"], row["rps"], row["p50_us"], row["p99_us"], row["errors"],
                    row["server_cpu_us_per_req"], row["other_cores"]))
    if "inprocess" in r:
        out.append("")
        out.append("in-process Predictor p50 %.1f us; server p50 at concurrency 1 minus in-process p50: %.1f us"
                   % (r["inprocess"]["p50_us"], r.get("server_overhead_p50_us", float("nan"))))
        if "health_c1" in r:
            out.append("`GET /v2/health/live` at concurrency 1 (the loopback floor): p50 %d us; overhead above it "
                       "%.1f us; by the server's own statistics (request - compute_infer): %.1f us%s" % (
                           r["health_c1"]["p50_us"], r.get("server_overhead_over_floor_us", float("nan")),
                           r.get("server_own_overhead_us", float("nan")),
                           "; /dev/cpu_dma_latency held at 0" if r.get("latency_qos") else ""))
        c1 = [x for x in r.get("hetnet", []) if x["connections"] == 1]
        if c1 and c1[0].get("server_stats_us"):
            st = c1[0]["server_stats_us"]
            out.append("hetnet's own statistics at concurrency 1 (mean us per request): request %.1f = queue %.1f "
                       "+ compute_input %.1f + compute_infer %.1f + compute_output %.1f (+ rest)" % (
                           st["success"], st["queue"], st["compute_input"], st["compute_infer"],
                           st["compute_output"]))
    if "batching" in r:
        out.append("")
        out.append("| OMP_NUM_THREADS | dynamic batching | instances | requests/s | p50 (us) | p99 (us) | errors | "
                   "mean batch | compute_infer per request (us) | server CPU us/request | other load (cores) |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for row in r["batching"]:
            st = row.get("server_stats_us") or {}
            out.append("| %s | %s | %d | %.0f | %d | %d | %d | %.1f | %.0f | %.0f | %.2f |" % (
                row["omp_num_threads"], "none" if row["dynamic_batching_delay_us"] is None else
                "max_queue_delay %d us" % row["dynamic_batching_delay_us"],
                row["instances"], row["rps"], row["p50_us"], row["p99_us"], row["errors"],
                st.get("mean_batch", float("nan")), st.get("compute_infer", float("nan")),
                row["server_cpu_us_per_req"], row["other_cores"]))
    return "\n".join(out)


if __name__ == "__main__":
    main()
