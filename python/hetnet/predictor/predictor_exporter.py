"""caffe2.python.predictor.predictor_exporter: PredictorExportMeta is provided; save_to_db and
load_from_db are not (see NotImplementedError's message and docs/caffe2_differences.md)."""
import collections

from hetnet import core
from hetnet.proto import caffe2_pb2

_NOT_IMPLEMENTED = (
    "predictor_exporter.{}: hetnet cannot store a predictor in a DB: Caffe2 kept the nets in a "
    "MetaNetDef (caffe2/proto/metanet.proto) blob beside the parameters, and hetnet has no "
    "MetaNetDef message. Use predictor.mobile_exporter.Export(workspace, net, params) and write "
    "init_net/predict_net as .pb files (workspace.Predictor and `hetnet run` load them).")


class PredictorExportMeta(collections.namedtuple(
        "PredictorExportMeta",
        "predict_net, parameters, inputs, outputs, shapes, name, extra_init_net, global_init_net, "
        "net_type, num_workers, trainer_prefix")):
    """What a predictor needs, as Caffe2's: the predict net, its parameters, input and output blob
    names, optional shapes, and init nets."""

    def __new__(cls, predict_net, parameters, inputs, outputs, shapes=None, name="",
                extra_init_net=None, global_init_net=None, net_type=None, num_workers=None,
                trainer_prefix=None):
        inputs = [str(i) for i in inputs]
        outputs = [str(o) for o in outputs]
        assert len(set(inputs)) == len(inputs), "All inputs to the predictor should be unique"
        parameters = [str(p) for p in parameters]
        assert set(parameters).isdisjoint(inputs), "Parameters and inputs are required to be disjoint"
        assert len(set(outputs)) == len(outputs), "All outputs of the predictor should be unique"
        if isinstance(predict_net, core.Net):
            predict_net = predict_net.Proto()
        assert isinstance(predict_net, caffe2_pb2.NetDef)
        shapes = shapes or {}
        if net_type is not None:
            predict_net.type = net_type
        if num_workers is not None:
            predict_net.num_workers = num_workers
        return super(PredictorExportMeta, cls).__new__(
            cls, predict_net, parameters, inputs, outputs, shapes, name, extra_init_net,
            global_init_net, net_type, num_workers, trainer_prefix)

    def inputs_name(self):
        return "inputs"

    def outputs_name(self):
        return "outputs"

    def parameters_name(self):
        return "parameters"

    def shapes_name(self):
        return "shapes"

    def predict_init_net_name(self):
        return "predict_init_net"

    def predict_net_name(self):
        return "predict_net"

    def train_init_plan_name(self):
        return "train_init_plan"


def save_to_db(db_type, db_destination, predictor_export_meta, use_ideep=False, *args, **kwargs):
    raise NotImplementedError(_NOT_IMPLEMENTED.format("save_to_db"))


def load_from_db(filename, db_type, device_option=None, *args, **kwargs):
    raise NotImplementedError(_NOT_IMPLEMENTED.format("load_from_db"))


def prepare_prediction_net(filename, db_type, device_option=None):
    raise NotImplementedError(_NOT_IMPLEMENTED.format("prepare_prediction_net"))
