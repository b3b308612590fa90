#!/usr/bin/env bash
# WebAssembly (wasm32-wasip1) from a fresh Debian 12 machine: zig compiles the C sources,
# Rust's lld (wasm-ld) links, wasmtime runs. Called as
#   scripts/cross.sh wasm32 [setup|build|test|c-tests|exchanges|ci]
#
# setup  the Rust std (rustup); zig and wasmtime from PyPI in a venv of their own
#        (build/wasm/tools), with a `zig cc -target wasm32-wasi` wrapper.
# build  the core crate and its tests, and the C library as a static library, laid out in
#        build/wasm/install as scripts/install.sh lays out the Linux one.
# test   every Rust test of the core under wasmtime, each in an instance of its own
#        (scripts/wasm/run.py --tests), the ones that need processes, signals or threads
#        ignored there with the reason; then our C tests (c-tests, below); c-blosc2's test
#        programs, when C_BLOSC2_SRC names a c-blosc2 3.3 source tree (scripts/c-blosc2-tests.sh
#        --wasi, C_BLOSC2_SAMPLE rows of each csv, default 3); then the file exchanges
#        (tests/cross_files.rs): x86-64's set read under wasmtime, wasm32's read on x86-64 and
#        by python-blosc2. Prints "N passed, N failed" per part and in all.
# ci     what scripts/test.sh runs: the core and the C library built (not the tests), and one
#        C program (c_tests/test_chunk_api.c) linked against the static library and run
#        under wasmtime.
# c-tests  our C tests (c_tests/) built by zig cc against the static library and run under
#        wasmtime with the arguments c_tests/CMakeLists.txt gives them; the cross-compatibility
#        programs (x*.c) write under wasmtime and read what c-blosc2 3.3.5 (the reference wheel,
#        on this machine) wrote, and the reverse. The programs that need what WASI lacks are
#        listed with the reason.
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
# shellcheck source=cross_counts.sh
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
  cat >"$tools/bin/zig-cc-wasm32" <<EOF
#!/bin/sh
# (zig cc --version, which cc-rs asks, leaves an empty a.o where it runs)
[ "\$*" = --version ] && cd "\${TMPDIR:-/tmp}"
for a do
  shift
  case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac
done
exec "$tools/bin/python" -m ziglang cc -target wasm32-wasi "\$@"
EOF
  chmod +x "$tools/bin/zig-cc-wasm32"
  echo "setup: rust-std $triple, zig $("$tools/bin/python" -m ziglang version), wasmtime $WASMTIME_VERSION (Python)"
}

# The C compiler, archiver and runner of the target, for every cargo call (the exchanges' too)
export CC_wasm32_wasip1="$tools/bin/zig-cc-wasm32" CARGO_TARGET_WASM32_WASIP1_RUNNER="$PWD/scripts/wasm/run"
AR_wasm32_wasip1="$(llvm llvm-ar)"
export AR_wasm32_wasip1
cargo_wasm() { cargo "$@"; }

build() {  # [lib: not the tests]
  echo "== build $triple"
  mkdir -p "$out"
  cargo_wasm build --release --target "$triple" -p b2nd -p b2nd-capi 2>&1 | tail -1
  [ "${1:-}" = lib ] || cargo_wasm test --release --target "$triple" -p b2nd --features ndarray --no-run 2>&1 | tail -1
  # The C library's install, static only (wasm32-wasi has no shared libraries)
  ./scripts/install.sh build/wasm/install --static-only "target/$triple/release/libb2nd_capi.a"
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
  run_c_tests
  run_c_blosc2
  run_exchanges
}

# One C test: `c_case NAME COMMAND...` runs it, counts it, shows the end of its output
# when it fails.
c_case() {
  local name=$1 log="$out/c_tests/$1.log"; shift
  if (cd "$out/c_tests/run" && "$@") >"$log" 2>&1; then
    c_ok=$((c_ok + 1))
  else
    c_bad=$((c_bad + 1)); echo "  FAILED $name:"; tail -5 "$log" | sed 's/^/    /'
  fi
}

