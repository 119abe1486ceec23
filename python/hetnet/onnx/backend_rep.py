"""HetnetBackendRep: an imported ONNX model, ready to run many times (onnx.backend.base.BackendRep).

The rep owns a ``workspace.Predictor``: the weights live in the predictor's own workspace, so two
reps never share or overwrite blobs, and a run never modifies the weights.
"""
import numpy as np
from onnx.backend.base import BackendRep, namedtupledict

from hetnet._predictor import Predictor
from hetnet.proto import caffe2_pb2


class HetnetBackendRep(BackendRep):
    """Runs one imported model. Attributes: ``init_net`` and ``predict_net`` (caffe2 NetDefs, as
    Caffe2's rep had them), ``inputs`` / ``outputs`` ([(name, caffe2 dtype, dims or None)] as the
    importer reports them; inputs without the initializers), ``opsets`` and ``ir_version``."""

    def __init__(self, imported, graph_input_names, device):
        self._init_bytes, self._predict_bytes = imported["init_net"], imported["predict_net"]
        self.inputs = [tuple(v) for v in imported["inputs"]]
        self.outputs = [tuple(v) for v in imported["outputs"]]
        self.opsets = dict(imported.get("opsets", {}))
        self.ir_version = imported.get("ir_version", 0)
        self.device = device
        self.input_names = [v[0] for v in self.inputs]
        self.output_names = [v[0] for v in self.outputs]
        # Every graph input, initializers included (IR < 4 models list their weights as inputs):
        # a positional list as long as that feeds the weights too, for that run only.
        self._all_input_names = list(graph_input_names)
        self._predictor = Predictor(imported["init_net"], imported["predict_net"])
        # One class for every run: making a namedtuple class costs ~70 us, about a batch-1 MLP's run.
        self._outputs_type = namedtupledict("Outputs", self.output_names)

    # Parsed when asked for: an init net can carry hundreds of MB of weights that runs never need
    # in Python.
    @property
    def init_net(self):
        return caffe2_pb2.NetDef.FromString(self._init_bytes)

    @property
    def predict_net(self):
        return caffe2_pb2.NetDef.FromString(self._predict_bytes)

    def _feeds(self, inputs):
        if isinstance(inputs, dict):
            unknown = sorted(set(inputs) - set(self._all_input_names) - set(self.input_names))
            if unknown:
                raise ValueError("HetnetBackendRep.run: %s not graph inputs (inputs: %s)"
                                 % (", ".join(unknown), ", ".join(self.input_names)))
            return {str(k): np.asarray(v) for k, v in inputs.items()}
        if isinstance(inputs, np.ndarray):  # one input given bare, as ONNX's tests sometimes do
            inputs = [inputs]
        inputs = list(inputs)
        if len(inputs) == len(self.input_names):
            names = self.input_names
        elif len(inputs) == len(self._all_input_names):
            names = self._all_input_names
        else:
            raise ValueError("HetnetBackendRep.run: %d inputs given, the model takes %d (%s)"
                             % (len(inputs), len(self.input_names), ", ".join(self.input_names)))
        return {name: np.asarray(v) for name, v in zip(names, inputs)}

    def run(self, inputs, **kwargs):
        """inputs: a list/tuple in graph-input order, one array, or {name: array}. Returns the
        outputs in graph order as a namedtupledict (index or name)."""
        results = dict(zip(self._predictor.output_names, self._predictor.run(self._feeds(inputs))))
        values = [_OnnxValue(results[name]) for name in self.output_names]
        return self._outputs_type(*values)


def _OnnxValue(value):
    """hetnet fetches string tensors as object arrays of bytes; ONNX strings are UTF-8 str."""
    if value.dtype != object:
        return value
    decoded = [v.decode("utf-8") if isinstance(v, bytes) else v for v in value.ravel()]
    return np.array(decoded, dtype=object).reshape(value.shape)


Caffe2Rep = HetnetBackendRep  # Caffe2's name (caffe2.python.onnx.backend_rep.Caffe2Rep)
