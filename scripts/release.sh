#!/usr/bin/env bash
# Release archives and Python wheels of libb2nd, into dist/ with SHA256SUMS.
#
#   scripts/release.sh VERSION [--no-test] [--no-wheels] [TARGET...]
#   scripts/release.sh --setup      only install the tools (scripts/test.sh, in the background)
#
# VERSION  the crates' version (Cargo.toml), which the names carry; another is refused.
# TARGET   linux-x86_64, linux-aarch64, windows-x86_64, macos-universal2 (default: all four).
#
#   libb2nd-VERSION-linux-x86_64.tar.gz, -linux-aarch64.tar.gz
#        built against glibc 2.17 (manylinux2014: CentOS 7 and every Linux since) with
#        cargo-zigbuild; checked as auditwheel checks: no symbol version above GLIBC_2.17,
#        no NEEDED library outside manylinux2014's list
#   libb2nd-VERSION-windows-x86_64.zip        mingw-w64 (scripts/cross.sh windows layout)
#   libb2nd-VERSION-macos-universal2.tar.gz   zig + lld (scripts/cross.sh macos release)
#   libb2nd-VERSION-py3-none-PLATFORM.whl     the Python package libb2nd, one per target
#       (manylinux_2_17_x86_64.manylinux2014_x86_64, ..._aarch64, win_amd64,
#        macosx_10_12_universal2); `python -m libb2nd --cmake-dir` and so on
#
# Each archive has one top directory libb2nd-VERSION-TARGET/ holding the install layout:
# lib/ (the libblosc2 names beside libb2nd's), include/, lib/cmake/{Blosc2,B2nd},
# lib/pkgconfig, bin/b2nd, licenses/ (scripts/release/licenses.py). The CMake and
# pkg-config files find everything relative to themselves: unpacked anywhere, they work.
#
# Reproducible: SOURCE_DATE_EPOCH (default: the commit's time) stamps every entry, entries
# are sorted with fixed owners and modes (scripts/release/pack.py), and the build's paths
# are mapped to /libb2nd and /cargo in what the compilers write.
#
# Unless --no-test, each archive is then unpacked into a fresh directory and used as a user
# would (scripts/release/consumer-test.sh): the C demo built through CMake and through
# pkg-config, and run (linux-aarch64 under qemu, windows under wine; macOS linked only); the
# x86-64 Linux wheel is pip-installed into a fresh venv and built against the same ways.
# Builds go to target/dist/ (apart from the everyday target/), stages to build/release/.
# Needs: what scripts/cross.sh TARGET setup installs, and PyPI (ziglang, cargo-zigbuild).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
export CARGO_TERM_COLOR=never

usage() { sed -n '2,/^set -eu/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit 2; }
version=${1:-}; [ -n "$version" ] || usage; shift
crate_version=$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
setup_only=0
if [ "$version" = --setup ]; then setup_only=1 version=$crate_version; fi
[ "$version" = "$crate_version" ] || { echo "release.sh: VERSION $version is not the crates' version ($crate_version, Cargo.toml)" >&2; exit 2; }
test=1 wheels=1 targets=()
for a in "$@"; do
  case $a in
    --no-test) test=0 ;;
    --no-wheels) wheels=0 ;;
    linux-x86_64|linux-aarch64|windows-x86_64|macos-universal2) targets+=("$a") ;;
    *) usage ;;
  esac
