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
#        Windows program links c-blosc2's; the C tests (ctest, c_tests/ built with
#        cmake/windows/mingw-w64-x86_64.cmake, wine as the emulator). With C_BLOSC2_SRC set
#        to a c-blosc2 3.3 source tree (and C_BLOSC2_DEPS, offline: a directory of the
#        lz4/ zstd/ zlib-ng/ zfp/ sources it would download), also: c-blosc2 built with mingw-w64 as its CI's
#        MinGW job builds it (build/windows/c-blosc2), its own ctest under wine, the
#        c_tests' exchanges with it, and c-blosc2's test programs against each DLL
#        (scripts/c-blosc2-tests.sh --windows; C_BLOSC2_OWN_CTEST=1: c-blosc2's own ctest
#        too). Prints "N passed, N failed" per part and in all.
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
  cargo test --release --target "$triple" --features ndarray --workspace --no-run 2>&1 | tail -1
  # (the DLL, the static library and the tool, which the tests' build does not link: with the
  # tests' features, so that nothing is built twice)
  cargo build --release --target "$triple" -p b2nd-capi -p b2nd-cli --features b2nd/ndarray 2>&1 | tail -1
  layout "target/$triple/release" "$inst"
}

# layout REL INST: the DLL, tool and static library of cargo's release directory REL laid out
# in INST as c-blosc2's Windows install is (scripts/release.sh uses it too). The tools it
# uses can be named (scripts/ci/native.sh, on Windows itself), each as a command:
#   DLLTOOL   makes lib/libblosc2.dll.a (default $gnu-dlltool; set empty: none)
#   IMPLIB    makes lib/libblosc2.lib (default llvm-dlltool; lib or lib.exe: MSVC's lib,
#             called with its own options; set empty: none)
#   OBJDUMP   lists the DLL's exports (default $gnu-objdump; dumpbin: MSVC's dumpbin)
#   WIN_STATIC  the static library in REL, installed as lib/libblosc2.a (default
#             libb2nd_capi.a, what the GNU target builds; set empty: none)
layout() {
  local rel=$1 inst=$2
  local dlltool=${DLLTOOL-$gnu-dlltool} static=${WIN_STATIC-libb2nd_capi.a}
  local implib=${IMPLIB-$(command -v llvm-dlltool || command -v llvm-dlltool-14 || echo llvm-dlltool)}
  rm -rf "$inst" && mkdir -p "$inst/bin" "$inst/lib/cmake/Blosc2" "$inst/lib/pkgconfig" "$inst/include"
  install -m 755 "$rel/b2nd_capi.dll" "$inst/bin/libblosc2.dll"
  install -m 755 "$rel/b2nd.exe" "$inst/bin/b2nd.exe"
  [ -z "$static" ] || install -m 644 "$rel/$static" "$inst/lib/libblosc2.a"
  # The import libraries name the DLL libblosc2.dll, as c-blosc2's do.
  local def
  def=$(mktemp --suffix=.def)
  { echo "LIBRARY libblosc2.dll"; echo "EXPORTS"; exports "$inst/bin/libblosc2.dll" | sed 's/^/  /'; } >"$def"
  # (dlltool names its temporary objects after its process id unless told a fixed prefix:
  # the import library would differ from one build to the next)
  # (and it names two symbols after the output's path as given: from lib/, libblosc2.dll.a
  # alone, as MinGW's import libraries have them, the same wherever the build runs)
  [ -z "$dlltool" ] || (cd "$inst/lib" && "$dlltool" -d "$def" -D libblosc2.dll -l libblosc2.dll.a --temp-prefix "$(dirname "$def")/b2nd-dlltool")
  case ${implib##*/} in
    "") ;;
    lib|lib.exe)  # (a Windows program: Windows paths, and options with -, which MSYS leaves alone)
      "$implib" -nologo -machine:x64 -def:"$(cygpath -w "$def")" -out:"$(cygpath -w "$inst/lib/libblosc2.lib")" >/dev/null
      rm -f "$inst/lib/libblosc2.exp" ;;
    *) "$implib" -m i386:x86-64 -d "$def" -D libblosc2.dll -l "$inst/lib/libblosc2.lib" ;;
  esac
  rm -f "$def"
  cp -R include/. "$inst/include/"
  install -m 644 cmake/windows/Blosc2Config.cmake cmake/Blosc2ConfigVersion.cmake "$inst/lib/cmake/Blosc2/"
  install -m 644 cmake/windows/blosc2.pc "$inst/lib/pkgconfig/"
  mkdir -p "$inst/lib/cmake/B2nd"
  install -m 644 cmake/B2ndConfig.cmake cmake/B2ndConfigVersion.cmake "$inst/lib/cmake/B2nd/"
  echo "installed into $inst: $(cd "$inst" && find . -type f | sort | tr '\n' ' ')"
}

