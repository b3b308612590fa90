#!/usr/bin/env bash
# The core's tests under Miri (the interpreter that checks for undefined behaviour: out-of-bounds
# and dangling accesses, aliasing under stacked borrows, data races, bad intrinsics' use), with
# its default flags but two: -Zmiri-num-cpus=4, as the pool only starts helpers where it sees
# more than one core; -Zmiri-ignore-leaks, as the worker pools (and their helper threads) live
# as long as the process by design, and Miri counts the threads still alive at exit as an error.
# The runs:
# - lib: every unit test of the core (BloscLZ and NDLZ both ways, shuffle and bitshuffle with the
#   scalar and SSE2 kernels, delta, bytedelta, trunc_prec, ndcell, the offsets index, the undo
#   journal's records and plans, the frame's free space, the pool with its helper threads, the
#   disjoint writes), on data made smaller under cfg(miri);
# - lib, AVX2: the filters' tests again, built with AVX2, SSE4.1, SSSE3, BMI2 and POPCNT enabled,
#   where Miri's feature detection reports only what the build enables: the AVX2 kernels and
#   bytedelta's SSSE3 decoder run beside the SSE2 and scalar ones (the tests run every kernel
#   detected);
# - tests: the integration tests over in-memory data: chunks (tests/chunk_behaviour.rs,
#   tests/malformed_chunks.rs), frames in memory (tests/frames_write.rs, tests/schunk.rs),
#   arrays with the disjoint writes of several threads (tests/b2nd_model.rs, tests/typed.rs).
# Left out, each test marked #[cfg_attr(miri, ignore = "Miri: ...")] with its reason: the C codecs
# (LZ4, Zstd, zlib-ng, libdeflate, ZFP: Miri cannot call C), files, mmap, file locks, child
# processes and fork (refused by Miri's isolation or not emulated), and the test binaries about
# them alone (tests/crash_safety.rs, tests/power_loss.rs, tests/fork_children.rs, ...).
# --quick: the lib run on the unsafe code's own tests only (BloscLZ, shuffle and bitshuffle,
# delta, bytedelta, trunc_prec, the offsets index, the journal's records, the pool, the disjoint
# writes), for CI (15 minutes of tests after its build here). Prints one line per run (passed,
# ignored, failed) and exits non-zero on a failure or on anything Miri reports; each run's log
# is in target/miri/logs/.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
quick=false
case "${1:-}" in
  --quick) quick=true ;;
  "") ;;
  *)
    echo "usage: scripts/miri.sh [--quick]" >&2
    exit 2
    ;;
esac

if ! cargo +nightly miri --version >/dev/null 2>&1 || ! rustup +nightly component list --installed 2>/dev/null | grep -q '^rust-src'; then
  rustup toolchain install nightly --profile minimal --component miri,rust-src
fi
cargo +nightly miri setup >/dev/null 2>&1 || cargo +nightly miri setup
export MIRIFLAGS="-Zmiri-num-cpus=4 -Zmiri-ignore-leaks ${MIRIFLAGS:-}"
mkdir -p target/miri/logs

failed=()
# run NAME TARGET_DIR CARGO_ARGS... [-- TEST_FILTERS...]: one run, its line, its log
run() {
  local name=$1 dir=$2 log="target/miri/logs/$1.log" start=$SECONDS
  shift 2
  local rc=0
  cargo +nightly miri test --locked -p b2nd --target-dir "$dir" "$@" >"$log" 2>&1 || rc=$?
  local passed ignored failures ub
  passed=$(grep -E '^test result:' "$log" | grep -oE '[0-9]+ passed' | awk '{s += $1} END {print s + 0}')
  ignored=$(grep -E '^test result:' "$log" | grep -oE '[0-9]+ ignored' | awk '{s += $1} END {print s + 0}')
  failures=$(grep -E '^test result:' "$log" | grep -oE '[0-9]+ failed' | awk '{s += $1} END {print s + 0}')
  ub=$(grep -cE '^error: (Undefined Behavior|unsupported operation|memory leaked|the main thread terminated)' "$log" || true)
  printf '%-10s %4d passed, %3d ignored, %d failed, %d Miri errors  (%ds)\n' \
    "$name" "$passed" "$ignored" "$failures" "$ub" $((SECONDS - start))
  if [ "$rc" != 0 ] || [ "$failures" != 0 ] || [ "$ub" != 0 ]; then
    grep -E -A12 '^error: |^---- |panicked at' "$log" | head -60
    failed+=("$name")
  fi
}

avx2="-C target-feature=+avx2,+sse4.1,+ssse3,+bmi2,+popcnt"
if $quick; then
  echo "== Miri, quick: the unsafe code's own unit tests"
  run lib target/miri --lib -- codecs::blosclz filters::shuffle filters::bitshuffle filters::delta \
    filters::bytedelta filters::trunc_prec frame::offsets frame::journal::record chunk::pool array::disjoint
else
  echo "== Miri: the core's unit tests, then the filters with AVX2, then the integration tests"
  run lib target/miri --lib
  RUSTFLAGS="${RUSTFLAGS:-} $avx2" run lib-avx2 target/miri/avx2 --lib -- filters::
  run tests target/miri --test chunk_behaviour --test malformed_chunks --test frames_write \
    --test schunk --test b2nd_model --test typed
fi
if [ ${#failed[@]} != 0 ]; then
  echo "miri: failed: ${failed[*]} (logs in target/miri/logs/)"
  exit 1
fi
echo "miri: passed"
