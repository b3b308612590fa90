#!/usr/bin/env bash
# The thread-scaling benchmark on a lent many-core machine (the device tool), in one run.
#   scripts/bench_device.sh prepare   here: builds the worker and libb2nd, and puts them, the
#                                     reference libblosc2.so and the DE421 data in build/devbench
#                                     (about 33 MB: the device tool carries up to 64 MiB)
#   scripts/bench_device.sh run       there, with $OUT set: the chunks, b2nd and schunk suites at
#                                     B2ND_DEVICE_THREADS (default 1,2,3,4,6,8,10,12,14,16), 3 rounds
#                                     each, every suite bounded in time; results in $OUT/SUITE.md
#                                     and .json, the machine and each suite's end in $OUT/machine.txt
# The device tool's call, from the repository root:
#   run(command="bash scripts/bench_device.sh run", carry=["build/devbench"], timeout_s=540)
set -euo pipefail
cd "$(dirname "$0")/.."
kit=build/devbench
case ${1:-} in
prepare)
  ref=$(./scripts/bench.sh --prepare-only)
  rm -rf "$kit" && mkdir -p "$kit/data"
  cp build/bench_worker "$kit/"
  cp target/release/libb2nd_capi.so "$kit/libb2nd.so"
  cp "$ref" "$kit/libblosc2.so"
  cp build/bench-data/de421.f64 "$kit/data/"
  du -sh "$kit"
  ;;
run)
  : "${OUT:?run it on the device machine, where \$OUT is set}"
  [[ -x $kit/bench_worker ]] || { echo "no $kit: run 'scripts/bench_device.sh prepare' here, and carry $kit" >&2; exit 2; }
  threads=${B2ND_DEVICE_THREADS:-1,2,3,4,6,8,10,12,14,16}
  { nproc; lscpu | grep -E "Model name|^CPU\(s\)|Thread|Core|Socket"; python3 --version; } >"$OUT/machine.txt" 2>&1
  suite() {  # SUITE SECONDS
    local rc=0
    timeout "$2" python3 scripts/bench.py --ours "$PWD/$kit/libb2nd.so" --ref "$PWD/$kit/libblosc2.so" \
      --worker "$kit/bench_worker" --data "$kit/data" --rainfall tests/data/raw/rainfall-grid-150x150.bin \
      --suites "$1" --threads "$threads" --rounds 3 --json "$OUT/$1.json" >"$OUT/$1.md" 2>"$OUT/$1.err" || rc=$?
    echo "$1 rc=$rc $(date +%T)" >>"$OUT/machine.txt"
  }
  suite chunks 290
  suite b2nd 100
  suite schunk 60
  ;;
*)
  echo "usage: scripts/bench_device.sh prepare|run" >&2
  exit 2
  ;;
esac
