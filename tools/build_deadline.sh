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
