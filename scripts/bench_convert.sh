#!/usr/bin/env bash
# Time and peak memory of b2nd convert and b2nd repack on a large array (GB of
# float64 items, default 1), against cp of the file and python-blosc2 doing the same
# jobs; each job in its own process (benches/bench_convert.py). Prints a Markdown table.
# usage: scripts/bench_convert.sh [GB]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(./scripts/setup.sh)
cargo build --release --bin b2nd >&2
mkdir -p build
scratch=$(mktemp -d "$PWD/build/convert_scratch.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
"$venv/bin/python" benches/bench_convert.py "$PWD/target/release/b2nd" "$scratch" "${1:-1}"
