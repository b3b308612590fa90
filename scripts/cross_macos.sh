#!/usr/bin/env bash
# macOS, arm64 (aarch64-apple-darwin) and x86-64 (x86_64-apple-darwin), from a fresh Debian 12
# machine: built with zig (a C compiler for macOS, with Apple's libc headers and stubs) and
# Rust's own lld, never run: nothing here runs macOS programs. Called as
#   scripts/cross.sh macos-arm64|macos-x86_64|macos [setup|build]
# (macos: both, then the universal2 library).
#
# setup  the Rust std (rustup); llvm (Debian: llvm-nm, llvm-objdump, llvm-lipo, llvm-ar); zig
#        from PyPI in a venv of its own (build/macos/tools), with a `zig cc` wrapper per
#        target; a stub SDK for the linker (build/macos/sdk, see make_sdk); python-blosc2's
#        macOS wheel (c-blosc2's dylib, for the check that programs linked against it
#        accept ours).
# build  the dylib, the static library and the tool, laid out as
#        c-blosc2's CMake installs on macOS, in build/macos/ARCH/install:
#          lib/libblosc2.VERSION.dylib, install name @rpath/libblosc2.9.dylib, compatibility
#            version 9.0.0 (c-blosc2's), with the links libblosc2.9.dylib, libblosc2.dylib
#            and libb2nd.dylib;
#          lib/libb2nd.a (+ libblosc2.a); include/; lib/cmake/{Blosc2,B2nd}; lib/pkgconfig;
#          bin/b2nd.
#        Then checks what can be checked without running, each printed as a part:
#          - the dylib exports the functions libb2nd.so.0 exports, no more, no fewer;
#          - its install name and versions, and that a program linked against c-blosc2's
#            dylib (python-blosc2's wheel) records a name and version that ours satisfies;
#          - arm64: the NEON kernels are compiled in;
#          - the ABI facts: our headers against c-blosc2 3.3.5's (the reference wheel's),
#            compiled by zig cc for the target (values read from the assembly it writes);
#          - programs linked: our C tests (c_tests/*.c) against the dylib, one against the
#            static library; with C_BLOSC2_SRC (a c-blosc2 3.3 tree), c-blosc2's test
#            programs (scripts/c-blosc2-tests.sh --link-only; a program that links against
#            neither our dylib nor c-blosc2's, from the wheel, is skipped).
#        Once both architectures are built, also the universal2 dylib, static library
#        and tool (llvm-lipo), in build/macos/universal2/install.
# ci     what scripts/test.sh runs: build, of the C library alone (not the tool).
# release  what scripts/release.sh needs: the installs and universal2, without the checks
#        (B2ND_RUSTFLAGS: more flags for rustc, CARGO_TARGET_DIR: where cargo builds).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
target=${1:?usage: scripts/cross.sh macos-arm64|macos-x86_64|macos [setup|build]}
what=${2:-build}
tools=$PWD/build/macos/tools
ZIGLANG_VERSION=0.17.1
version=$(sed -n 's/^#define BLOSC2_VERSION_STRING *"\([^"]*\)".*/\1/p' include/blosc2.h)

passed_all=0; failed_all=0
part() {  # $1 name, $2 passed, $3 failed
  printf '%-78s %s passed, %s failed\n' "$1:" "$2" "$3"
  passed_all=$((passed_all + $2)); failed_all=$((failed_all + $3))
}
as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
llvm() {  # the llvm tool $1, unversioned or Debian 12's llvm-14
  command -v "$1" 2>/dev/null || command -v "$1-14" 2>/dev/null || { echo "no $1 (scripts/cross.sh macos setup)" >&2; return 1; }
}
triple_of() { case $1 in arm64) echo aarch64-apple-darwin ;; x86_64) echo x86_64-apple-darwin ;; esac; }
# zig's target, with the oldest macOS that Rust's target supports (the C objects' minimum)
zig_target_of() { case $1 in arm64) echo aarch64-macos.11.0 ;; x86_64) echo x86_64-macos.10.12 ;; esac; }
rust_lld() { echo "$(rustc --print sysroot)/lib/rustlib/$(rustc -vV | sed -n 's/^host: //p')/bin/rust-lld"; }

