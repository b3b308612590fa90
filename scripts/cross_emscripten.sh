#!/usr/bin/env bash
# WebAssembly for emscripten (wasm32-unknown-emscripten, what Pyodide runs), from Debian 12.
# Called as
#   scripts/cross.sh emscripten [setup|build|test]
#
# setup  Debian's emscripten (apt) and the Rust std (rustup). EMCC names another emcc (an
#        emsdk's), whose directory then comes first in PATH.
# build  the C library as a static library (cargo rustc --crate-type staticlib: the cdylib
#        would be an emscripten side module, which needs every C object built with -fPIC),
#        laid out in build/emscripten/install.
# test   c-blosc2's test programs (C_BLOSC2_SRC, a c-blosc2 3.3 source tree) built by emcc
#        against it and run by node (scripts/c-blosc2-tests.sh --emscripten).
#
# Rust's std for this target is built by the Rust project against a recent emscripten: its
# `struct stat` has no padding fields (emscripten 3.1.42 and later) and its time_t is 64-bit.
# Debian 12's emscripten is 3.1.6, whose stat and time_t are the older ones, so every file
# size and time that std reads there is wrong (docs/PORTING.md). The build succeeds with it;
# the tests that touch files fail. `test` says so when emcc is older than 3.1.42.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
what=${1:-test}
triple=wasm32-unknown-emscripten
inst=build/emscripten/install
if [ -n "${EMCC:-}" ]; then PATH="$(dirname "$EMCC"):$PATH"; fi
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

setup() {
  echo "== setup $triple"
  rustup target add "$triple" >/dev/null
  if ! command -v emcc >/dev/null; then
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq emscripten >/dev/null
  fi
  echo "setup: rust-std $triple, $(emcc --version | head -1)"
}

# emcc's version as a number (3.1.6: 30106)
emcc_version() { emcc --version | head -1 | sed -nE 's/.* ([0-9]+\.[0-9]+\.[0-9]+).*/\1/p'; }
emcc_code() { emcc_version | awk -F. '{print $1 * 10000 + $2 * 100 + $3}'; }

build() {
  echo "== build $triple (the C library, static)"
  CC_wasm32_unknown_emscripten=emcc AR_wasm32_unknown_emscripten=emar \
    cargo rustc --release --target "$triple" -p b2nd-capi --crate-type staticlib 2>&1 | tail -1
  ./scripts/install.sh "$inst" --static-only "target/$triple/release/libb2nd_capi.a"
}

run_tests() {
  : "${C_BLOSC2_SRC:?set C_BLOSC2_SRC to a c-blosc2 3.3 source tree}"
  local log=target/cross/$triple/c-blosc2-tests.log
  mkdir -p "$(dirname "$log")"
  echo "== c-blosc2's test programs under node (scripts/c-blosc2-tests.sh --emscripten)"
  local code; code=$(emcc_code)
  if [ "${code:-0}" -lt 30142 ]; then
    echo "  emcc $(emcc_version) is older than 3.1.42: Rust's std reads its struct stat and time_t wrongly, the programs that use files fail"
  fi
  ./scripts/c-blosc2-tests.sh "$C_BLOSC2_SRC" --emscripten --sample "${C_BLOSC2_SAMPLE:-3}" >"$log" 2>&1 || true
  echo "== $triple: c-blosc2's test programs: $(tail -1 "$log") ($log)"
  tail -1 "$log" | grep -q ' 0 failed'
}

case "$what" in
  setup) setup ;;
  build) setup; build ;;
  test) setup; build; run_tests ;;
  *) echo "usage: scripts/cross.sh emscripten [setup|build|test]" >&2; exit 2 ;;
esac