# The functions a DLL exports, one a line, sorted.
exports() {
  local objdump=${OBJDUMP:-$gnu-objdump}
  case ${objdump##*/} in
    dumpbin|dumpbin.exe)  # "ordinal hint RVA name" rows, up to the summary
      "$objdump" -nologo -exports "$(cygpath -w "$1")" | tr -d '\r' \
        | awk '/ordinal +hint +RVA +name/ {on=1; next} on && /Summary/ {on=0} on && NF >= 4 {print $4}' | sort ;;
    *) "$objdump" -p "$1" | sed -n '/\[Ordinal\/Name Pointer\] Table/,/^$/p' | awk 'NR>1 && NF {print $NF}' | sort ;;
  esac
}

# count LOG and part NAME PASSED FAILED: the tallies (shared with cross.sh)
# shellcheck source=cross_counts.sh
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
  grep -E '^test .* FAILED$|panicked at|^called `' "$log" | head -40 || true
  part "Rust tests" "$passed" "$failed"
  # of which the crash and power-loss checks on Windows' file semantics: processes
  # ended at every write of a change (abort: no unwinding, as TerminateProcess),
  # simulated power losses, a lock another handle holds, holes a crash leaves
  local crash
  crash=$(awk '/ Running /{on = ($2 ~ /tests\/(crash_safety|power_loss|frame_holes)\.rs/) || ($2 == "tests/b2nd.rs")}
               on && /^test .* \.\.\. ok$/ {p++} on && /^test .* \.\.\. FAILED$/ {f++}
               END {print p + 0, f + 0}' "$log")
  echo "  of which crash and power-loss checks (crash_safety, power_loss, frame_holes, b2nd's locks): ${crash% *} passed, ${crash#* } failed"

  echo "== files across machines (tests/cross_files.rs)"
  local venv
  venv=$(./scripts/setup.sh)
  exchange "x86-64 Linux files read on Windows" "" "$triple" "target/cross/x86_64-unknown-linux-gnu/set"
  exchange "Windows files read on x86-64 Linux" "$triple" "" "$out/set"
  python_reads "Windows files read by python-blosc2" "$out/set" "$venv"

  echo "== the DLL's exports against the Linux library's"
  # (with the features of scripts/test.sh's Rust tests, whose build this one then is)
  cargo build --release -p b2nd-capi --features b2nd/ndarray 2>&1 | tail -1
  nm -D --defined-only target/release/libb2nd_capi.so | awk '$2=="T"{print $3}' | sort >"$out/exports-linux.txt"
  exports "$inst/bin/libblosc2.dll" >"$out/exports-dll.txt"
  local n missing
  n=$(wc -l <"$out/exports-dll.txt")
  missing=$(comm -3 "$out/exports-linux.txt" "$out/exports-dll.txt" | wc -l)
  part "exports of libblosc2.dll (same as libb2nd.so.0)" "$((n - missing))" "$missing"

  local ref
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

  if [ -n "${ci:-}" ]; then
    echo "== (CI: ctest and c-blosc2's tests under wine are in scripts/cross.sh windows test)"
  else
    if [ -n "${C_BLOSC2_SRC:-}" ] && ! build_c_blosc2; then
      part "c-blosc2 built by mingw-w64" 0 1
    fi
    run_c_tests
    if [ -n "${C_BLOSC2_SRC:-}" ] && [ -f "$mingw_ref/lib/libblosc2.dll.a" ]; then
      run_c_blosc2
    else
      echo "== c-blosc2 with mingw-w64: skipped (set C_BLOSC2_SRC to a c-blosc2 3.3 source tree)"
    fi
  fi

  echo "== $triple: $total_passed passed, $total_failed failed"
  [ "$total_failed" = 0 ]
}

toolchain=$PWD/cmake/windows/mingw-w64-x86_64.cmake
mingw_ref=build/windows/c-blosc2

