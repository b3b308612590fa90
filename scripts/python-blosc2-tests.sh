#!/usr/bin/env bash
# Build python-blosc2 from its sdist against the installed libb2nd (USE_SYSTEM_BLOSC2=1, found
# through the install's pkg-config file), install it with its test dependencies in a venv of its
# own, run its test suite and print pytest's summary line.
#
#   scripts/python-blosc2-tests.sh [--ref] [PYTEST ARGS...]
#
#   PYTEST ARGS      test files/dirs (relative to the sdist, e.g. tests/test_schunk.py) and
#                    options, passed to pytest after ours; default: the whole tests/ directory.
#   --ref            run the same tests against the reference wheel (pip install blosc2==VERSION,
#                    which bundles c-blosc2 3.3.5) in another venv, for the baseline counts.
#   --wheel WHEEL    follow docs/CLIENTS.md's recipe "python-blosc2 on the libb2nd wheel" in a
#                    fresh venv (wheel-venv/): pip install WHEEL (scripts/release.sh's), then
#                    python-blosc2 built from its sdist by one pip command against it
#                    (USE_SYSTEM_BLOSC2=1, PKG_CONFIG_PATH=$(python -m libb2nd --pkgconfig-dir));
#                    checks that blosc2_ext loads the wheel's library with no LD_LIBRARY_PATH.
#
# Environment:
#   B2ND_PREFIX            libb2nd install prefix (default build/install; ./scripts/install.sh)
#   PYBLOSC2_VERSION       python-blosc2 version (default 4.14.1)
#   PYBLOSC2_TIMEOUT       pytest-timeout per test, seconds (default 300)
#   PYBLOSC2_WORKERS       pytest-xdist -n value (default 2; pytest.ini's own default is logical)
#   PYBLOSC2_MINIEXPR_SRC  local source trees of the projects python-blosc2's CMake build
#   PYBLOSC2_SLEEF_SRC     fetches from GitHub (FetchContent names miniexpr, sleef, tinycc).
#   PYBLOSC2_MINICC_SRC    When all three are set the build is done offline with them
#                          (FETCHCONTENT_FULLY_DISCONNECTED=ON, FETCHCONTENT_SOURCE_DIR_*);
#                          otherwise CMake clones them itself and needs network access to
#                          GitHub. For python-blosc2 4.14.1 the pinned commits are:
#        miniexpr  https://github.com/Blosc/miniexpr   f0b8c94771cd21d3c9029d6ccec204ab3a67584f
#                  (python-blosc2's CMakeLists.txt)
#        sleef     https://github.com/shibatch/sleef   7623d6cfa2712462880fa63a4d0f0b5f775d1a83
#        tinycc    https://github.com/Blosc/minicc     695ad1e6b5c9a00875192ca1f3a9c4949dee4858
#                  (both from miniexpr's cmake/MiniexprFetchDeps.cmake), e.g.
#          git clone https://github.com/Blosc/miniexpr /tmp/miniexpr &&
#            git -C /tmp/miniexpr checkout f0b8c94771cd21d3c9029d6ccec204ab3a67584f
#        Nothing from them is copied into this repository.
#
# Everything goes under build/python-blosc2-tests/: the sdist and its unpacked tree (src/), the
# wheel, venv/ (libb2nd) and ref-venv/ (--ref), and a scratch copy of the tests the suite runs in.
# The built extension links libb2nd's libblosc2 through pkg-config (-lb2nd) with an rpath to
# B2ND_PREFIX/lib, and LD_LIBRARY_PATH is set too; the script checks with ldd that it resolves
# there before running anything. Tests run with -m "not network and not heavy and not tui" (the
# markers python-blosc2's pytest.ini defines and deselects by default), --timeout, and
# pytest-xdist with --dist loadfile as pytest.ini asks. Requires Python >= 3.11, a C compiler,
# pkg-config and access to PyPI (build requirements and test dependencies are wheels; cmake and
# ninja come from PyPI through scikit-build-core). Exit status: pytest's.
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

root=$(cd "$(dirname "$0")/.." && pwd)
REF=0 WHEEL=
if [[ ${1:-} == --ref ]]; then REF=1; shift; fi
if [[ ${1:-} == --wheel ]]; then WHEEL=$(readlink -f "${2:?--wheel WHEEL}"); shift 2; fi
if [[ ${1:-} == -h || ${1:-} == --help ]]; then usage 0; fi

