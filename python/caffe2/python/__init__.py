"""caffe2.python: the same module objects as hetnet's (aliased in sys.modules).

``hypothesis_test_util`` needs PyPI ``hypothesis``; it is aliased by its own small module here
(python/caffe2/python/hypothesis_test_util.py) so that importing caffe2.python does not."""
import importlib
import importlib.abc
import importlib.util
import sys
import types

from hetnet import workspace, core, model_helper, brew, scope, net_drawer
from hetnet import optimizer, checkpoint, cnn, test_util, gradient_checker, device_checker
from hetnet import modeling, predictor, schema, task, control_ops_util
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
            ("predictor.predictor_exporter", predictor_exporter), ("schema", schema), ("task", task),
            ("control_ops_util", control_ops_util))
for _name, _module in _ALIASES:
    sys.modules[__name__ + "." + _name] = _module

__all__ = ["workspace", "core", "model_helper", "brew", "scope", "net_drawer", "optimizer", "checkpoint",
           "cnn", "test_util", "gradient_checker", "device_checker", "modeling", "predictor", "schema", "task"]


# Imported on first use, as their Caffe2 counterparts (data_parallel_model prints dyndep's
# "Ignoring ..." lines when imported): caffe2.python.X is then the module object hetnet.X.
_LAZY_ALIASES = {"data_parallel_model": "hetnet.data_parallel_model", "dyndep": "hetnet.dyndep",
                 "rnn_cell": "hetnet.rnn_cell"}


class _LazyAliasFinder(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, fullname, path=None, target=None):
        prefix = __name__ + "."
        if fullname.startswith(prefix) and fullname[len(prefix):] in _LAZY_ALIASES:
            return importlib.util.spec_from_loader(fullname, self)
        return None

    def create_module(self, spec):
        return types.ModuleType(spec.name)  # replaced by the hetnet module in exec_module

    def exec_module(self, module):
        sys.modules[module.__name__] = importlib.import_module(_LAZY_ALIASES[module.__name__.rsplit(".", 1)[1]])


if not any(isinstance(f, _LazyAliasFinder) for f in sys.meta_path):
    sys.meta_path.insert(0, _LazyAliasFinder())


def __getattr__(name):
    if name in _LAZY_ALIASES:
        return importlib.import_module(__name__ + "." + name)
    raise AttributeError("module {!r} has no attribute {!r}".format(__name__, name))
