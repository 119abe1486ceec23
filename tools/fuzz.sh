#!/usr/bin/env bash
# libFuzzer runs: builds the targets in fuzz/ (clang, -fsanitize=fuzzer-no-link,address,undefined on
# the library, CPU only, build-fuzz/) and runs one target, or each in turn, for SECONDS.
#   tools/fuzz.sh TARGET SECONDS [libFuzzer flags...]   e.g. tools/fuzz.sh fuzz_netdef 600
#   tools/fuzz.sh all SECONDS                            every target, SECONDS each
#   tools/fuzz.sh build                                  build only;  tools/fuzz.sh list: the targets
# Seeds: fuzz/corpus/<target> (fuzz/make_seeds.py writes them); new inputs go to
# build-fuzz/corpus/<target>; a crash is saved as build-fuzz/crashes/<target>-crash-<sha1>, its
# report tail printed, and the script exits 1. Reproduce: build-fuzz/fuzz/<target> <file>.
# Env: FUZZ_BUILD_DIR (build-fuzz), HETNET_BUILD_JOBS (nproc), HETNET_BUILD_LOCK (a file: builds
# run under `flock` on it, for hosts that share their cores), HETNET_BUILD_DEADLINE
# (tools/build_deadline.sh), FUZZ_VERBOSE=1 (libFuzzer's own output).
set -euo pipefail
cd "$(dirname "$0")/.."
usage() { sed -n '2,12p' "$0" >&2; exit 2; }
[ $# -ge 1 ] || usage
TARGET=$1
SECS=${2:-30}
shift $(( $# >= 2 ? 2 : 1 ))
BUILD=${FUZZ_BUILD_DIR:-build-fuzz}
JOBS=${HETNET_BUILD_JOBS:-$(nproc)}
LOCK=()
[ -n "${HETNET_BUILD_LOCK:-}" ] && LOCK=(flock "$HETNET_BUILD_LOCK")
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=true
TARGETS=(fuzz_netdef fuzz_text_format fuzz_tensor_proto fuzz_blob_proto fuzz_minidb_load fuzz_create_net
         fuzz_run_net fuzz_http_infer fuzz_grpc_infer fuzz_model_load fuzz_onnx_import fuzz_device_profile fuzz_tcp_store)
if [ "$TARGET" = list ]; then printf '%s\n' "${TARGETS[@]}"; exit 0; fi

command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
if [ ! -f "$BUILD/build.ninja" ]; then
  "${LOCK[@]}" cmake -S . -B "$BUILD" -G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    -DHETNET_FUZZ=ON -DHETNET_USE_CUDA=OFF -DHETNET_BUILD_PYTHON=OFF -DHETNET_BUILD_TESTS=OFF >/dev/null
fi
if [ "$TARGET" = all ] || [ "$TARGET" = build ]; then BUILD_TARGET=fuzz_all; else BUILD_TARGET=$TARGET; fi
source tools/build_deadline.sh
build_or_exit fuzz "${LOCK[@]}" cmake --build "$BUILD" -j"$JOBS" --target "$BUILD_TARGET"
[ "$TARGET" = build ] && exit 0

# Sanitizer settings: abort on the first report, huge mallocs return null (so an uncapped
# allocation shows as libFuzzer's -malloc_limit_mb report, not an ASan abort), leaks reported.
export ASAN_OPTIONS="${ASAN_OPTIONS:-allocator_may_return_null=1:detect_leaks=1:abort_on_error=0}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export OMP_NUM_THREADS=1
mkdir -p "$BUILD/crashes" "$BUILD/logs"

run_one() {
  local t=$1 secs=$2; shift 2
  local bin="$BUILD/fuzz/$t" work="$BUILD/corpus/$t" seeds="fuzz/corpus/$t" log="$BUILD/logs/$t.log"
  [ -x "$bin" ] || { echo "fuzz.sh: no target $t (built: $(ls "$BUILD/fuzz" 2>/dev/null | tr '\n' ' '))" >&2; return 2; }
  mkdir -p "$work"
  local dirs=("$work")
  [ -d "$seeds" ] && dirs+=("$seeds")
  local rc=0
  # -timeout: one input running over 10 s is a hang; -malloc_limit_mb: one allocation over 1 GiB
  # (the caps allow 64 MiB per tensor) is an allocation before a check.
  if [ "${FUZZ_VERBOSE:-0}" = 1 ]; then
    "$bin" "${dirs[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=3072 -malloc_limit_mb=1024 \
      -print_final_stats=1 -artifact_prefix="$BUILD/crashes/$t-" "$@" 2>&1 | tee "$log" || rc=${PIPESTATUS[0]}
  else
    "$bin" "${dirs[@]}" -max_total_time="$secs" -timeout=10 -rss_limit_mb=3072 -malloc_limit_mb=1024 \
      -print_final_stats=1 -artifact_prefix="$BUILD/crashes/$t-" "$@" >"$log" 2>&1 || rc=$?
  fi
  local runs cov
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -n 1 || true)
  if [ "$rc" -ne 0 ]; then
    echo "----- $t: FAILED (exit $rc); last lines of $log:"
    tail -n 60 "$log"
    ls -1 "$BUILD/crashes/$t-"* 2>/dev/null | sed 's/^/  reproducer: /' || true
    echo "FUZZ FAILED: $t (exit $rc) after ${runs:-?} runs; log $log"
    return 1
  fi
  echo "fuzz ok: $t: ${runs:-?} runs in ${secs} s, ${cov:-cov ?}, corpus $(ls "$work" | wc -l) files"
}

if [ "$TARGET" = all ]; then
  failed=()
  for t in "${TARGETS[@]}"; do
    [ -x "$BUILD/fuzz/$t" ] || continue  # the serving targets exist only with HETNET_BUILD_SERVING
    run_one "$t" "$SECS" "$@" || failed+=("$t")
  done
  if [ ${#failed[@]} -gt 0 ]; then echo "fuzz: FAILED: ${failed[*]}"; exit 1; fi
  echo "fuzz: all targets passed (${SECS} s each)"
else
  run_one "$TARGET" "$SECS" "$@"
fi
