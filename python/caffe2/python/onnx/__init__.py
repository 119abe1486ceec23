"""caffe2.python.onnx: Caffe2's ONNX package, served by hetnet.onnx (needs PyPI ``onnx``).

``caffe2.python.onnx.backend`` is its own small module (Caffe2's names over hetnet's backend);
``caffe2.python.onnx.backend_rep`` is hetnet's module object itself, aliased in sys.modules as
caffe2.python does for the other hetnet modules.
"""
import sys

from hetnet.onnx import backend_rep

sys.modules[__name__ + ".backend_rep"] = backend_rep
