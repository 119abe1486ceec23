# Sourced by tools/sanitize.sh and tools/fuzz.sh. HETNET_BUILD_DEADLINE (seconds since the epoch;
# tools/test.sh sets it from the CI time budget): a build still running then is stopped, and the
# script exits 3, which CI reports as "not run: over the CI time budget" instead of running past
# it. ccache keeps every object compiled so far, so the next run goes on from there (a cold cache
# on a 2-core host needs more than one run for the clang trees). Unset: no deadline.
build_before_deadline() {  # build_before_deadline COMMAND...: 124 when the deadline stopped it
  [ -z "${HETNET_BUILD_DEADLINE:-}" ] && { "$@"; return; }
  local left=$(( HETNET_BUILD_DEADLINE - $(date +%s) ))
  [ "$left" -gt 0 ] || return 124
  timeout "$left" "$@"
}
# build_or_exit WHAT COMMAND...: the build before the deadline, its last line printed; past the
# deadline "WHAT: NOT RUN ..." and exit 3; a failed build prints its tail and exits 1.
build_or_exit() {
  local what=$1 out rc=0
  shift
  out=$(build_before_deadline "$@" 2>&1) || rc=$?
  if [ "$rc" -eq 124 ]; then
    echo "$out" | tail -n 1
    echo "$what: NOT RUN: the build had not finished by HETNET_BUILD_DEADLINE (CI time budget)"; exit 3
  fi
  [ "$rc" -eq 0 ] || { echo "$out" | tail -n 60; echo "$what FAILED: build"; exit 1; }
  echo "$out" | tail -n 1
}
