#!/usr/bin/env bash
# Installs everything hetnet needs to build and test on a fresh Debian machine (idempotent).
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
for pkg in cmake ninja-build g++ ccache protobuf-compiler libprotobuf-dev libeigen3-dev catch2 graphviz \
    dataset-fashion-mnist \
    libboost1.81-dev libgrpc++-dev protobuf-compiler-grpc rapidjson-dev prometheus-cpp-dev zlib1g-dev \
    clang libclang-rt-14-dev wrk libonnx-dev libdnnl-dev libgloo-dev redis-server; do
  # dataset-fashion-mnist: IDX files for python/examples/train_fashion_mnist.py; libboost..zlib1g-dev:
  # `hetnet serve`; clang + libclang-rt-14-dev: tools/fuzz.sh (libFuzzer) and tools/sanitize.sh;
  # wrk: the serving soak (tests/python/serving/test_soak.py, benchmarks/serving); libonnx-dev: the
  # ONNX importer/exporter (onnx/, the ONNX 1.12 proto); libdnnl-dev: oneDNN, the CPU Conv/FC engine DNNL;
  # libgloo-dev: Gloo, the engine GLOO of the communicator ops (issue 14); redis-server: the
  # RedisStoreHandlerCreate tests
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
PY=${PYTHON:-python3}
# tritonclient is the real Triton client the serving tests drive the server with (its gRPC side
# needs protobuf >= 6.30, < 7; caffe2_pb2 from protoc 3.21 runs on it; grpcio-health-checking >= 1.80
# would pull protobuf 7). onnx and onnxruntime: ONNX model tests and the reference outputs.
"$PY" - <<'PYEOF' || "$PY" -m pip install -q "hypothesis" "numpy" "pybind11>=2.10" "pytest" "protobuf>=6.30,<7" \
    "tritonclient[http,grpc]==2.73.0" "grpcio-health-checking>=1.70,<1.80" "aiohttp" \
    "onnx==1.23.1" "onnxruntime==1.30.0"
import numpy, pybind11, pytest, google.protobuf, tritonclient.http, tritonclient.grpc, grpc_health.v1, aiohttp
import hypothesis
import onnx, onnxruntime
assert onnx.__version__ == "1.23.1" and onnxruntime.__version__ == "1.30.0"
assert tuple(int(x) for x in google.protobuf.__version__.split(".")[:2]) >= (6, 30)
PYEOF
