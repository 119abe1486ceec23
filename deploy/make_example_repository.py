#!/usr/bin/env python3
"""Writes a small Triton-style model repository for trying `hetnet serve`:

    OUT_DIR/mlp/config.pbtxt, OUT_DIR/mlp/1/{model,init_model}.netdef      FP32 [4] -> FP32 [3]
    OUT_DIR/simple/config.pbtxt, OUT_DIR/simple/1/model.netdef             Triton's "simple" (INT32 add/sub)

    python3 deploy/make_example_repository.py /tmp/models
    build/bin/hetnet serve --model-repository /tmp/models
    curl -s localhost:8000/v2/models/mlp/infer -d '{"inputs":[{"name":"data","shape":[1,4],"datatype":"FP32","data":[1,2,3,4]}]}'

The "mlp" is FC(4->16)/Relu/FC(16->3)/Softmax with fixed random weights (seed 0); its answer for
[1,2,3,4] is printed at the end. The nets are built with tests/python/serving/serving_util.py, which
needs the hetnet Python package (build/python of a build tree is used when it is not installed).
"""
import argparse
import os
import sys

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(REPO_ROOT, "tests", "python", "serving"))

MLP_SIZES = (4, 16, 3)
MLP_CONFIG = """name: "mlp"
platform: "caffe2_netdef"
max_batch_size: 32
input [ { name: "data" data_type: TYPE_FP32 dims: [ 4 ] } ]
output [ { name: "prob" data_type: TYPE_FP32 dims: [ 3 ] } ]
instance_group [ { kind: KIND_CPU count: 1 } ]
dynamic_batching { max_queue_delay_microseconds: 100 }
"""


def _import_hetnet():
    try:
        import hetnet  # noqa: F401
        return
    except ImportError:
        pass
    build_python = os.environ.get("HETNET_PYTHONPATH", os.path.join(REPO_ROOT, "build", "python"))
    sys.path.insert(0, build_python)
    try:
        import hetnet  # noqa: F401,F811
    except ImportError as e:
        sys.exit("make_example_repository: cannot import hetnet (%s); build the Python extension "
                 "(cmake --build build) or set PYTHONPATH/HETNET_PYTHONPATH to <build>/python" % e)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir", help="repository directory to create (existing models there are overwritten)")
    args = ap.parse_args()
    _import_hetnet()
    import numpy as np
    import serving_util

    os.makedirs(args.out_dir, exist_ok=True)
    weights = serving_util.write_mlp_model(args.out_dir, "mlp", sizes=MLP_SIZES, config=MLP_CONFIG, seed=0)
    serving_util.write_simple_model(args.out_dir, "simple")
    x = np.array([[1, 2, 3, 4]], np.float32)
    prob = serving_util.mlp_reference(x, weights)[0]
    print("wrote %s/{mlp,simple}" % args.out_dir)
    print("expected mlp output for data [1,2,3,4]: [%s]" % ", ".join("%.6f" % p for p in prob))


if __name__ == "__main__":
    main()
