#!/usr/bin/env bash
# WebAssembly (wasm32-wasip1) from a fresh Debian 12 machine: zig compiles the C sources,
# Rust's lld (wasm-ld) links, wasmtime runs. Called as
#   scripts/cross.sh wasm32 [setup|build|test]
#
# setup  the Rust std (rustup); zig and wasmtime from PyPI in a venv of their own
#        (build/wasm/tools), with a `zig cc -target wasm32-wasi` wrapper.
# build  the core crate and its tests, and the C library as a static library.
# test   every Rust test of the core under wasmtime, each in an instance of its own
#        (scripts/wasm/run.py --tests), the ones that need processes, signals or threads
#        ignored there with the reason; then the file exchanges (tests/cross_files.rs):
#        x86-64's set read under wasmtime, wasm32's read on x86-64 and by python-blosc2.
#        Prints "N passed, N failed" per part and in all.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
what=${1:-test}
triple=wasm32-wasip1
tools=$PWD/build/wasm/tools
out=target/cross/$triple
ZIGLANG_VERSION=0.17.1
WASMTIME_VERSION=50.0.1

# part, exchange, python_reads
source scripts/cross_counts.sh
llvm() { command -v "$1" 2>/dev/null || command -v "$1-14" 2>/dev/null || { echo "no $1" >&2; return 1; }; }

setup() {
  echo "== setup $triple"
  rustup target add "$triple" >/dev/null
  if [ "$("$tools/bin/python" -m ziglang version 2>/dev/null)" != "$ZIGLANG_VERSION" ] \
     || ! "$tools/bin/python" -c "import wasmtime" 2>/dev/null; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q "ziglang==$ZIGLANG_VERSION" "wasmtime==$WASMTIME_VERSION"
  fi
  # zig cc for wasm32-wasi, as one command; the target cc-rs adds (--target=wasm32-wasip1)
  # gives way to zig's own
  printf '%s\n' '#!/bin/sh' '# (zig cc --version, which cc-rs asks, leaves an empty a.o where it runs)' \
    '[ "$*" = --version ] && cd "${TMPDIR:-/tmp}"' 'for a do' '  shift' '  case "$a" in --target=*) ;; *) set -- "$@" "$a" ;; esac' 'done' \
    "exec \"$tools/bin/python\" -m ziglang cc -target wasm32-wasi \"\$@\"" >"$tools/bin/zig-cc-wasm32"
  chmod +x "$tools/bin/zig-cc-wasm32"
  echo "setup: rust-std $triple, zig $("$tools/bin/python" -m ziglang version), wasmtime $WASMTIME_VERSION (Python)"
}

# The C compiler, archiver and runner of the target, for every cargo call (the exchanges' too)
export CC_wasm32_wasip1="$tools/bin/zig-cc-wasm32" CARGO_TARGET_WASM32_WASIP1_RUNNER="$PWD/scripts/wasm/run"
AR_wasm32_wasip1="$(llvm llvm-ar)"
export AR_wasm32_wasip1
cargo_wasm() { cargo "$@"; }

build() {
  echo "== build $triple"
  mkdir -p "$out"
  cargo_wasm build --release --target "$triple" -p b2nd -p b2nd-capi 2>&1 | tail -1
  cargo_wasm test --release --target "$triple" -p b2nd --features ndarray --no-run 2>&1 | tail -1
}

run_tests() {
  echo "== Rust tests of the core under wasmtime"
  local progs
  mapfile -t progs < <(cargo_wasm test --release --target "$triple" -p b2nd --features ndarray --no-run \
    --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])')
  "$tools/bin/python" scripts/wasm/run.py --tests "${progs[@]}" >"$out/tests.log" 2>&1 || true
  grep -E 'FAILED' "$out/tests.log" | head -20 || true
  local p=0 f=1 i=0
  if tail -1 "$out/tests.log" | grep -qE '^[0-9]+ passed, [0-9]+ failed, [0-9]+ ignored$'; then
    read -r p f i < <(tail -1 "$out/tests.log" | awk '{print $1, $3, $5}')
  else
    tail -5 "$out/tests.log"
  fi
  echo "  ignored under WASI: ${i:-0} ($out/tests.log: each with its reason)"
  part "Rust tests of the core" "${p:-0}" "${f:-1}"
  run_exchanges
}

run_exchanges() {
  echo "== files across machines (tests/cross_files.rs)"
  local venv
  venv=$(./scripts/setup.sh)
  exchange "x86-64 files read on $triple" "" "$triple" "target/cross/x86_64-unknown-linux-gnu/set"
  exchange "$triple files read on x86-64" "$triple" "" "$out/set"
  python_reads "$triple files read by python-blosc2" "$out/set" "$venv"
}

case "$what" in
  setup) setup ;;
  build) setup; build ;;
  test) setup; build; run_tests ;;
  exchanges) setup; mkdir -p "$out"; run_exchanges ;;
  *) echo "usage: scripts/cross.sh wasm32 [setup|build|test|exchanges]" >&2; exit 2 ;;
esac
if [ "$what" = test ] || [ "$what" = exchanges ]; then
  echo "== $triple: $total_passed passed, $total_failed failed"
  [ "$total_failed" = 0 ]
fi
