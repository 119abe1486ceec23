"""HetnetBackendRep: an imported ONNX model, ready to run many times (onnx.backend.base.BackendRep).

The rep owns a ``workspace.Predictor``: the weights live in the predictor's own workspace, so two
reps never share or overwrite blobs, and a run never modifies the weights.
"""
import itertools
import threading

import numpy as np
from onnx.backend.base import BackendRep, namedtupledict

from hetnet import _C
from hetnet._errors import InvalidArgumentError
from hetnet._predictor import Predictor
from hetnet.proto import caffe2_pb2
from hetnet.workspace import _AsFeedableArray

_WORKSPACE_IDS = itertools.count()


class _ValueRunner(object):
    """Runs a model whose inputs or outputs are ONNX sequences / optionals (lists, None), which the
    tensor-only Predictor cannot carry: in a workspace of its own, fed and fetched by name (a lock
    makes runs one at a time)."""

    def __init__(self, init_bytes, predict_bytes, output_names):
        self._name = "__hetnet_onnx_values_%d" % next(_WORKSPACE_IDS)
        self._predict = predict_bytes
        self._outputs = list(output_names)
        self._lock = threading.Lock()
        with self._InWorkspace(create=True):
            _C.run_net_once(init_bytes)

    class _Switch(object):
        def __init__(self, name, create):
            self.name, self.create = name, create

        def __enter__(self):
            self.previous = _C.current_workspace()
            _C.switch_workspace(self.name, self.create)

        def __exit__(self, *exc):
            _C.switch_workspace(self.previous, False)

    def _InWorkspace(self, create=False):
        return self._Switch(self._name, create)

    def run(self, feeds):
        """feeds: {name: array | list of arrays | None} -> [array | list | None] in output order."""
        with self._lock, self._InWorkspace():
            for name, value in feeds.items():
                _C.feed_blob(name, _FeedableValue(value), None)
            _C.run_net_once(self._predict)
            return [_C.fetch_blob(name) for name in self._outputs]


def _FeedableValue(value):
    if value is None:
        return None
    if isinstance(value, (list, tuple)):
        return [_AsFeedableArray(v) for v in value]
    return _AsFeedableArray(value)


class HetnetBackendRep(BackendRep):
    """Runs one imported model. Attributes: ``init_net`` and ``predict_net`` (caffe2 NetDefs, as
    Caffe2's rep had them), ``inputs`` / ``outputs`` ([(name, caffe2 dtype, dims or None)] as the
    importer reports them; inputs without the initializers), ``opsets`` and ``ir_version``."""

    def __init__(self, imported, graph_input_names, device, value_names=()):
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
        # value_names: graph inputs / outputs of sequence or optional type (lists, None).
        self._values = set(value_names)
        if self._values:
            self._predictor = None
            self._runner = _ValueRunner(imported["init_net"], imported["predict_net"], self.output_names)
        else:
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
            return {str(k): self._Value(str(k), v) for k, v in inputs.items()}
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
        return {name: self._Value(name, v) for name, v in zip(names, inputs)}

    def _Value(self, name, value):
        if self._predictor is None and (value is None or isinstance(value, (list, tuple))):
            return value  # a sequence (list of arrays) or an empty optional (None); the operator
            # that reads it where a tensor is expected names itself and the blob
        if value is None or (isinstance(value, (list, tuple)) and value and isinstance(value[0], np.ndarray)):
            raise InvalidArgumentError("HetnetBackendRep.run: input %r is a tensor, given %s"
                                       % (name, "None" if value is None else "a list of arrays (a sequence)"))
        return np.asarray(value)

    def run(self, inputs, **kwargs):
        """inputs: a list/tuple in graph-input order, one array, or {name: array}; a sequence input
        takes a list of arrays, an optional one None when empty. Returns the outputs in graph order
        as a namedtupledict (index or name); sequences as lists, empty optionals as None."""
        if self._predictor is None:
            values = self._runner.run(self._feeds(inputs))
            return self._outputs_type(*[_OnnxValue(v) for v in values])
        results = dict(zip(self._predictor.output_names, self._predictor.run(self._feeds(inputs))))
        values = [_OnnxValue(results[name]) for name in self.output_names]
        return self._outputs_type(*values)


def _OnnxValue(value):
    """hetnet fetches string tensors as object arrays of bytes; ONNX strings are UTF-8 str."""
    if value is None:
        return None
    if isinstance(value, list):
        return [_OnnxValue(v) for v in value]
    if value.dtype != object:
        return value
    decoded = [v.decode("utf-8") if isinstance(v, bytes) else v for v in value.ravel()]
    return np.array(decoded, dtype=object).reshape(value.shape)


Caffe2Rep = HetnetBackendRep  # Caffe2's name (caffe2.python.onnx.backend_rep.Caffe2Rep)
