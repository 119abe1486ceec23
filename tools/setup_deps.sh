#!/usr/bin/env bash
# Installs everything hetnet needs to build and test on a fresh Debian machine (idempotent).
set -euo pipefail
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
need=()
for pkg in cmake ninja-build g++ ccache protobuf-compiler libprotobuf-dev libeigen3-dev catch2 graphviz \
    dataset-fashion-mnist; do  # Fashion-MNIST IDX files for python/examples/train_fashion_mnist.py
  dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
done
if [ ${#need[@]} -gt 0 ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
fi
PY=${PYTHON:-python3}
"$PY" - <<'PYEOF' || "$PY" -m pip install -q "numpy" "pybind11>=2.10" "pytest" "protobuf>=4.21,<5"
import numpy, pybind11, pytest, google.protobuf
PYEOF