run_c_tests() {
  echo "== our C tests (c_tests/) under wasmtime"
  local cc=$tools/bin/zig-cc-wasm32 lib=build/wasm/install/lib/libb2nd.a run=scripts/wasm/run
  local d=$PWD/$out/c_tests/run f name venv ref
  rm -rf "$out/c_tests"; mkdir -p "$d"
  c_ok=0; c_bad=0
  local -A lacks=(
    [test_conformance]="dup and child processes (stderr captured, environment cases run as children)"
    [test_schunk_locking]="child processes and locks between processes"
    [test_schunk_threads]="threads (pthread_create fails: the readers of one super-chunk are threads)"
    [test_core_cdylib]="the core crate's own test library, loaded with dlopen"
  )
  for f in c_tests/test_*.c c_tests/x*.c; do
    name=$(basename "$f" .c)
    [ -n "${lacks[$name]:-}" ] && continue
    "$cc" -std=gnu11 -O1 -Wall -Wextra -Werror -Wno-unused-function -DLIBB2ND_STRICT -Iinclude -Ic_tests \
      -o "$out/c_tests/$name.wasm" "$f" "$lib" -lm >"$out/c_tests/$name.build.log" 2>&1 \
      || { c_bad=$((c_bad + 1)); echo "  $name does not build: $(grep -m1 error "$out/c_tests/$name.build.log")"; }
  done
  local w=$PWD/$out/c_tests
  for name in test_chunk_api test_null_args test_plugins test_hooks; do c_case "$name" "$PWD/$run" "$w/$name.wasm"; done
  mkdir -p "$d/b2nd" "$d/testdata" "$d/api" "$d/crafted"
  c_case test_b2nd "$PWD/$run" "$w/test_b2nd.wasm" "$d/b2nd"
  c_case test_testdata_frames "$PWD/$run" "$w/test_testdata_frames.wasm" "$PWD/tests/data" "$d/testdata"
  c_case test_schunk_api "$PWD/$run" "$w/test_schunk_api.wasm" "$d/api"
  c_case test_frame_crafted "$PWD/$run" "$w/test_frame_crafted.wasm" "$d/crafted"
  local case
  for case in cframe sframe; do
    mkdir -p "$d/udio/$case"; c_case "udio_wrapped_$case" "$PWD/$run" "$w/test_udio_wrapped.wasm" "$case" "$d/udio/$case"
  done
  # (the cases of c_tests/CMakeLists.txt's set(B2ND_LAYOUT_CASES ...))
  for case in $(awk '/set\(B2ND_LAYOUT_CASES/{g=1} g{print} g&&/\)/{exit}' c_tests/CMakeLists.txt | tr '()' '  ' | tr -s ' ' '\n' | grep -v -e '^set$' -e B2ND_LAYOUT_CASES -e '^$'); do
    mkdir -p "$d/layouts/$case"; c_case "b2nd_$case" "$PWD/$run" "$w/test_b2nd_layouts.wasm" "$case" "$d/layouts/$case"
  done
  # The cross-compatibility programs, with c-blosc2 3.3.5 (the wheel's) on this machine: each
  # reads what the other wrote. (Not the byte comparison of ctest: LZ4 and Zstd hash by the
  # machine's word, so on a 32-bit machine they choose other matches than a 64-bit c-blosc2,
  # and xnd's data come from libm's sin, whose last bits differ in wasi-libc.)
  venv=$(./scripts/setup.sh)
  ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
  local x extra
  for x in xcompat xplugins xnd xframes; do
    extra=(); [ $x = xframes ] && extra=(--b2nd-writer)
    gcc -std=gnu11 -O1 -w -D_DEFAULT_SOURCE -I"$ref/include" -Ic_tests -o "$out/c_tests/${x}_ref" "c_tests/$x.c" \
      "$ref/lib/libblosc2.so" -Wl,-rpath,"$ref/lib" -lm >"$out/c_tests/${x}_ref.build.log" 2>&1 \
      || { c_bad=$((c_bad + 1)); echo "  ${x}_ref does not build: $(grep -m1 error "$out/c_tests/${x}_ref.build.log")"; continue; }
    mkdir -p "$d/$x/wasm" "$d/$x/ref"
    c_case "${x}_write_wasm" "$PWD/$run" "$w/$x.wasm" write "$d/$x/wasm" "${extra[@]}"
    c_case "${x}_write_ref" "$w/${x}_ref" write "$d/$x/ref"
    c_case "${x}_wasm_reads_wasm" "$PWD/$run" "$w/$x.wasm" check "$d/$x/wasm" "${extra[@]}"
    c_case "${x}_wasm_reads_ref" "$PWD/$run" "$w/$x.wasm" check "$d/$x/ref"
    c_case "${x}_ref_reads_wasm" "$w/${x}_ref" check "$d/$x/wasm" "${extra[@]}"
  done
  for name in "${!lacks[@]}"; do echo "  not run: $name: needs ${lacks[$name]}, which WASI lacks"; done | sort
  part "our C tests (c_tests/) under wasmtime" "$c_ok" "$c_bad"
}

run_c_blosc2() {
  if [ -z "${C_BLOSC2_SRC:-}" ]; then
    echo "== c-blosc2's test programs: skipped (set C_BLOSC2_SRC to a c-blosc2 3.3 source tree)"
    return
  fi
  echo "== c-blosc2's test programs under wasmtime (scripts/c-blosc2-tests.sh --wasi)"
  local log=$out/c-blosc2-tests.log p f
  ./scripts/c-blosc2-tests.sh "$C_BLOSC2_SRC" --wasi --sample "${C_BLOSC2_SAMPLE:-3}" >"$log" 2>&1 || true
  sed -n '/^Failed/,/^(logs/p' "$log" | head -20
  grep 'wasm32-wasi lacks' "$log" | sed -E 's/^ +/  skipped: /; s/ \(.*//' || true
  read -r p f < <(tail -1 "$log" | awk '{print $1, $3}')
  part "c-blosc2's test programs under wasmtime ($(tail -1 "$log"); $log)" "${p:-0}" "${f:-1}"
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
  c-tests) setup; build; run_c_tests; run_c_blosc2 ;;
  ci)
    setup; build lib
    mkdir -p "$out/c_tests/run"
    "$tools/bin/zig-cc-wasm32" -std=gnu11 -O1 -Wall -Wextra -Werror -Wno-unused-function -Iinclude -Ic_tests \
      -o "$out/c_tests/test_chunk_api.wasm" c_tests/test_chunk_api.c build/wasm/install/lib/libb2nd.a -lm
    c_ok=0; c_bad=0
    c_case test_chunk_api "$PWD/scripts/wasm/run" "$PWD/$out/c_tests/test_chunk_api.wasm"
    part "a C program on the static library, under wasmtime (c_tests/test_chunk_api.c)" "$c_ok" "$c_bad"
    ;;
  *) echo "usage: scripts/cross.sh wasm32 [setup|build|test|c-tests|exchanges|ci]" >&2; exit 2 ;;
esac
if [ "$what" != setup ] && [ "$what" != build ]; then
  echo "== $triple: $total_passed passed, $total_failed failed"
  [ "$total_failed" = 0 ]
fi
