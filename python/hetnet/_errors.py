"""Python exceptions for errors raised by the C++ runtime (hetnet::Error).

Every C++ error becomes a subclass of :class:`HetnetError` (itself a ``RuntimeError``) chosen by the
error's kind. The message is the full C++ text: the cause, then context lines naming the net, the
operator index and type, the blob, and the Python line that created the operator.
"""


class HetnetError(RuntimeError):
    """An error from the hetnet runtime. ``kind`` names its category."""

    kind = "runtime"

    def __init__(self, message, cause=None, context=None):
        super().__init__(message)
        self.message = message
        self.cause = cause if cause is not None else message  # the message without context lines
        self.context = list(context or [])  # innermost first: operator, then net


class RunError(HetnetError):
    """Generic failure while running."""

    kind = "runtime"


class InvalidArgumentError(HetnetError):
    """Bad shapes, dtypes, argument values or malformed input."""

    kind = "invalid_argument"


class NotFoundError(HetnetError):
    """A missing blob, net, operator type or file."""

    kind = "not_found"


class UnsupportedError(HetnetError):
    """A device or feature this build or machine does not have."""

    kind = "unsupported"


class OutOfMemoryError(HetnetError):
    """An allocator could not satisfy a request."""

    kind = "out_of_memory"


class DeadlineExceededError(HetnetError):
    """A wait ran past its deadline: a store key never set, a rendezvous that did not complete.

    ``caffe2.distributed.python.StoreHandlerTimeoutError`` is this class."""

    kind = "timeout"


class IoError(HetnetError):
    """A peer or transport failed: a connection closed, a peer died mid-collective.

    ``gloo.python.IoError`` is this class."""

    kind = "io"


for _cls in (HetnetError, RunError, InvalidArgumentError, NotFoundError, UnsupportedError,
             OutOfMemoryError, DeadlineExceededError, IoError):
    _cls.__module__ = "hetnet"

_BY_KIND = {cls.kind: cls for cls in
            (RunError, InvalidArgumentError, NotFoundError, UnsupportedError, OutOfMemoryError,
             DeadlineExceededError, IoError)}


def error_class_for_kind(kind):
    return _BY_KIND.get(kind, HetnetError)
