#!/usr/bin/env bash
# Build c-blosc2's own test programs and examples against the installed libb2nd, as a user
# would (pkg-config of the install prefix), run them and print a table of the results.
#
#   scripts/c-blosc2-tests.sh SRC [--sample N] [--asan] [--ref] [--only REGEX] [--windows]
#                                 [--link-only ARCH] [--wasi | --emscripten]
#                                 [--prefix DIR] [--ref-prefix DIR] [--timeout SECONDS]
#
#   SRC              a c-blosc2 3.3.x source tree (at least tests/, tests/b2nd/, examples/,
#                    examples/b2nd/), e.g.
#                      git clone --depth 1 --branch v3.3.5 https://github.com/Blosc/c-blosc2
#                    Nothing from it is copied into this repository.
#   --sample N       run only N evenly spread rows of each parameter .csv (default: all rows)
#   --asan           compile the programs with -fsanitize=address,undefined; a sanitizer report
#                    is a failure even if the program exits 0. libb2nd itself is not
#                    instrumented (it is Rust), but its malloc/free go through ASan's. Leak
#                    detection is ON (ASAN_OPTIONS=detect_leaks=1): it runs cleanly, no program
#                    leaks against the reference; c-blosc2's tests do leak on their failure
#                    paths, so a failing test also reports leaks (the line shown is then the
#                    test's own first error). Set ASAN_OPTIONS to override.
#   --ref            build and run against the reference c-blosc2 3.3.5 instead (the blosc2 wheel
#                    in .venv, or --ref-prefix / $BLOSC2_REF_PREFIX: a dir with include/ and
#                    lib/libblosc2.so), to get the baseline table.
#   --only REGEX     only programs whose name (e.g. tests/b2nd/test_b2nd_append) matches
#   --windows        build the programs for Windows with mingw-w64 and run them under wine,
#                    against libblosc2.dll (default prefix build/windows/install; --ref: the
#                    c-blosc2 that scripts/cross.sh windows builds with mingw,
#                    build/windows/c-blosc2). The DLL is put beside the programs.
#   --link-only ARCH build and link the programs for a system that cannot run here, with the
#                    compiler in $CC (e.g. scripts/cross.sh macos-arm64's zig cc), and run none:
#                    a program passes when it links. ARCH (arm64, x86_64, ...) picks the shuffle
#                    tests c-blosc2's CMake builds for that CPU.
#   --wasi           build the programs for wasm32-wasi with zig cc (scripts/cross.sh wasm32
#                    setup's wrapper, or $CC), linked against the static library of
#                    build/wasm/install (scripts/cross.sh wasm32 build lays it out), and run
#                    them under wasmtime (scripts/wasm/run: the host's / preopened as /, the
#                    scratch directory as .). There is no reference build for wasm32: a program
#                    that does not compile there is a failure, unless it does not build against
#                    the host's reference c-blosc2 either.
#   --emscripten     the same for wasm32-unknown-emscripten: built by emcc (Debian's emscripten)
#                    against build/emscripten/install (scripts/cross.sh emscripten build), run
#                    by node, the host's files reached through NODERAWFS.
#   --prefix DIR     libb2nd install prefix (default $B2ND_PREFIX or build/install)
#   --timeout S      per run (each csv row is a run), default 120; a timeout is a failure
#
# What is built, and how it is run, follows c-blosc2's CMakeLists.txt files:
#  - tests/test_*.c, tests/b2nd/test_*.c and tests/fuzz/generate_inputs_corpus.c (the glob of
#    tests/CMakeLists.txt), compiled with -DBLOSC_TESTING. A test with a .csv of the same name
#    is run once per data row (header line dropped), the row's comma-separated fields passed as
#    argv, as CMake's add_test does. The shuffle tests for other CPUs (NEON, AltiVec; SSE2/AVX2
#    when /proc/cpuinfo lacks them) are skipped as CMake skips them. No test gets special
#    arguments, environment or working directory there.
#  - examples/: the programs listed in examples/CMakeLists.txt (others are skipped), run with no
#    arguments except compress_file (an input text file and CMakeCache.b2frame) and
#    decompress_file (CMakeCache.b2frame, from compress_file's run, and CMakeCache-2.txt).
#    examples/b2nd/example_*.c all (its REMOVE_ITEM of example_print_meta.c does not match the
#    absolute paths of the glob, so CMake builds it too), example_print_meta given the
#    example_big_float_frame.b2nd that example_frame_generator writes.
#  - Programs including c-blosc2 internals (a quoted include that is not blosc2.h, b2nd.h,
#    blosc2/*.h or a helper file next to the program, e.g. "frame.h", "../blosc/context.h",
#    "../../plugins/codecs/codecs-registry.c") are skipped and listed with that header.
#    tests/b2nd/test_common.h includes the private "context.h" only for struct b2nd_context_s,
#    which our public b2nd.h defines: those tests get an empty context.h from a private dir.
#  - A program that does not compile against libb2nd but does against the reference is a
#    failure ("does not compile"); one that builds against neither (it needs symbols that only
#    c-blosc2's blosc_testing library exports) is skipped.
# docs/C_BLOSC2_TESTS.md says, for each skipped program, what it checks and which of our tests
# cover that; the skipped list below quotes it.
#
# Each program runs in its own scratch directory build/c-blosc2-tests/<mode>/run/<program>/
# (they write files), logs go to build/c-blosc2-tests/<mode>/logs/. Programs run one at a
# time. Exit status: 0 when nothing failed.
set -uo pipefail