# How the dylib is linked. zig's own Mach-O linker (as cargo-zigbuild uses it) ignores the
# list of symbols to export that rustc gives (-exported_symbols_list): its dylib exported
# 2,732 symbols, every Rust and C function of the library, where libb2nd.so.0 exports 164.
# So zig only compiles the C sources, and Rust's lld (ld64.lld, which honours the list)
# links, against a stub SDK made here: zig's libSystem.tbd (the libc stubs zig ships),
# rewritten for lld: arm64 listed beside arm64e (zig's file names arm64e only; its linker
# takes one for the other) and the arm64e.x1 entries, which lld does not know, dropped.
# libc, libm, libpthread and libdl are libSystem, as in Apple's SDK; libiconv (Rust's libc
# crate links -liconv on Apple systems) is a stub of its install name, since the library
# uses none of its symbols.
make_sdk() {
  local sdk=build/macos/sdk zig_lib l
  zig_lib=$("$tools/bin/python" -c 'import ziglang, os; print(os.path.join(os.path.dirname(ziglang.__file__), "lib"))')
  rm -rf "$sdk" && mkdir -p "$sdk/usr/lib"
  cp "$zig_lib/libc/darwin/SDKSettings.json" "$sdk/"
  python3 -c '
import re, sys
def targets(m):
    items = [t.strip() for t in m.group(1).split(",") if t.strip()]
    out = []
    for t in items:
        if t.startswith("arm64e.x1-"):
            continue
        if t.startswith("arm64e-") and "arm64-" + t[7:] not in items + out:
            out.append("arm64-" + t[7:])
        out.append(t)
    return "[ " + ", ".join(out) + " ]"
sys.stdout.write(re.sub(r"\[([^\[\]]*)\]", targets, open(sys.argv[1]).read(), flags=re.S))
' "$zig_lib/libc/darwin/libSystem.tbd" >"$sdk/usr/lib/libSystem.tbd"
  for l in c m pthread dl; do ln -s libSystem.tbd "$sdk/usr/lib/lib$l.tbd"; done
  printf '%s\n' '--- !tapi-tbd' 'tbd-version: 4' 'targets: [ x86_64-macos, arm64-macos, arm64e-macos ]' \
    "install-name: '/usr/lib/libiconv.2.dylib'" 'current-version: 7' 'compatibility-version: 7' '...' \
    >"$sdk/usr/lib/libiconv.tbd"
}

setup() {  # $1 arch
  local arch=$1 triple zt
  triple=$(triple_of "$arch"); zt=$(zig_target_of "$arch")
  echo "== setup $triple"
  rustup target add "$triple" >/dev/null
  if ! llvm llvm-lipo >/dev/null 2>&1; then
    as_root apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq llvm >/dev/null
  fi
  if [ "$("$tools/bin/python" -m ziglang version 2>/dev/null)" != "$ZIGLANG_VERSION" ]; then
    python3 -m venv "$tools"
    "$tools/bin/pip" install -q "ziglang==$ZIGLANG_VERSION"
  fi
  # zig cc for the target, as one command (cc-rs and the scripts want a path); the target
  # that cc-rs adds (--target=arm64-apple-macosx) gives way to zig's own
  cat >"$tools/bin/zig-cc-$arch" <<EOF
#!/bin/sh
# (zig cc --version, which cc-rs asks, leaves an empty a.o where it runs)
[ "\$*" = --version ] && cd "\${TMPDIR:-/tmp}"
for a do
  shift
  case "\$a" in --target=*) ;; *) set -- "\$@" "\$a" ;; esac
