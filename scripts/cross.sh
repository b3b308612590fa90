#!/usr/bin/env bash
# Build and test libb2nd for another architecture, from a fresh Debian 12 machine.
#
#   scripts/cross.sh TARGET [setup|setup-build|build|test]    (default: test, which builds first)
#
# TARGET: aarch64 (NEON, under qemu), i686 (32-bit, runs natively on an
# x86-64 kernel), s390x (big-endian, under qemu), windows (mingw-w64 and wine:
# scripts/cross_windows.sh), macos-arm64, macos-x86_64 or macos (both; built
# and linked with zig, never run: scripts/cross_macos.sh, default build),
# wasm32 (wasm32-wasip1 under wasmtime: scripts/cross_wasm.sh), emscripten
# (wasm32-unknown-emscripten under node: scripts/cross_emscripten.sh), or
# the full Rust triple.
#
# setup  installs what the target needs: the Rust standard library (rustup),
#        the target's gcc and libc (Debian; to run i686 tests, also the 32-bit loader
#        and libgcc_s), and (not for build) qemu-user 10 from
#        bookworm-backports (Debian 12's qemu 7.2 hangs on the first thread)
#        registered with binfmt_misc, so that the tests' own child processes
#        run too. Needs root for apt and binfmt_misc.
# setup-build  the same, without the emulator (enough to build).
# build  builds the library, the b2nd tool and every test for the target.
# test   runs every Rust test (unit, integration, the no-allocation harness)
#        under the target, then exchanges files with the x86-64 build both
#        ways (tests/cross_files.rs), checks the target's files with
#        python-blosc2 4.14.1, and runs the ABI check (our headers against
#        c-blosc2's, both compiled by the target's gcc). Prints
#        "N passed, N failed" per part and in all; exits 1 if any failed.
#
# Results of the last runs: docs/PORTING.md.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

case "${1:-}" in
  windows|x86_64-pc-windows-gnu) shift; exec "$(dirname "$0")/cross_windows.sh" "$@" ;;
  macos|macos-arm64|macos-x86_64) exec "$(dirname "$0")/cross_macos.sh" "$@" ;;
  wasm32|wasm32-wasip1) shift; exec "$(dirname "$0")/cross_wasm.sh" "$@" ;;
  emscripten|wasm32-unknown-emscripten) shift; exec "$(dirname "$0")/cross_emscripten.sh" "$@" ;;
  aarch64|aarch64-unknown-linux-gnu) triple=aarch64-unknown-linux-gnu; gnu=aarch64-linux-gnu; qemu=aarch64; deb=arm64 ;;
  i686|i686-unknown-linux-gnu) triple=i686-unknown-linux-gnu; gnu=i686-linux-gnu; qemu=; deb=i386 ;;
  s390x|s390x-unknown-linux-gnu) triple=s390x-unknown-linux-gnu; gnu=s390x-linux-gnu; qemu=s390x; deb=s390x ;;
  *) echo "usage: $0 aarch64|i686|s390x|windows|macos-arm64|macos-x86_64|macos|wasm32|emscripten [setup|build|test]" >&2; exit 2 ;;
esac
what="${2:-test}"
out="target/cross/$triple"
host_out="target/cross/x86_64-unknown-linux-gnu"

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