usage() { sed -n '2,34p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

root=$(cd "$(dirname "$0")/.." && pwd)
SRC=""; SAMPLE=0; ASAN=0; REF=0; ONLY=""; WIN=0; LINK_ONLY=0; WASI=0; WASM=""
PREFIX=${B2ND_PREFIX:-}
REF_PREFIX=${BLOSC2_REF_PREFIX:-}
TIMEOUT=${C_BLOSC2_TESTS_TIMEOUT:-120}
while [ $# -gt 0 ]; do
  case "$1" in
    --sample) SAMPLE=${2:?}; shift 2;;
    --asan) ASAN=1; shift;;
    --ref) REF=1; shift;;
    --only) ONLY=${2:?}; shift 2;;
    --windows) WIN=1; shift;;
    --link-only) LINK_ONLY=1; TARGET_ARCH=${2:?}; shift 2;;
    --wasi) WASI=1; WASM=wasi; TARGET_ARCH=wasm32; shift;;
    --emscripten) WASI=1; WASM=emscripten; TARGET_ARCH=wasm32; shift;;
    --prefix) PREFIX=${2:?}; shift 2;;
    --ref-prefix) REF_PREFIX=${2:?}; shift 2;;
    --timeout) TIMEOUT=${2:?}; shift 2;;
    -h|--help) usage 0;;
    -*) echo "unknown option $1" >&2; usage;;
    *) [ -z "$SRC" ] || usage; SRC=$1; shift;;
  esac
done
[ -n "$SRC" ] || usage
[[ $SAMPLE =~ ^[0-9]+$ ]] || { echo "--sample takes a number" >&2; exit 2; }
for d in tests tests/b2nd examples examples/b2nd; do
  [ -d "$SRC/$d" ] || { echo "$SRC has no $d/: not a c-blosc2 source tree" >&2; exit 2; }
done
SRC=$(cd "$SRC" && pwd)
if [ $WIN = 1 ]; then
  [ $ASAN = 0 ] || { echo "--asan: not with --windows" >&2; exit 2; }
  : "${PREFIX:=build/windows/install}" "${REF_PREFIX:=$root/build/windows/c-blosc2}"
  export WINEDEBUG=-all
fi
if [ $LINK_ONLY = 1 ]; then
  { [ $ASAN = 0 ] && [ $WIN = 0 ] && [ $WASI = 0 ]; } || { echo "--link-only: not with --asan, --windows, --wasi or --emscripten" >&2; exit 2; }
  [ -n "${CC:-}" ] || { echo "--link-only: give the target's compiler in \$CC" >&2; exit 2; }
