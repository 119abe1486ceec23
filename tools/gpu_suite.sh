#!/usr/bin/env bash
# The whole test suite on a bare GPU machine that reaches no package registry.
#
#   here (with network):   bash tools/gpu_suite.sh pack    # Debian protobuf/Eigen/Catch2/Gloo/ONNX debs,
#                                                          # Fashion-MNIST, ../shared, this machine's
#                                                          # build of `hetnet serve` with its libraries
#                                                          # and the Triton client wheels -> .gpu-deps/
#                                                          # (build first; ~60 MB: the call's limit is
#                                                          # 64 MiB with the tree, so leave out what a
#                                                          # run does not need, e.g. fashion-mnist/)
#   here, optionally:      bash tools/gpu_suite.sh src     # HEAD as committed -> .gpu-src/ (git-ignored),
#                                                          # when uncommitted work must not go along;
#                                                          # there: cd .gpu-src && bash tools/gpu_suite.sh run
#                                                          # (carry .gpu-deps and .gpu-src; the device
#                                                          # machine's .git is a stale copy: never
#                                                          # `git checkout` there)
#   on the GPU machine:    bash tools/gpu_suite.sh run [STEP...]
#
# STEP is any of: gpu (the [gpu] Catch2 cases, verbose, with the harness's CUDA column), gpu_prebuilt
# (the same cases from this machine's build, packed by `pack`; HETNET_GPU_PREBUILT=1 runs them during
# the build there; HETNET_GPU_TARGETS limits that build), sanitize
# (compute-sanitizer memcheck over each [gpu] case, HETNET_SANITIZE_SECONDS in all), ctest (every
# ctest entry), bench (the GPU benchmarks), train (Fashion-MNIST LeNet with --gpu), serving (the GPU
# serving tests against this machine's `hetnet serve`, packed with its libraries), extra (the command
# in $HETNET_GPU_EXTRA, in the same environment: for a diagnosis); default: gpu ctest serving bench train. .gpu-deps/ is git-ignored; carry it with the call. cuDNN, cuBLAS and NCCL come
# from the GPU machine's Python nvidia-* packages, never carried. Results go to $OUT (or
# build-gpu/out): summary.txt (one line per step: seconds and exit code), and logs/ (every log, written
# as the step runs, so a run cut off at its time limit still returns what it printed).
set -uo pipefail
cd "$(dirname "$0")/.."
deps="$PWD/.gpu-deps"
pkgs=(libprotobuf-dev libprotobuf32 libprotobuf-lite32 protobuf-compiler libprotoc32 libeigen3-dev catch2 libonnx-dev libonnx1 libonnxifi
      libgloo-dev libgloo0 libhiredis-dev libhiredis0.14 libibverbs-dev libibverbs1 libnl-3-200 libnl-route-3-200
      rapidjson-dev libdnnl-dev libdnnl2)

