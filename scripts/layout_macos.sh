# shellcheck shell=bash
# Sourced by scripts/cross_macos.sh (built with zig on Linux) and scripts/ci/native.sh (on a
# Mac): the macOS install layout, as c-blosc2's CMake installs it.
#
# layout REL INST: the dylib, static library and tool of cargo's release directory REL laid
# out in INST: lib/libblosc2.$version.dylib with the links libblosc2.9.dylib,
# libblosc2.dylib and libb2nd.dylib; lib/libb2nd.a (+ libblosc2.a); bin/b2nd when REL has
# it; include/; lib/cmake/{Blosc2,B2nd}; lib/pkgconfig.
# Needs $version (BLOSC2_VERSION_STRING of include/blosc2.h) and an llvm-objcopy:
# $MACOS_OBJCOPY, or else the caller's function `llvm llvm-objcopy` (scripts/cross_macos.sh).

# shellcheck disable=SC2154  # ($version: the caller's)
layout() {  # $1 release dir, $2 install dir, $3 static libraries' link flags
  local rel=$1 inst=$2
  rm -rf "$inst" && mkdir -p "$inst/lib/cmake/Blosc2" "$inst/lib/cmake/B2nd" "$inst/lib/pkgconfig" "$inst/include" "$inst/bin"
  install -m 755 "$rel/libb2nd_capi.dylib" "$inst/lib/libblosc2.$version.dylib"
  ln -s "libblosc2.$version.dylib" "$inst/lib/libblosc2.9.dylib"
  ln -s libblosc2.9.dylib "$inst/lib/libblosc2.dylib"
  ln -s "libblosc2.$version.dylib" "$inst/lib/libb2nd.dylib"
  # The static library without the LLVM bitcode that rustc leaves in the Rust objects
  # (__LLVM,__bitcode: for LTO, which a C program's linker does not do with Rust's LLVM):
  # 32 MB become 19, and lipo (LLVM 14's) reads the archive again.
  "${MACOS_OBJCOPY:-$(llvm llvm-objcopy)}" --remove-section=__LLVM,__bitcode --remove-section=__LLVM,__cmdline \
    "$rel/libb2nd_capi.a" "$inst/lib/libb2nd.a"
  ln -s libb2nd.a "$inst/lib/libblosc2.a"
  [ -f "$rel/b2nd" ] && install -m 755 "$rel/b2nd" "$inst/bin/b2nd"
  cp -R include/. "$inst/include/"
  install -m 644 cmake/Blosc2Config.cmake cmake/Blosc2ConfigVersion.cmake "$inst/lib/cmake/Blosc2/"
  install -m 644 cmake/B2ndConfig.cmake cmake/B2ndConfigVersion.cmake "$inst/lib/cmake/B2nd/"
  install -m 644 cmake/blosc2.pc cmake/b2nd.pc "$inst/lib/pkgconfig/"
}
