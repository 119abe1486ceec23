"""hetnet against PyTorch eager on the same ONNX graphs and weights, on the CPU or a GPU (issue 16
items 5-7): benchmarks/onnx_models.py builds an MLP, LeNet, ResNet-18 and ResNet-50 with random
weights; hetnet imports the file (onnx/) and runs it through its Predictor on the device, PyTorch
runs the same graph node by node with torch.nn.functional (its eager mode) on the same weights.
Each timed call takes a host array in and gives a host array back on both sides. Engines run in
alternating rounds so that noise hits both alike; medians; ratio = PyTorch time / hetnet time
(above 1: hetnet is faster); the largest output difference checks they computed the same thing.

    PYTHONPATH=build/python python3 benchmarks/peers/vs_pytorch.py --device cuda [--models ...]
        [--batches 1,8 (default: per model)] [--rounds 5] [--seconds 0.5] [--threads N] [--cuda-graph]

--cuda-graph adds a column: hetnet's Predictor on the CUDA graph executor (net type cuda_graph,
one graph launch per run from the second run on), timed in the same rounds.

float32 on both sides, TF32 off in PyTorch (hetnet's cuDNN calls use FMA math, no TF32); PyTorch's
cudnn.benchmark stays at its default (off), as in eager use. Without a GPU, --device cuda exits
with status 2 and says so."""
import argparse
import os
import statistics
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda", choices=["cpu", "cuda"])
    p.add_argument("--models", default="mlp,lenet,resnet18,resnet50,tiny_ops,add16m")
    p.add_argument("--batches", default="",
                   help="e.g. 1,8 (default: each model's batches in issue 16, onnx_models.ISSUE_BATCHES)")
    p.add_argument("--rounds", type=int, default=5, help="alternating rounds per engine")
    p.add_argument("--seconds", type=float, default=0.5, help="timing budget per engine per round")
    p.add_argument("--threads", type=int, default=0, help="CPU threads for both (0: their defaults)")
    p.add_argument("--cuda-graph", action="store_true", help="also time hetnet on the CUDA graph executor")
    return p.parse_args()


class TorchGraph:
    """An ONNX graph of benchmarks/onnx_models.py's node types, run node by node in torch eager."""

    def __init__(self, model, torch, device):
        from onnx import numpy_helper
        self.t, self.F = torch, torch.nn.functional
        self.nodes = list(model.graph.node)
        self.weights = {i.name: torch.from_numpy(numpy_helper.to_array(i).copy()).to(device)
                        for i in model.graph.initializer}
        self.device = device

    @staticmethod
    def _attrs(node):
        from onnx import helper
        return {a.name: helper.get_attribute_value(a) for a in node.attribute}

    def _node(self, n, v):
        F, a, x = self.F, self._attrs(n), [v[i] for i in n.input]
        if n.op_type == "Conv":
            pads = a.get("pads", [0, 0, 0, 0])
            return F.conv2d(x[0], x[1], x[2] if len(x) > 2 else None, stride=a.get("strides", 1),
                            padding=(pads[0], pads[1]))
        if n.op_type == "BatchNormalization":
            return F.batch_norm(x[0], x[3], x[4], x[1], x[2], training=False, eps=a.get("epsilon", 1e-5))
        if n.op_type == "Relu":
            return F.relu(x[0])
        if n.op_type == "MaxPool":
            pads = a.get("pads", [0, 0, 0, 0])
            return F.max_pool2d(x[0], a["kernel_shape"], a.get("strides", 1), padding=(pads[0], pads[1]))
        if n.op_type == "Add":
            return x[0] + x[1]
        if n.op_type == "GlobalAveragePool":
            return F.adaptive_avg_pool2d(x[0], 1)
        if n.op_type == "Flatten":
            return self.t.flatten(x[0], a.get("axis", 1))
        if n.op_type == "Gemm":
            assert a.get("transB", 0) == 1 and a.get("transA", 0) == 0
            return F.linear(x[0], x[1], x[2])
        if n.op_type == "Identity":
            return x[0]
        if n.op_type == "Softmax":
            return F.softmax(x[0], dim=a.get("axis", -1))
        raise NotImplementedError("TorchGraph: node type %s" % n.op_type)

    def run(self, x):
        with self.t.inference_mode():
            v = dict(self.weights)
            v["data"] = self.t.from_numpy(x).to(self.device)
            for n in self.nodes:
                v[n.output[0]] = self._node(n, v)
            return v["prob"].cpu().numpy()


