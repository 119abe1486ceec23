"""Does the host run ahead of the GPU? Reads a Chrome trace from `hetnet run --trace` (GPU ops have
a device span and a "(launch)" span on the host's lane) and prints, per profiled run and in all:
how long the host spent issuing GPU ops, how long the device spans took, and how many GPU ops were
issued while the device sat idle (the previous GPU op had ended before the host began this one).
A host that keeps ahead issues few ops onto an idle device; a host that waits for the device (a
synchronisation inside some op) issues most of them so, and the run costs launches plus kernels.

    python3 tools/trace_overlap.py TRACE.json [--top 8]
"""
import argparse
import collections
import json
import sys


def analyse(events):
    lanes = {e["tid"]: e["args"]["name"] for e in events if e.get("ph") == "M" and e["name"] == "thread_name"}
    device, launch = {}, {}
    for e in events:
        if e.get("ph") != "X":
            continue
        key = (e["args"]["run"], e["args"]["op"])
        if e["cat"] == "launch":
            launch[key] = e
        elif "cuda:" in lanes.get(e["tid"], ""):
            device[key] = e
    runs = collections.defaultdict(list)
    for key in sorted(device):
        if key in launch:
            runs[key[0]].append((device[key], launch[key]))
    rows = []
    for run, ops in sorted(runs.items()):
        idle, prev_end = 0, None
        for dev, host in ops:
            if prev_end is not None and prev_end + 1.0 < host["ts"]:
                idle += 1
            prev_end = dev["ts"] + dev["dur"]
        start = min(min(d["ts"], h["ts"]) for d, h in ops)
        end = max(d["ts"] + d["dur"] for d, _ in ops)
        rows.append({"run": run, "ops": len(ops), "idle_at_issue": idle,
                     "launch_us": sum(h["dur"] for _, h in ops), "device_us": sum(d["dur"] for d, _ in ops),
                     "span_us": end - start, "per_type": ops})
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--top", type=int, default=8, help="op types with the longest launches to list")
    args = ap.parse_args()
    with open(args.trace) as f:
        rows = analyse(json.load(f)["traceEvents"])
    if not rows:
        print("no GPU ops with launch spans in %s" % args.trace)
        return 1
    print("| run | GPU ops | issued onto an idle device | launches us | device spans us | first to last us |")
    print("|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        print("| %d | %d | %d | %.1f | %.1f | %.1f |" % (r["run"], r["ops"], r["idle_at_issue"], r["launch_us"],
                                                      r["device_us"], r["span_us"]))
    by_type = collections.defaultdict(list)
    for r in rows:
        for dev, host in r["per_type"]:
            by_type[dev["name"]].append((host["dur"], dev["dur"]))
    print("\n| op type | ops per run | mean launch us | mean device span us |")
    print("|---|---:|---:|---:|")
    ranked = sorted(by_type.items(), key=lambda kv: -sum(h for h, _ in kv[1]))
    for name, v in ranked[:args.top]:
        print("| %s | %.0f | %.1f | %.1f |" % (name, len(v) / len(rows), sum(h for h, _ in v) / len(v),
                                              sum(d for _, d in v) / len(v)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