# The DLLs of mingw's runtime (winpthreads) for wine, as a Windows path list.
mingw_dlls() {
  local d dirs=()
  for d in /usr/x86_64-w64-mingw32/lib /usr/lib/gcc/x86_64-w64-mingw32/*-win32; do
    [ -d "$d" ] && dirs+=("$(winepath -w "$d" 2>/dev/null)")
  done
  (IFS=';'; echo "${dirs[*]}")
}

# "ctest: N tests failed out of M" -> part NAME (M - N) N
ctest_part() { # NAME LOG
  local line total bad
  # "100% tests passed out of M", or "P% tests passed, N tests failed out of M"
  line=$(grep -E 'tests passed(, [0-9]+ tests? failed)? out of [0-9]+' "$2" | tail -1)
  if [ -z "$line" ]; then part "$1" 0 1; return; fi
  bad=$(sed -nE 's/.* ([0-9]+) tests? failed out of.*/\1/p' <<<"$line")
  bad=${bad:-0}
  total=$(sed -E 's/.* out of ([0-9]+).*/\1/' <<<"$line")
  grep -A20 'tests did not run' "$2" | grep -E 'Disabled' | sed 's/^/  not run (c_tests\/CMakeLists.txt says why):/' || true
  grep -E '^\s+[0-9]+ - .*\((Failed|Timeout|SEGFAULT|Exception|Not Run)' "$2" | head -20 || true
  part "$1" $((total - bad)) "$bad"
}

run_c_tests() {
  echo "== C tests (ctest): built by $gnu-gcc, run under wine"
  local venv b=build/windows/c_tests refargs=()
  venv=$(./scripts/setup.sh)
  [ -f "$mingw_ref/lib/libblosc2.dll.a" ] && refargs=(-DREF_BLOSC2_PREFIX="$PWD/$mingw_ref" -DREF_PYTHON="$venv/bin/python"
    -DABI_REF_INCLUDE="$("$venv/bin/python" -c 'import blosc2, os; print(os.path.join(os.path.dirname(blosc2.__file__), "include"))')")
  rm -rf "$b"
  "$venv/bin/cmake" -S c_tests -B "$b" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_PREFIX_PATH="$PWD/$inst" \
    -DCMAKE_BUILD_TYPE=Release "${refargs[@]}" >"$out/ctest-configure.log" 2>&1 || tail -20 "$out/ctest-configure.log"
  "$venv/bin/cmake" --build "$b" -j2 >"$out/ctest-build.log" 2>&1 || grep -m10 -E 'error|Error' "$out/ctest-build.log"
  (cd "$b" && WINEPATH="$(winepath -w "$PWD/../install/bin");$(mingw_dlls)" "$venv/bin/ctest" --output-on-failure -j2 --timeout 600) >"$out/ctest.log" 2>&1 || true
  ctest_part "C tests (ctest)${refargs:+, with c-blosc2 built by mingw}" "$out/ctest.log"
}

# c-blosc2 from C_BLOSC2_SRC, built with mingw-w64 as its CI's MinGW job builds it
# (Release, its tests), installed with its DLL into build/windows/c-blosc2.
build_c_blosc2() {
  local venv b=build/windows/c-blosc2-build zlib_first=""
  venv=$(./scripts/setup.sh)
  if [ ! -f "$mingw_ref/lib/libblosc2.dll.a" ] || [ ! -f "$b/CTestTestfile.cmake" ]; then
    echo "== c-blosc2 ($C_BLOSC2_SRC) built by $gnu-gcc"
    # c-blosc2 downloads lz4, zstd, zlib-ng and zfp; C_BLOSC2_DEPS names a directory
    # with their source trees (lz4/ zstd/ zlib-ng/ zfp/) where there is no network.
    local deps=()
    if [ -n "${C_BLOSC2_DEPS:-}" ]; then
      deps=(-DFETCHCONTENT_FULLY_DISCONNECTED=ON -DBLOSC_LZ4_SOURCE_DIR="$C_BLOSC2_DEPS/lz4"
            -DBLOSC_ZSTD_SOURCE_DIR="$C_BLOSC2_DEPS/zstd" -DBLOSC_ZLIBNG_SOURCE_DIR="$C_BLOSC2_DEPS/zlib-ng"
            -DBLOSC_ZFP_SOURCE_DIR="$C_BLOSC2_DEPS/zfp")
      # A zlib-ng older than the 2.3 c-blosc2 asks for names its targets otherwise:
      # c-blosc2 then neither includes nor links it; give it both by hand.
      if ! grep -q 'zlib-ng::zlibstatic\|ALIAS zlib-ng' "$C_BLOSC2_DEPS/zlib-ng/CMakeLists.txt"; then
        deps+=(-DCMAKE_C_FLAGS_RELEASE="-O3 -DNDEBUG -I$PWD/$b/_deps/zlib_ng-build -I$C_BLOSC2_DEPS/zlib-ng"
               -DCMAKE_C_STANDARD_LIBRARIES="$PWD/$b/_deps/zlib_ng-build/libz-ng.a -lkernel32 -luser32 -ladvapi32")
        zlib_first=zlib
      fi
    fi
    "$venv/bin/cmake" -S "$C_BLOSC2_SRC" -B "$b" -DCMAKE_TOOLCHAIN_FILE="$toolchain" -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_INSTALL_PREFIX="$PWD/$mingw_ref" -DBUILD_TESTS=ON -DBUILD_EXAMPLES=ON -DBUILD_BENCHMARKS=OFF \
      -DBUILD_FUZZERS=OFF "${deps[@]}" >"$out/c-blosc2-configure.log" 2>&1 || { tail -20 "$out/c-blosc2-configure.log"; return 1; }
    # (its build runs `cmake` to merge static libraries)
    export PATH="$venv/bin:$PATH"
    if [ -n "${zlib_first:-}" ]; then cmake --build "$b" --target "$zlib_first" >"$out/c-blosc2-build.log" 2>&1; fi
    cmake --build "$b" -j2 >>"$out/c-blosc2-build.log" 2>&1 || { grep -m10 -E 'error' "$out/c-blosc2-build.log"; return 1; }
    cmake --install "$b" >/dev/null
  fi
}