done
exec "$tools/bin/python" -m ziglang cc -target $zt "\$@"
EOF
  chmod +x "$tools/bin/zig-cc-$arch"
  make_sdk
  # c-blosc2's dylib, from python-blosc2's wheel for the target
  local plat wheel=build/macos/wheel-$arch
  case $arch in arm64) plat=macosx_11_0_arm64 ;; x86_64) plat=macosx_10_9_x86_64 ;; esac
  if [ ! -f "$wheel/blosc2/lib/libblosc2.dylib" ]; then
    rm -rf "$wheel" && mkdir -p "$wheel"
    "$tools/bin/pip" download -q --no-deps --only-binary=:all: --platform "$plat" -d "$wheel" "blosc2==4.14.1"
    (cd "$wheel" && python3 -m zipfile -e ./*.whl . && rm -f ./*.whl)
  fi
  echo "setup: rust-std $triple, zig $("$tools/bin/python" -m ziglang version), $(rust_lld), $(llvm llvm-lipo)"
}

# layout REL INST: the install layout (shared with scripts/ci/native.sh, which lays out a
# native macOS build the same way)
# shellcheck source=layout_macos.sh
source scripts/layout_macos.sh

# The exports of libb2nd.so.0 (Linux, this machine's build)
linux_exports() {  # $1 output file
  cargo build --release -p b2nd-capi 2>&1 | tail -1 >&2
  nm -D --defined-only target/release/libb2nd_capi.so | awk '$2=="T"{print $3}' | sort >"$1"
}

build() {  # $1 arch
  local arch=$1 triple zt out inst rel crates=(-p b2nd-capi -p b2nd-cli)
  [ "$what" = ci ] && crates=(-p b2nd-capi)  # (CI: the C library alone, not the tool)
  triple=$(triple_of "$arch"); zt=$(zig_target_of "$arch")
  out=target/cross/$triple; inst=build/macos/$arch/install; rel=${CARGO_TARGET_DIR:-target}/$triple/release
  mkdir -p "$out"
  echo "== build $triple (C: zig cc; link: rust-lld)"
  local t=${triple//-/_}
  env "CC_$t=$tools/bin/zig-cc-$arch" "AR_$t=$(llvm llvm-ar)" \
    "CARGO_TARGET_${t^^}_LINKER=$(rust_lld)" "CARGO_TARGET_${t^^}_RUSTFLAGS=-Clinker-flavor=ld64.lld${B2ND_RUSTFLAGS:+ $B2ND_RUSTFLAGS}" \
    SDKROOT="$PWD/build/macos/sdk" cargo build --release --target "$triple" "${crates[@]}" 2>&1 \
    | grep -v 'newer than target minimum' | tail -1
  layout "$rel" "$inst"
  [ "$what" = release ] && return  # (scripts/release.sh: the install alone, checked there)
  local cc="$tools/bin/zig-cc-$arch" nm objdump
  nm=$(llvm llvm-nm); objdump=$(llvm llvm-objdump)
  local dylib="$inst/lib/libblosc2.$version.dylib"

  echo "== $triple: checks (built, not run)"
  linux_exports "$out/exports-linux.txt"
  "$nm" -gU --defined-only "$dylib" | awk '$2=="T"{sub(/^_/, "", $3); print $3}' | sort >"$out/exports-dylib.txt"
  local n missing
  n=$(comm -12 "$out/exports-linux.txt" "$out/exports-dylib.txt" | wc -l)
  missing=$(comm -3 "$out/exports-linux.txt" "$out/exports-dylib.txt" | wc -l)
  [ "$missing" = 0 ] || { comm -3 "$out/exports-linux.txt" "$out/exports-dylib.txt" | head -10 || true; }
  part "exports of libblosc2.$version.dylib (same as libb2nd.so.0's)" "$n" "$missing"

  # LC_ID_DYLIB, and what a program linked against c-blosc2's dylib asks for
  local id want ok=0 bad=0
  id=$("$objdump" --macho --dylib-id --dylibs-used "$dylib" | sed -n 2p | sed 's/^[[:space:]]*//')
  echo "  install name: $id"
  case "$id" in "@rpath/libblosc2.9.dylib (compatibility version 9.0.0, current version $version)") ok=$((ok + 1)) ;; *) bad=$((bad + 1)) ;; esac
  local wheel=build/macos/wheel-$arch/blosc2/lib
  printf '#include <blosc2.h>\nint main(void) { blosc2_init(); blosc2_destroy(); return 0; }\n' >"$out/uses_ref.c"
  if "$cc" -I"$wheel/../include" -o "$out/uses_ref" "$out/uses_ref.c" -L"$wheel" -lblosc2 2>"$out/uses_ref.log"; then
    want=$("$objdump" --macho --dylibs-used "$out/uses_ref" | awk '/libblosc2/{print $1, $4}' | tr -d ',')
    echo "  a program linked against c-blosc2's dylib (python-blosc2 4.14.1's wheel) loads: $want"
    # the same name, and a compatibility version no newer than ours (dyld's rule)
    if [ "${want% *}" = "@rpath/libblosc2.9.dylib" ] && [ "$(printf '%s\n' "${want#* }" 9.0.0 | sort -V | tail -1)" = 9.0.0 ]; then
      ok=$((ok + 1))
    else
      bad=$((bad + 1))
    fi
  else
    cat "$out/uses_ref.log"; bad=$((bad + 1))
  fi
  part "install name and versions (ours, and as programs of c-blosc2's ask)" "$ok" "$bad"

  if [ "$arch" = arm64 ]; then
    # NEON is compile-time on aarch64: the target enables it, and the kernels are in the
    # library (its local symbols, b2nd::filters::*::neon::*)
    local feat kernels
    feat=$(rustc --print cfg --target "$triple" | grep -c 'target_feature="neon"' || true)
    kernels=$("$nm" "$dylib" | grep -c '4neon' || true)
    echo "  target_feature=\"neon\": $feat; NEON kernels in the dylib: $("$nm" -C "$dylib" | awk '/::neon::/{print $3}' | sed 's/::h[0-9a-f]*$//' | tr '\n' ' ')"
    if [ "$feat" = 1 ] && [ "$kernels" -gt 0 ]; then part "NEON kernels compiled in" 1 0; else part "NEON kernels compiled in" 0 1; fi
  fi

  abi_facts "$arch" "$out"
  link_programs "$arch" "$out" "$inst"
}

abi_facts() {  # $1 arch, $2 out
  local arch=$1 out=$2 zt venv ref
  zt=$(zig_target_of "$arch")
  venv=$(./scripts/setup.sh)
  ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.join(os.path.dirname(blosc2.__file__), "include"))')
  "$venv/bin/python" c_tests/abi/gen_abi_check.py --data "$ref" >"$out/abi_data.c"
  "$venv/bin/python" c_tests/abi/gen_abi_check.py --names "$ref" >"$out/abi_names.txt"
  local which
  for which in ours ref; do
    local inc=include
    [ $which = ref ] && inc=$ref
    "$tools/bin/zig-cc-$arch" -std=c11 -O0 -DBLOSC1_COMPAT -I"$inc" -S -o "$out/abi_$which.s" "$out/abi_data.c"
    # one `.quad` per fact after the array's label; fields' offset and size on one line, as the
    # program of the other targets prints them
    awk '/^_?abi_facts:/{p=1; next} p && /^[ \t]*\.quad/{print $2; next} p{exit}' "$out/abi_$which.s" \
      | paste -d= "$out/abi_names.txt" - \
      | awk -F= '$1 ~ / offset$/{ov=$2; next} $1 ~ / size$/{sub(/ size$/, "", $1); print $1 " offset=" ov " size=" $2; next} {print}' \
      >"$out/abi_$which.txt"
  done
  local facts values
  facts=$(wc -l <"$out/abi_ref.txt")
  values=$(grep -c '=$' "$out/abi_ref.txt" || true)
  if [ "$facts" -gt 0 ] && [ "$values" = 0 ] && diff "$out/abi_ref.txt" "$out/abi_ours.txt" >"$out/abi.diff"; then
    part "ABI facts (sizes, offsets, constants; zig cc -target $zt)" "$facts" 0
  else
    head -20 "$out/abi.diff"
    part "ABI facts (sizes, offsets, constants; zig cc -target $zt)" $((facts - $(grep -c '^<' "$out/abi.diff" || true))) "$(grep -c '^<' "$out/abi.diff" || echo 1)"
  fi
}

