#!/usr/bin/env bash
# Instructions executed by the aarch64 NEON kernels and by their scalar
# oracles for the same work, counted under qemu (where timings mean nothing).
#
#   scripts/kernel_counts.sh            (after scripts/cross.sh aarch64 setup)
#
# The workload is src/filters/workload.rs: one 64 KiB block of float64 values
# per case. qemu runs one instruction per translation block and logs each one
# with its symbol; those in the filters' code (the kernels, their drivers and
# the workload's own loop) are counted, so the count is exact and the same on
# every run.
# Prints a Markdown table (the one in docs/PORTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
triple=aarch64-unknown-linux-gnu
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
export CARGO_TERM_COLOR=never

bin=$(cargo test --release -p b2nd --target "$triple" --lib --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    j = json.loads(line)
    if j.get("reason") == "compiler-artifact" and j.get("executable") and j["profile"]["test"] and j["target"]["src_path"].endswith("src/lib.rs"):
        print(j["executable"])')
[ -x "$bin" ] || { echo "no aarch64 test binary" >&2; exit 1; }

log=$(mktemp)
trap 'rm -f "$log"' EXIT

# One run per case, every instruction logged with the symbol it belongs to;
# counted: those of the filters' kernels and drivers and of the workload's
# own loop (mangled names b2nd::filters::{shuffle,bitshuffle,bytedelta}::*,
# b2nd::filters::workload::run).
count() { # FILTER KERNEL TYPESIZE
  B2ND_WORKLOAD="$1 $2 $3" qemu-aarch64 -one-insn-per-tb -d exec,nochain -D "$log" \
    "$bin" --exact filters::workload::workload --nocapture >/dev/null 2>&1
  grep -cE '^Trace [0-9]+: .* _ZN4b2nd7filters(7shuffle|10bitshuffle|9bytedelta|8workload3run)' "$log" || true
}

echo "| filter | typesize | scalar | neon | neon / scalar |"
echo "|---|---:|---:|---:|---:|"
for filter in shuffle unshuffle bitshuffle bitunshuffle bytedelta-decode; do
  for ts in 2 4 8 16; do
    s=$(count "$filter" scalar "$ts")
    n=$(count "$filter" neon "$ts")
    printf '| %s | %d | %d | %d | %.3f |\n' "$filter" "$ts" "$s" "$n" "$(echo "$n / $s" | bc -l)"
  done
done
