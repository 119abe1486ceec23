"""caffe2.python.onnx.frontend as Caffe2 users wrote it, served by hetnet.onnx.frontend:

    from caffe2.python.onnx.frontend import caffe2_net_to_onnx_model
    model = caffe2_net_to_onnx_model(predict_net, init_net, value_info)
"""
from hetnet.onnx.frontend import (  # noqa: F401
    Caffe2Frontend,
    caffe2_net_to_onnx_graph,
    caffe2_net_to_onnx_model,
)