link_programs() {  # $1 arch, $2 out, $3 install
  local arch=$1 out=$2 inst=$3 zt cc
  zt=$(zig_target_of "$arch"); cc="$tools/bin/zig-cc-$arch"
  local libdir; libdir=$(cd "$inst/lib" && pwd)
  local ok=0 bad=0 f name
  mkdir -p "$out/c_tests"
  for f in c_tests/test_*.c c_tests/x*.c; do
    name=$(basename "$f" .c)
    # (test_core_cdylib links the core crate's own test cdylib, not the C library)
    [ "$name" = test_core_cdylib ] && continue
    if "$cc" -std=gnu11 -O1 -D_DEFAULT_SOURCE -Iinclude -Ic_tests -o "$out/c_tests/$name" "$f" \
         -L"$libdir" -lblosc2 -Wl,-rpath,"$libdir" -lpthread -lm >"$out/c_tests/$name.log" 2>&1; then
      ok=$((ok + 1))
    else
      bad=$((bad + 1)); echo "  $name does not link: $(grep -m1 -i error "$out/c_tests/$name.log")"
    fi
  done
  # the static library, with what Rust's std needs on macOS
  if "$cc" -std=gnu11 -O1 -Iinclude -Ic_tests -o "$out/c_tests/test_chunk_api_static" c_tests/test_chunk_api.c \
       "$libdir/libb2nd.a" -lpthread -lm >"$out/c_tests/test_chunk_api_static.log" 2>&1; then
    ok=$((ok + 1))
  else
    bad=$((bad + 1)); echo "  test_chunk_api_static does not link: $(grep -m1 -i error "$out/c_tests/test_chunk_api_static.log")"
  fi
  part "our C tests linked (c_tests/, not run)" "$ok" "$bad"

  if [ -n "${C_BLOSC2_SRC:-}" ]; then
    local log="$out/c-blosc2-link.log" p f
    # (beside c-blosc2 3.3.5's own macOS dylib, the wheel's: a program that links against
    # neither is skipped, as on Linux)
    CC="$cc" ./scripts/c-blosc2-tests.sh "$C_BLOSC2_SRC" --link-only "$arch" --prefix "$inst" \
      --ref-prefix "$PWD/build/macos/wheel-$arch/blosc2" >"$log" 2>&1 || true
    read -r p f < <(tail -1 "$log" | awk '{print $1, $3}')
    grep -E ' FAIL ' "$log" | head -10 || true
    part "c-blosc2's test programs linked ($(tail -1 "$log"))" "${p:-0}" "${f:-1}"
  else
    echo "  (C_BLOSC2_SRC not set: c-blosc2's test programs not linked)"
  fi
}