pack() {
  set -e
  rm -rf "$deps" && mkdir -p "$deps/debs" "$deps/fashion-mnist" "$deps/whl"
  (cd "$deps/debs" && apt-get download "${pkgs[@]}")
  cp /usr/share/datasets/fashion-mnist/* "$deps/fashion-mnist/"
  cp -r ../shared "$deps/shared"
  pack_serve
  du -sh "$deps"
}

# `hetnet serve` needs gRPC, Boost and prometheus-cpp, which that machine lacks: the `serving` step
# runs this machine's build (CUDA 13 here too; its CUDA libraries come from the GPU machine's
# nvidia-* packages) with every other library it links, and the PyPI Triton client as cp312 wheels.
serve_libs_skip='linux-vdso|ld-linux|/libc\.|/libm\.|/libdl\.|/libpthread\.|/librt\.|/libstdc\+\+|/libgcc_s|libcuda|libcublas|libcudnn|libnccl'
pack_serve() {
  [ -x build/bin/hetnet ] && build/bin/hetnet serve --help >/dev/null || { echo "build/bin/hetnet with serve first"; return 1; }
  local stage; stage=$(mktemp -d)
  mkdir -p "$stage/bin" "$stage/lib"
  cp build/bin/hetnet build/bin/hetnet_tests "$stage/bin/"
  ldd build/bin/hetnet build/bin/hetnet_tests | awk '$3 ~ /^\// {print $3}' | sort -u | grep -Ev "$serve_libs_skip" |
    xargs -I{} cp -L {} "$stage/lib/"
  tar -cJf "$deps/serve.tar.xz" -C "$stage" bin lib && rm -rf "$stage"
  (cd "$deps/whl" && python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 \
     --implementation cp --platform manylinux_2_28_x86_64 --platform manylinux_2_24_x86_64 \
     --platform manylinux_2_17_x86_64 --platform manylinux1_x86_64 tritonclient==2.73.0 python-rapidjson==1.25 \
     geventhttpclient==2.6.1 gevent==26.9.0 greenlet==3.3.2 zope.event==6.2 zope.interface==8.7 brotli==1.2.1)
}

out="" logs=""
step() {  # step NAME COMMAND...: runs it, logs to $logs/NAME.log, one summary line
  local name=$1; shift
  local t0=$SECONDS rc=0
  "$@" > "$logs/$name.log" 2>&1 || rc=$?
  printf '%-10s %4ds rc=%d\n' "$name" $((SECONDS - t0)) "$rc" | tee -a "$out/summary.txt"
  return $rc
}

setup_env() {
  local root="$deps/root"
  mkdir -p "$root"
  for f in "$deps"/debs/*.deb; do dpkg -x "$f" "$root"; done
  # Debian's Gloo config names /usr/lib/libgloo.so.0.5.0 absolutely: point it at the unpacked copy.
  sed -i "s|\"/usr/lib/libgloo|\"$root/usr/lib/libgloo|g" "$root"/usr/share/cmake/Gloo/GlooTargets-*.cmake 2>/dev/null
  lib="$root/usr/lib/x86_64-linux-gnu"
  export PATH="$root/usr/bin:$PATH" LD_LIBRARY_PATH="$lib:$root/usr/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export HETNET_SHARED_DIR="$deps/shared" PYTHONUNBUFFERED=1
  cudnn_lib="" nccl_lib=""
  for d in $(python3 -c 'import glob, os, nvidia
for b in nvidia.__path__:
    print("\n".join(sorted(glob.glob(os.path.join(b, "*", "lib")))))' 2>/dev/null); do
    export LD_LIBRARY_PATH="$d:$LD_LIBRARY_PATH"
    [ -z "$cudnn_lib" ] && cudnn_lib=$(ls "$d"/libcudnn.so* 2>/dev/null | head -1)
    # NCCL ops and the NCCL engine ([gpu][nccl] tests) build only when CMake finds NCCL: the
    # toolkit's, else the nvidia-nccl package's (which has no unversioned libnccl.so).
    [ -z "$nccl_lib" ] && nccl_lib=$(ls "$d"/libnccl.so* 2>/dev/null | head -1)
  done
  root_dir=$root
}

env_info() {
  nvidia-smi; nvcc --version; python3 --version
  python3 -c 'import google.protobuf, numpy, pybind11; print("protobuf", google.protobuf.__version__, "numpy", numpy.__version__, "pybind11", pybind11.__version__)'
  echo "cudnn: $cudnn_lib"; echo "nccl: $nccl_lib"; nproc; free -g
}

# The toolkit's NCCL when it has one (CMake finds it), else the nvidia-nccl package's.
nccl_cmake_args() {
  local nvcc_dir; nvcc_dir=$(dirname "$(dirname "$(command -v nvcc)")")
  [ -e "$nvcc_dir/include/nccl.h" ] && return 0
  echo "-DNCCL_LIBRARY=$nccl_lib -DNCCL_INCLUDE_DIR=$(dirname "$(dirname "$nccl_lib")")/include"
}

configure_and_build() {
  local gen=Ninja cxx=()
  command -v ninja >/dev/null || gen="Unix Makefiles"
  # A toolchain without a shared libstdc++ (the GPU image's /opt/gcc) links a private copy into
  # libhetnet.so; once another extension (numpy) has loaded the shared one, the two copies' locale
  # state mixes and formatting an error message crashes. Link the system's shared one instead.
  local sys_stdcxx=/lib/x86_64-linux-gnu/libstdc++.so.6
  [ -e "$sys_stdcxx" ] && cxx=(-DCMAKE_CXX_STANDARD_LIBRARIES="$sys_stdcxx")
  cmake -S . -B build-gpu -G "$gen" -DCMAKE_BUILD_TYPE=Release "${cxx[@]}" \
    -DProtobuf_PROTOC_EXECUTABLE="$root_dir/usr/bin/protoc" -DProtobuf_INCLUDE_DIR="$root_dir/usr/include" \
    -DProtobuf_LIBRARY="$lib/libprotobuf.so" -DEigen3_DIR="$root_dir/usr/share/eigen3/cmake" \
    -DCatch2_DIR="$root_dir/usr/lib/cmake/Catch2" -DHETNET_BUILD_SERVING=OFF \
    -DONNX_DIR="$root_dir/usr/lib/x86_64-linux-gnu/cmake/ONNX" \
    -DGloo_DIR="$root_dir/usr/share/cmake/Gloo" -DDNNL_LIBRARY="$lib/libdnnl.so" -DDNNL_INCLUDE_DIR="$root_dir/usr/include" \
    -DHIREDIS_LIBRARY="$lib/libhiredis.so" -DRAPIDJSON_INCLUDE_DIR="$root_dir/usr/include" \
    ${cudnn_lib:+-DCUDNN_LIBRARY="$cudnn_lib" -DCUDNN_INCLUDE_DIR="$(dirname "$(dirname "$cudnn_lib")")/include"} \
    ${nccl_lib:+$(nccl_cmake_args)} \
    -DPython3_EXECUTABLE="$(command -v python3)" || return 1
  # HETNET_GPU_TARGETS: build only these (e.g. "hetnet_tests hetnet_cli hetnet_python" when device
  # time is short); default: everything.
  cmake --build build-gpu -j"$(nproc)" ${HETNET_GPU_TARGETS:+--target $HETNET_GPU_TARGETS} || return 1
  echo "libstdc++ code inside libhetnet.so (0 expected): $(nm --defined-only build-gpu/lib/libhetnet.so | grep -c ' _ZNSo9_M_insert')"
}

gpu_tests() {  # 77 = no CUDA device: a failure here, since this step exists to run them
  local rc=0
  timeout 300 build-gpu/bin/hetnet_tests --require-gpu "[gpu]" -r compact || rc=$?
  [ $rc -le 1 ] && return $rc
  echo "### hetnet_tests ended with $rc: each [gpu] case alone"  # a crash or hang hides the rest
  build-gpu/bin/hetnet_tests --list-test-names-only "[gpu]" | grep -v '^$' | while IFS= read -r t; do
    local c=0
    timeout 120 build-gpu/bin/hetnet_tests "${t//,/\\,}" -r compact > /tmp/one.log 2>&1 || c=$?
    echo "rc=$c  $t"; [ $c -ne 0 ] && tail -15 /tmp/one.log
  done
  return $rc
}

all_ctest() { (cd build-gpu && ctest --output-on-failure -j8 --timeout 300); }

benchmarks() {
  local rc=0 b
  for b in "bench_copy" "bench_conv" "bench_cudnn_workspace" "bench_dag" "bench_fc"; do
    echo "### $b"; timeout 240 build-gpu/bin/$b || rc=1
  done
  return $rc
}

serving_gpu() {  # tests/python/serving/test_gpu_serving.py against the packed `hetnet serve` (pack_serve)
  local s="$deps/serve"
  rm -rf "$s" /tmp/site && mkdir -p "$s" && tar -xJf "$deps/serve.tar.xz" -C "$s" || return 1
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site "$deps"/whl/*.whl || return 1
  LD_LIBRARY_PATH="$s/lib:$LD_LIBRARY_PATH" "$s/bin/hetnet" serve --help | head -3
  HETNET_BIN="$s/bin/hetnet" LD_LIBRARY_PATH="$s/lib:$LD_LIBRARY_PATH" \
    PYTHONPATH="$PWD/build-gpu/python:$PWD/tests/python/serving:/tmp/site" \
    timeout 300 python3 -m pytest -v -p no:cacheprovider -rs tests/python/serving/test_gpu_serving.py
}

# The [gpu] cases of this machine's build (packed with `hetnet serve`), no build there: with
# HETNET_GPU_PREBUILT=1 `run` starts them while the GPU machine builds. Both trees sit at /work/main,
# where this build's test paths point; its CLI tests find `hetnet` at build/bin.
gpu_prebuilt() {
  local s="$deps/prebuilt"
  rm -rf "$s" && mkdir -p "$s" && tar -xJf "$deps/serve.tar.xz" -C "$s" || return 1
  [ -e build/bin/hetnet ] || { mkdir -p build/bin && ln -s "$s/bin/hetnet" build/bin/hetnet; }
  LD_LIBRARY_PATH="$s/lib:$LD_LIBRARY_PATH" timeout 300 "$s/bin/hetnet_tests" --require-gpu "[gpu]" -r compact
}

# compute-sanitizer memcheck over the [gpu] cases, one case per process (a report names its case),
# inside a time budget: cases not reached are listed as such, never counted as clean. API errors are
# not reported: NCCL's start-up probe makes some on purpose (cudaFuncGetAttributes on kernels not
# built for the GPU) and handles them.
sanitize_gpu() {
  local cs budget=${HETNET_SANITIZE_SECONDS:-150} t0=$SECONDS rc=0 c
  cs=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer 2>/dev/null | head -1)
  [ -n "$cs" ] || { echo "compute-sanitizer not found"; return 1; }
  "$cs" --version | tail -1
  while IFS= read -r t; do
    [ -z "$t" ] && continue
    if [ $((SECONDS - t0)) -ge "$budget" ]; then echo "NOT RUN (budget ${budget}s): $t"; rc=1; continue; fi
    c=0
    timeout $((budget - (SECONDS - t0) + 10)) "$cs" --tool memcheck --report-api-errors no --error-exitcode 86 --print-limit 10 \
      build-gpu/bin/hetnet_tests --require-gpu "${t//,/\\,}" -r compact > /tmp/cs.log 2>&1 || c=$?
    echo "rc=$c $((SECONDS - t0))s  $t"
    [ $c -ne 0 ] && { rc=1; grep -E "=========|FAILED|passed|failed" /tmp/cs.log | head -30; }
  done < <(build-gpu/bin/hetnet_tests --list-test-names-only "[gpu]")
  return $rc
}

train_gpu() {
  PYTHONPATH="$PWD/build-gpu/python" timeout 400 python3 python/examples/train_fashion_mnist.py \
    --arch lenet --gpu --epochs 5 --data-dir "$deps/fashion-mnist" --out build-gpu/fmnist \
    --verify-with-cli build-gpu/bin/hetnet
}

run() {
  # Logs go under $OUT as they are written: a step cut off at the call's time limit still returns
  # what it printed.
  out="${OUT:-$PWD/build-gpu/out}" logs="${OUT:-$PWD/build-gpu/out}/logs"
  mkdir -p "$out" "$logs"
  local steps=("$@")
  [ ${#steps[@]} -eq 0 ] && steps=(gpu ctest serving bench train)
  setup_env
  step env env_info
  local pre_pid=""
  if [ "${HETNET_GPU_PREBUILT:-0}" = 1 ]; then step gpu_prebuilt gpu_prebuilt & pre_pid=$!; fi
  if [ "${HETNET_GPU_SKIP_BUILD:-0}" != 1 ]; then  # 1: diagnosis only (extra), no build
    step build configure_and_build || { tail -40 "$logs/build.log"; return 1; }
  fi
  local rc=0 s
  [ -n "$pre_pid" ] && { wait "$pre_pid" || rc=1; }  # before the steps: timings run on a quiet machine
  for s in "${steps[@]}"; do
    case $s in
      gpu) step gpu gpu_tests || rc=1 ;;
      gpu_prebuilt) step gpu_prebuilt gpu_prebuilt || rc=1 ;;
      ctest) step ctest all_ctest || rc=1 ;;
      bench) step bench benchmarks || rc=1 ;;
      train) step train train_gpu || rc=1 ;;
      serving) step serving serving_gpu || rc=1 ;;
      sanitize) step sanitize sanitize_gpu || rc=1 ;;
      extra) step extra env root_dir="$root_dir" lib="$lib" cudnn_lib="$cudnn_lib" bash -c "${HETNET_GPU_EXTRA:?set HETNET_GPU_EXTRA to a command}" || rc=1 ;;
      *) echo "unknown step $s" >&2; return 2 ;;
    esac
  done
  cat "$out/summary.txt"
  return $rc
}

src() {  # HEAD, as committed, in .gpu-src/, with .gpu-deps beside it
  set -e
  grep -qx '/.gpu-src/' "$(git rev-parse --git-path info/exclude)" 2>/dev/null ||
    { mkdir -p "$(dirname "$(git rev-parse --git-path info/exclude)")"; echo /.gpu-src/ >> "$(git rev-parse --git-path info/exclude)"; }
  rm -rf .gpu-src && mkdir .gpu-src && git archive HEAD | tar -x -C .gpu-src
  ln -s ../.gpu-deps .gpu-src/.gpu-deps
  git log --oneline -1
}

case "${1:-}" in
  pack) pack ;;
  src) src ;;
  run) shift; run "$@" ;;
  *) echo "usage: $0 pack | src | run [gpu|ctest|serving|sanitize|bench|train|extra]..." >&2; exit 2 ;;
esac
