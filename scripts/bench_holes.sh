#!/usr/bin/env bash
# How big a frame file grows under random chunk updates (benches/bench_holes.c): a 64 MiB
# contiguous frame of LZ4 chunks whose compressed sizes vary +-50%, UPDATES chunks picked
# at random replaced, then closed; its size against the same chunks repacked, for libb2nd
# (B2ND_DURABILITY as set, consistent by default) and the reference c-blosc2 3.3.5, each
# run in its own process, on this machine's disk (build/). Prints a Markdown table.
# usage: scripts/bench_holes.sh [UPDATES] [SEEDS] [CHUNK_KB...]   (defaults: 1000, 3, 64 1024)
set -euo pipefail
cd "$(dirname "$0")/.."
updates=${1:-1000}
seeds=${2:-3}
shift 2 || shift $# || true
sizes=${*:-64 1024}
venv=$(./scripts/setup.sh)
refdir=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
ours=$PWD/target/release/libb2nd_capi.so
ref=$refdir/lib/libblosc2.so
cargo build --release --lib >&2
mkdir -p build
cc -O2 -std=c11 -Wall -Wextra -Werror -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench_holes.c -ldl -o build/bench_holes
dir=$(mktemp -d "$PWD/build/holes_scratch.XXXXXX")
trap 'rm -rf "$dir"' EXIT

echo "| chunk | seed | libb2nd file / repacked | c-blosc2 file / repacked | libb2nd time | c-blosc2 time |"
echo "|---|---|---|---|---|---|"
for kb in $sizes; do
  for ((s = 1; s <= seeds; s++)); do
    read -r _ _ _ _ _ ro to < <(./build/bench_holes "$ours" "$dir" "$kb" "$updates" "$s" libb2nd)
    read -r _ _ _ _ _ rr tr < <(./build/bench_holes "$ref" "$dir" "$kb" "$updates" "$s" c-blosc2)
    echo "| $kb KiB | $s | $ro | $rr | $to s | $tr s |"
  done
done
