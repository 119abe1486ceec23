#!/usr/bin/env bash
# The test suites under sanitizers (CPU only, clang, separate build dirs, ccache):
#   tools/sanitize.sh asan   build-asan/: ASan+UBSan. The Catch2 suite (all CPU tests), the
#                            Python suite with the ASan runtime preloaded into the interpreter, and
#                            the serving pytest suite against the ASan-built `hetnet serve`.
#   tools/sanitize.sh tsan   build-tsan/: TSan. The Catch2 tests that run threads (DAG executor,
#                            Predictor, lifetime of running nets), then the serving
#                            pytest suite against the TSan-built `hetnet serve` (HETNET_BIN).
# Any sanitizer report fails the run (exit 1) and is printed. The ASan build compiles the library
# with the fuzz build's flags (incl. coverage instrumentation), so the two share ccache entries.
# Env: HETNET_BUILD_JOBS (nproc), HETNET_BUILD_LOCK (a file: builds run under `flock` on it),
# HETNET_BUILD_DEADLINE (tools/build_deadline.sh), SANITIZE_SKIP_PYTHON=1 (C++ only), PYTHON (python3), PYTHONPATH_SERVING (the Python packages the
# serving tests import: build/python, from the normal build).
set -euo pipefail
cd "$(dirname "$0")/.."
MODE=${1:?usage: tools/sanitize.sh asan|tsan}
JOBS=${HETNET_BUILD_JOBS:-$(nproc)}
PY=${PYTHON:-python3}
LOCK=()
[ -n "${HETNET_BUILD_LOCK:-}" ] && LOCK=(flock "$HETNET_BUILD_LOCK")
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$PWD}" CCACHE_NOHASHDIR=true
export OMP_NUM_THREADS=1  # libgomp is not instrumented: one thread keeps its pool out of the picture
command -v clang++ >/dev/null || { echo "sanitize.sh: clang++ not found (apt-get install clang libclang-rt-14-dev)" >&2; exit 2; }
COMMON=(-G Ninja -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DHETNET_USE_CUDA=OFF)
# The soak measures the server's resident memory and throughput: under a sanitizer those are the
# sanitizer's (ASan's quarantine alone grows RSS by a third); it runs in the normal build's ctest.
NOT_UNDER_SANITIZERS=(--deselect tests/python/serving/test_soak.py::test_soak_30_seconds_concurrency_64)
t0=$SECONDS
step() { echo "== sanitize $MODE: $* ($((SECONDS - t0)) s)"; }
source tools/build_deadline.sh
build() {  # build DIR TARGETS...: quiet unless it fails; exit 3 past HETNET_BUILD_DEADLINE
  local dir=$1
  shift
  build_or_exit "sanitize $MODE" "${LOCK[@]}" cmake --build "$dir" -j"$JOBS" --target "$@"
}

# serving_suite WHAT VAR=VALUE...: the serving pytest suite (the normal interpreter with the normal
# build's packages, PYTHONPATH_SERVING) against the sanitized $BUILD/bin/hetnet, with the sanitizer
# options given; a failed test or any report in $BUILD/san-logs fails the run.
serving_suite() {
  local what=$1 rc=0 pyp=${PYTHONPATH_SERVING:-$PWD/build/python}
  shift
  if [ ! -d "$pyp/hetnet" ] || ! "$BUILD/bin/hetnet" serve --help >/dev/null 2>&1; then
    echo "sanitize $MODE: serving suite skipped ($pyp/hetnet missing: build the normal tree first)"
    return
  fi
  step "serving pytest against the $what hetnet"
  env "$@" HETNET_BIN="$PWD/$BUILD/bin/hetnet" PYTHONPATH="$pyp" \
    "$PY" -m pytest -q -p no:cacheprovider tests/python/serving "${NOT_UNDER_SANITIZERS[@]}" || rc=$?
  if compgen -G "$BUILD/san-logs/*" >/dev/null; then
    echo "---- sanitizer reports:"; head -n 120 "$BUILD/san-logs/"*
    echo "SANITIZE FAILED: $MODE serving suite: reports in $BUILD/san-logs"; exit 1
  fi
  [ "$rc" -eq 0 ] || { echo "SANITIZE FAILED: $MODE serving suite exit $rc"; exit 1; }
}

