#!/usr/bin/env bash
# Reproduces the serving benchmarks of benchmarks/RESULTS.md ("Serving" section):
#   1. hetnet serve vs the KServe Python model server + onnxruntime, same MLP, wrk at concurrency 1/16/64
#   2. hetnet's overhead over the in-process Predictor (batch 1, p50)
#   3. dynamic batching vs none (instance_group count 1 and 2) at concurrency 64
#   4. 1-2 again on LeNet (Conv/MaxPool/FC; LENET=0 skips it)
#   5. a soak at concurrency 64 (RSS sampled every second)
# Usage (from anywhere; needs build/bin/hetnet and build/python from `cmake --build build`):
#   benchmarks/serving/run_all.sh                  # 10 s per point, 3 runs each, 60 s soak
#   DURATION=5 REPEATS=1 SOAK_SECONDS=600 benchmarks/serving/run_all.sh
# Environment: KSERVE_VENV (default /tmp/hetnet-kserve-venv: a venv so kserve's dependencies never
# touch the system's numpy/protobuf), OUT (results folder, default /tmp/hetnet-serving-results).
# All traffic goes to 127.0.0.1; every step is bounded in time. Waits (bounded) while a build runs.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
VENV=${KSERVE_VENV:-/tmp/hetnet-kserve-venv}
OUT=${OUT:-/tmp/hetnet-serving-results}
DURATION=${DURATION:-10}
REPEATS=${REPEATS:-3}
SOAK_SECONDS=${SOAK_SECONDS:-60}
mkdir -p "$OUT"

[ -x build/bin/hetnet ] || { echo "run_all: build/bin/hetnet missing: cmake --build build --target hetnet_cli" >&2; exit 1; }
if ! command -v wrk >/dev/null; then
  if [ "$(id -u)" -eq 0 ]; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk || { apt-get update -qq && apt-get install -y -qq wrk; }
  else
    echo "run_all: wrk missing: sudo apt-get install wrk" >&2; exit 1
  fi
fi
if ! "$VENV/bin/python" -c "import kserve, onnx, onnxruntime, aiohttp" 2>/dev/null; then
  python3 -m venv "$VENV"
  "$VENV/bin/pip" install -q "kserve==0.21.0" "onnxruntime==1.32.0" "onnx==1.23.2" numpy aiohttp
fi
python3 -c "import aiohttp" 2>/dev/null || { echo "run_all: the soak needs aiohttp (pip install aiohttp)" >&2; exit 1; }

export PYTHONPATH="$ROOT/build/python${PYTHONPATH:+:$PYTHONPATH}"
echo "== hetnet serve vs KServe+onnxruntime, overhead, dynamic batching ($DURATION s x $REPEATS per point)"
timeout 3600 python3 benchmarks/serving/bench_serving.py --kserve-python "$VENV/bin/python" \
  --duration "$DURATION" --repeats "$REPEATS" --out "$OUT/bench.json" | tee "$OUT/bench.md"
if [ "${LENET:-1}" = 1 ]; then
  echo "== the same comparison on LeNet (Conv/MaxPool/FC)"
  timeout 3600 python3 benchmarks/serving/bench_serving.py --model lenet --parts compare,overhead \
    --kserve-python "$VENV/bin/python" --duration "$DURATION" --repeats "$REPEATS" --out "$OUT/bench-lenet.json" \
    | tee "$OUT/bench-lenet.md"
fi
echo "== soak: $SOAK_SECONDS s at concurrency 64"
timeout $((SOAK_SECONDS + 300)) python3 benchmarks/serving/soak.py --seconds "$SOAK_SECONDS" --concurrency 64 \
  --json "$OUT/soak.json" | tee "$OUT/soak.txt"
echo "results in $OUT"
