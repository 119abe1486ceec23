#!/usr/bin/env bash
# The side-by-side benchmarks in one command (issue 16 item 6): installs PyTorch and ONNX Runtime
# from PyPI (PyTorch with --no-deps into build/peers-site, plus the three CUDA wheels its import
# needs that the CUDA toolkit lacks; CPU use needs nothing else), then runs hetnet against PyTorch
# eager and against ONNX Runtime at 1 thread and at all threads, and on the GPU when there is one.
#   bash benchmarks/peers/run.sh [--quick]      (after the README's build; prints Markdown tables)
set -euo pipefail
cd "$(dirname "$0")/../.."
site=${PEERS_SITE:-$PWD/build/peers-site}
if [ ! -d "$site/torch" ]; then
  python3 -m pip install -q --no-deps --target "$site" torch==2.11.0 nvidia-cufile==1.20.0.107 \
    nvidia-cusparselt-cu13==0.8.0 nvidia-nvshmem-cu13==3.4.5
fi
python3 -c 'import onnx, onnxruntime' 2>/dev/null || python3 -m pip install -q onnx==1.23.1 onnxruntime==1.30.0
export PYTHONPATH="$PWD/build/python:$site${PYTHONPATH:+:$PYTHONPATH}"
export LD_LIBRARY_PATH="$site/nvidia/cu13/lib:$site/nvidia/cusparselt/lib:$site/nvidia/nvshmem/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
quick=()
[ "${1:-}" = "--quick" ] && quick=(--models mlp,lenet --batches 1 --rounds 2 --seconds 0.2)
all=$(nproc)
for threads in 1 "$all"; do
  python3 benchmarks/peers/vs_pytorch.py --device cpu --threads "$threads" "${quick[@]}"
  if [ ${#quick[@]} -eq 0 ]; then
    python3 benchmarks/onnx_vs_onnxruntime.py --threads "$threads"
  else
    python3 benchmarks/onnx_vs_onnxruntime.py --threads "$threads" --models mlp,lenet --batches 1 --seconds 0.5
  fi
done
if PYTHONPATH="$PYTHONPATH" python3 -c 'from hetnet import workspace; raise SystemExit(workspace.NumCudaDevices() == 0)'; then
  python3 benchmarks/peers/vs_pytorch.py --device cuda "${quick[@]}"
fi
