"""caffe2.python: the same module objects as hetnet's (aliased in sys.modules).

``hypothesis_test_util`` needs PyPI ``hypothesis``; it is aliased by its own small module here
(python/caffe2/python/hypothesis_test_util.py) so that importing caffe2.python does not."""
import sys

from hetnet import workspace, core, model_helper, brew, scope, net_drawer
from hetnet import optimizer, checkpoint, cnn, test_util, gradient_checker, device_checker
from hetnet import modeling, predictor
from hetnet.modeling import parameter_info, initializers
from hetnet.predictor import mobile_exporter, predictor_exporter

_ALIASES = (("workspace", workspace), ("core", core), ("model_helper", model_helper),
            ("brew", brew), ("scope", scope), ("net_drawer", net_drawer),
            ("optimizer", optimizer), ("checkpoint", checkpoint), ("cnn", cnn),
            ("test_util", test_util), ("gradient_checker", gradient_checker),
            ("device_checker", device_checker),
            ("modeling", modeling), ("modeling.parameter_info", parameter_info),
            ("modeling.initializers", initializers),
            ("predictor", predictor), ("predictor.mobile_exporter", mobile_exporter),
            ("predictor.predictor_exporter", predictor_exporter))
for _name, _module in _ALIASES:
    sys.modules[__name__ + "." + _name] = _module

__all__ = ["workspace", "core", "model_helper", "brew", "scope", "net_drawer", "optimizer", "checkpoint",
           "cnn", "test_util", "gradient_checker", "device_checker", "modeling", "predictor"]
