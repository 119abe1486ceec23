#!/usr/bin/env bash
# The whole test suite on a bare GPU machine that reaches no package registry.
#
#   here (with network):   bash tools/gpu_suite.sh pack    # Debian protobuf, Eigen, Catch2 -> .gpu-deps/
#   on the GPU machine:    bash tools/gpu_suite.sh run     # build with CUDA, run ctest and the GPU benchmarks
#
# .gpu-deps/ is git-ignored; carry it with the call (a few MB). cuDNN, cuBLAS and NCCL are taken from
# the GPU machine's CUDA toolkit or its Python environment's nvidia-* packages, never carried.
# Logs and benchmark tables go to $OUT (or build-gpu/out): 8 files, the most the device tool returns.
set -euo pipefail
cd "$(dirname "$0")/.."
deps="$PWD/.gpu-deps"
pkgs=(libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32 libeigen3-dev catch2)

pack() {
  rm -rf "$deps" && mkdir -p "$deps/debs"
  (cd "$deps/debs" && apt-get download "${pkgs[@]}")
  du -sh "$deps"
}

run() {
  local root="$deps/root" out="${OUT:-$PWD/build-gpu/out}"
  mkdir -p "$root" "$out"
  for f in "$deps"/debs/*.deb; do dpkg -x "$f" "$root"; done
  local lib="$root/usr/lib/x86_64-linux-gnu"
  export PATH="$root/usr/bin:$PATH" LD_LIBRARY_PATH="$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local py=python3 cudnn_lib="" nv_libs=""
  nv_libs=$($py - <<'PY' || true
import glob, os
try:
    import nvidia
    for base in nvidia.__path__:
        for d in sorted(glob.glob(os.path.join(base, "*", "lib"))):
            print(d)
except ImportError:
    pass
PY
)
  for d in $nv_libs; do
    export LD_LIBRARY_PATH="$d:$LD_LIBRARY_PATH"
    [ -z "$cudnn_lib" ] && cudnn_lib=$(ls "$d"/libcudnn.so* 2>/dev/null | head -1 || true)
  done
  nvidia-smi -L | tee "$out/device.txt" || true
  local gen=Ninja
  command -v ninja >/dev/null || gen="Unix Makefiles"
  cmake -S . -B build-gpu -G "$gen" -DCMAKE_BUILD_TYPE=Release \
    -DProtobuf_PROTOC_EXECUTABLE="$root/usr/bin/protoc" -DProtobuf_INCLUDE_DIR="$root/usr/include" \
    -DProtobuf_LIBRARY="$lib/libprotobuf.so" -DEigen3_DIR="$root/usr/share/eigen3/cmake" \
    -DCatch2_DIR="$root/usr/lib/cmake/Catch2" ${cudnn_lib:+-DCUDNN_LIBRARY="$cudnn_lib" -DCUDNN_INCLUDE_DIR="$(dirname "$(dirname "$cudnn_lib")")/include"} \
    -DPython3_EXECUTABLE="$(command -v $py)" 2>&1 | tee "$out/configure.log"
  cmake --build build-gpu -j"$(nproc)" 2>&1 | tail -50 | tee "$out/build.log"
  local rc=0
  (cd build-gpu && ctest --output-on-failure -j4 2>&1) | tee "$out/ctest.log" || rc=1
  # The GPU tests again, verbosely: every [gpu] case with its assertions (77: no GPU, skipped).
  local code=0
  build-gpu/bin/hetnet_tests --require-gpu "[gpu]" -s -r compact > build-gpu/gpu_tests_full.log 2>&1 || code=$?
  tail -200 build-gpu/gpu_tests_full.log > "$out/gpu_tests.log"
  if [ "$code" -eq 77 ]; then echo "GPU tests skipped: no CUDA device" | tee -a "$out/gpu_tests.log"
  elif [ "$code" -ne 0 ]; then rc=1; fi
  for b in bench_copy bench_fc bench_dispatch; do
    [ -x "build-gpu/bin/$b" ] && "build-gpu/bin/$b" 2>&1 | tee "$out/$b.md"
  done
  return $rc
}

case "${1:-}" in
  pack) pack ;;
  run) run ;;
  *) echo "usage: $0 pack|run" >&2; exit 2 ;;
esac
