"""Add/Sub/Mul/Div with numpy broadcasting (no `broadcast` argument) against numpy itself, over shape
pairs that run as Caffe2's (pre, n, post) loops (the second input a run of the output's dims, or one
value; the first with the output's elements; over 256K elements, in chunks over the intra-op pool)
and pairs that need the general index (the first input stretched, or the second's dims interrupted by
a 1), float32 and int32, in place too."""
import numpy as np
import pytest
from caffe2.python import core, workspace

# (A shape, B shape): the first group is the plain-loop form, the second the general index.
PLAIN = [((2, 3, 4, 5), (3, 1, 1)), ((6, 16), (16,)), ((1, 64), (64,)), ((64,), (1, 64)), ((2, 3, 4), ()),
         ((2, 3, 4), (1, 1, 1)), ((2, 3, 4), (3, 4)), ((2, 3, 4), (2, 1, 1)), ((2, 3, 4), (1, 3, 1))]
# Over 256K elements: run in chunks over the intra-op pool (by rows, by b's elements, with post > 1).
LARGE = [((1, 300000), (300000,)), ((600, 512), (512,)), ((2, 8, 20000), (8, 1)), ((3, 100000), ())]
GENERAL = [((3, 1), (1, 4)), ((1, 4), (3, 4)), ((2, 3, 4), (2, 1, 4)), ((5,), (2, 5)), ((2, 1, 4), (3, 1))]
OPS = {"Add": np.add, "Sub": np.subtract, "Mul": np.multiply, "Div": np.divide}


@pytest.mark.parametrize("shapes", PLAIN + LARGE + GENERAL)
@pytest.mark.parametrize("op", sorted(OPS))
@pytest.mark.parametrize("dtype", [np.float32, np.int32])
def test_numpy_broadcast_matches_numpy(shapes, op, dtype):
    rng = np.random.RandomState(len(shapes[0]) * 10 + len(shapes[1]))
    a = np.asarray(rng.rand(*shapes[0]) * 10 + 1).astype(dtype)
    b = np.asarray(rng.rand(*shapes[1]) * 10 + 1).astype(dtype)
    workspace.ResetWorkspace()
    workspace.FeedBlob("a", a)
    workspace.FeedBlob("b", b)
    workspace.RunOperatorOnce(core.CreateOperator(op, ["a", "b"], ["c"]))
    got = workspace.FetchBlob("c")
    want = OPS[op](a, b)
    if dtype == np.int32 and op == "Div":
        want = np.trunc(a.astype(np.float64) / b).astype(np.int32)  # C's integer division
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want.astype(dtype), rtol=1e-6)
    if np.broadcast_shapes(a.shape, b.shape) == a.shape:  # in place: the output is the first input
        workspace.RunOperatorOnce(core.CreateOperator(op, ["a", "b"], ["a"]))
        np.testing.assert_allclose(workspace.FetchBlob("a"), want.astype(dtype), rtol=1e-6)
