"""Export(workspace, net, params) -> (init_net, predict_net), as caffe2.python.predictor.mobile_exporter:
an init net of GivenTensor*Fill ops holding the parameters' current values (plus a placeholder
for each external input that is not a parameter), and the predict net with its external inputs
and outputs set as a Predictor expects."""
import numpy as np

from hetnet import core
from hetnet.proto import caffe2_pb2

# numpy dtype -> the fill operator that recreates it (Caffe2's table, plus bool and float64, which
# hetnet has fills for; uint8 used Caffe2's GivenTensorByteStringToUInt8Fill, which hetnet lacks).
_FILL_FOR_DTYPE = {
    np.dtype("float32"): "GivenTensorFill",
    np.dtype("float64"): "GivenTensorDoubleFill",
    np.dtype("int32"): "GivenTensorIntFill",
    np.dtype("int64"): "GivenTensorInt64Fill",
    np.dtype("bool"): "GivenTensorBoolFill",
    np.dtype("O"): "GivenTensorStringFill",
}


def add_tensor(net, name, blob):
    """Appends to NetDef `net` a fill op that creates blob `name` with the array's contents."""
    blob = np.asarray(blob)
    fill = _FILL_FOR_DTYPE.get(blob.dtype)
    if fill is None:
        raise TypeError("mobile_exporter: blob '{}' has dtype {}, which hetnet has no fill operator for "
                        "(supported: {})".format(name, blob.dtype, ", ".join(str(d) for d in _FILL_FOR_DTYPE)))
    if blob.dtype == np.dtype("O"):
        for value in blob.flat:
            assert isinstance(value, bytes), "string tensors must hold bytes"
        values = list(blob.flat)
    elif blob.dtype == np.dtype("bool"):
        values = [int(v) for v in blob.flat]
    else:
        values = blob.flatten().tolist()
    op = core.CreateOperator(fill, [], [name], debug_info="",
                             arg=[core.MakeArgument("shape", list(blob.shape)),
                                  core.MakeArgument("values", values)])
    net.op.extend([op])


def Export(workspace, net, params):
    """(init_net, predict_net) NetDefs to write to disk and load into a Predictor.

    params: the parameter blobs (e.g. model.params); their values are fetched from `workspace`
    (the workspace module). Every other blob the net reads before writing it becomes an external
    input with a [1, 1] zero placeholder in the init net (as Caffe2; a Predictor run replaces it);
    external outputs are the blobs the net writes and never reads."""
    proto = net if isinstance(net, caffe2_pb2.NetDef) else net.Proto()
    predict_net = caffe2_pb2.NetDef()
    predict_net.CopyFrom(proto)
    init_net = caffe2_pb2.NetDef()
    param_names = [str(p) for p in params]

    ssa, blob_versions = core.get_ssa(proto)
    read = set()
    for versioned_inputs, _ in ssa:
        read.update(name for name, _ in versioned_inputs)
    input_blobs = [b for b, version in blob_versions.items() if version == 0 and b not in param_names]
    output_blobs = [b for b, version in blob_versions.items() if version != 0 and b not in read]

    for name in param_names:
        add_tensor(init_net, name, workspace.FetchBlob(name))
    for name in input_blobs:
        init_net.op.extend([core.CreateOperator(
            "GivenTensorFill", [], [name], debug_info="",
            arg=[core.MakeArgument("shape", [1, 1]), core.MakeArgument("values", [0.0])])])

    del predict_net.external_input[:]
    external_inputs = list(input_blobs)
    for name in proto.external_input:
        if name not in external_inputs:
            external_inputs.append(name)
    predict_net.external_input.extend(external_inputs)
    del predict_net.external_output[:]
    predict_net.external_output.extend(output_blobs)
    return init_net, predict_net
