#!/usr/bin/env bash
# Windows x86-64 (x86_64-pc-windows-gnu) from a fresh Debian 12 machine: mingw-w64 builds,
# wine runs. Called as scripts/cross.sh windows [setup|build|test].
#
# setup  mingw-w64 and wine (Debian), the Rust std (rustup), a wine prefix, and the
#        stand-in bcryptprimitives.dll that wine 8 lacks (scripts/wine/bcryptprimitives.c:
#        Rust's std imports ProcessPrng from it).
# build  the DLL, the tool and every test; lays out the install c-blosc2's Windows
#        install has in build/windows/install: bin/libblosc2.dll, lib/libblosc2.dll.a
#        (MinGW) and lib/libblosc2.lib (MSVC) import libraries made from a .def of the
#        DLL's exports, the static lib/libblosc2.a, include/, lib/cmake/Blosc2 (with
#        IMPORTED_IMPLIB), lib/pkgconfig/blosc2.pc, bin/b2nd.exe.
# test   runs under wine: every Rust test of the three crates; the DLL's exports against
#        the Linux library's; the ABI check (our headers against c-blosc2 3.3.5's, compiled
#        by x86_64-w64-mingw32-gcc); a C program linked against the import library as a
#        Windows program links c-blosc2's. Prints "N passed, N failed" per part and in all.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never WINEDEBUG=-all
triple=x86_64-pc-windows-gnu
gnu=x86_64-w64-mingw32
what=${1:-test}
out=target/cross/$triple
inst=build/windows/install
: "${WINEPREFIX:=$HOME/.wine}"
export WINEPREFIX

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

