"""workspace.Predictor: serves a model from an init net and a predict net (hetnet::Predictor).

The weights live in a workspace of the predictor's own (not the current one); ``run`` is
thread-safe and copies its inputs in and its outputs out.
"""
from hetnet import _C
from hetnet._net import NetProtoForRuntime

_BYTES_LIKE = (bytes, bytearray, memoryview)
_as_feedable = None  # hetnet.workspace._AsFeedableArray, looked up once (workspace imports this module)


def _SerializedNet(net, which):
    """A NetDef, a core.Net, or the serialized bytes of a NetDef (a .pb file's contents) -> bytes."""
    if isinstance(net, _BYTES_LIKE):
        return bytes(net)
    if isinstance(net, str):
        raise TypeError("Predictor: %s is a str; pass a NetDef, a core.Net or the serialized bytes "
                        "(open(path, 'rb').read())" % which)
    if not (hasattr(net, "Proto") or hasattr(net, "SerializeToString")):
        raise TypeError("Predictor: %s must be a NetDef, a core.Net or serialized bytes, not %s"
                        % (which, type(net).__name__))
    return NetProtoForRuntime(net).SerializeToString()


class Predictor(object):
    """Caffe2's ``workspace.Predictor(init_net, predict_net)``.

    ``init_net`` and ``predict_net`` are NetDef objects, ``core.Net`` objects, or the serialized
    bytes of a NetDef (the tutorial's ``open('init_net.pb', 'rb').read()``).

    ``run(list)`` feeds ``positional_input_names`` in order: the predict net's external inputs that
    the init net did not fill (exactly that many arrays), or, when the init net filled every
    external input (model-zoo init nets also fill ``data`` with a placeholder), the first
    ``len(list)`` external inputs in ``external_input`` order, as Caffe2 did (a zoo net lists
    ``data`` first). Caffe2 always fed the first ``len(list)`` external inputs, whatever the init
    net filled; here, when some inputs are not filled, the list gives those, so that a net listing
    its weights before its data still takes ``[data]``.

    ``run(dict)`` feeds by name: every name in ``input_names`` must be given, and any external input
    that the init net filled may be given too. A blob fed that the init net had filled is replaced
    for that run only: the predictor's weights are never modified by a run.

    Returns a list of arrays in ``output_names`` (external output) order.

    ``precision="bfloat16"`` (or ``"float16"``; hetnet's, not Caffe2's) runs the operators that have
    a kernel for that dtype on narrow blobs with float32 accumulation (on CPU: the DNNL engine's Conv
    and FC in bfloat16) and converts the weights only they read, once; inputs and outputs stay
    float32 (the predict net's argument ``hetnet_precision``, ``hetnet run --precision``).
    """

    def __init__(self, init_net, predict_net, outputs_to_cpu=True, precision=None):
        self._predictor = _C.Predictor(_SerializedNet(init_net, "init_net"),
                                       _SerializedNet(predict_net, "predict_net"),
                                       bool(outputs_to_cpu), str(precision or ""))

    def run(self, inputs):
        """inputs: a list of arrays (see the class docstring for the order), or {name: array};
        returns a list of arrays in output_names order."""
        global _as_feedable
        if _as_feedable is None:  # an import statement per run cost 1.4 us (MLP at batch 1: 50 us)
            from hetnet.workspace import _AsFeedableArray as _as_feedable
        if isinstance(inputs, dict):
            inputs = {str(k): _as_feedable(v) for k, v in inputs.items()}
        else:
            inputs = [_as_feedable(v) for v in inputs]
        return self._predictor.run(inputs)

    @property
    def input_names(self):
        """External inputs of the predict net that the init net did not fill (to be fed)."""
        return list(self._predictor.input_names)

    @property
    def filled_input_names(self):
        """External inputs of the predict net that the init net filled (a run may replace them)."""
        return list(self._predictor.filled_input_names)

    @property
    def positional_input_names(self):
        """What run(list) feeds, in order."""
        return list(self._predictor.positional_input_names)

    @property
    def output_names(self):
        return list(self._predictor.output_names)

    def num_instances(self):
        return self._predictor.num_instances()

    @property
    def narrowed_weights(self):
        """The weights converted to ``precision`` in place (empty in float32)."""
        return list(self._predictor.narrowed_weights)

    def executor_notes(self):
        """What the predict net's executor did besides running its operators: with
        ``predict_net.type = "cuda_graph"``, which GPU operators it replays as CUDA graphs (from the
        second run on) and why not the others; empty for the other executors."""
        return self._predictor.executor_notes()
