#!/usr/bin/env bash
# The tallies and file exchanges of scripts/cross.sh and scripts/cross_windows.sh
# (sourced by both, from the repository's root; they use $out, the target's folder).
# shellcheck disable=SC2154  # out: set by the sourcing script

# Sum "test NAME ... ok|FAILED" lines (also those of the harness-less tests);
# a test binary that failed without a FAILED line (it crashed), or tests that
# did not compile, count as failures too.
count() {
  local log=$1 bins
  # shellcheck disable=SC2034  # passed (and failed): the counts, read by the caller
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

# exchange DESCRIPTION WRITER_TARGET READER_TARGET DIR: the writer makes the
# set in DIR, the reader checks it ("" = this x86-64 machine)
exchange() {
  local what=$1 writer=$2 reader=$3 dir=$4 log
  log="$out/$(echo "$what" | tr ' ' '-').log"
  B2ND_CROSS_WRITE="$PWD/$dir" cargo test --release ${writer:+--target "$writer"} --features ndarray --test cross_files \
    -- --exact every_codec_and_filter_reads_back_from_a_written_set >"$log" 2>&1 || true
  B2ND_CROSS_CHECK="$PWD/$dir" cargo test --release ${reader:+--target "$reader"} --features ndarray --test cross_files \
    -- --exact every_codec_and_filter_reads_back_from_a_written_set --nocapture >>"$log" 2>&1 || true
  local line ok bad
  # (the line may follow the test's name: wasmtime's output is one stream)
  line=$(grep -o "cross files in $PWD/$dir:.*" "$log" | tail -1 || true)
  ok=$(echo "$line" | sed -nE 's/.*: ([0-9]+) read back.*/\1/p')
  bad=$(echo "$line" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
  [ -n "$line" ] || grep -E 'differ|could not|panicked' "$log" | head -5
  echo "  ($line)"
  part "$what" "${ok:-0}" "${bad:-1}"
}

# python_reads DESCRIPTION DIR VENV: python-blosc2 (of the venv) reads the set in DIR
python_reads() {
  local py ok bad
  py=$("$3/bin/python" scripts/cross_check.py "$2" 2>&1 | tee "$out/python.log" | tail -1) || true
  echo "  ($py)"
  ok=$(echo "$py" | sed -nE 's/.*: ([0-9]+) read back.*/\1/p')
  bad=$(echo "$py" | sed -nE 's/.* ([0-9]+) failed.*/\1/p')
  part "$1" "${ok:-0}" "${bad:-1}"
}

# example PROGRAM [RUNNER...]: the README's Rust example (examples/rust/arrays.rs), counted as
# a part; its files go to the system's temporary directory, or to $EXAMPLE_DIR where set
example() {
  local prog=$1
  shift
  echo "== the Rust example (examples/rust/arrays.rs)"
  if "$@" "$prog" ${EXAMPLE_DIR:+"$EXAMPLE_DIR"} >"$out/example.log" 2>&1; then
    part "the Rust example" 1 0
  else
    tail -5 "$out/example.log"
    part "the Rust example" 0 1
  fi
}
