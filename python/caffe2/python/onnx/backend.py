"""caffe2.python.onnx.backend as Caffe2 users wrote it, run by hetnet:

    import caffe2.python.onnx.backend as backend
    rep = backend.prepare(model, device="CUDA:0")
    outputs = rep.run(inputs)
    init_net, predict_net = backend.Caffe2Backend.onnx_graph_to_caffe2_net(model)

``Caffe2Backend`` is hetnet.onnx.backend.HetnetBackend under Caffe2's name; ``Caffe2Rep`` is
hetnet's HetnetBackendRep. See hetnet/onnx/backend.py for what differs from Caffe2 (devices are
checked at prepare; Caffe2-only kwargs such as raw_values_dict are not supported).
"""
from hetnet.onnx.backend import HetnetBackend, DeviceOption  # noqa: F401
from hetnet.onnx.backend_rep import HetnetBackendRep as Caffe2Rep  # noqa: F401


class Caffe2Backend(HetnetBackend):
    """Caffe2's class name for hetnet's ONNX backend (same behaviour)."""


prepare = Caffe2Backend.prepare
run_model = Caffe2Backend.run_model
run_node = Caffe2Backend.run_node
supports_device = Caffe2Backend.supports_device
onnx_graph_to_caffe2_net = Caffe2Backend.onnx_graph_to_caffe2_net
