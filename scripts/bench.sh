#!/usr/bin/env bash
# Benchmark libb2nd against the reference c-blosc2 3.3.5 (from the blosc2==4.14.1 wheel),
# side by side in one process with interleaved repetitions. Prints a Markdown table.
# usage: scripts/bench.sh [REPS]
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(./scripts/setup.sh)
export PATH="$venv/bin:$PATH"  # cmake and python from the venv
ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
cargo build --release --lib >&2
mkdir -p build
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench.c -ldl -lm -o build/bench
echo "machine: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'); date: $(date -u +%F)"
./build/bench "$PWD/target/release/libb2nd.so" "$ref/lib/libblosc2.so" "${1:-5}" \
  tests/data/raw/rainfall-grid-150x150.bin
echo
echo "the same beside one busy process (a loaded machine):"
BENCH_LOAD=1 ./build/bench "$PWD/target/release/libb2nd.so" "$ref/lib/libblosc2.so" "${1:-5}" \
  tests/data/raw/rainfall-grid-150x150.bin
echo
echo "plugin filters (shuffle+bytedelta on float32/float64, int_trunc on integers; LZ4 and Zstd):"
BENCH_PLUGINS=1 ./build/bench "$PWD/target/release/libb2nd.so" "$ref/lib/libblosc2.so" "${1:-5}" \
  tests/data/raw/rainfall-grid-150x150.bin
echo
echo "super-chunks (64 chunks of 1 MiB, LZ4, 1 thread):"
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench_schunk.c -ldl -o build/bench_schunk
mkdir -p build/bench_scratch
./build/bench_schunk "$PWD/target/release/libb2nd.so" "$ref/lib/libblosc2.so" build/bench_scratch "${1:-5}"
echo
echo "b2nd arrays (200^3 float32 and float64, chunks 50^3, blocks 10^3, LZ4, 1 and 2 threads):"
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench_b2nd.c -ldl -lm -o build/bench_b2nd
./build/bench_b2nd "$PWD/target/release/libb2nd.so" "$ref/lib/libblosc2.so" "${1:-5}"
