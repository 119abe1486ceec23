"""Issue 13 item 3: the argument forms Caffe2's writers (caffe_translator, brew, the ONNX-Caffe2
backend, core.CreateOperator) put on operators are accepted and change nothing that Caffe2 did not
change: engine names hetnet lacks (CUDNN on a CPU op, NNPACK, MKLDNN), cuDNN tuning arguments,
explicit defaults (order NCHW, is_test, broadcast 0, axis 1, legacy_pad NOTSET), each run against
the same op without them. Conv and pooling forms (kernel/kernels/_h_w, pads, legacy padding) are
covered by tests/cpp/test_conv_pool_arg_forms.cc."""
import numpy as np
import pytest

from caffe2.python import core, workspace

R = np.random.RandomState(7)
X4 = R.rand(2, 4, 6, 5).astype(np.float32) - 0.5
X2 = R.rand(3, 8).astype(np.float32) - 0.5
W_FC = R.rand(5, 8).astype(np.float32) - 0.5
B_FC = R.rand(5).astype(np.float32)
W_CONV = R.rand(3, 4, 3, 3).astype(np.float32) - 0.5
B_CONV = R.rand(3).astype(np.float32)
SCALE = R.rand(4).astype(np.float32) + 0.5
BIAS = R.rand(4).astype(np.float32)
MEAN = R.rand(4).astype(np.float32)
VAR = R.rand(4).astype(np.float32) + 0.5

# Arguments brew and the translator write that tune engines hetnet does not have.
CUDNN_TUNING = dict(engine="CUDNN", use_cudnn=1, cudnn_exhaustive_search=0, ws_nbytes_limit=64 * 1024 * 1024,
                    exhaustive_search=0, shared_buffer=0)

# (op type, inputs {name: array}, base kwargs, [extra kwargs a Caffe2 writer adds])
CASES = [
    ("Relu", {"X": X4}, {}, [dict(order="NCHW"), CUDNN_TUNING, dict(engine="MKLDNN")]),
    ("Sigmoid", {"X": X4}, {}, [CUDNN_TUNING]),
    ("Tanh", {"X": X4}, {}, [CUDNN_TUNING]),
    ("Softmax", {"X": X2}, {}, [dict(axis=1), CUDNN_TUNING]),
    ("LeakyRelu", {"X": X4}, {"alpha": 0.1}, [dict(order="NCHW")]),
    ("FC", {"X": X2, "W": W_FC, "b": B_FC}, {}, [dict(axis=1, axis_w=1), CUDNN_TUNING, dict(engine="NNPACK"),
                                                   dict(float16_compute=0)]),
    ("Conv", {"X": X4, "W": W_CONV, "b": B_CONV}, {"kernel": 3, "pad": 1},
     [CUDNN_TUNING, dict(order="NCHW", legacy_pad=0), dict(engine="NNPACK"), dict(dilation=1, group=1)]),
    ("MaxPool", {"X": X4}, {"kernel": 2, "stride": 2}, [CUDNN_TUNING, dict(order="NCHW", legacy_pad=0)]),
    ("AveragePool", {"X": X4}, {"kernel": 3, "pad": 1}, [CUDNN_TUNING, dict(order="NCHW", count_include_pad=0)]),
    ("SpatialBN", {"X": X4, "scale": SCALE, "bias": BIAS, "mean": MEAN, "var": VAR}, {"is_test": 1},
     [dict(order="NCHW", epsilon=1e-5, momentum=0.9), CUDNN_TUNING]),
    ("LRN", {"X": X4}, {"size": 3, "alpha": 1e-4, "beta": 0.75, "bias": 1.0}, [dict(order="NCHW"), CUDNN_TUNING]),
    ("Dropout", {"X": X4}, {"is_test": 1}, [dict(ratio=0.5), CUDNN_TUNING]),
    ("Concat", {"A": X4, "B": X4}, {}, [dict(order="NCHW"), dict(axis=1), dict(add_axis=0)]),
    ("Sum", {"A": X4, "B": X4}, {}, [CUDNN_TUNING]),
    ("Add", {"A": X4, "B": X4}, {}, [dict(broadcast=0), CUDNN_TUNING]),
    ("Mul", {"A": X4, "B": X4}, {}, [dict(broadcast=0)]),
    ("Transpose", {"X": X4}, {"axes": [0, 2, 3, 1]}, [CUDNN_TUNING]),
    ("Flatten", {"X": X4}, {}, [dict(axis=1)]),
    ("Copy", {"X": X4}, {}, [CUDNN_TUNING]),
]


def _run(op_type, inputs, kwargs):
    workspace.ResetWorkspace()
    for name, value in inputs.items():
        workspace.FeedBlob(name, value)
    outputs = ["Y"] + {"Dropout": ["mask"], "Concat": ["split_info"]}.get(op_type, [])
    workspace.RunOperatorOnce(core.CreateOperator(op_type, list(inputs), outputs, **kwargs))
    return workspace.FetchBlob("Y")


@pytest.mark.parametrize("case", range(len(CASES)), ids=[c[0] for c in CASES])
def test_writer_argument_forms_change_nothing(case):
    op_type, inputs, base, forms = CASES[case]
    want = _run(op_type, inputs, base)
    for extra in forms:
        got = _run(op_type, inputs, dict(base, **extra))
        np.testing.assert_array_equal(got, want, err_msg="%s with %s" % (op_type, extra))


def test_cudnn_engine_on_a_cpu_conv_runs_the_cpu_default():
    # brew writes engine CUDNN on every Conv; on CPU Caffe2 ran its CPU kernel, hetnet its CPU
    # default order (DNNL when built in), so order NHWC (which only DNNL runs on CPU) works too.
    from hetnet import _C
    if "DNNL" not in _C.operator_engines("Conv", 0):
        pytest.skip("no DNNL Conv in this build")
    x = np.ascontiguousarray(X4.transpose(0, 2, 3, 1))
    w = np.ascontiguousarray(W_CONV.transpose(0, 2, 3, 1))
    got = _run("Conv", {"X": x, "W": w, "b": B_CONV}, dict(kernel=3, pad=1, order="NHWC", **CUDNN_TUNING))
    want = _run("Conv", {"X": X4, "W": W_CONV, "b": B_CONV}, dict(kernel=3, pad=1))
    np.testing.assert_allclose(got.transpose(0, 3, 1, 2), want, rtol=1e-5, atol=1e-5)
