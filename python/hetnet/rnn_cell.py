"""caffe2.python.rnn_cell, importable so that scripts which import it (as Caffe2's
data_parallel_model users often did) load; hetnet has no RecurrentNetwork / LSTM operators, so
building a recurrent cell raises hetnet.UnsupportedError naming what is missing."""
from hetnet._errors import UnsupportedError

_MESSAGE = ("caffe2.python.rnn_cell.{}: hetnet has no recurrent-network support (no RecurrentNetwork, "
            "LSTMUnit or GRUUnit operators); see docs/distributed.md")


def _unsupported(name):
    def fail(*args, **kwargs):
        raise UnsupportedError(_MESSAGE.format(name))
    fail.__name__ = name
    return fail


class RNNCell(object):
    """Base of Caffe2's cells; constructing any cell raises UnsupportedError."""

    def __init__(self, *args, **kwargs):
        raise UnsupportedError(_MESSAGE.format(type(self).__name__))


class LSTMCell(RNNCell):
    pass


class MILSTMCell(LSTMCell):
    pass


class GRUCell(RNNCell):
    pass


class MultiRNNCell(RNNCell):
    pass


class AttentionCell(RNNCell):
    pass


class DropoutCell(RNNCell):
    pass


class LayerNormLSTMCell(LSTMCell):
    pass


class LayerNormMILSTMCell(MILSTMCell):
    pass


LSTM = _unsupported("LSTM")
MILSTM = _unsupported("MILSTM")
GRU = _unsupported("GRU")
LayerNormLSTM = _unsupported("LayerNormLSTM")
LayerNormMILSTM = _unsupported("LayerNormMILSTM")
cudnn_LSTM = _unsupported("cudnn_LSTM")
LSTMWithAttention = _unsupported("LSTMWithAttention")
MILSTMWithAttention = _unsupported("MILSTMWithAttention")
GetLSTMParamNames = _unsupported("GetLSTMParamNames")
InitFromLSTMParams = _unsupported("InitFromLSTMParams")