VERSION=${PYBLOSC2_VERSION:-4.14.1}
TIMEOUT=${PYBLOSC2_TIMEOUT:-300}
WORKERS=${PYBLOSC2_WORKERS:-2}
PREFIX=${B2ND_PREFIX:-$root/build/install}
if [[ -z $WHEEL && $REF == 0 ]]; then
    PREFIX=$(cd "$PREFIX" 2>/dev/null && pwd) || { echo "no install prefix $PREFIX (run ./scripts/install.sh build/install)" >&2; exit 2; }
fi
PY=${PYTHON:-python3}
work=$root/build/python-blosc2-tests
mkdir -p "$work"
log() { printf '== %s\n' "$*" >&2; }

# --- sdist ------------------------------------------------------------------------------------
sdist=$work/blosc2-$VERSION.tar.gz
src=$work/src/blosc2-$VERSION
if [[ ! -f $sdist ]]; then
    log "downloading the blosc2==$VERSION sdist from PyPI"
    # --no-binary blosc2 only (not :all:), so that pip's metadata step gets the build
    # requirements (scikit-build-core, cython, numpy, cmake) as wheels, not from source.
    "$PY" -m pip download --quiet --no-deps --no-binary blosc2 "blosc2==$VERSION" -d "$work" \
        || { echo "pip download of the blosc2 sdist failed" >&2; exit 2; }
fi
if [[ ! -d $src ]]; then
    mkdir -p "$work/src" && tar xzf "$sdist" -C "$work/src" || exit 2
fi

test_deps() {  # pytest + pytest-timeout + python-blosc2's [dependency-groups] test list
    "$1" - "$src/pyproject.toml" <<'EOF'
import sys, tomllib
with open(sys.argv[1], "rb") as f:
    deps = tomllib.load(f).get("dependency-groups", {}).get("test", [])
for d in ["pytest", "pytest-timeout", *deps]:
    print(d)
EOF
}

make_venv() {  # DIR
    if [[ ! -x $1/bin/python ]]; then
        log "creating $1"
        "$PY" -m venv "$1" || exit 2
        "$1/bin/python" -m pip install --quiet --upgrade pip || exit 2
    fi
    mapfile -t deps < <(test_deps "$1/bin/python")
    if [[ ! -f $1/.test-deps-ok ]]; then
        log "installing test dependencies: ${deps[*]}"
        "$1/bin/python" -m pip install --quiet --only-binary :all: "${deps[@]}" || exit 2
        touch "$1/.test-deps-ok"
    fi
}

if (( REF )); then
    venv=$work/ref-venv
    make_venv "$venv"
    if ! "$venv/bin/python" -m pip show blosc2 >/dev/null 2>&1; then
        log "installing the reference wheel blosc2==$VERSION"
        "$venv/bin/python" -m pip install --quiet --only-binary :all: "blosc2==$VERSION" || exit 2
    fi
