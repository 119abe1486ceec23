"""workspace.Predictor: serves a model from an init net and a predict net (hetnet::Predictor).

The weights live in a workspace of the predictor's own (not the current one); ``run`` is
thread-safe and copies its inputs in and its outputs out.
"""
from hetnet import _C
from hetnet._net import NetProtoForRuntime


class Predictor(object):
    def __init__(self, init_net, predict_net, outputs_to_cpu=True):
        self._predictor = _C.Predictor(NetProtoForRuntime(init_net).SerializeToString(),
                                       NetProtoForRuntime(predict_net).SerializeToString(),
                                       bool(outputs_to_cpu))

    def run(self, inputs):
        """inputs: a list of arrays in input_names order, or {name: array}; returns a list of
        arrays in output_names order."""
        from hetnet.workspace import _AsFeedableArray
        if isinstance(inputs, dict):
            inputs = {str(k): _AsFeedableArray(v) for k, v in inputs.items()}
        else:
            inputs = [_AsFeedableArray(v) for v in inputs]
        return self._predictor.run(inputs)

    @property
    def input_names(self):
        return list(self._predictor.input_names)

    @property
    def output_names(self):
        return list(self._predictor.output_names)

    def num_instances(self):
        return self._predictor.num_instances()
