#!/usr/bin/env bash
# Peak memory and time of b2nd shape changes, copies and concatenation on a large
# on-disk array (float64 {8000, 16000}/SCALE, chunks {1000, 1000}/SCALE, Zstd 1,
# shuffle, contiguous frame file), libb2nd against the reference c-blosc2 3.3.5
# (blosc2==4.14.1 wheel). One operation per process (benches/bench_reshape.c);
# every operation starts from a fresh copy of the same source file; ours and
# c-blosc2 interleaved, REPS times. Prints a Markdown table.
# usage: scripts/bench_reshape.sh [SCALE] [REPS]    (defaults: 1 = full size, 3)
set -euo pipefail
cd "$(dirname "$0")/.."
scale=${1:-1}
reps=${2:-3}
venv=$(./scripts/setup.sh)
export PATH="$venv/bin:$PATH"  # cmake and python from the venv
refdir=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
declare -A lib=([ours]="$PWD/target/release/libb2nd_capi.so" [ref]="$refdir/lib/libblosc2.so")
cargo build --release --lib >&2
mkdir -p build
cc -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench_reshape.c -ldl \
  -o build/bench_reshape

scratch=$(mktemp -d "$PWD/build/reshape_scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
results=$scratch/results.txt
checks=$scratch/checks.txt
: >"$results"
: >"$checks"

# One run; its line goes to $results (a crash or a kill gets a line too).
run() {  # run LABEL OP
  local line rc=0
  line=$(timeout "${BENCH_TIMEOUT:-3600}" ./build/bench_reshape "${lib[$1]}" "$2" "$scratch/$1" "$scale" "$1") || rc=$?
  if [ -z "$line" ]; then
    line="$2 $1 nan nan nan crashed(exit=$rc)"
  fi
  echo "$line" >>"$results"
  echo "$line" >&2
}

for l in ours ref; do
  mkdir -p "$scratch/$l"
  run "$l" create
done
srcsize=$(du -m --apparent-size "$scratch/ref/orig.b2nd" | cut -f1)

ops="open read_box resize_grow0 resize_grow1 resize_shrink0 insert_mid append1 delete_rows delete_cols copy
get_slice concat resize_grow1_unaligned insert_mid_unaligned delete_unaligned"
for op in $ops; do
  for ((r = 0; r < reps; r++)); do
    for l in ours ref; do
      cp "$scratch/$l/orig.b2nd" "$scratch/$l/src.b2nd"
      rm -f "$scratch/$l/out.b2nd"
      run "$l" "$op"
      if [ "$r" = 0 ] && ! tail -1 "$results" | grep -q refused; then
        # The other library reads the result (a refused operation leaves the source).
        other=$([ "$l" = ours ] && echo ref || echo ours)
        if ./build/bench_reshape "${lib[$other]}" "check:$op" "$scratch/$l" "$scale" "$other-reads-$l" >>"$checks" 2>&1; then :; else
          echo "check:$op $other-reads-$l FAIL" >>"$checks"
        fi
      fi
      rm -f "$scratch/$l/src.b2nd" "$scratch/$l/out.b2nd"
    done
  done
done

echo "cross-check (each library reads the other's results, checked against the model):" \
  "$(grep -c ' ok$' "$checks") ok, $(grep -c 'FAIL' "$checks") failed"
grep FAIL "$checks" || true
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); date: $(date -u +%F)"
echo "array: float64 {$((8000 / scale)), $((16000 / scale))}, chunks {$((1000 / scale)), $((1000 / scale))}," \
  "blocks {$((250 / scale)), $((1000 / scale))}, Zstd clevel 1, shuffle, 1 thread; source file ${srcsize} MB;" \
  "$reps repetitions, one operation per process"
echo
"$venv/bin/python" - "$results" <<'EOF'
import math, statistics, sys
rows = {}
order = []
for line in open(sys.argv[1]):
    op, lib, t, peak, bound, status = line.split()
    if op == "create":
        continue
    if op not in rows:
        rows[op] = {"ours": [], "ref": []}
        order.append(op)
    rows[op][lib].append((float(t), float(peak), float(bound), status))

def cell(runs):
    """peak MB (max over the runs), median s; or what went wrong"""
    bad = sorted({s for _, _, _, s in runs if s != "ok"})
    peak = max(p for _, p, _, _ in runs)
    if bad:
        return f"{peak:.0f}", "/".join(bad), None
    t = statistics.median(x for x, _, _, _ in runs)
    return f"{peak:.0f}", f"{t:.4f}", t

print("| operation | bound MB | ours: peak MB | ours: median s | c-blosc2: peak MB | c-blosc2: median s | time ours/ref |")
print("|---|---:|---:|---:|---:|---:|---:|")
for op in order:
    bound = rows[op]["ours"][0][2] if rows[op]["ours"] else rows[op]["ref"][0][2]
    op_, ot, o = cell(rows[op]["ours"])
    rp, rt, r = cell(rows[op]["ref"])
    over = lambda p: f"**{p}**" if p != "nan" and float(p) > bound else p
    ratio = f"{o / r:.2f}" if o is not None and r is not None and r > 0 else "-"
    print(f"| {op} | {bound:.0f} | {over(op_)} | {ot} | {over(rp)} | {rt} | {ratio} |")
print()
print("bound = own buffers + 8 uncompressed chunks + 64 MB; peak = ru_maxrss of the whole process"
      " (bold: above the bound); `open` is the baseline (open and free only).")
EOF
