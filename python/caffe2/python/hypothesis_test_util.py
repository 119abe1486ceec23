"""caffe2.python.hypothesis_test_util is hetnet.hypothesis_test_util (this module replaces itself
with it on import; it needs PyPI `hypothesis`)."""
import sys

from hetnet import hypothesis_test_util as _impl

sys.modules[__name__] = _impl