done
[ ${#targets[@]} -gt 0 ] || targets=(linux-x86_64 linux-aarch64 windows-x86_64 macos-universal2)

: "${SOURCE_DATE_EPOCH:=$(git log -1 --format=%ct 2>/dev/null || echo 0)}"
export SOURCE_DATE_EPOCH
export CARGO_TARGET_DIR=$root/target/dist
# (the profile of Cargo.toml as it is, whatever the caller's environment: scripts/test.sh turns
# LTO off for the tests' builds)
unset CARGO_PROFILE_RELEASE_LTO CARGO_PROFILE_RELEASE_CODEGEN_UNITS CARGO_PROFILE_RELEASE_OPT_LEVEL
cargo_home=${CARGO_HOME:-$HOME/.cargo}
# The paths of this checkout and of cargo's sources, as the compilers would write them
# (panic locations, __FILE__), mapped to fixed names.
maps=("$root=/libb2nd" "$cargo_home=/cargo")
# (a target's CFLAGS replaces the CFLAGS of .cargo/config.toml for cc-rs: its alignment of
# the C codecs' functions is repeated here)
B2ND_RUSTFLAGS=""; cflags="-falign-functions=64"
for m in "${maps[@]}"; do B2ND_RUSTFLAGS+="${B2ND_RUSTFLAGS:+ }--remap-path-prefix=$m"; cflags+="${cflags:+ }-ffile-prefix-map=$m"; done
export B2ND_RUSTFLAGS
dist=$root/dist stage=$root/build/release
mkdir -p "$dist" "$stage"
tools=$stage/tools
ZIGBUILD_VERSION=0.24.1 ZIGLANG_VERSION=0.17.1

zigbuild_setup() {
  # (llvm-objcopy for strip_static: Debian's llvm)
  if ! command -v llvm-objcopy >/dev/null && ! command -v llvm-objcopy-14 >/dev/null; then
    if [ "$(id -u)" = 0 ]; then apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm >/dev/null
    else sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm >/dev/null; fi
  fi
  if ! "$tools/bin/python" -c "import ziglang" 2>/dev/null || ! "$tools/bin/cargo-zigbuild" --help >/dev/null 2>&1; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q "ziglang==$ZIGLANG_VERSION" "cargo-zigbuild==$ZIGBUILD_VERSION" auditwheel
  fi
}

if [ $setup_only = 1 ]; then zigbuild_setup; exit 0; fi

# manylinux2014's libraries (PEP 599), the only ones a Linux build may need
MANYLINUX2014_LIBS="libgcc_s.so.1 libstdc++.so.6 libm.so.6 libdl.so.2 librt.so.1 libc.so.6 libnsl.so.1 libutil.so.1 libpthread.so.0 libresolv.so.2 libX11.so.6 libXext.so.6 libXrender.so.1 libICE.so.6 libSM.so.6 libGL.so.1 libgobject-2.0.so.0 libgthread-2.0.so.0 libglib-2.0.so.0 ld-linux-x86-64.so.2 ld-linux-aarch64.so.1"

# glibc_check FILE...: prints each file's highest GLIBC_ version; fails on one above 2.17,
# on GLIBCXX/CXXABI versions beyond manylinux2014's, or on a NEEDED library off the list.
glibc_check() {
  local f high bad=0 lib
  for f in "$@"; do
    high=$(objdump -T "$f" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -Vu | tail -1)
    echo "  $(basename "$f"): highest symbol version ${high:-none}"
    if [ -n "$high" ] && [ "$(printf '%s\n' "$high" GLIBC_2.17 | sort -V | tail -1)" != GLIBC_2.17 ]; then
      echo "  $(basename "$f"): needs $high, above manylinux2014's GLIBC_2.17" >&2; bad=1
    fi
    if objdump -T "$f" | grep -oE '(GLIBCXX_3\.4\.(19|[2-9][0-9])|CXXABI_1\.3\.([89]|[1-9][0-9]))' | head -1 | grep -q .; then
      echo "  $(basename "$f"): C++ symbol versions beyond manylinux2014's" >&2; bad=1
    fi
    for lib in $(readelf -d "$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]/\1/p'); do
      case " $MANYLINUX2014_LIBS " in *" $lib "*) ;; *) echo "  $(basename "$f"): needs $lib, outside manylinux2014's list" >&2; bad=1 ;; esac
    done
  done
  return $bad
}

# strip_static LIB.a: without debug sections and the LLVM bitcode rustc leaves in Rust's
# objects (for LTO, which a C program's linker does not do): 44 MB become 9. LLVM's objcopy
# reads every target's objects, and the members GNU's tools refuse (zig's compiler-rt, .dwo names).
# (LLVM 14's objcopy cannot read again what it wrote of a Windows archive: one pass, with
# any more options given after LIB.a)
strip_static() {
  local lib=$1; shift
  "$(command -v llvm-objcopy || command -v llvm-objcopy-14)" --strip-debug \
    --remove-section=.llvmbc --remove-section=.llvmcmd "$@" "$lib"
}

# import_names_map LIB.a RELEASE_DIR MAP: for a Windows static library, new names for the
# symbols of the import libraries rustc writes for raw-dylib links (windows-sys): their names
# carry the path of its temporary directory, RELEASE_DIR/deps/rustcXXXXXX (random), which would
# make every build's library different. Renamed consistently across the archive (objcopy's
# --redefine-syms=MAP), they keep linking as before (the consumer test links the demo against
# it and runs it).
import_names_map() {
  # (llvm-nm fails on the members without symbols, but lists the others)
  { "$(command -v llvm-nm || command -v llvm-nm-14)" "$1" 2>/dev/null || true; } | awk '{print $NF}' | sort -u \
    | python3 -c '
import re, sys
prefix = re.sub(r"[^A-Za-z0-9]", "_", sys.argv[1].rstrip("/") + "/deps")
pat = re.compile(re.escape(prefix) + r"_rustc[A-Za-z0-9]{6}")
for name in sys.stdin.read().split():
    if pat.search(name):
        print(name, pat.sub("libb2nd_raw_dylib", name))' "$2" >"$3"
  echo "  $(basename "$1"): $(wc -l <"$3") symbols of rustc's raw-dylib import libraries renamed"
}

# python_package STAGE_INSTALL DIR [rpath]: the wheel's tree DIR/libb2nd from an install layout
python_package() {
  local inst=$1 pkg=$2/libb2nd
  rm -rf "$2" && mkdir -p "$pkg"
  cp packaging/python/libb2nd/*.py "$pkg/"
  cp -R "$inst/include" "$inst/licenses" "$pkg/"
  mkdir -p "$pkg/lib" "$pkg/bin"
  cp -R "$inst/lib/cmake" "$inst/lib/pkgconfig" "$pkg/lib/"
  # The pkg-config files give the library's directory as a run path: a venv is on no
  # loader's path (the CMake files do the same when they find themselves in this package).
  # (Windows has no run paths: a program finds the DLL beside it or on PATH.)
  [ "${3:-}" = rpath ] || return 0
  # shellcheck disable=SC2016 # (pkg-config's own ${libdir}, written as it is)
  sed -i 's|^Libs: -L${libdir} |Libs: -L${libdir} -Wl,-rpath,${libdir} |' "$pkg"/lib/pkgconfig/*.pc
  grep -q 'rpath' "$pkg/lib/pkgconfig/blosc2.pc" || { echo "release.sh: the wheel's blosc2.pc has no run path" >&2; return 1; }
}

wheel() {  # TAG DIR
  [ $wheels = 1 ] || return 0
  python3 scripts/release/pack.py wheel "$2" "$dist" "$version" "$1" >/dev/null
  echo "  wheel: libb2nd-$version-py3-none-$1.whl"
}

linux() {  # ARCH (x86_64|aarch64)
  local arch=$1 triple=$1-unknown-linux-gnu name="libb2nd-$version-linux-$1"
  local rel=$CARGO_TARGET_DIR/$triple/release inst=$stage/$name
  echo "== $name: cargo zigbuild --target $triple.2.17"
  rustup target add "$triple" >/dev/null 2>&1 || true
  zigbuild_setup
  local t=${triple//-/_}
  env PATH="$tools/bin:$PATH" RUSTFLAGS="$B2ND_RUSTFLAGS" "CFLAGS_$t=$cflags" \
    cargo zigbuild --release --locked --target "$triple.2.17" -p b2nd-capi -p b2nd-cli 2>&1 | tail -1
  ./scripts/install.sh "$inst" --built "$rel" >/dev/null
  strip_static "$inst/lib/libb2nd.a"
  python3 scripts/release/licenses.py "$triple" "$inst/licenses"
  echo "  glibc and libraries (manylinux2014):"
  glibc_check "$inst/lib/libb2nd.so.0" "$inst/bin/b2nd"
  python3 scripts/release/pack.py tar "$inst" "$dist/$name.tar.gz" "$name"
  echo "  archive: $name.tar.gz"
  # The wheel: no symbolic links in a wheel, so libb2nd.so (what -lb2nd and CMake find)
  # is a copy of libb2nd.so.0 (what the programs load), as c-blosc2's wheel copies its own.
  python_package "$inst" "$stage/wheel-linux-$arch" rpath
  cp "$inst/lib/libb2nd.so.0" "$stage/wheel-linux-$arch/libb2nd/lib/libb2nd.so.0"
  cp "$inst/lib/libb2nd.so.0" "$stage/wheel-linux-$arch/libb2nd/lib/libb2nd.so"
  cp "$inst/bin/b2nd" "$stage/wheel-linux-$arch/libb2nd/bin/b2nd"
  wheel "manylinux_2_17_$arch.manylinux2014_$arch" "$stage/wheel-linux-$arch"
  # auditwheel's own verdict on the wheel (PyPI refuses a manylinux tag it would refuse)
  if [ $wheels = 1 ]; then
    local verdict
    verdict=$("$tools/bin/auditwheel" show "$dist/libb2nd-$version-py3-none-manylinux_2_17_$arch.manylinux2014_$arch.whl" 2>&1)
    grep -q "\"manylinux_2_17_$arch\"" <<<"$verdict" || { echo "$verdict" >&2; echo "release.sh: auditwheel does not accept the wheel as manylinux_2_17_$arch" >&2; return 1; }
    echo "  auditwheel show: consistent with manylinux_2_17_$arch"
  fi
}

windows() {
  local triple=x86_64-pc-windows-gnu name="libb2nd-$version-windows-x86_64"
  local inst=$stage/$name
  echo "== $name: mingw-w64"
  ./scripts/cross.sh windows setup >/dev/null
  # (-Cstrip=symbols: the DLL's and the tool's symbol tables, which name rustc's temporary
  # directories, are left out; the DLL's exports stay)
  RUSTFLAGS="$B2ND_RUSTFLAGS -Cstrip=symbols" CFLAGS_x86_64_pc_windows_gnu="$cflags" \
    cargo build --release --locked --target "$triple" -p b2nd-capi -p b2nd-cli 2>&1 | tail -1
  ./scripts/cross.sh windows layout "$CARGO_TARGET_DIR/$triple/release" "$inst" >/dev/null
  import_names_map "$inst/lib/libblosc2.a" "$CARGO_TARGET_DIR/$triple/release" "$stage/windows-names.map"
  strip_static "$inst/lib/libblosc2.a" --redefine-syms="$stage/windows-names.map"
  python3 scripts/release/licenses.py "$triple" "$inst/licenses"
  python3 scripts/release/pack.py zip "$inst" "$dist/$name.zip" "$name"
  echo "  archive: $name.zip"
  python_package "$inst" "$stage/wheel-windows"
  cp "$inst/bin/libblosc2.dll" "$inst/bin/b2nd.exe" "$stage/wheel-windows/libb2nd/bin/"
  cp "$inst/lib/libblosc2.dll.a" "$inst/lib/libblosc2.lib" "$stage/wheel-windows/libb2nd/lib/"
  wheel win_amd64 "$stage/wheel-windows"
}

macos() {
  local name="libb2nd-$version-macos-universal2" inst=$stage/libb2nd-$version-macos-universal2
  echo "== $name: zig cc + rust-lld, arm64 and x86_64, lipo"
  # (-S to ld64.lld: no debug map, whose object paths would enter the dylib's LC_UUID)
  B2ND_RUSTFLAGS="$B2ND_RUSTFLAGS -Clink-arg=-S" CFLAGS_aarch64_apple_darwin="$cflags" CFLAGS_x86_64_apple_darwin="$cflags" \
    ./scripts/cross.sh macos release 2>&1 | grep -E '^(==|  lib|  bin)' || true
  rm -rf "$inst" && cp -R build/macos/universal2/install "$inst"
  python3 scripts/release/licenses.py aarch64-apple-darwin "$inst/licenses"
  python3 scripts/release/pack.py tar "$inst" "$dist/$name.tar.gz" "$name"
  echo "  archive: $name.tar.gz"
  python_package "$inst" "$stage/wheel-macos" rpath
  local v
  v=$(sed -n 's/^#define BLOSC2_VERSION_STRING *"\([^"]*\)".*/\1/p' include/blosc2.h)
  # (the library under the name programs load, @rpath/libblosc2.9.dylib, and the name
  # -lblosc2 finds; copies, as a wheel holds no links)
  cp "$inst/lib/libblosc2.$v.dylib" "$stage/wheel-macos/libb2nd/lib/libblosc2.9.dylib"
  cp "$inst/lib/libblosc2.$v.dylib" "$stage/wheel-macos/libb2nd/lib/libblosc2.dylib"
  cp "$inst/bin/b2nd" "$stage/wheel-macos/libb2nd/bin/b2nd"
  sed -i 's|-lb2nd|-lblosc2|' "$stage/wheel-macos/libb2nd/lib/pkgconfig/"*.pc
  wheel macosx_10_12_universal2 "$stage/wheel-macos"
}

t0=$SECONDS
for t in "${targets[@]}"; do
  case $t in
    linux-x86_64) linux x86_64 ;;
    linux-aarch64) linux aarch64 ;;
    windows-x86_64) windows ;;
    macos-universal2) macos ;;
  esac
done
(cd "$dist" && rm -f SHA256SUMS && sha256sum -- libb2nd-"$version"-* >SHA256SUMS)
echo "== dist/ ($((SECONDS - t0)) s; SOURCE_DATE_EPOCH=$SOURCE_DATE_EPOCH)"
(cd "$dist" && for f in libb2nd-"$version"-*; do printf '  %-62s %9s bytes\n' "$f" "$(stat -c %s "$f")"; done)
if [ $test = 1 ]; then
  for t in "${targets[@]}"; do
    for f in "$dist/libb2nd-$version-$t".tar.gz "$dist/libb2nd-$version-$t".zip; do
      [ ! -f "$f" ] || ./scripts/release/consumer-test.sh "$f"
    done
    # (the wheel this machine can install: pip-installed into a fresh venv and built against)
    if [ "$t" = linux-x86_64 ] && [ $wheels = 1 ]; then
      ./scripts/release/consumer-test.sh "$dist/libb2nd-$version-py3-none-manylinux_2_17_x86_64.manylinux2014_x86_64.whl"
    fi
  done
fi
