#!/usr/bin/env bash
# The loom model of the worker pool's helper threads (loom/tests/model.rs,
# over src/chunk/pool/helpers.rs itself): every interleaving of a caller and
# its helpers, with the weak memory orderings of the C++ model. Then the same
# model with the helpers' leave weakened from Release to Relaxed
# (--cfg b2nd_weak_leave), which must fail: the model is not vacuous.
set -euo pipefail
cd "$(dirname "$0")/../loom"
export CARGO_TERM_COLOR=never
echo "== loom model of the pool"
RUSTFLAGS="--cfg loom" cargo test --release --locked --target-dir ../target/loom 2>&1 | grep -E '^test |^test result' | grep -v ' 0 passed'
echo "== the same model with a helper's leave weakened to Relaxed: must fail"
if RUSTFLAGS="--cfg loom --cfg b2nd_weak_leave" cargo test --release --locked --target-dir ../target/loom-weak \
    --test model a_helpers_share_is_handed_over_to_the_caller >../target/loom-weak.log 2>&1; then
  echo "loom: the weakened model passed: the model no longer checks the hand-over"
  exit 1
fi
grep -m1 'Causality violation' ../target/loom-weak.log || grep -m1 panicked ../target/loom-weak.log
echo "loom: passed (and the weakened ordering is caught)"
