"""caffe2.python.serialized_test.serialized_test_util for operator tests written against Caffe2.

Caffe2's SerializedTestCase also compared each op's outputs with golden .zip files recorded by
Caffe2 itself and kept in its source tree.  hetnet ships no such recordings (they are Caffe2's data),
so only the live checks run: assertReferenceChecks against the test's numpy reference, device and
gradient checks.  `given` is hypothesis.given; hetnet's profile bounds the number of examples."""
import hypothesis

from hetnet import hypothesis_test_util as hu


def given(*given_args, **given_kwargs):
    """Caffe2's serial.given: the test runs under hypothesis like any @given test."""
    return hypothesis.given(*given_args, **given_kwargs)


class SerializedTestCase(hu.HypothesisTestCase):
    """hu.HypothesisTestCase plus the serialized-check entry point (a no-op: no golden files)."""

    should_serialize = False

    def assertSerializedOperatorChecks(self, inputs, outputs, gradient_operator, op, device_option,
                                       atol=1e-7, rtol=1e-7):
        # Nothing recorded to compare against; the reference check has already run.
        return None
