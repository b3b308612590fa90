#!/usr/bin/env bash
# The tuner (tuner_id = BLOSC_BTUNE; docs/PLUGINS.md, "The tuner") against a full grid of
# codecs, filters, levels, split modes and block sizes timed on the same chunks, and against
# c-blosc2's and python-blosc2's defaults, on real datasets from PyPI packages and the chunk
# benchmark's synthetic ones (scripts/bench_tuner.py lists them). For each dataset:
# `b2nd tune --matrix --json` (COMP, DECOMP, BALANCED x tradeoffs 0, 0.5, 1; 1 thread; 4 MiB
# chunks; the grid on 2 chunks), then a run in 1 MiB chunks for the cost of tuning; the tables
# (Markdown) on stdout and in OUT/report.md.
# usage: scripts/bench_tuner.sh [--prepare-only] [--only NAME,NAME] [--out DIR]
#                               [--sample-chunks N] [--repeats N]
# Takes about an hour on 2 cores (the grid: 2160 candidates per dataset); the grids are kept
# in OUT/NAME.grid and reused by the next run of the same OUT.
set -euo pipefail
cd "$(dirname "$0")/.."
only="" out=build/tuner-bench prepare_only=0 sample=2 repeats=1
while (($#)); do
  case $1 in
    --prepare-only) prepare_only=1 ;;
    --only) only=$2; shift ;;
    --out) out=$2; shift ;;
    --sample-chunks) sample=$2; shift ;;
    --repeats) repeats=$2; shift ;;
    *) echo "usage: $0 [--prepare-only] [--only NAME,..] [--out DIR] [--sample-chunks N] [--repeats N]" >&2; exit 2 ;;
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
for f in "$data"/*.npy; do
  name=$(basename "$f" .npy)
  [[ -z $only || ,$only, == *,$name,* ]] || continue
  echo "== $name: grid and tuner" >&2
  "$tool" tune --matrix --json --sample-chunks "$sample" --repeats "$repeats" --grid-file "$out/$name.grid" "$f" \
    >"$out/$name.json"
  echo "== $name: the cost of tuning, 1 MiB chunks" >&2
  "$tool" tune --json --no-grid --chunk-bytes 1048576 --tradeoff 0.5 --perf-mode COMP "$f" >"$out/$name.cost.json"
done
"$venv/bin/python" scripts/bench_tuner.py report "$out" | tee "$out/report.md"
