#!/usr/bin/env bash
# Every test on a fresh machine: install dependencies, build (CUDA too when nvcc is found), and run
# the C++ (Catch2) and Python (pytest) suites through ctest. GPU tests report Skipped without a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup_deps.sh
# Paths relative to the checkout, so ccache hits across build dirs and clones.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}"
BUILD=${BUILD_DIR:-build}
cmake -S . -B "$BUILD" -G Ninja
cmake --build "$BUILD" -j"$(nproc)"
cd "$BUILD"
ctest --output-on-failure -j"$(nproc)"
