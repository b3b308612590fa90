#!/usr/bin/env bash
# Instructions executed by the aarch64 NEON kernels and by their scalar
# oracles for the same work, counted under qemu (where timings mean nothing).
#
#   scripts/kernel_counts.sh            (after scripts/cross.sh aarch64 setup)
#
# The workload is src/filters/workload.rs: one 64 KiB block of float64 values
# per case. qemu runs one instruction per translation block and logs each one
# whose address lies in the filters' code (the kernels, their drivers and the
# workload's own loop), so the count is exact and the same on every run.
# Prints a Markdown table (the one in docs/PORTING.md).
set -euo pipefail
cd "$(dirname "$0")/.."
triple=aarch64-unknown-linux-gnu
export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
export CARGO_TERM_COLOR=never

bin=$(cargo test --release --target "$triple" --lib --no-run --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    j = json.loads(line)
    if j.get("reason") == "compiler-artifact" and j.get("executable") and j["profile"]["test"] and j["target"]["src_path"].endswith("src/lib.rs"):
        print(j["executable"])')
[ -x "$bin" ] || { echo "no aarch64 test binary" >&2; exit 1; }

syms=$(mktemp)
log=$(mktemp)
trap 'rm -f "$syms" "$log"' EXIT
aarch64-linux-gnu-nm -C -S --defined-only "$bin" >"$syms"
anchor_at=$(awk '$4 == "b2nd::filters::workload::run" { print $1 }' "$syms")
[ -n "$anchor_at" ] || { echo "workload::run not found in $bin" >&2; exit 1; }

# "0xSTART+0xSIZE,..." for the filters' code, shifted by where it was loaded
ranges() {
  python3 - "$1" "$syms" <<'PY'
import re, sys
base, out = int(sys.argv[1]), []
for line in open(sys.argv[2]):
    f = line.split(maxsplit=3)
    if len(f) == 4 and (re.match(r"b2nd::filters::(shuffle|bitshuffle|bytedelta)::", f[3]) or f[3].strip() == "b2nd::filters::workload::run"):
        out.append(f"0x{int(f[0], 16) + base:x}+0x{int(f[1], 16):x}")
print(",".join(out))
PY
}

count() { # FILTER KERNEL TYPESIZE
  local spec="$1 $2 $3" at base
  at=$(B2ND_WORKLOAD="$spec" setarch -R qemu-aarch64 "$bin" --exact filters::workload::workload --nocapture 2>/dev/null |
    sed -nE 's/^B2ND_WORKLOAD_ANCHOR 0x([0-9a-f]+)$/\1/p')
  base=$(( 0x$at - 0x$anchor_at ))
  B2ND_WORKLOAD="$spec" setarch -R qemu-aarch64 -one-insn-per-tb -d exec,nochain -dfilter "$(ranges "$base")" -D "$log" \
    "$bin" --exact filters::workload::workload --nocapture >/dev/null 2>&1
  grep -c '^Trace' "$log"
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
