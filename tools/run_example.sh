#!/usr/bin/env bash
# The main job on a fresh machine: install dependencies, build, and run example nets
# (the seed's mixed CPU/GPU net from Python, and an exported MLP through the `hetnet` command).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_deps.sh
# Paths relative to the checkout, so ccache hits across build dirs and clones.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja
cmake --build "$BUILD" -j"$(nproc)"
export PYTHONPATH="$PWD/$BUILD/python${PYTHONPATH:+:$PYTHONPATH}"
out="$BUILD/example"

echo "== the seed's script, unchanged: the mixed-device NetDef =="
python3 ../shared/examples/seed_mixed_devices.py 2>/dev/null || python3 - <<'PY'
print("(../shared/examples not found beside the repo; skipping the seed script)")
PY
echo "== the mixed net, run (soft placement when there is no GPU) =="
python3 python/examples/mixed_devices_run.py
echo "== an MLP exported from Python, run by the hetnet command =="
python3 python/examples/export_mlp.py "$out"
"$BUILD/bin/hetnet" inspect --placement "$out/predict_net.pb"
"$BUILD/bin/hetnet" run --init "$out/init_net.pb" --predict "$out/predict_net.pb" \
  --input data="$out/data.npy" --output softmax="$out/softmax.npy"
python3 - "$out" <<'PY'
import sys, numpy as np
out = sys.argv[1]
a, b = np.load(out + "/expected_softmax.npy"), np.load(out + "/softmax.npy")
assert a.shape == b.shape and np.array_equal(a, b), "hetnet run differs from Python"
print("hetnet run reproduces the Python predictions exactly:", b.argmax(axis=1).tolist())
PY