fi
# (WASI=1 for both WebAssembly modes, WASM says which)
if [ $WASI = 1 ]; then
  { [ $ASAN = 0 ] && [ $WIN = 0 ] && [ $REF = 0 ]; } || { echo "--$WASM: not with --asan, --windows or --ref" >&2; exit 2; }
  if [ $WASM = wasi ]; then
    : "${PREFIX:=build/wasm/install}" "${CC:=$root/build/wasm/tools/bin/zig-cc-wasm32}"
  else
    : "${PREFIX:=build/emscripten/install}" "${CC:=emcc}"
  fi
  [ -x "$CC" ] || command -v "$CC" >/dev/null || { echo "--$WASM: no $CC (scripts/cross.sh ${WASM/wasi/wasm32} setup)" >&2; exit 2; }
fi
: "${PREFIX:=build/install}"
case "$PREFIX" in /*) ;; *) PREFIX=$(cd "$root" && cd "$PREFIX" 2>/dev/null && pwd || echo "$root/$PREFIX");; esac

# --- the two libraries -------------------------------------------------------------------
if [ -z "$REF_PREFIX" ] && [ -x "$root/.venv/bin/python" ]; then
  REF_PREFIX=$("$root/.venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))' 2>/dev/null)
fi
ref_ok=0
if [ $WIN = 1 ]; then ref_lib=lib/libblosc2.dll.a; elif [ $LINK_ONLY = 1 ]; then ref_lib=lib/libblosc2.dylib; else ref_lib=lib/libblosc2.so; fi
if [ -n "$REF_PREFIX" ] && [ -f "$REF_PREFIX/$ref_lib" ] && [ -f "$REF_PREFIX/include/blosc2.h" ]; then
  ref_ok=1
fi
# flags for one library: sets CFLAGS_LIB, LIBS_LIB
lib_flags() {  # $1 = lib | ref
  if [ "$1" = ref ]; then
    CFLAGS_LIB="-I$REF_PREFIX/include"
    LIBS_LIB="-L$REF_PREFIX/lib -lblosc2"
    [ $WIN = 1 ] || LIBS_LIB+=" -Wl,-rpath,$REF_PREFIX/lib"
  else
    local pc="$PREFIX/lib/pkgconfig"
    CFLAGS_LIB=$(PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH='' pkg-config --cflags blosc2) || return 1
    LIBS_LIB=$(PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH='' pkg-config --libs blosc2) || return 1
    local libdir; libdir=$(PKG_CONFIG_LIBDIR="$pc" PKG_CONFIG_PATH='' pkg-config --variable=libdir blosc2)
    [ $WIN = 1 ] || [ $WASI = 1 ] || LIBS_LIB="$LIBS_LIB -Wl,-rpath,$(cd "$libdir" && pwd)"
  fi
}
if [ $REF = 1 ]; then
  [ $ref_ok = 1 ] || { echo "no reference c-blosc2 at '$REF_PREFIX' (run scripts/setup.sh or give --ref-prefix)" >&2; exit 2; }
  mode=ref; libname="c-blosc2 (reference, $REF_PREFIX)"
else
  [ -f "$PREFIX/lib/pkgconfig/blosc2.pc" ] || { echo "no libb2nd install at $PREFIX (./scripts/install.sh $PREFIX)" >&2; exit 2; }
  mode=lib; libname="libb2nd ($PREFIX)"
fi
command -v pkg-config >/dev/null || [ $mode = ref ] || { echo "pkg-config is needed" >&2; exit 2; }
kind=$mode  # lib | ref, whatever the build
refname="c-blosc2 3.3.5"
[ $WIN = 1 ] && refname="c-blosc2 (mingw-w64 build)"
lib_flags $mode || { echo "pkg-config failed for $PREFIX" >&2; exit 2; }
MAIN_CFLAGS=$CFLAGS_LIB; MAIN_LIBS=$LIBS_LIB
if [ $ref_ok = 1 ]; then lib_flags ref; REF_CFLAGS=$CFLAGS_LIB; REF_LIBS=$LIBS_LIB; fi

[ $ASAN = 1 ] && mode="$mode-asan"
[ $WIN = 1 ] && mode="windows-$mode"
[ $LINK_ONLY = 1 ] && mode="link-$TARGET_ARCH-$mode"
[ $WASI = 1 ] && mode="$WASM-$mode"
out="$root/build/c-blosc2-tests/$mode"
rm -rf "$out"; mkdir -p "$out/bin" "$out/run" "$out/logs" "$out/stub-include/lib" "$out/stub-include/ref"
# tests/b2nd/test_common.h's "context.h" (see above): empty for libb2nd, whose b2nd.h defines
# struct b2nd_context_s; for the reference, that same definition taken from our include/b2nd.h
# (c-blosc2 keeps it in its private blosc/context.h, with the same fields).
: > "$out/stub-include/lib/context.h"
{ echo '#include <b2nd.h>'
  awk '/^typedef struct b2nd_context_s \{/{p=1; print "struct b2nd_context_s {"; next}
       p && /^\}/{print "};"; exit} p' "$root/include/b2nd.h"
} > "$out/stub-include/ref/context.h"

CC=${CC:-gcc}
# (with --wasi and --emscripten, the reference is the host's, built by the host's compiler)
REF_CC=$CC; [ $WASI = 1 ] && REF_CC=gcc
EXE=""; RUN=()
SYS_LIBS="-lm -lpthread -ldl -lrt"
[ $LINK_ONLY = 1 ] && SYS_LIBS="-lm -lpthread"
if [ "$WASM" = wasi ]; then
  EXE=.wasm; RUN=("$root/scripts/wasm/run"); SYS_LIBS="-lm"
elif [ "$WASM" = emscripten ]; then
  # node runs the program (without its fetch, which emscripten 3.1.6's loader would take for a
  # browser's); the host's files directly (NODERAWFS); the exceptions Rust's std unwinds with
  EXE=.js; RUN=(node --no-experimental-fetch)
  SYS_LIBS="-lm -sNODERAWFS=1 -sALLOW_MEMORY_GROWTH=1 -sEXIT_RUNTIME=1 -fwasm-exceptions"
fi
if [ $WIN = 1 ]; then
  CC=x86_64-w64-mingw32-gcc; EXE=.exe; RUN=(wine); SYS_LIBS="-lm -lpthread"
  # each build's programs find their own libblosc2.dll first: the one beside them
  if [ $REF = 1 ]; then cp "$REF_PREFIX/bin/libblosc2.dll" "$out/bin/"; else cp "$PREFIX/bin/libblosc2.dll" "$out/bin/"; fi
fi
BASE_CFLAGS="-O1 -std=gnu11 -w -DBLOSC_TESTING"
SAN_FLAGS=""
if [ $ASAN = 1 ]; then
  SAN_FLAGS="-fsanitize=address,undefined -fno-omit-frame-pointer"
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
  export UBSAN_OPTIONS="print_stacktrace=1"
fi
# Linked into every program: unbuffered stdout, so that what a test printed before a crash,
# a timeout or LeakSanitizer's exit (which skips stdio's flush) is in its log.
cat > "$out/linebuf.c" <<'EOF2'
#include <stdio.h>
__attribute__((constructor)) static void c_blosc2_tests_unbuffered(void) { setvbuf(stdout, NULL, _IONBF, 0); }
EOF2
# A WASI program starts in / (its runner preopens the host's /): there, it first changes into
# PWD, the scratch directory it is run in, as CMake's tests run in their build directory.
[ "$WASM" = wasi ] && cat >> "$out/linebuf.c" <<'EOF2'
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void c_blosc2_tests_into_pwd(void) { const char *d = getenv("PWD"); if (d) chdir(d); }
EOF2
# shellcheck disable=SC2086
$CC -O1 -c $SAN_FLAGS "$out/linebuf.c" -o "$out/linebuf.o" || exit 2
[ "$REF_CC" = "$CC" ] || $REF_CC -O1 -c "$out/linebuf.c" -o "$out/linebuf.host.o" || exit 2

# --- which programs ----------------------------------------------------------------------
# c-blosc2's private headers: the names in its blosc/ dir (when SRC has it) and config.h.
private_names=" config.h b2nd-private.h bitshuffle-altivec.h bitshuffle-avx2.h bitshuffle-avx512.h
 bitshuffle-generic.h bitshuffle-neon.h bitshuffle-sse2.h blosc-private.h blosclz.h context.h
 delta.h fastcopy.h frame.h schunk-private.h sframe.h shuffle-altivec.h shuffle-avx2.h
 shuffle-generic.h shuffle-neon.h shuffle-sse2.h shuffle.h stune.h threading.h
 transpose-altivec.h trunc-prec.h "
if [ -d "$SRC/blosc" ]; then
  for h in "$SRC"/blosc/*.h; do [ -e "$h" ] && private_names+="$(basename "$h") "; done
fi
private_names=" $(tr -s ' \n\t' '   ' <<<"$private_names") "

# Prints "private HEADER[ (via HELPER)]" for the first c-blosc2 internal a file includes,
# "stub context.h" when it only needs the empty context.h (tests/b2nd/test_common.h).
scan_includes() {  # $1 = file, $2 = depth
  local file=$1 depth=${2:-0} dir inc sub
  dir=$(dirname "$file")
  while read -r inc; do
    case "$inc" in blosc2.h|b2nd.h|blosc2/*.h) continue;; esac
    if [ "$inc" = context.h ] && [[ $file == */tests/b2nd/test_common.h ]]; then
      echo "stub context.h"; continue
    fi
    if [[ $inc == */* ]] || [[ $private_names == *" $inc "* ]]; then
      echo "private $inc"; return
    fi
    if [ -f "$dir/$inc" ]; then            # a helper of the test dir: look inside it
      [ "$depth" -lt 5 ] || continue
      sub=$(scan_includes "$dir/$inc" $((depth + 1)))
      if [[ $sub == private* ]]; then echo "$sub (via $inc)"; return; fi
      [ -n "$sub" ] && echo "$sub"
    fi                                     # else a system header spelt with quotes ("stdio.h")
  done < <(sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)".*/\1/p' "$file")
}

cpu_has() { grep -qw "$1" /proc/cpuinfo 2>/dev/null; }
arch=${TARGET_ARCH:-$(uname -m)}
# Tests that tests/CMakeLists.txt does not build on this machine.
cmake_disabled() {  # $1 = program name
  case "$1" in
    tests/test_shuffle_roundtrip_neon) [[ $arch == arm* || $arch == aarch64 ]] || echo "not built by tests/CMakeLists.txt on non-NEON builds";;
    tests/test_shuffle_roundtrip_altivec) [[ $arch == ppc64* ]] || echo "not built by tests/CMakeLists.txt on non-ALTIVEC builds";;
    tests/test_shuffle_roundtrip_sse2) { [ "$arch" = x86_64 ] && { [ $LINK_ONLY = 1 ] || cpu_has sse2; }; } || echo "not built by tests/CMakeLists.txt on non-SSE2 builds";;
    tests/test_shuffle_roundtrip_avx2) { [ "$arch" = x86_64 ] && { [ $LINK_ONLY = 1 ] || cpu_has avx2; }; } || echo "not built by tests/CMakeLists.txt on non-AVX2 builds";;
  esac
}

