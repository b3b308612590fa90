#!/usr/bin/env bash
# The tallies of scripts/cross.sh and scripts/cross_windows.sh (sourced by both).

# Sum "test NAME ... ok|FAILED" lines (also those of the harness-less tests);
# a test binary that failed without a FAILED line (it crashed), or tests that
# did not compile, count as failures too.
count() {
  local log=$1 bins
  passed=$(grep -cE '^test .* \.\.\. ok$' "$log" || true)
  failed=$(grep -cE '^test .* \.\.\. FAILED$' "$log" || true)
  bins=$(grep -cE '^error: test failed' "$log" || true)
  [ "$bins" -gt "$failed" ] && failed=$bins
  grep -q 'could not compile' "$log" && failed=$((failed + 1))
  return 0
}

total_passed=0
total_failed=0
part() { # NAME PASSED FAILED
  echo "$1: $2 passed, $3 failed"
  total_passed=$((total_passed + $2)); total_failed=$((total_failed + $3))
}
