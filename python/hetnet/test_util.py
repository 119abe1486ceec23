"""Helpers for unit tests written as Caffe2's (caffe2.python.test_util): TestCase, rand_array, ..."""
import os
import shutil
import tempfile
import unittest

import numpy as np

from hetnet import core, workspace


def rand_array(*dims):
    """A float32 array of the given dims, uniform in [-0.5, 0.5) (a 0-d array for no dims)."""
    return np.array(np.random.rand(*dims) - 0.5).astype(np.float32)


def randBlobFloat32(*dims, **kwargs):
    """A float32 blob of random values; returns its BlobReference."""
    name = kwargs.get("name", "blob_f32")
    workspace.FeedBlob(name, rand_array(*dims))
    return core.BlobReference(name)


def randBlobsFloat32(names, *dims, **kwargs):
    return [randBlobFloat32(*dims, name=name) for name in names]


def numOps(net):
    proto = net.Proto() if hasattr(net, "Proto") else net
    return len(proto.op)


def str_compare(a, b, encoding="utf8"):
    if isinstance(a, bytes):
        a = a.decode(encoding)
    if isinstance(b, bytes):
        b = b.decode(encoding)
    return a == b


def get_default_test_flags():
    return ["caffe2", "--caffe2_log_level=0", "--caffe2_cpu_allocator_do_zero_fill=0",
            "--caffe2_cpu_allocator_do_junk_fill=1"]


def is_flaky_test_mode():
    return os.getenv("CAFFE2_FLAKY_TEST_MODE", "0") == "1"


def caffe2_flaky(test_method):
    """Runs the test only in flaky-test mode (CAFFE2_FLAKY_TEST_MODE=1), as Caffe2."""
    def wrapper(*args, **kwargs):
        if not is_flaky_test_mode():
            raise unittest.SkipTest("Flaky test: set CAFFE2_FLAKY_TEST_MODE=1 to run it")
        return test_method(*args, **kwargs)
    wrapper.__name__ = test_method.__name__
    wrapper.__doc__ = test_method.__doc__
    return wrapper


class TestCase(unittest.TestCase):
    """GlobalInit once per class; a reset workspace before and after every test."""

    @classmethod
    def setUpClass(cls):
        workspace.GlobalInit(get_default_test_flags())

    def setUp(self):
        self.tempdirs = []
        workspace.ResetWorkspace()

    def tearDown(self):
        for d in getattr(self, "tempdirs", []):
            shutil.rmtree(d, ignore_errors=True)
        workspace.ResetWorkspace()

    def make_tempdir(self):
        d = tempfile.mkdtemp()
        self.tempdirs.append(d)
        return d

    def assertApproximatelyEqual(self, x, y, atol=1e-7, rtol=1e-5):
        np.testing.assert_allclose(x, y, atol=atol, rtol=rtol)

    def assertReallyEqual(self, a, b, msg=None):
        """a == b, b == a, not a != b and not b != a (catches one-sided __eq__/__ne__)."""
        self.assertEqual(a, b, msg=msg)
        self.assertEqual(b, a, msg=msg)
        self.assertFalse(a != b, msg=msg)
        self.assertFalse(b != a, msg=msg)
