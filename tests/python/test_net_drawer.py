"""net_drawer: DOT text and SVG through Graphviz."""
import shutil

import pytest

from hetnet import core, net_drawer
from hetnet.proto import caffe2_pb2


def _mixed_net():
    net = core.Net("draw")
    with core.DeviceScope(core.DeviceOption(caffe2_pb2.CUDA, 1)):
        y = net.Relu("x", "y")
    net.Relu(y, "y")  # in place: a second version of y
    return net


def test_dot_text():
    text = net_drawer.GetPydotGraph(_mixed_net()).to_string()
    assert text.startswith('digraph "draw" {')
    assert '"y#0"' in text and '"y#1"' in text
    assert "cuda:1" in text and "#d9ead3" in text and "#cfe2f3" in text
    assert '"x#0" -> "op#0";' in text
    minimal = net_drawer.GetPydotGraphMinimal(_mixed_net()).to_string()
    assert '"op#0" -> "op#1";' in minimal and "x#0" not in minimal


def test_svg_with_dot():
    if shutil.which("dot") is None:
        pytest.skip("Graphviz 'dot' is not installed")
    svg = net_drawer.GetPydotGraph(_mixed_net()).create_svg()
    assert b"<svg" in svg
