"""caffe2.python: the same module objects as hetnet's (aliased in sys.modules)."""
import sys

from hetnet import workspace, core, model_helper, brew, scope, net_drawer
from hetnet import optimizer, checkpoint

for _name, _module in (("workspace", workspace), ("core", core), ("model_helper", model_helper),
                       ("brew", brew), ("scope", scope), ("net_drawer", net_drawer),
                       ("optimizer", optimizer), ("checkpoint", checkpoint)):
    sys.modules[__name__ + "." + _name] = _module

__all__ = ["workspace", "core", "model_helper", "brew", "scope", "net_drawer", "optimizer", "checkpoint"]
