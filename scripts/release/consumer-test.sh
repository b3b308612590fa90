#!/usr/bin/env bash
# Use a release archive as a user would: unpack it into a fresh directory, build the C demo
# (examples/demo.c) once through CMake (find_package(Blosc2) with CMAKE_PREFIX_PATH) and once
# through pkg-config (PKG_CONFIG_PATH), each with nothing else pointing at the archive, and
# run both; then the static library and the b2nd tool.
#
#   scripts/release/consumer-test.sh dist/libb2nd-VERSION-TARGET.{tar.gz,zip}
#   scripts/release/consumer-test.sh dist/libb2nd-VERSION-py3-none-manylinux_2_17_x86_64...whl
#
# linux-x86_64 runs natively; linux-aarch64 under qemu-aarch64 (scripts/cross.sh aarch64
# setup); windows-x86_64 is built by mingw-w64 and run under wine (scripts/cross.sh windows
# setup); macos-universal2 is built and linked for arm64 and x86_64 by zig cc (scripts/cross.sh
# macos setup) and never run: nothing here runs macOS. A wheel (this machine's: x86-64 Linux) is
# pip-installed into a fresh venv; the demo is built through `python -m libb2nd --cmake-dir`
# (and installed, which drops CMake's own run path) and --pkgconfig-dir, with no rpath or
# LD_LIBRARY_PATH of ours, and run; then its console script b2nd. Prints "N passed, N failed".
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
archive=$(readlink -f "${1:?usage: consumer-test.sh ARCHIVE}")
base=$(basename "$archive"); base=${base%.tar.gz}; base=${base%.zip}
target=${base#libb2nd-*-}
venv=$(./scripts/setup.sh)
cmake=$venv/bin/cmake
passed=0 failed=0
check() {  # NAME CMD...: runs CMD, its output to the log
  local name=$1; shift
  if "$@" >>"$log" 2>&1; then
    passed=$((passed + 1)); printf '  %-66s ok\n' "$name"
  else
    failed=$((failed + 1)); printf '  %-66s FAILED (log: %s)\n' "$name" "$log"
  fi
}
work=$(mktemp -d "${TMPDIR:-/tmp}/b2nd-consumer.XXXXXX")
log=$work/log
case $archive in
  *.whl) target=wheel; echo "== $base: pip-installed into a new venv in $work" ;;
  *) echo "== $base: unpacked into $work" ;;
esac
case $archive in
  *.whl)  # the wheel's own tree stands in for the archive's top directory
    python3 -m venv "$work/venv" && "$work/venv/bin/pip" install -q --disable-pip-version-check "$archive" >>"$log" 2>&1
    mkdir -p "$work/$base" ;;
  *.zip) (cd "$work" && python3 -m zipfile -e "$archive" .) ;;
  *) tar -xzf "$archive" -C "$work" ;;
esac
prefix=$work/$base
[ -d "$prefix" ] || { echo "$archive has no top directory $base/" >&2; exit 1; }
cp examples/demo.c examples/CMakeLists.txt "$work/"
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig

run_in() {  # DIR CMD...: runs CMD in DIR (the demo writes its files where it runs)
  local d=$1; shift
  (cd "$d" && "$@")
}
run_demo() {  # DIR CMD...: runs the demo, which must print its round trip as identical
  local out rc=0
  out=$(run_in "$@" 2>&1) || rc=$?
  printf '%s\n' "$out"
  [ $rc = 0 ] && grep -q 'round trip: identical' <<<"$out" && ! grep -q MISMATCH <<<"$out"
}

cmake_demo() {  # BUILD_DIR [CMAKE ARGS...]
  local b=$1; shift
  "$cmake" -S "$work" -B "$b" -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release "$@" >>"$log" 2>&1 &&
    "$cmake" --build "$b" >>"$log" 2>&1
}