setup() { # emulate: also qemu and binfmt_misc (to run the tests)
  local emulate=$1
  echo "== setup $triple"
  rustup target add "$triple" >/dev/null
  local pkgs=("gcc-$gnu" "libc6-dev-$deb-cross")
  # i686 programs run natively: the 32-bit loader (/lib/ld-linux.so.2) and
  # libgcc_s (unwinding), which a fresh x86-64 Debian lacks
  [ "$emulate" = yes ] && [ "$deb" = i386 ] && pkgs+=(libc6-i386 lib32gcc-s1)
  local need=()
  for p in "${pkgs[@]}"; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  [ "$emulate" = yes ] || qemu=
  if [ -n "$qemu" ] && ! qemu-"$qemu" --version 2>/dev/null | grep -qE 'version ([89]|[1-9][0-9])\.'; then
    if ! grep -rqs bookworm-backports /etc/apt/sources.list /etc/apt/sources.list.d/; then
      printf 'Types: deb\nURIs: http://deb.debian.org/debian\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' \
        | as_root tee /etc/apt/sources.list.d/bookworm-backports.sources >/dev/null
    fi
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq -t bookworm-backports qemu-user >/dev/null
  fi
  if [ ${#need[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  if [ -n "$qemu" ]; then
    # binfmt_misc, so that a test's child process (its own binary, started
    # again) runs under qemu as its parent does
    [ -e /proc/sys/fs/binfmt_misc/register ] || as_root mount -t binfmt_misc binfmt_misc /proc/sys/fs/binfmt_misc
    [ -e "/proc/sys/fs/binfmt_misc/qemu-$qemu" ] || as_root sh -c "cat /usr/lib/binfmt.d/qemu-$qemu.conf > /proc/sys/fs/binfmt_misc/register"
  fi
  echo "setup: rust-std $triple, gcc-$gnu $("$gnu-gcc" -dumpversion)${qemu:+, $(qemu-"$qemu" --version | head -1)}"
}

build() {
  echo "== build $triple"
  # (one build: the tests' build makes the library and the tool too)
  cargo test --release --target "$triple" --features ndarray --no-run 2>&1 | tail -1
}

# count LOG and part NAME PASSED FAILED: the tallies (shared with cross_windows.sh)
# shellcheck source=cross_counts.sh
source scripts/cross_counts.sh

run_tests() {
  mkdir -p "$out"
  [ -n "$qemu" ] && export QEMU_LD_PREFIX="/usr/$gnu"
  echo "== Rust tests on $triple"
  local log="$out/tests.log"
  cargo test --release --target "$triple" --features ndarray --no-fail-fast -- --include-ignored >"$log" 2>&1 || true
  count "$log"
  grep -E '^test .* FAILED$|panicked at' "$log" | head -20 || true
  part "Rust tests" "$passed" "$failed"
  example "target/$triple/release/examples/arrays"

  echo "== files across machines"
  local venv
  venv=$(./scripts/setup.sh)
  exchange "x86-64 files read on $triple" "" "$triple" "$host_out/set"
  exchange "$triple files read on x86-64" "$triple" "" "$out/set"
  python_reads "$triple files read by python-blosc2" "$out/set" "$venv"

  echo "== ABI: our headers against c-blosc2's, compiled by $gnu-gcc"
  local ref
  ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.join(os.path.dirname(blosc2.__file__), "include"))')
  "$venv/bin/python" c_tests/abi/gen_abi_check.py "$ref" >"$out/abi_check.c"
  # (the program only prints sizes and constants: the headers' inline helpers
  # that call into the library are left unresolved, no library is linked)
  local cc=("$gnu-gcc" -std=c11 -O2 -DBLOSC1_COMPAT "-Wl,--unresolved-symbols=ignore-all")
  "${cc[@]}" -Iinclude -o "$out/abi_ours" "$out/abi_check.c"
  "${cc[@]}" -I"$ref" -o "$out/abi_ref" "$out/abi_check.c"
  "$out/abi_ours" >"$out/abi_ours.txt"
  "$out/abi_ref" >"$out/abi_ref.txt"
  local facts
  facts=$(wc -l <"$out/abi_ref.txt")
  if diff "$out/abi_ref.txt" "$out/abi_ours.txt" >"$out/abi.diff"; then
    part "ABI facts (sizes, offsets, constants)" "$facts" 0
  else
    head -20 "$out/abi.diff"
    part "ABI facts (sizes, offsets, constants)" $((facts - $(grep -c '^<' "$out/abi.diff"))) "$(grep -c '^<' "$out/abi.diff")"
  fi

  echo "== $triple: $total_passed passed, $total_failed failed"
  [ "$total_failed" = 0 ]
}

case "$what" in
  setup) setup yes ;;
  setup-build) setup no ;;
  build) setup no; build ;;
  test) setup yes; build; run_tests ;;
  *) echo "usage: $0 TARGET [setup|build|test]" >&2; exit 2 ;;
esac
