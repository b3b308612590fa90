#!/usr/bin/env bash
# The cost of durability: appends, chunk updates, b2nd appends (shape changes)
# and one-chunk set_slice on a contiguous frame file, libb2nd with
# B2ND_DURABILITY=off, consistent (the default) and durable, against the
# reference c-blosc2 3.3.5 (blosc2==4.14.1 wheel, which syncs nothing), on
# this machine's disk (build/) and on tmpfs (/dev/shm). One run per process
# (benches/bench_durability.c); the four interleaved, REPS rounds; each cell is
# the median over rounds of the run's median time per operation, and the
# ratios are medians of the per-round ratios. Prints a Markdown table.
# usage: scripts/bench_durability.sh [REPS] [CHUNK_KB...]   (defaults: 5, 64 1024)
# B2ND_BEFORE=path/to/libb2nd.so adds a column for another build of libb2nd (an earlier
# commit, say), run with its defaults.
set -euo pipefail
cd "$(dirname "$0")/.."
reps=${1:-5}
shift || true
sizes=${*:-64 1024}
venv=$(./scripts/setup.sh)
refdir=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
ours=$PWD/target/release/libb2nd_capi.so
ref=$refdir/lib/libblosc2.so
cargo build --release --lib >&2
mkdir -p build
cc -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench_durability.c -ldl \
  -o build/bench_durability

disk=$(mktemp -d "$PWD/build/durability_scratch.XXXXXX")
shm=$(mktemp -d /dev/shm/b2nd_durability.XXXXXX)
results=$disk.results
trap 'rm -rf "$disk" "$shm" "$results"' EXIT
: >"$results"

count_for() {  # OP CHUNK_KB -> number of operations timed
  local n=$((64 * 1024 / $2))
  ((n < 40)) && n=40
  ((n > 400)) && n=400
  echo "$n"
}

for fs in disk tmpfs; do
  dir=$([ $fs = disk ] && echo "$disk" || echo "$shm")
  for kb in $sizes; do
    for op in append update b2nd_append set_slice; do
      n=$(count_for "$op" "$kb")
      for ((r = 0; r < reps; r++)); do
        for who in ref off consistent durable ${B2ND_BEFORE:+before}; do
          case $who in ref) lib=$ref ;; before) lib=$B2ND_BEFORE ;; *) lib=$ours ;; esac
          line=$(B2ND_DURABILITY=$(case $who in ref|before) echo consistent ;; *) echo "$who" ;; esac) \
            ./build/bench_durability "$lib" "$op" "$dir" "$kb" "$n" "$who") || { echo "$fs $op $who failed" >&2; exit 1; }
          echo "$fs $r $line" >>"$results"
          echo "$fs $r $line" >&2
        done
      done
    done
  done
done

python3 - "$results" <<'EOF'
import sys, statistics as st, collections
rows = collections.defaultdict(dict)   # (fs, op, kb) -> who -> [median_us per round]
for line in open(sys.argv[1]):
    fs, r, op, who, kb, n, med, mean, total = line.split()
    rows[(fs, op, int(kb))].setdefault(who, {})[int(r)] = float(med)
before = any("before" in d for d in rows.values())
print("| storage | operation | chunk | c-blosc2 | off | consistent | durable | consistent / off | durable / off | consistent / c-blosc2 |"
      + (" before | consistent / before |" if before else ""))
print("|---|---|---|---|---|---|---|---|---|---|" + ("---|---|" if before else ""))
def ratio(d, a, b):
    return st.median(d[a][r] / d[b][r] for r in d[a] if r in d[b])
for (fs, op, kb), d in sorted(rows.items(), key=lambda x: (x[0][0], x[0][1], x[0][2])):
    cell = lambda w: "%.0f µs" % st.median(d[w].values())
    print(f"| {fs} | {op} | {kb} KiB | {cell('ref')} | {cell('off')} | {cell('consistent')} | {cell('durable')} "
          f"| {ratio(d,'consistent','off'):.2f} | {ratio(d,'durable','off'):.2f} | {ratio(d,'consistent','ref'):.2f} |"
          + (f" {cell('before')} | {ratio(d,'consistent','before'):.2f} |" if before else ""))
EOF
