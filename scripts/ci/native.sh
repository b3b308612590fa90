#!/usr/bin/env bash
# The tests on the machine this runs on, built by its own compilers (the jobs of
# .github/workflows/ci.yml other than linux-x86_64, which runs scripts/test.sh):
#   1. every Rust test: cargo test --release --features ndarray --workspace
#      (with --target $B2ND_CI_TARGET when set: x86_64-pc-windows-gnu or x86_64-pc-windows-msvc);
#   2. an install with this platform's names in build/install: Linux, scripts/install.sh;
#      macOS, scripts/layout_macos.sh (as scripts/cross.sh macos lays it out); Windows, the
#      layout of scripts/cross_windows.sh (MSYS2's dlltool and objdump for the GNU target,
#      MSVC's lib and dumpbin for MSVC);
#   3. the C tests: c_tests/ through find_package(Blosc2) on that install, then ctest. On Linux
#      also against the reference c-blosc2 3.3.5 of scripts/setup.sh's venv (the wheel's
#      lib/libblosc2.so); elsewhere without it (c_tests/CMakeLists.txt takes no dylib, nor an
#      MSVC DLL, as the reference). MSVC's cl cannot build c_tests/ (POSIX headers, pthreads,
#      GCC's flags): there, the portable programs among them, built by cl against
#      lib/libblosc2.lib, and run.
# Where: Linux (x86-64, aarch64), macOS (arm64, x86-64), Windows (bash of MSYS2's MINGW64 for
# the GNU target; Git's bash with MSVC's environment, ilammy/msvc-dev-cmd, for MSVC).
# Only the Linux paths have run (x86-64, here): nothing here runs Windows or macOS, and
# those paths have never run.
set -euo pipefail  # (and bash 3.2, macOS's own: empty arrays as ${a[@]+"${a[@]}"})
cd "$(dirname "$0")/../.."
export CARGO_TERM_COLOR=never
case "$(uname -s)" in
  Linux) os=linux ;;
  Darwin) os=macos ;;
  MINGW*|MSYS*|CYGWIN*) os=windows ;;
  *) echo "native.sh: $(uname -s) is not a system it knows" >&2; exit 2 ;;
esac
host=$(rustc -vV | sed -n 's/^host: //p')
triple=${B2ND_CI_TARGET:-$host}
tgt=() rel=target/release
[ -z "${B2ND_CI_TARGET:-}" ] || { tgt=(--target "$triple"); rel=target/$triple/release; }
here=$PWD
[ "$os" = windows ] && here=$(cygpath -m "$PWD")  # (what Windows programs take)
cmake_args=(-DCMAKE_PREFIX_PATH="$here/build/install" -DCMAKE_BUILD_TYPE=Release)

# .cargo/config.toml names cross tools for some triples (aarch64-linux-gnu-gcc and qemu,
# mingw-w64's gcc and wine): here the machine's own compiler links, and programs run as
# they are (`env` runs its arguments).
T=$(echo "$triple" | tr 'a-z-' 'A-Z_')
case $triple in
  aarch64-unknown-linux-gnu) export "CARGO_TARGET_${T}_LINKER=cc" "CARGO_TARGET_${T}_RUNNER=env" ;;
  x86_64-pc-windows-gnu)
    export "CARGO_TARGET_${T}_LINKER=gcc" "CARGO_TARGET_${T}_RUNNER=env" CC_x86_64_pc_windows_gnu=gcc AR_x86_64_pc_windows_gnu=ar
    cmake_args+=(-G Ninja -DCMAKE_C_COMPILER=gcc) ;;
  x86_64-pc-windows-msvc)
    # (Git's bash has a link.exe of its own, coreutils' link, ahead of MSVC's on PATH)
    cl=$(command -v cl) || { echo "native.sh: no cl (MSVC's environment: ilammy/msvc-dev-cmd)" >&2; exit 2; }
    export "CARGO_TARGET_${T}_LINKER=$(cygpath -m "$(dirname "$cl")/link.exe")" ;;
esac

echo "== cargo test ($triple)"
cargo test --release --features ndarray --workspace ${tgt[@]+"${tgt[@]}"} 2>&1

echo "== install (build/install)"
cargo build --release ${tgt[@]+"${tgt[@]}"} -p b2nd-capi -p b2nd-cli 2>&1 | tail -1
case $os in
  linux) ./scripts/install.sh build/install --built "$rel" ;;
  macos)
    # (llvm-objcopy, which strips the LLVM bitcode from the static library: Rust's own)
    rustup component add llvm-tools >/dev/null
    # shellcheck source=scripts/layout_macos.sh disable=SC1091
    source scripts/layout_macos.sh
    MACOS_OBJCOPY="$(rustc --print sysroot)/lib/rustlib/$host/bin/llvm-objcopy" \
      version=$(sed -n 's/^#define BLOSC2_VERSION_STRING *"\([^"]*\)".*/\1/p' include/blosc2.h) layout "$rel" build/install ;;
  windows)
    case $triple in
      *-gnu) DLLTOOL=dlltool OBJDUMP=objdump IMPLIB=$(command -v llvm-dlltool || true) ./scripts/cross_windows.sh layout "$rel" build/install ;;
      *-msvc) DLLTOOL="" OBJDUMP=dumpbin IMPLIB=lib WIN_STATIC="" ./scripts/cross_windows.sh layout "$rel" build/install ;;
    esac ;;
esac

echo "== C tests"
rm -rf build/c_tests
if [ "$triple" = x86_64-pc-windows-msvc ]; then
  # The programs of c_tests/ that are portable C, as CMake would build them with cl, on the
  # import library libblosc2.lib; the DLL found on PATH.
  b=build/c_tests && mkdir -p "$b/b2nd_self"
  export PATH="$PWD/build/install/bin:$PATH"
  passed=0 failed=0
  for t in test_null_args test_chunk_api test_plugins test_b2nd; do
    args=(); [ $t = test_b2nd ] && args=("$here/$b/b2nd_self")
    if cl -nologo -O2 -MD -std:c11 -DLIBB2ND_STRICT -Ibuild/install/include -Fo"$b/$t.obj" -c "c_tests/$t.c" &&
       "$CARGO_TARGET_X86_64_PC_WINDOWS_MSVC_LINKER" -nologo "$b/$t.obj" build/install/lib/libblosc2.lib -out:"$b/$t.exe" &&
       "$b/$t.exe" ${args[@]+"${args[@]}"}; then
      passed=$((passed + 1))
    else
      failed=$((failed + 1)); echo "FAILED: $t"
    fi
  done
  echo "C tests (cl, libblosc2.lib): $passed passed, $failed failed"
  [ "$failed" = 0 ]
  exit 0
fi
if [ "$os" = linux ]; then
  venv=$(./scripts/setup.sh)
  export PATH="$venv/bin:$PATH"  # cmake and python (with python-blosc2) from the venv
  ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
  if [ -f "$ref/lib/libblosc2.so" ]; then cmake_args+=(-DREF_BLOSC2_PREFIX="$ref"); fi
fi
cmake -S c_tests -B build/c_tests "${cmake_args[@]}"
cmake --build build/c_tests -j2
[ "$os" = windows ] && export PATH="$PWD/build/install/bin:$PATH"  # (libblosc2.dll)
cd build/c_tests && ctest --output-on-failure -j2
