"""Graphviz drawings of nets, in the spirit of caffe2.python.net_drawer.

``GetPydotGraph(net_or_ops)`` returns a DotGraph (no pydot needed) with ``to_string()`` (DOT text),
``create_svg()`` / ``create_png()`` (through the ``dot`` program, when installed) and ``write_svg``.
Operators are boxes coloured by device; blobs are ellipses, with one node per version of a blob
that is written more than once.
"""
import shutil
import subprocess

from hetnet import core
from hetnet.proto import caffe2_pb2

OP_STYLE = {"shape": "box", "style": "filled"}
BLOB_STYLE = {"shape": "oval"}
DEVICE_COLORS = {0: "#cfe2f3", 1: "#d9ead3"}  # CPU blue, CUDA green


def _quote(text):
    return '"' + str(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def _attrs(attrs):
    return "[" + ", ".join("{}={}".format(k, _quote(v)) for k, v in attrs.items()) + "]"


class DotGraph(object):
    def __init__(self, name, rankdir="LR"):
        self.name = name
        self.rankdir = rankdir
        self.nodes = []  # (id, attrs)
        self.edges = []  # (src, dst)

    def add_node(self, node_id, **attrs):
        self.nodes.append((node_id, attrs))

    def add_edge(self, src, dst):
        self.edges.append((src, dst))

    def to_string(self):
        lines = ["digraph {} {{".format(_quote(self.name)), "  rankdir={};".format(_quote(self.rankdir))]
        lines += ["  {} {};".format(_quote(n), _attrs(a)) for n, a in self.nodes]
        lines += ["  {} -> {};".format(_quote(s), _quote(d)) for s, d in self.edges]
        lines.append("}")
        return "\n".join(lines) + "\n"

    def create(self, fmt="svg"):
        dot = shutil.which("dot")
        if dot is None:
            raise RuntimeError("the Graphviz 'dot' program is not installed")
        return subprocess.run([dot, "-T" + fmt], input=self.to_string().encode("utf-8"),
                              stdout=subprocess.PIPE, check=True).stdout

    def create_svg(self):
        return self.create("svg")

    def create_png(self):
        return self.create("png")

    def write_svg(self, path):
        with open(path, "wb") as f:
            f.write(self.create_svg())

    def write(self, path):
        with open(path, "w") as f:
            f.write(self.to_string())


def _operators_of(net_or_ops):
    if isinstance(net_or_ops, core.Net):
        net_or_ops = net_or_ops.Proto()
    if isinstance(net_or_ops, caffe2_pb2.NetDef):
        return net_or_ops.name, list(net_or_ops.op), net_or_ops
    return "", list(net_or_ops), None


def _device_label(op, net_proto):
    option = op.device_option if op.HasField("device_option") else (
        net_proto.device_option if net_proto is not None and net_proto.HasField("device_option") else None)
    if option is None:
        return 0, "cpu"
    if option.device_type == caffe2_pb2.CUDA:
        return 1, "cuda:{}".format(option.device_id)
    return option.device_type, "cpu" if option.device_type == 0 else "device {}".format(option.device_type)


def GetPydotGraph(operators_or_net, name=None, rankdir="LR", minimal=False):
    """A DotGraph of the ops and blobs (blobs omitted when minimal)."""
    net_name, ops, net_proto = _operators_of(operators_or_net)
    graph = DotGraph(name or net_name or "net", rankdir)
    version = {}

    def blob_node(blob, new_version=False):
        if new_version or blob not in version:
            version[blob] = version.get(blob, -1) + 1
            node_id = "{}#{}".format(blob, version[blob])
            graph.add_node(node_id, label=blob, **BLOB_STYLE)
        return "{}#{}".format(blob, version[blob])

    producer = {}
    for index, op in enumerate(ops):
        device_type, device = _device_label(op, net_proto)
        op_id = "op#{}".format(index)
        label = "{} ({})\n{}".format(op.type, op.name, device) if op.name else "{}\n{}".format(op.type, device)
        graph.add_node(op_id, label=label, fillcolor=DEVICE_COLORS.get(device_type, "#eeeeee"), **OP_STYLE)
        for blob in op.input:
            if minimal:
                if blob in producer:
                    graph.add_edge(producer[blob], op_id)
            else:
                graph.add_edge(blob_node(blob), op_id)
        for blob in op.output:
            if minimal:
                producer[blob] = op_id
            else:
                graph.add_edge(op_id, blob_node(blob, new_version=True))
    return graph


def GetPydotGraphMinimal(operators_or_net, name=None, rankdir="LR"):
    return GetPydotGraph(operators_or_net, name, rankdir, minimal=True)


def GetGraphInJson(operators_or_net):
    net_name, ops, _ = _operators_of(operators_or_net)
    return {"name": net_name,
            "ops": [{"type": op.type, "name": op.name, "inputs": list(op.input),
                     "outputs": list(op.output)} for op in ops]}
