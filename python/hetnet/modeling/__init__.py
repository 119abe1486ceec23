"""caffe2.python.modeling: parameter bookkeeping (parameter_info) and initializers."""