case $target in
  linux-x86_64|linux-aarch64)
    arch=${target#linux-}
    cc=cc; runner=()
    if [ "$arch" = aarch64 ]; then
      if ! command -v qemu-aarch64 >/dev/null || ! command -v aarch64-linux-gnu-gcc >/dev/null; then
        ./scripts/cross.sh aarch64 setup >/dev/null
      fi
      cc=aarch64-linux-gnu-gcc
      runner=(env QEMU_LD_PREFIX=/usr/aarch64-linux-gnu qemu-aarch64)
      printf '%s\n' 'set(CMAKE_SYSTEM_NAME Linux)' 'set(CMAKE_SYSTEM_PROCESSOR aarch64)' \
        'set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)' 'set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)' >"$work/toolchain.cmake"
    fi
    cmake_args=(); [ "$arch" = aarch64 ] && cmake_args=(-DCMAKE_TOOLCHAIN_FILE="$work/toolchain.cmake")
    check "CMake: find_package(Blosc2), Blosc2::blosc2_shared" cmake_demo "$work/cmake" "${cmake_args[@]}"
    check "CMake: the demo runs (found through its run path)" run_demo "$work/cmake" "${runner[@]}" ./demo
    # shellcheck disable=SC2046 # (pkg-config's words)
    check "pkg-config: cc demo.c \$(pkg-config --cflags --libs blosc2)" \
      "$cc" -O2 -o "$work/demo_pc" "$work/demo.c" $(pkg-config --cflags --libs blosc2) -Wl,-rpath,"$prefix/lib"
    check "pkg-config: the demo runs" run_demo "$work" "${runner[@]}" ./demo_pc
    check "-lblosc2 against lib/libblosc2.so, as for c-blosc2" \
      "$cc" -O2 -o "$work/demo_lblosc2" "$work/demo.c" -I"$prefix/include" -L"$prefix/lib" -lblosc2 -Wl,-rpath,"$prefix/lib"
    check "NEEDED libb2nd.so.0, resolved in the archive" \
      sh -c "readelf -d '$work/demo_lblosc2' | grep -q 'NEEDED.*libb2nd.so.0'"
    # shellcheck disable=SC2046
    check "static: pkg-config --static, lib/libb2nd.a" \
      "$cc" -O2 -o "$work/demo_static" "$work/demo.c" -I"$prefix/include" "$prefix/lib/libb2nd.a" $(pkg-config --libs-only-other --static blosc2) -lpthread -ldl -lm
    check "static: the demo runs" run_demo "$work" "${runner[@]}" ./demo_static
    check "bin/b2nd verify demo.b2frame" run_in "$work" "${runner[@]}" "$prefix/bin/b2nd" verify "$work/demo.b2frame"
    ;;
  windows-x86_64)
    if ! command -v wine >/dev/null || ! command -v x86_64-w64-mingw32-gcc >/dev/null; then
      ./scripts/cross.sh windows setup >/dev/null
    fi
    export WINEDEBUG=-all
    : "${WINEPREFIX:=$HOME/.wine}"; export WINEPREFIX
    # the DLL from the archive's bin/ (as a user's PATH would give it), mingw's runtime DLLs
    dlls=$(winepath -w "$prefix/bin")
    for d in /usr/x86_64-w64-mingw32/lib /usr/lib/gcc/x86_64-w64-mingw32/*-win32; do
      [ -d "$d" ] && dlls="$dlls;$(winepath -w "$d")"
    done
    export WINEPATH=$dlls
    check "CMake (mingw-w64): find_package(Blosc2), Blosc2::blosc2_shared" \
      cmake_demo "$work/cmake" -DCMAKE_TOOLCHAIN_FILE="$root/cmake/windows/mingw-w64-x86_64.cmake"
    check "CMake: demo.exe runs under wine (libblosc2.dll from bin/)" run_demo "$work/cmake" wine ./demo.exe
    # shellcheck disable=SC2046
    check "pkg-config: x86_64-w64-mingw32-gcc demo.c \$(pkg-config ...)" \
      x86_64-w64-mingw32-gcc -O2 -o "$work/demo_pc.exe" "$work/demo.c" $(pkg-config --cflags --libs blosc2)
    check "pkg-config: demo_pc.exe runs under wine" run_demo "$work" wine ./demo_pc.exe
    # A program as MSVC's toolchain makes them (no MSVC here: LLVM's llc for the object, lld-link,
    # no C runtime): linked against lib/libblosc2.lib, it compresses and decompresses through
    # the DLL (scripts/release/msvc-caller.ll)
    llc=$(command -v llc || command -v llc-14 || echo /usr/lib/llvm-14/bin/llc)
    lld="$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld"
    printf 'LIBRARY kernel32.dll\nEXPORTS\n  ExitProcess\n' >"$work/kernel32.def"
    check "MSVC-style program linked against lib/libblosc2.lib (llc, lld-link)" sh -c "
      '$llc' -O1 -filetype=obj '$root/scripts/release/msvc-caller.ll' -o '$work/caller.obj' &&
      '$(command -v llvm-dlltool || command -v llvm-dlltool-14)' -m i386:x86-64 -d '$work/kernel32.def' -l '$work/kernel32.lib' &&
      '$lld' -flavor link /nologo /entry:start /subsystem:console /nodefaultlib '$work/caller.obj' \
        '$prefix/lib/libblosc2.lib' '$work/kernel32.lib' /out:'$work/caller.exe'"
    check "  it runs under wine: blosc2_compress and blosc2_decompress round trip" run_in "$work" wine ./caller.exe
    # shellcheck disable=SC2046
    check "static: lib/libblosc2.a" \
      x86_64-w64-mingw32-gcc -O2 -o "$work/demo_static.exe" "$work/demo.c" -I"$prefix/include" "$prefix/lib/libblosc2.a" $(pkg-config --libs-only-l --static blosc2 | sed 's/-lblosc2//')
    check "static: demo_static.exe runs under wine" run_demo "$work" wine ./demo_static.exe
    check "bin/b2nd.exe verify demo.b2frame" run_in "$work" wine "$prefix/bin/b2nd.exe" verify demo.b2frame
    ;;
  macos-universal2)
    tools=$root/build/macos/tools
    for arch in arm64 x86_64; do
      [ -x "$tools/bin/zig-cc-$arch" ] || ./scripts/cross.sh macos setup >/dev/null
      printf '%s\n' 'set(CMAKE_SYSTEM_NAME Darwin)' "set(CMAKE_OSX_ARCHITECTURES $arch)" \
        "set(CMAKE_C_COMPILER $tools/bin/zig-cc-$arch)" 'set(CMAKE_C_COMPILER_WORKS ON)' \
        "set(CMAKE_AR $(command -v llvm-ar || command -v llvm-ar-14))" "set(CMAKE_RANLIB $(command -v llvm-ranlib || command -v llvm-ranlib-14))" \
        'set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)' >"$work/toolchain-$arch.cmake"
      check "CMake ($arch, zig cc): find_package(Blosc2), linked, not run" \
        cmake_demo "$work/cmake-$arch" -DCMAKE_TOOLCHAIN_FILE="$work/toolchain-$arch.cmake"
      check "  its demo loads @rpath/libblosc2.9.dylib" \
        sh -c "$(command -v llvm-objdump || command -v llvm-objdump-14) --macho --dylibs-used '$work/cmake-$arch/demo' | grep -q '@rpath/libblosc2.9.dylib'"
      # shellcheck disable=SC2046
      check "pkg-config ($arch, zig cc): linked, not run" \
        "$tools/bin/zig-cc-$arch" -O2 -o "$work/demo_pc_$arch" "$work/demo.c" $(pkg-config --cflags --libs blosc2) -Wl,-rpath,"$prefix/lib"
      check "static ($arch): lib/libb2nd.a linked, not run" \
        "$tools/bin/zig-cc-$arch" -O2 -o "$work/demo_static_$arch" "$work/demo.c" -I"$prefix/include" "$prefix/lib/libb2nd.a" -lpthread -lm
    done
    ;;
  wheel)
    # (x86-64 Linux wheels, on this machine) What builds against the package: the paths of
    # python -m libb2nd and nothing else; the run path the package's CMake and pkg-config files
    # give, so that no LD_LIBRARY_PATH is needed, even after CMake's install drops its own.
    py=$work/venv/bin/python
    unset LD_LIBRARY_PATH
    export PKG_CONFIG_PATH PKG_CONFIG_LIBDIR
    PKG_CONFIG_PATH=$("$py" -m libb2nd --pkgconfig-dir); PKG_CONFIG_LIBDIR=$PKG_CONFIG_PATH
    printf '%s\n' 'install(TARGETS demo DESTINATION bin)' >>"$work/CMakeLists.txt"
    check "python -m libb2nd --cmake-dir, --pkgconfig-dir, --libdir, --includes" \
      sh -c "'$py' -m libb2nd --cmake-dir --pkgconfig-dir --libdir --includes | grep -c site-packages/libb2nd | grep -qx 4"
    check "CMake: find_package(Blosc2) in \$(python -m libb2nd --cmake-dir), built, installed" sh -c "
      '$cmake' -S '$work' -B '$work/cmake' -DCMAKE_PREFIX_PATH=\"\$('$py' -m libb2nd --cmake-dir)\" \
        -DCMAKE_INSTALL_PREFIX='$work/installed' -DCMAKE_BUILD_TYPE=Release && '$cmake' --build '$work/cmake' &&
      '$cmake' --install '$work/cmake'"
    check "CMake: the installed demo runs (the package's run path)" run_demo "$work" ./installed/bin/demo
    # shellcheck disable=SC2046 # (pkg-config's words)
    check "pkg-config: cc demo.c \$(pkg-config --cflags --libs blosc2), no -rpath of ours" \
      cc -O2 -o "$work/demo_pc" "$work/demo.c" $(pkg-config --cflags --libs blosc2)
    check "pkg-config: the demo runs" run_demo "$work" ./demo_pc
    check "the console script b2nd verify demo.b2frame" run_in "$work" "$work/venv/bin/b2nd" verify demo.b2frame
    ;;
  *) echo "consumer-test.sh: no test for $target" >&2; exit 2 ;;
esac
echo "== $base: $passed passed, $failed failed"
[ "$failed" = 0 ] && rm -rf "$work"
[ "$failed" = 0 ]
