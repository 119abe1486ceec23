"""Caffe2's ``caffe2.distributed`` package: the store handler ops are built into hetnet (no
``dyndep`` library to load); ``caffe2.distributed.python`` holds the timeout exception."""
