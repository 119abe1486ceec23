"""Caffe2's ``gloo.python`` module name (caffe2/contrib/gloo/py_export.cc), for Caffe2 scripts and
tests that catch ``gloo.python.IoError``. Not the unrelated PyPI project named ``gloo``: installing
hetnet's Python packages shadows it (docs/distributed.md)."""