# examples/CMakeLists.txt's EXAMPLES list: the words of set(EXAMPLES ...) and list(APPEND EXAMPLES ...)
examples_list=" $(awk '/^[[:space:]]*(set|list)[[:space:]]*\((APPEND[[:space:]]+)?EXAMPLES/{g=1} g{print} g&&/\)/{g=0}' \
  "$SRC/examples/CMakeLists.txt" 2>/dev/null | tr '()\t' '   ' | tr -s ' ' '\n' \
  | grep -v -x -e set -e list -e APPEND -e EXAMPLES -e '[$]{EXAMPLES}' -e '' | tr '\n' ' ') "

programs=()
for f in "$SRC"/tests/test_*.c "$SRC"/tests/b2nd/test_*.c "$SRC"/tests/fuzz/generate_inputs_corpus.c \
         "$SRC"/examples/*.c "$SRC"/examples/b2nd/example_*.c; do
  [ -f "$f" ] || continue
  name=${f#"$SRC"/}; name=${name%.c}
  [ -z "$ONLY" ] || [[ $name =~ $ONLY ]] || continue
  programs+=("$name")
done

# --- description and coverage of skipped programs (docs/C_BLOSC2_TESTS.md) --------------
doc="$root/docs/C_BLOSC2_TESTS.md"
describe() {  # $1 = name: "checks: behaviour" and "ours: coverage" lines from the doc, else the file's comment
  local row=""
  [ -f "$doc" ] && row=$(grep -m1 -F "| \`$1\` |" "$doc")
  if [ -n "$row" ]; then
    awk -F'|' '{b=$4; c=$5; gsub(/^ +| +$/,"",b); gsub(/^ +| +$/,"",c); gsub(/`/,"",b); gsub(/`/,"",c);
                print "checks: " b; print "ours:   " c}' <<<"$row"
    return
  fi
  # the file's opening comment: its first paragraph after the boilerplate
  awk 'NR==1 && !/^\/\*/ {exit}
       {e = ($0 ~ /\*\//); l=$0; gsub(/^[ \t\/*]+|[ \t*\/]+$/,"",l)}
       l ~ /Blosc - Blocked|Copyright|License|https?:|LICENSE|^[=*-]+$/ {if (e) exit; next}
       l=="" {if (t!="" || e) exit; next}
       {t = t (t=="" ? "" : " ") l}
       e {exit}
       END {if (length(t) > 150) t = substr(t, 1, 147) "..."; if (t != "") print "checks: " t}' "$SRC/$1.c"
}

# --- running -----------------------------------------------------------------------------
first_error() {  # $1 = log file, [$2 = strict: no fallback to the last line]: the most telling line of a failure
  local l
  l=$(sed 's/\x1b\[[0-9;]*m//g' "$1" | tr -d '\r' | awk -v strict="${2:-}" '
    { sub(/^[ \t]+/, "") }
    /^$/ { next }
    /ERROR: AddressSanitizer|runtime error:/ {
      if (!p1) { p1 = $0; if (match(p1, /[^ ]+:[0-9]+:[0-9]+: runtime error:/)) p1 = substr(p1, RSTART) }
      san = 1; next }
    /LeakSanitizer/ { if (!p4) p4 = $0; san = 1; next }
    san || /^SUMMARY: |^=+$|^#[0-9]+ 0x/ { next }
    /error|Error|ERROR|undefined reference|Assertion|assert/ { if (!p2) p2 = $0; next }
    tolower($0) ~ /fail|abort|wrong|mismatch|differ/ { if (!p3) p3 = $0; next }
    { if (!p5) p5 = $0; last = $0 }
    END { print (p1 ? p1 : p2 ? p2 : p3 ? p3 : (last && !strict) ? last : p4) }')
  l=${l//"$SRC/"/}
  [ ${#l} -gt 140 ] && l="${l:0:137}..."
  printf '%s' "$l"
}

compile() {  # $1 src, $2 output binary, $3 cflags, $4 libs, $5 extra cflags, $6 log [, $7 compiler]
  local lb="$out/linebuf.o"; [ "${7:-$CC}" = "$CC" ] || lb="$out/linebuf.host.o"
  # shellcheck disable=SC2086
  ${7:-$CC} $BASE_CFLAGS $SAN_FLAGS $5 $3 "$1" "$lb" -o "$2" $4 $SAN_FLAGS $SYS_LIBS >"$6" 2>&1
}

# What a program that wasi-libc cannot build needs from the system: processes, signals, ...
wasi_lacks() {  # $1 = build log; prints it, fails for any other error
  if grep -q 'wasm lacks signal support' "$1"; then echo "signals"
  elif grep -qE "undeclared function '(fork|waitpid|execv?p?)'|undefined symbol: (fork|waitpid)" "$1"; then echo "child processes"
  elif grep -qE 'undefined symbol: (tmpfile|tmpnam|mkstemp)' "$1"; then echo "temporary files (tmpfile)"
  elif grep -qE "undeclared function 'pthread_create'|undefined symbol: pthread_create" "$1"; then echo "threads"
  else return 1; fi
}

sig_name() { local s; s=$(kill -l $(( $1 - 128 )) 2>/dev/null) && echo "SIG$s" || echo "status $1"; }

npass=0; nfail=0; nskip=0
skipped=(); failed=()
printf '# c-blosc2 test programs (%s) against %s%s%s%s\n' "$SRC" "$libname" "$([ $ASAN = 1 ] && echo ', ASan+UBSan')" "$([ $WIN = 1 ] && echo ', Windows (mingw-w64) under wine')" \
  "$([ $LINK_ONLY = 1 ] && echo ", linked for $TARGET_ARCH by $CC, not run")$([ "$WASM" = wasi ] && echo ", wasm32-wasi by $CC, under wasmtime")$([ "$WASM" = emscripten ] && echo ", wasm32-emscripten by $CC, under node")"
table_row() { printf '%-52s %9s %6s %8s  %-8s %s\n' "$@"; }  # one line of the table
table_row program rows cases time result "first error line"
table_row "-------" "----" "-----" "----" "------" "----------------"
t_all=$EPOCHREALTIME

skip() {  # $1 name, $2 reason
  skipped+=("$1|$2"); nskip=$((nskip + 1))
}

for name in "${programs[@]}"; do
  src="$SRC/$name.c"
  reason=$(cmake_disabled "$name")
  if [ -z "$reason" ] && [[ $name == examples/* ]] && [[ $name != examples/b2nd/* ]] \
     && [[ $examples_list != *" ${name#examples/} "* ]]; then
    reason="not built by examples/CMakeLists.txt"
  fi
  extra=""; stub=0
  if [ -z "$reason" ]; then
    inc=$(scan_includes "$src")
    if p=$(grep -m1 '^private ' <<<"$inc"); then
      reason="includes c-blosc2 internal \"${p#private }\""
    elif grep -q '^stub context.h' <<<"$inc"; then
      stub=1; extra="-I$out/stub-include/$kind"
    fi
  fi
  [ -n "$reason" ] && { skip "$name" "$reason"; continue; }

  safe=${name//\//__}
  bin="$out/bin/$safe$EXE"; log="$out/logs/$safe.log"; scratch="$out/run/$safe"
  mkdir -p "$scratch"
  t0=$EPOCHREALTIME
  if ! compile "$src" "$bin" "$MAIN_CFLAGS" "$MAIN_LIBS" "$extra" "$out/logs/$safe.build.log"; then
    err=$(first_error "$out/logs/$safe.build.log")
    if [ $WASI = 1 ] && lacks=$(wasi_lacks "$out/logs/$safe.build.log"); then
      skip "$name" "needs $lacks, which wasm32-$WASM lacks ($err)"; continue
    fi
    if [ "$kind" = lib ] && [ $ref_ok = 1 ]; then
      if compile "$src" "$out/bin/$safe.ref$EXE" "$REF_CFLAGS" "$REF_LIBS" "$([ $stub = 1 ] && echo "-I$out/stub-include/ref")" \
           "$out/logs/$safe.refbuild.log" "$REF_CC"; then
        table_row "$name" - - - FAIL "does not compile: $err"
        failed+=("$name|does not compile: $err"); nfail=$((nfail + 1))
      else
        skip "$name" "does not build against $refname either: $(first_error "$out/logs/$safe.refbuild.log")"
      fi
    elif [ "$kind" = ref ]; then
      skip "$name" "does not build against $refname: $err"
    else
      table_row "$name" - - - FAIL "does not compile: $err"
      failed+=("$name|does not compile: $err"); nfail=$((nfail + 1))
    fi
    continue
  fi

  if [ $LINK_ONLY = 1 ]; then
    table_row "$name" - - - linked ""
    npass=$((npass + 1))
    continue
  fi

  # argument lists, one per run
  runs=()
  total=1
  csv="$SRC/$name.csv"
  if [[ $name == tests/* ]] && [ -f "$csv" ]; then
    mapfile -t rows < <(tail -n +2 "$csv" | tr -d '\r' | grep -v '^[[:space:]]*$')
    total=${#rows[@]}
    if [ "$SAMPLE" -gt 0 ] && [ "$SAMPLE" -lt "$total" ]; then
      for ((i = 0; i < SAMPLE; i++)); do
        if [ "$SAMPLE" = 1 ]; then k=$((total / 2)); else k=$(( (i * (total - 1) + (SAMPLE - 1) / 2) / (SAMPLE - 1) )); fi
        runs+=("${rows[k]//,/ }")
      done
    else
      for r in "${rows[@]}"; do runs+=("${r//,/ }"); done
    fi
  else
    case "$name" in
      examples/compress_file)
        # CMake passes its CMakeCache.txt: any text file of that kind will do.
        cat "$SRC/tests/CMakeLists.txt" "$SRC"/tests/*.csv > "$scratch/CMakeCache.txt" 2>/dev/null
        runs+=("$scratch/CMakeCache.txt CMakeCache.b2frame");;
      examples/decompress_file)
        cp "$out/run/examples__compress_file/CMakeCache.b2frame" "$scratch/" 2>/dev/null
        runs+=("CMakeCache.b2frame CMakeCache-2.txt");;
      examples/b2nd/example_print_meta)
        runs+=("$out/run/examples__b2nd__example_frame_generator/example_big_float_frame.b2nd");;
      *) runs+=("");;
    esac
  fi

  : > "$log"
  nrun=0; nbad=0; err=""
  for args in "${runs[@]}"; do
    nrun=$((nrun + 1))
    rlog="$out/logs/$safe.run.log"
    # shellcheck disable=SC2086
    { (cd "$scratch" && exec timeout -k 10 "$TIMEOUT" "${RUN[@]}" "$bin" $args) </dev/null >"$rlog" 2>&1; } 2>/dev/null
    rc=$?
    bad=""
    if [ $rc = 124 ] || [ $rc = 137 ]; then bad="timeout after ${TIMEOUT}s"
    elif [ $ASAN = 1 ] && grep -qE 'ERROR: AddressSanitizer|runtime error:' "$rlog"; then
      bad="sanitizer: $(first_error "$rlog")"
    elif [ $ASAN = 1 ] && grep -q 'ERROR: LeakSanitizer' "$rlog"; then
      bad="LeakSanitizer: leaks; first line: $(first_error "$rlog")"
    elif [ $rc -gt 128 ] && [ $rc -lt 160 ]; then bad="killed by $(sig_name $rc)"
    elif [ $rc != 0 ]; then bad="exit $rc"
    fi
    if [ -n "$bad" ] && [[ $bad == killed* || $bad == exit* ]]; then
      e=$(first_error "$rlog" "$([[ $bad == killed* ]] && echo 1)"); [ -n "$e" ] && bad+=": $e"
    fi
    { echo "=== $name $args  (exit $rc)"; cat "$rlog"; } >> "$log"
    if [ -n "$bad" ]; then
      nbad=$((nbad + 1))
      [ -z "$err" ] && err="$bad${args:+ [args: $args]}"
    fi
  done
  dt=$(awk -v a="$t0" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.1fs", b-a}')
  cases=$(sed 's/\x1b\[[0-9;]*m//g' "$log" | awk '/TEST RESULTS: [0-9]+ tests/{n+=$3; f=1} /Tests run: [0-9]+/{for(i=1;i<=NF;i++) if($i=="run:"){n+=$(i+1); f=1}} END{if(f) print n; else print "-"}')
  if [ -f "$csv" ] && [[ $name == tests/* ]]; then rows_s="$nrun/$total"; else rows_s=$nrun; fi
  if [ $nbad = 0 ]; then
    table_row "$name" "$rows_s" "$cases" "$dt" pass ""
    npass=$((npass + 1))
  else
    [ $nrun -gt 1 ] && err="$nbad/$nrun rows failed; first: $err"
    table_row "$name" "$rows_s" "$cases" "$dt" FAIL "$err"
    failed+=("$name|$err"); nfail=$((nfail + 1))
  fi
done

if [ $nskip -gt 0 ]; then
  echo
  echo "Skipped ($nskip):"
  for s in "${skipped[@]}"; do
    n=${s%%|*}; r=${s#*|}
    printf '  %-46s %s\n' "$n" "$r"
    describe "$n" | while IFS= read -r d; do printf '  %-46s   %s\n' "" "$d"; done
  done
fi
if [ $nfail -gt 0 ]; then
  echo
  echo "Failed ($nfail):"
  for s in "${failed[@]}"; do printf '  %-46s %s\n' "${s%%|*}" "${s#*|}"; done
  echo "(logs in ${out#"$root"/}/logs/)"
fi
echo
echo "time: $(awk -v a="$t_all" -v b="$EPOCHREALTIME" 'BEGIN{printf "%.0f s", b-a}')"
summary="$npass passed, $nfail failed"
[ $nskip -gt 0 ] && summary+=", $nskip skipped"
echo "$summary"
[ $nfail = 0 ]