case "$MODE" in
asan)
  BUILD=${SANITIZE_BUILD_DIR:-build-asan}
  # One shared ASan runtime for every binary: the Python interpreter (uninstrumented) must load it
  # first (LD_PRELOAD), and processes the tests spawn (the `hetnet` command) inherit the preload,
  # which a statically linked runtime would refuse as a second runtime.
  RT=$(clang -print-file-name=libclang_rt.asan-x86_64.so)
  [ -f "$RT" ] || { echo "sanitize.sh: $RT missing (libclang-rt-14-dev)" >&2; exit 2; }
  LDF="-shared-libasan -Wl,-rpath,$(dirname "$RT")"
  if [ ! -f "$BUILD/build.ninja" ]; then
    "${LOCK[@]}" cmake -S . -B "$BUILD" "${COMMON[@]}" -DHETNET_SANITIZE=address,undefined \
      -DHETNET_SANITIZE_COVERAGE=ON -DCMAKE_EXE_LINKER_FLAGS="$LDF" -DCMAKE_SHARED_LINKER_FLAGS="$LDF" \
      -DCMAKE_MODULE_LINKER_FLAGS="$LDF" >/dev/null
  fi
  step "build"
  build "$BUILD" hetnet_tests hetnet_cli hetnet_python
  mkdir -p "$BUILD/san-logs"
  rm -f "$BUILD/san-logs/"*
  # allocator_may_return_null: the runtime's own out-of-memory errors are under test, not ASan's.
  export ASAN_OPTIONS="detect_leaks=1:allocator_may_return_null=1:detect_stack_use_after_return=0:halt_on_error=1"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
  # Leaks inside third-party runtimes only (libomp's per-thread state; each entry says why).
  export LSAN_OPTIONS="suppressions=$PWD/tools/lsan.supp"
  # The Catch2 suite and the Python suite each run on one core for ~13 minutes here: run them side
  # by side (the serving suite after both), so the stage takes the longer of the two, not the sum.
  step "Catch2 suite (~[gpu]), in the background"
  "$BUILD/bin/hetnet_tests" "~[gpu]" >"$BUILD/san-logs/catch2.txt" 2>&1 &
  catch2_pid=$!
  catch2_done() {
    local crc=0
    wait "$catch2_pid" || crc=$?
    step "Catch2 suite finished"
    tail -n 40 "$BUILD/san-logs/catch2.txt"
    [ "$crc" -eq 0 ] || { echo "SANITIZE FAILED: asan Catch2 suite exit $crc"; exit 1; }
    rm -f "$BUILD/san-logs/catch2.txt"
  }
  if [ "${SANITIZE_SKIP_PYTHON:-0}" = 1 ]; then catch2_done; fi
  if [ "${SANITIZE_SKIP_PYTHON:-0}" != 1 ]; then
    step "Python suite (LD_PRELOAD=$RT)"
    # Leaks are off for the interpreter (CPython keeps its objects to the end by design); reports
    # from every process of the run (pytest, the `hetnet` commands it starts) go to san-logs/.
    rc=0
    LD_PRELOAD="$RT" ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0:log_path=$PWD/$BUILD/san-logs/asan" \
      UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$PWD/$BUILD/san-logs/ubsan" \
      PYTHONPATH="$PWD/$BUILD/python" HETNET_SHARED_DIR="$PWD/../shared" \
      "$PY" -m pytest -q -p no:cacheprovider tests/python --ignore=tests/python/serving || rc=$?
    catch2_done
    if compgen -G "$BUILD/san-logs/*" >/dev/null; then
      echo "---- sanitizer reports:"; head -n 80 "$BUILD/san-logs/"*
      echo "SANITIZE FAILED: asan Python suite: reports in $BUILD/san-logs"; exit 1
    fi
    [ "$rc" -eq 0 ] || { echo "SANITIZE FAILED: asan Python suite exit $rc"; exit 1; }
    # The server keeps its leak check at exit.
    serving_suite "ASan+UBSan" ASAN_OPTIONS="$ASAN_OPTIONS:log_path=$PWD/$BUILD/san-logs/asan" \
      UBSAN_OPTIONS="$UBSAN_OPTIONS:log_path=$PWD/$BUILD/san-logs/ubsan"
  fi
  step "done"
  echo "sanitize asan: passed"
  ;;
