#!/usr/bin/env bash
# Build libb2nd in release mode and lay out an installation under PREFIX:
#   lib/libb2nd.so.0 (+ libb2nd.so, and libblosc2.so / libblosc2.so.9 for drop-in use),
#   lib/libb2nd.a (+ libblosc2.a), include/, lib/cmake/{Blosc2,B2nd}/, lib/pkgconfig/,
#   bin/b2nd (the command-line tool).
set -euo pipefail
prefix=${1:?usage: scripts/install.sh PREFIX}
cd "$(dirname "$0")/.."
# The C library (crates/capi, built as libb2nd_capi) and the tool (crates/cli).
cargo build --release -p b2nd-capi -p b2nd-cli
mkdir -p "$prefix/lib/cmake/Blosc2" "$prefix/lib/cmake/B2nd" "$prefix/lib/pkgconfig" "$prefix/include" "$prefix/bin"
install -m 755 target/release/b2nd "$prefix/bin/b2nd"
prefix=$(cd "$prefix" && pwd)
install -m 755 target/release/libb2nd_capi.so "$prefix/lib/libb2nd.so.0"
install -m 644 target/release/libb2nd_capi.a "$prefix/lib/libb2nd.a"
ln -sf libb2nd.so.0 "$prefix/lib/libb2nd.so"
ln -sf libb2nd.so.0 "$prefix/lib/libblosc2.so"
ln -sf libb2nd.so.0 "$prefix/lib/libblosc2.so.9"
ln -sf libb2nd.a "$prefix/lib/libblosc2.a"
cp -R include/. "$prefix/include/"
install -m 644 cmake/Blosc2Config.cmake cmake/Blosc2ConfigVersion.cmake "$prefix/lib/cmake/Blosc2/"
install -m 644 cmake/B2ndConfig.cmake cmake/B2ndConfigVersion.cmake "$prefix/lib/cmake/B2nd/"
install -m 644 cmake/blosc2.pc cmake/b2nd.pc "$prefix/lib/pkgconfig/"
echo "installed libb2nd into $prefix"