elif [[ -n $WHEEL ]]; then
    # docs/CLIENTS.md, "python-blosc2 on the libb2nd wheel": the same commands, in a new venv
    # (the recipe first: the test dependencies, installed after, would bring the PyPI blosc2
    # wheel, with c-blosc2 inside, were blosc2 not there yet)
    venv=$work/wheel-venv
    rm -rf "$venv"
    "$PY" -m venv "$venv" || exit 2
    "$venv/bin/python" -m pip install --quiet --upgrade pip || exit 2
    log "pip install $(basename "$WHEEL")"
    "$venv/bin/python" -m pip install --quiet "$WHEEL" || exit 2
    cm=()
    if [[ -n ${PYBLOSC2_MINIEXPR_SRC:-} && -n ${PYBLOSC2_SLEEF_SRC:-} && -n ${PYBLOSC2_MINICC_SRC:-} ]]; then
        cm=(-Ccmake.define.FETCHCONTENT_FULLY_DISCONNECTED=ON
            -Ccmake.define.FETCHCONTENT_SOURCE_DIR_MINIEXPR="$(cd "$PYBLOSC2_MINIEXPR_SRC" && pwd)"
            -Ccmake.define.FETCHCONTENT_SOURCE_DIR_SLEEF="$(cd "$PYBLOSC2_SLEEF_SRC" && pwd)"
            -Ccmake.define.FETCHCONTENT_SOURCE_DIR_TINYCC="$(cd "$PYBLOSC2_MINICC_SRC" && pwd)")
    fi
    log "building python-blosc2 $VERSION from its sdist against the wheel (log: $work/build-wheel.log)"
    t0=$SECONDS
    (unset LD_LIBRARY_PATH
     USE_SYSTEM_BLOSC2=1 PKG_CONFIG_PATH="$("$venv/bin/python" -m libb2nd --pkgconfig-dir)" \
        "$venv/bin/python" -m pip install -v --no-binary blosc2 "blosc2==$VERSION" "${cm[@]}") >"$work/build-wheel.log" 2>&1 \
        || { tail -30 "$work/build-wheel.log" >&2; exit 2; }
    log "built and installed in $((SECONDS - t0)) s"
    make_venv "$venv"
    unset LD_LIBRARY_PATH
    libdir=$("$venv/bin/python" -m libb2nd --libdir)
    ext=$("$venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("blosc2.blosc2_ext").origin)') || exit 2
    resolved=$(ldd "$ext" | awk '/libb2nd|libblosc2/ {print $3}')
    [[ $resolved == "$libdir"/* ]] || { echo "$ext does not load libb2nd from the wheel ($libdir): ${resolved:-not linked}" >&2; exit 2; }
    log "$(basename "$ext") -> $resolved (no LD_LIBRARY_PATH)"
    "$venv/bin/python" -c '
import blosc2, sys
maps = open("/proc/self/maps").read()
sys.exit(0 if sys.argv[1] + "/libb2nd.so.0" in maps else "libb2nd.so.0 of the wheel is not mapped")' "$libdir" || exit 2
else
    venv=$work/venv
    make_venv "$venv"
    stamp=$work/wheel/.built-against
    lib=$(readlink -f "$PREFIX/lib/libb2nd.so")
    want="$VERSION $lib $(stat -c %Y "$lib")"
    if [[ ! -f $stamp || $(cat "$stamp") != "$want" ]] || ! "$venv/bin/python" -m pip show blosc2 >/dev/null 2>&1; then
        rm -rf "$work/wheel" && mkdir -p "$work/wheel"
        cm=(-Ccmake.define.CMAKE_SHARED_LINKER_FLAGS="-Wl,-rpath,$PREFIX/lib"
            -Ccmake.define.CMAKE_MODULE_LINKER_FLAGS="-Wl,-rpath,$PREFIX/lib"
            -Cbuild-dir="$work/cmake-build")
        if [[ -n ${PYBLOSC2_MINIEXPR_SRC:-} && -n ${PYBLOSC2_SLEEF_SRC:-} && -n ${PYBLOSC2_MINICC_SRC:-} ]]; then
            for d in "$PYBLOSC2_MINIEXPR_SRC" "$PYBLOSC2_SLEEF_SRC" "$PYBLOSC2_MINICC_SRC"; do
                [[ -f $d/CMakeLists.txt || -f $d/Makefile ]] || { echo "$d: not a source tree" >&2; exit 2; }
            done
            log "offline build: miniexpr=$PYBLOSC2_MINIEXPR_SRC sleef=$PYBLOSC2_SLEEF_SRC tinycc=$PYBLOSC2_MINICC_SRC"
            cm+=(-Ccmake.define.FETCHCONTENT_FULLY_DISCONNECTED=ON
                 -Ccmake.define.FETCHCONTENT_SOURCE_DIR_MINIEXPR="$(cd "$PYBLOSC2_MINIEXPR_SRC" && pwd)"
                 -Ccmake.define.FETCHCONTENT_SOURCE_DIR_SLEEF="$(cd "$PYBLOSC2_SLEEF_SRC" && pwd)"
                 -Ccmake.define.FETCHCONTENT_SOURCE_DIR_TINYCC="$(cd "$PYBLOSC2_MINICC_SRC" && pwd)")
            offline=1
        else
            log "PYBLOSC2_{MINIEXPR,SLEEF,MINICC}_SRC not all set: CMake will clone miniexpr, sleef and minicc from GitHub"
            offline=0
        fi
        log "building python-blosc2 $VERSION against $PREFIX (log: $work/build.log)"
        t0=$SECONDS
        if ! USE_SYSTEM_BLOSC2=1 PKG_CONFIG_PATH="$PREFIX/lib/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
                "$venv/bin/python" -m pip wheel --no-deps --only-binary :all: -w "$work/wheel" -v "${cm[@]}" "$src" \
                >"$work/build.log" 2>&1; then
            tail -30 "$work/build.log" >&2
            if (( ! offline )); then
                echo "build failed; without network access to GitHub set PYBLOSC2_MINIEXPR_SRC," \
                     "PYBLOSC2_SLEEF_SRC and PYBLOSC2_MINICC_SRC to local copies (see the header of $0)" >&2
            fi
            exit 2
        fi
        log "built in $((SECONDS - t0)) s"
        "$venv/bin/python" -m pip install --quiet --force-reinstall --no-deps "$work"/wheel/blosc2-*.whl || exit 2
        # runtime dependencies of blosc2 itself (numpy, ndindex, msgpack, numexpr, ...), as wheels
        "$venv/bin/python" -m pip install --quiet --only-binary :all: "$work"/wheel/blosc2-*.whl || exit 2
        echo "$want" >"$stamp"
    fi
    export LD_LIBRARY_PATH="$PREFIX/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    ext=$("$venv/bin/python" -c 'import importlib.util as u; print(u.find_spec("blosc2.blosc2_ext").origin)' 2>/dev/null) \
        || { exts=("$venv"/lib/python3*/site-packages/blosc2/blosc2_ext*.so); ext=${exts[0]}; }
    resolved=$(ldd "$ext" | awk '/libb2nd|libblosc2/ {print $3}')
    [[ $resolved == "$PREFIX"/lib/* ]] || { echo "$ext does not load libb2nd from $PREFIX/lib: ${resolved:-not linked}" >&2; exit 2; }
    log "$(basename "$ext") -> $resolved"
fi
"$venv/bin/python" -c 'import blosc2; print("== python-blosc2", blosc2.__version__, "on C library", blosc2.blosclib_version)' >&2 \
    || { echo "import blosc2 failed" >&2; exit 2; }

# --- the tuner (tuner=blosc2.Tuner.BTUNE) -------------------------------------------------------
# On libb2nd, python-blosc2 compresses with libb2nd's tuner (docs/PLUGINS.md, "The tuner"), and
# the reference python-blosc2 (c-blosc2 3.3.5's wheel, the repository's .venv) reads the result.
if [[ $REF != 1 ]]; then
    tdir=$work/tuner && rm -rf "$tdir" && mkdir -p "$tdir"
    "$venv/bin/python" "$root/c_tests/py/tuner_check.py" write "$tdir" >&2 || { echo "tuner_check write failed" >&2; exit 1; }
    if [[ -x $root/.venv/bin/python ]] && "$root/.venv/bin/python" -c 'import blosc2' 2>/dev/null; then
        (unset LD_LIBRARY_PATH; "$root/.venv/bin/python" "$root/c_tests/py/tuner_check.py" check "$tdir") >&2 \
            || { echo "tuner_check check (reference python-blosc2) failed" >&2; exit 1; }
    fi
fi

# --- tests ------------------------------------------------------------------------------------
# Run from a copy of the sdist's test files (conftest.py, pytest.ini, tests/) so that `import
# blosc2` finds the installed package rather than src/blosc2, and the tests' scratch files stay
# out of the unpacked sdist.
mode=$([[ $REF == 1 ]] && echo ref || { [[ -n $WHEEL ]] && echo wheel; } || echo b2nd)
run=$work/run-$mode
rm -rf "$run" && mkdir -p "$run"
cp -r "$src/tests" "$src/conftest.py" "$src/pytest.ini" "$run/" || exit 2
[[ -d $src/examples ]] && cp -r "$src/examples" "$run/"
args=("$@")
(( ${#args[@]} )) || args=(tests)
# an explicit path replaces pytest.ini's testpaths, so the src/ doctests are not collected
log "pytest (${mode}) in $run: -m 'not network and not heavy and not tui' --timeout $TIMEOUT -n $WORKERS ${args[*]}"
cd "$run" || exit 2
t0=$SECONDS
"$venv/bin/python" -m pytest -m "not network and not heavy and not tui" --timeout "$TIMEOUT" \
    -n "$WORKERS" --dist loadfile -rfE -p no:cacheprovider "${args[@]}" >"$work/pytest-$mode.log" 2>&1
rc=$?
# the short summary (one line per failure or error) and pytest's final line
sed -n '/short test summary info/,$p' "$work/pytest-$mode.log" | grep -E '^(FAILED|ERROR) ' | cut -c1-240
tail -1 "$work/pytest-$mode.log"
log "pytest ($mode) finished in $((SECONDS - t0)) s, exit $rc; full log $work/pytest-$mode.log"
exit "$rc"