setup() {
  echo "== setup $triple"
  rustup target add "$triple" >/dev/null
  local need=()
  for p in mingw-w64 wine wine64 llvm; do dpkg -s "$p" >/dev/null 2>&1 || need+=("$p"); done
  if [ ${#need[@]} -gt 0 ]; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${need[@]}" >/dev/null
  fi
  [ -d "$WINEPREFIX/drive_c/windows/system32" ] || wineboot -i >/dev/null 2>&1 || true
  local stub="$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll"
  if [ ! -e "$stub" ]; then
    "$gnu-gcc" -O2 -shared -o "$stub" scripts/wine/bcryptprimitives.c -lbcrypt
  fi
  echo "setup: rust-std $triple, $("$gnu-gcc" --version | head -1), $(wine --version)"
}

build() {
  echo "== build $triple"
  cargo build --release --target "$triple" -p b2nd-capi -p b2nd-cli 2>&1 | tail -1
  cargo test --release --target "$triple" --features ndarray --workspace --no-run 2>&1 | tail -1
  local rel=target/$triple/release
  rm -rf "$inst" && mkdir -p "$inst/bin" "$inst/lib/cmake/Blosc2" "$inst/lib/pkgconfig" "$inst/include"
  install -m 755 "$rel/b2nd_capi.dll" "$inst/bin/libblosc2.dll"
  install -m 755 "$rel/b2nd.exe" "$inst/bin/b2nd.exe"
  install -m 644 "$rel/libb2nd_capi.a" "$inst/lib/libblosc2.a"
  # The import libraries name the DLL libblosc2.dll, as c-blosc2's do.
  { echo "LIBRARY libblosc2.dll"; echo "EXPORTS"; exports "$inst/bin/libblosc2.dll" | sed 's/^/  /'; } >"$out.def"
  "$gnu-dlltool" -d "$out.def" -D libblosc2.dll -l "$inst/lib/libblosc2.dll.a"
  llvm-dlltool -m i386:x86-64 -d "$out.def" -D libblosc2.dll -l "$inst/lib/libblosc2.lib"
  cp -R include/. "$inst/include/"
  install -m 644 cmake/windows/Blosc2Config.cmake cmake/Blosc2ConfigVersion.cmake "$inst/lib/cmake/Blosc2/"
  install -m 644 cmake/windows/blosc2.pc "$inst/lib/pkgconfig/"
  echo "installed into $inst: $(cd "$inst" && find . -type f | sort | tr '\n' ' ')"
}

# The functions a DLL exports, one a line, sorted.
exports() {
  "$gnu-objdump" -p "$1" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | awk 'NR>1 && NF {print $NF}' | sort
}

# count LOG and part NAME PASSED FAILED: the tallies (shared with cross.sh)
source scripts/cross_counts.sh

run_tests() {
  mkdir -p "$out"
  echo "== Rust tests under wine"
  local log="$out/tests.log"
  # Tests name their scratch directories after their process id, and wine gives the
  # first process of a session the same one every time: clear what earlier runs left.
  rm -rf "$WINEPREFIX"/drive_c/users/*/Temp/b2nd-*
  cargo test --release --target "$triple" --features ndarray --workspace --no-fail-fast -- --include-ignored >"$log" 2>&1 || true
  count "$log"
  grep -E '^test .* FAILED$' "$log" | head -40 || true
  part "Rust tests" "$passed" "$failed"

  echo "== the DLL's exports against the Linux library's"
  cargo build --release -p b2nd-capi 2>&1 | tail -1
  nm -D --defined-only target/release/libb2nd_capi.so | awk '$2=="T"{print $3}' | sort >"$out/exports-linux.txt"
  exports "$inst/bin/libblosc2.dll" >"$out/exports-dll.txt"
  local n missing
  n=$(wc -l <"$out/exports-dll.txt")
  missing=$(comm -3 "$out/exports-linux.txt" "$out/exports-dll.txt" | wc -l)
  part "exports of libblosc2.dll (same as libb2nd.so.0)" "$((n - missing))" "$missing"

  local venv ref
  venv=$(./scripts/setup.sh)
  ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.join(os.path.dirname(blosc2.__file__), "include"))')
  echo "== ABI: our headers against c-blosc2's, compiled by $gnu-gcc"
  "$venv/bin/python" c_tests/abi/gen_abi_check.py "$ref" >"$out/abi_check.c"
  # (linked against our import library: the headers' inline helpers call into it)
  local cc=("$gnu-gcc" -std=c11 -O2 -DBLOSC1_COMPAT "-L$inst/lib")
  "${cc[@]}" -Iinclude -o "$out/abi_ours.exe" "$out/abi_check.c" -lblosc2
  "${cc[@]}" -I"$ref" -o "$out/abi_ref.exe" "$out/abi_check.c" -lblosc2
  cp "$inst/bin/libblosc2.dll" "$out/"
  wine "$out/abi_ours.exe" | tr -d '\r' >"$out/abi_ours.txt"
  wine "$out/abi_ref.exe" | tr -d '\r' >"$out/abi_ref.txt"
  local facts
  facts=$(wc -l <"$out/abi_ref.txt")
  if [ "$facts" -gt 0 ] && diff "$out/abi_ref.txt" "$out/abi_ours.txt" >"$out/abi.diff"; then
    part "ABI facts (sizes, offsets, constants)" "$facts" 0
  else
    head -20 "$out/abi.diff"
    part "ABI facts (sizes, offsets, constants)" $((facts - $(grep -c '^<' "$out/abi.diff"))) "$(grep -c '^<' "$out/abi.diff" || echo 1)"
  fi

  echo "== a C program linked as against c-blosc2's DLL (import library, -lblosc2)"
  "$gnu-gcc" -std=c11 -Wall -Werror -I"$inst/include" c_tests/test_null_args.c "-L$inst/lib" -lblosc2 -o "$out/null_args.exe"
  if wine "$out/null_args.exe" >"$out/null_args.log" 2>&1; then
    part "C program on libblosc2.dll (test_null_args)" 1 0
  else
    tail -5 "$out/null_args.log"
    part "C program on libblosc2.dll (test_null_args)" 0 1
  fi

  echo "== $triple: $total_passed passed, $total_failed failed"
  [ "$total_failed" = 0 ]
}

case "$what" in
  setup) setup ;;
  setup-build|build) setup; mkdir -p "$out"; build ;;
  test) setup; mkdir -p "$out"; build; run_tests ;;
  *) echo "usage: scripts/cross.sh windows [setup|build|test]" >&2; exit 2 ;;
esac
