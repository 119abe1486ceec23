"""``caffe2.distributed.python.StoreHandlerTimeoutError``: a store wait (StoreGet, StoreWait, a
rendezvous) ran past its deadline. It is hetnet.DeadlineExceededError, a RuntimeError, so
``except StoreHandlerTimeoutError`` catches what the C++ stores raise, and it pickles across
multiprocessing queues."""
from hetnet._errors import DeadlineExceededError as StoreHandlerTimeoutError  # noqa: F401

__all__ = ["StoreHandlerTimeoutError"]