universal2() {
  local lipo u=build/macos/universal2/install
  lipo=$(llvm llvm-lipo)
  echo "== universal2 (arm64 + x86_64, $lipo)"
  rm -rf "$u" && mkdir -p "$u"
  cp -R build/macos/arm64/install/. "$u/"
  local f archs ok=0 bad=0 files=("lib/libblosc2.$version.dylib" lib/libb2nd.a)
  [ -f build/macos/arm64/install/bin/b2nd ] && [ -f build/macos/x86_64/install/bin/b2nd ] && files+=(bin/b2nd)
  for f in "${files[@]}"; do
    rm -f "$u/$f"
    "$lipo" -create -output "$u/$f" "build/macos/arm64/install/$f" "build/macos/x86_64/install/$f"
  done
  for f in "${files[@]}"; do
    archs=$("$lipo" -archs "$u/$f" | xargs)
    echo "  $f: $archs"
    case "$archs" in "x86_64 arm64" | "arm64 x86_64") ok=$((ok + 1)) ;; *) bad=$((bad + 1)) ;; esac
  done
  part "universal2 (arm64 + x86_64): ${files[*]}" "$ok" "$bad"
}

case "$target" in
  macos-arm64) archs=(arm64) ;;
  macos-x86_64) archs=(x86_64) ;;
  macos) archs=(arm64 x86_64) ;;
  *) echo "usage: scripts/cross.sh macos-arm64|macos-x86_64|macos [setup|build]" >&2; exit 2 ;;
esac
for a in "${archs[@]}"; do
  case "$what" in
    setup) setup "$a" ;;
    build|ci|release) setup "$a"; build "$a" ;;
    *) echo "usage: scripts/cross.sh $target [setup|build|ci|release]" >&2; exit 2 ;;
  esac
done
if [ "$what" = build ] || [ "$what" = ci ] || [ "$what" = release ]; then
  # whenever both architectures' installs are there
  [ -f "build/macos/arm64/install/lib/libblosc2.$version.dylib" ] && [ -f "build/macos/x86_64/install/lib/libblosc2.$version.dylib" ] && universal2
  echo "== $target: $passed_all passed, $failed_all failed (built and linked; nothing macOS runs here)"
  [ "$failed_all" = 0 ]
fi
