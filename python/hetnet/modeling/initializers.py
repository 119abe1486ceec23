"""Parameter initializers, as in caffe2.python.modeling.initializers (hetnet keeps them in
model_helper; these are the same objects)."""
from hetnet.model_helper import Initializer, ExternalInitializer, update_initializer  # noqa: F401