def GraphPredictor(rep, workspace):
    """The rep's nets in a Predictor whose predict net runs on the CUDA graph executor."""
    predict = rep.predict_net
    predict.type = "cuda_graph"
    return workspace.Predictor(rep.init_net, predict)


def median_seconds(fn, budget):
    times, start = [], time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < budget and len(times) < 500):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main():
    args = parse_args()
    if args.threads:
        os.environ["OMP_NUM_THREADS"] = str(args.threads)
    sys.path.insert(0, os.path.dirname(HERE))
    import numpy as np
    import torch
    import onnx_models
    from hetnet import workspace
    from hetnet.onnx import backend

    if args.device == "cuda" and (workspace.NumCudaDevices() == 0 or not torch.cuda.is_available()):
        print("vs_pytorch: --device cuda needs a GPU that both hetnet (%d CUDA devices) and PyTorch (available: %s) "
              "see; nothing was measured." % (workspace.NumCudaDevices(), torch.cuda.is_available()), file=sys.stderr)
        return 2
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    tdev = torch.device("cuda:0" if args.device == "cuda" else "cpu")
    hdev = "CUDA:0" if args.device == "cuda" else "CPU"
    gpu_name = torch.cuda.get_device_name(0) if args.device == "cuda" else "CPU"
    print("# hetnet vs PyTorch %s eager, %s, %s, %d threads, %s UTC" % (
        torch.__version__, args.device, gpu_name, torch.get_num_threads(),
        time.strftime("%Y-%m-%d %H:%M", time.gmtime())))
    graph_cols = args.cuda_graph and args.device == "cuda"
    print("| model | batch | hetnet ms | PyTorch ms | PyTorch/hetnet | max abs diff |%s"
          % (" hetnet graph ms | PyTorch/graph | graph diff |" if graph_cols else ""))
    print("|---|---:|---:|---:|---:|---:|%s" % ("---:|---:|---:|" if graph_cols else ""))
    for name in args.models.split(","):
        model, shape = onnx_models.MODELS[name]()
        rep = backend.prepare(model, device=hdev)
        graph = TorchGraph(model, torch, tdev)
        replay = GraphPredictor(rep, workspace) if graph_cols else None
        for batch in onnx_models.batches(name, args.batches):
            x = np.random.RandomState(batch).rand(batch, *shape).astype(np.float32)
            ours = lambda: rep.run([x])[0]  # noqa: E731
            theirs = lambda: graph.run(x)  # noqa: E731
            reference = theirs()
            diff = float(np.max(np.abs(ours() - reference)))  # also the warm-up of both
            extra, tg = "", []
            if replay:
                replayed = lambda: replay.run([x])[0]  # noqa: E731
                replayed()  # the first run is the sequential one; the second captures
                gdiff = float(np.max(np.abs(replayed() - reference)))
            th, tt = [], []
            for _ in range(args.rounds):
                th.append(median_seconds(ours, args.seconds))
                tt.append(median_seconds(theirs, args.seconds))
                if replay:
                    tg.append(median_seconds(replayed, args.seconds))
            h, t = statistics.median(th), statistics.median(tt)
            if replay:
                g = statistics.median(tg)
                extra = " %.3f | %.2f | %.1e |" % (g * 1e3, t / g, gdiff)
            print("| %s | %d | %.3f | %.3f | %.2f | %.1e |%s" % (name, batch, h * 1e3, t * 1e3, t / h, diff, extra),
                  flush=True)
            if replay and batch == max(onnx_models.batches(name, args.batches)):
                print("  (%s: %s)" % (name, replay.executor_notes().strip().replace("\n", "; ")[:300]), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
