#!/usr/bin/env bash
# Build libb2nd in release mode and lay out an installation under PREFIX:
#   lib/libb2nd.so.0 (+ libb2nd.so, and libblosc2.so / libblosc2.so.9 for drop-in use),
#   lib/libb2nd.a (+ libblosc2.a), include/, lib/cmake/{Blosc2,B2nd}/, lib/pkgconfig/,
#   bin/b2nd (the command-line tool).
#
#   scripts/install.sh PREFIX [--static-only LIB.a | --built DIR]
#
# --static-only: nothing is built; LIB.a (the C library built for a system without shared
# libraries, e.g. WebAssembly by scripts/cross.sh wasm32|emscripten) is laid out as
# lib/libb2nd.a and libblosc2.a, with the same headers, CMake and pkg-config files.
# --built: nothing is built; DIR is a cargo release directory that holds the library and
# the tool already (scripts/release.sh: target/dist/TRIPLE/release), laid out in a fresh PREFIX.
set -euo pipefail
usage="usage: scripts/install.sh PREFIX [--static-only LIB.a | --built DIR]"
prefix=${1:?$usage}
static="" rel=target/release
case "${2:-}" in
  --static-only) static=${3:?$usage} ;;
  --built) rel=${3:?$usage}; rm -rf "$prefix" ;;
  "") ;;
  *) echo "$usage" >&2; exit 2 ;;
esac
cd "$(dirname "$0")/.."
if [ -n "$static" ]; then
  rm -rf "$prefix"
elif [ "${2:-}" != --built ]; then
  # The C library (crates/capi, built as libb2nd_capi) and the tool (crates/cli).
  cargo build --release -p b2nd-capi -p b2nd-cli
fi
mkdir -p "$prefix/lib/cmake/Blosc2" "$prefix/lib/cmake/B2nd" "$prefix/lib/pkgconfig" "$prefix/include"
prefix=$(cd "$prefix" && pwd)
if [ -n "$static" ]; then
  install -m 644 "$static" "$prefix/lib/libb2nd.a"
else
  mkdir -p "$prefix/bin"
  install -m 755 "$rel/b2nd" "$prefix/bin/b2nd"
  install -m 755 "$rel/libb2nd_capi.so" "$prefix/lib/libb2nd.so.0"
  install -m 644 "$rel/libb2nd_capi.a" "$prefix/lib/libb2nd.a"
  ln -sf libb2nd.so.0 "$prefix/lib/libb2nd.so"
  ln -sf libb2nd.so.0 "$prefix/lib/libblosc2.so"
  ln -sf libb2nd.so.0 "$prefix/lib/libblosc2.so.9"
fi
ln -sf libb2nd.a "$prefix/lib/libblosc2.a"
cp -R include/. "$prefix/include/"
install -m 644 cmake/Blosc2Config.cmake cmake/Blosc2ConfigVersion.cmake "$prefix/lib/cmake/Blosc2/"
install -m 644 cmake/B2ndConfig.cmake cmake/B2ndConfigVersion.cmake "$prefix/lib/cmake/B2nd/"
install -m 644 cmake/blosc2.pc cmake/b2nd.pc "$prefix/lib/pkgconfig/"
echo "installed libb2nd${static:+ (the static library alone)} into $prefix"
