"""``gloo.python.IoError``: a peer or transport failed inside a communicator op (hetnet.IoError)."""
from hetnet._errors import IoError  # noqa: F401