run_c_blosc2() {
  local venv
  venv=$(./scripts/setup.sh)
  if [ -n "${C_BLOSC2_OWN_CTEST:-}" ]; then
    # (1,734 tests, one per row of its parameter tables: long under wine)
    echo "== c-blosc2's own ctest under wine (its MinGW counts)"
    (cd build/windows/c-blosc2-build && WINEPATH="$(mingw_dlls)" "$venv/bin/ctest" -j2 --timeout 600) >"$out/c-blosc2-ctest.log" 2>&1 || true
    local line; line=$(grep -E 'tests passed' "$out/c-blosc2-ctest.log" | tail -1)
    echo "c-blosc2's own tests (informative, not counted): $line"
  fi
  echo "== c-blosc2's test programs against each DLL (scripts/c-blosc2-tests.sh --windows)"
  local which refopt
  for which in ref lib; do
    refopt=()
    if [ $which = ref ]; then refopt=(--ref); fi
    ./scripts/c-blosc2-tests.sh "$C_BLOSC2_SRC" --windows --sample "${C_BLOSC2_SAMPLE:-5}" \
      "${refopt[@]}" >"$out/c-blosc2-tests-$which.log" 2>&1 || true
    tail -1 "$out/c-blosc2-tests-$which.log"
  done
  local p f
  p=$(tail -1 "$out/c-blosc2-tests-lib.log" | sed -nE 's/^([0-9]+) passed.*/\1/p')
  f=$(tail -1 "$out/c-blosc2-tests-lib.log" | sed -nE 's/^[0-9]+ passed, ([0-9]+) failed.*/\1/p')
  sed -n '/^Failed/,$p' "$out/c-blosc2-tests-lib.log" | head -20
  part "c-blosc2's test programs on libblosc2.dll (c-blosc2's own DLL: $(tail -1 "$out/c-blosc2-tests-ref.log"))" "${p:-0}" "${f:-1}"
}

case "$what" in
  setup) setup ;;
  setup-build|build) setup; mkdir -p "$out"; build ;;
  layout) layout "${2:?layout REL INST}" "${3:?layout REL INST}" ;;
  test) setup; mkdir -p "$out"; build; run_tests ;;
  # scripts/test.sh: the Rust tests (the model test with 2 seeds of its 12), file
  # exchanges, exports, ABI and a C program; not ctest nor c-blosc2's tests
  ci) setup; mkdir -p "$out"; build; ci=1 B2ND_MODEL_SEEDS=2 run_tests ;;
  c-tests) mkdir -p "$out"; run_c_tests ;;
  c-blosc2) mkdir -p "$out"; : "${C_BLOSC2_SRC:?a c-blosc2 3.3 source tree}"; build_c_blosc2; run_c_tests; run_c_blosc2 ;;
  *) echo "usage: scripts/cross.sh windows [setup|build|test|ci|c-tests|c-blosc2]" >&2; exit 2 ;;
esac
