"""The same ONNX files through hetnet (imported by onnx/, run by the Predictor) and ONNX Runtime on
CPU, in one process, with the same thread count, timed in alternating rounds: median time per batch
at issue 16's batches (MLP and LeNet 1 and 64, the ResNets 1 and 8), the ratio (ORT time / hetnet
time: above 1 means hetnet is faster) and the largest output difference.

    OMP_NUM_THREADS is set from --threads before hetnet loads.
    PYTHONPATH=build/python python3 benchmarks/onnx_vs_onnxruntime.py --threads 2 [--models mlp,lenet]

Prints a Markdown table for benchmarks/RESULTS.md."""
import argparse
import os
import statistics
import sys
import time


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--threads", type=int, default=os.cpu_count())
    p.add_argument("--models", default="mlp,lenet,resnet18,resnet50,tiny_ops,add16m")
    p.add_argument("--batches", default="",
                   help="e.g. 1,8 (default: each model's batches in issue 16, onnx_models.ISSUE_BATCHES)")
    p.add_argument("--seconds", type=float, default=3.0, help="time budget per (model, batch, runtime)")
    p.add_argument("--rounds", type=int, default=15,
                   help="alternating bursts per (model, batch, runtime): on this VM a burst of a 0.1 ms net "
                        "runs 60 or 100 us by the minute, for either runtime, and 5 bursts left the median "
                        "to chance (LeNet at batch 1, 2 threads: 0.82-1.31 in one hour)")
    p.add_argument("--precision", default="", help="also time hetnet in this precision (bf16, fp16: "
                   "core/reduced_precision.h) beside its float32 run; ORT stays float32")
    return p.parse_args()


def time_interleaved(fns, budget, rounds=15, max_runs=600):
    """Median seconds per call of each fn, timed in `rounds` alternating bursts (noise from the rest
    of the machine hits every runtime alike). Each burst starts 50 ms after the previous runtime's:
    ONNX Runtime's pool threads spin for a while after a run, and timed in that window hetnet's
    second thread shares its core with them (at 2 threads the MLP at batch 1 measured 3x slower,
    the 1-thread time). Each burst first runs its fn untimed for 20 ms (at least once): on this VM
    a core left idle for 50 ms runs ~3x slower for the next few milliseconds, whichever runtime is
    on it (MLP batch 1 at 2 threads: ~90 us per run for the first ~3 ms, then 29-31 us, ORT and
    hetnet alike), and short bursts timed that warm-up, not the runtimes.
    Returns [(median, runs)] in fns' order."""
    for fn in fns:
        fn()  # warm-up (first-run allocations, algorithm choice)
    times = [[] for _ in fns]
    for _ in range(rounds):
        for fn, ts in zip(fns, times):
            time.sleep(0.05)
            warm = time.perf_counter()
            fn()
            while time.perf_counter() - warm < 0.02:
                fn()
            start, n = time.perf_counter(), 0
            while n < 1 or (time.perf_counter() - start < budget / rounds and n < max_runs // rounds):
                t0 = time.perf_counter()
                fn()
                ts.append(time.perf_counter() - t0)
                n += 1
    return [(statistics.median(ts), len(ts)) for ts in times]


def main():
    args = parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import numpy as np
    import onnxruntime as ort
    from hetnet import _C, workspace
    import onnx_models

    so = ort.SessionOptions()
    so.intra_op_num_threads = args.threads
    so.inter_op_num_threads = 1
    so.execution_mode = ort.ExecutionMode.ORT_SEQUENTIAL
    narrow = args.precision
    if narrow:
        print("| model | batch | hetnet ms | hetnet %s ms | onnxruntime ms | ORT/hetnet | ORT/hetnet %s | "
              "max abs diff %s vs ORT | runs (h/%s/o) |" % ((narrow,) * 4))
        print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    else:
        print("| model | batch | hetnet ms | onnxruntime ms | ORT/hetnet | max abs diff | runs (h/o) |")
        print("|---|---:|---:|---:|---:|---:|---|")
    for name in args.models.split(","):
        model, shape = onnx_models.MODELS[name]()
        data = model.SerializeToString()
        imported = _C.onnx_import(data)
        pred = workspace.Predictor(imported["init_net"], imported["predict_net"])
        npred = workspace.Predictor(imported["init_net"], imported["predict_net"], precision=narrow) if narrow else None
        sess = ort.InferenceSession(data, so, providers=["CPUExecutionProvider"])
        for batch in onnx_models.batches(name, args.batches):
            x = np.random.RandomState(batch).rand(batch, *shape).astype(np.float32)
            ours = pred.run({"data": x})[0]
            theirs = sess.run(None, {"data": x})[0]
            diff = float(np.max(np.abs(ours - theirs)))
            if narrow:
                ndiff = float(np.max(np.abs(npred.run({"data": x})[0] - theirs)))
                (th, nh), (tn, nn), (to, no) = time_interleaved(
                    [lambda: pred.run({"data": x}), lambda: npred.run({"data": x}), lambda: sess.run(None, {"data": x})],
                    args.seconds, args.rounds)
                print("| %s | %d | %.3f | %.3f | %.3f | %.2f | %.2f | %.1e | %d/%d/%d |" %
                      (name, batch, th * 1e3, tn * 1e3, to * 1e3, to / th, to / tn, ndiff, nh, nn, no))
                sys.stdout.flush()
                continue
            (th, nh), (to, no) = time_interleaved([lambda: pred.run({"data": x}), lambda: sess.run(None, {"data": x})],
                                                  args.seconds, args.rounds)
            print("| %s | %d | %.3f | %.3f | %.2f | %.1e | %d/%d |" % (name, batch, th * 1e3, to * 1e3, to / th, diff, nh, no))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
