#!/usr/bin/env bash
# The tuner (tuner_id = BLOSC_BTUNE; docs/PLUGINS.md, "The tuner") against a full grid of
# codecs, filters, levels, split modes and block sizes timed on the same chunks, and against
# c-blosc2's and python-blosc2's defaults, on real datasets from PyPI packages and the chunk
# benchmark's synthetic ones (scripts/bench_tuner.py lists them). For each dataset:
# `b2nd tune --matrix --json` (COMP, DECOMP, BALANCED x tradeoffs 0, 0.5, 1; 1 thread; 4 MiB
# chunks; the grid on 2 chunks), then a run in 1 MiB chunks for the cost of tuning; the tables
# (Markdown) on stdout and in OUT/report.md.
# With --btune, Btune 1.2.1 without models on the same data and settings (in a venv of
# python-blosc2 3.6.1, whose c-blosc2 2.19.1 it fits: scripts/bench_tuner_btune.py).
# usage: scripts/bench_tuner.sh [--prepare-only] [--only NAME,NAME] [--out DIR]
#                               [--sample-chunks N] [--repeats N] [--btune] [--report-only]
# Takes about an hour on 2 cores (the grid: 2160 candidates per dataset); the grids are kept
# in OUT/NAME.grid and reused by the next run of the same OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
only="" out=build/tuner-bench prepare_only=0 sample=2 repeats=1 btune=0 report_only=0
while (($#)); do
  case $1 in
    --prepare-only) prepare_only=1 ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    --sample-chunks) sample=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    --btune) btune=1 ;;
    --report-only) report_only=1 ;;
    *) echo "usage: $0 [--prepare-only] [--only NAME,..] [--out DIR] [--sample-chunks N] [--repeats N] [--btune] [--report-only]" >&2; exit 2 ;;
  esac
  shift
done
data=build/tuner-data
mkdir -p "$data" "$out"
./scripts/bench.sh --prepare-only >/dev/null  # DE421 (build/bench-data/de421.f64)
venv=$data/venv
if ! "$venv/bin/python" -c 'import numpy, PIL' 2>/dev/null; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet --disable-pip-version-check numpy pillow
fi
"$venv/bin/python" scripts/bench_tuner.py prepare "$data"
((prepare_only)) && exit 0
cargo build --release -p b2nd-cli >&2
tool=target/release/b2nd
names=()
for f in "$data"/*.npy; do
  name=$(basename "$f" .npy)
  [[ -z $only || ,$only, == *,$name,* ]] && names+=("$name")
done
if ((!report_only)); then
  for name in "${names[@]}"; do
    f=$data/$name.npy
    echo "== $name: grid and tuner" >&2
    "$tool" tune --matrix --json --sample-chunks "$sample" --repeats "$repeats" --grid-file "$out/$name.grid" "$f" \
      >"$out/$name.json"
    echo "== $name: the cost of tuning, 1 MiB chunks" >&2
    # (best of 5 runs each way: a busy machine slows single runs by as much as tuning costs)
    "$tool" tune --json --no-grid --repeats 5 --chunk-bytes 1048576 --tradeoff 0.5 --perf-mode COMP "$f" \
      >"$out/$name.cost.json"
  done
fi
if ((btune)); then
  bv=$data/btune-venv
  if ! PATH="$bv/bin:$PATH" "$bv/bin/python" -c 'import blosc2, blosc2_btune' 2>/dev/null; then
    python3 -m venv "$bv"
    "$bv/bin/pip" install --quiet --disable-pip-version-check "blosc2==3.6.1" "blosc2-btune==1.2.1"
  fi
  echo "== Btune 1.2.1 (python-blosc2 3.6.1)" >&2
  PATH="$bv/bin:$PATH" "$bv/bin/python" scripts/bench_tuner_btune.py "$data" "$out" "${names[@]}"
fi
"$venv/bin/python" scripts/bench_tuner.py report "$out" | tee "$out/report.md"
