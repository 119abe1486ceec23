"""caffe2.python.serialized_test: the operator-test base class Caffe2's tests import."""