tsan)
  BUILD=${SANITIZE_BUILD_DIR:-build-tsan}
  if [ ! -f "$BUILD/build.ninja" ]; then
    "${LOCK[@]}" cmake -S . -B "$BUILD" "${COMMON[@]}" -DHETNET_SANITIZE=thread -DHETNET_BUILD_PYTHON=OFF >/dev/null
  fi
  step "build"
  build "$BUILD" hetnet_tests hetnet_cli
  mkdir -p "$BUILD/san-logs"
  rm -f "$BUILD/san-logs/"*
  SUPP="$PWD/tools/tsan.supp"
  export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4${SUPP:+:suppressions=$SUPP}"
  step "Catch2 threaded tests"
  # [dag]: the DAG executor (16-worker stress included); [predictor]: Predictor (8 threads x many
  # runs); [hostile]: nets deleted / workspaces destroyed while a run is in flight. Left out: the
  # two Predictor cases that compare floats bit for bit with a plain Workspace run (under TSan the
  # positional Run differs in the last bits, without a race report; see benchmarks/RESULTS.md) and
  # [profiler], whose wall-time bounds do not hold at TSan's speed.
  # [gloo], [store]: the communicator ops over Gloo's TCP pairs (rank threads) and the stores' server
  # and client threads; [pool]: math::ParallelFor's intra-op pool with concurrent callers.
  SPEC='[dag]~[gpu],[predictor]~[gpu]~"Predictor equals a plain Workspace run"~"Predictor errors name the blob and list expected inputs",[hostile]~[gpu],[gloo]~[gpu],[store],[pool]'
  rc=0
  "$BUILD/bin/hetnet_tests" "$SPEC" >"$BUILD/san-logs/catch2.txt" 2>&1 || rc=$?
  if [ "$rc" -ne 0 ]; then
    if grep -q "WARNING: ThreadSanitizer" "$BUILD/san-logs/catch2.txt"; then
      sed -n '/WARNING: ThreadSanitizer/,/^SUMMARY/p' "$BUILD/san-logs/catch2.txt" | head -n 120
    else
      tail -n 60 "$BUILD/san-logs/catch2.txt"
    fi
    echo "SANITIZE FAILED: tsan Catch2 tests exit $rc (full output: $BUILD/san-logs/catch2.txt)"; exit 1
  fi
  tail -n 2 "$BUILD/san-logs/catch2.txt"
  rm -f "$BUILD/san-logs/catch2.txt"
  if [ "${SANITIZE_SKIP_PYTHON:-0}" != 1 ]; then
    # The server keeps running after a report (the tests check its exit codes); every report is
    # written to san-logs/ and fails the run afterwards.
    serving_suite "TSan" \
      TSAN_OPTIONS="${TSAN_OPTIONS/halt_on_error=1/halt_on_error=0}:exitcode=0:log_path=$PWD/$BUILD/san-logs/tsan"
  fi
  step "done"
  echo "sanitize tsan: passed"
  ;;
*) echo "usage: tools/sanitize.sh asan|tsan" >&2; exit 2 ;;
esac
