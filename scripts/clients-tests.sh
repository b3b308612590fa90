#!/usr/bin/env bash
# Build a pinned client of the Blosc2 C library against the installed libb2nd (or, with --ref,
# against the reference c-blosc2 3.3.5 of the blosc2==4.14.1 PyPI wheel), check that the intended
# library is the one linked (ldd) and loaded (/proc/self/maps of the test process), run the
# client's own test suite and print a last line "N passed, N failed, N skipped".
#
#   scripts/clients-tests.sh NAME [--ref]
#
#   NAME   pytables     PyTables 3.11.1 from its PyPI sdist (tables==3.11.1), BLOSC2_DIR=prefix,
#                       PYTABLES_NO_BLOSC2_WHEEL=1, CPPFLAGS=-DBLOSC2_MAX_DIM=B2ND_MAX_DIM (its
#                       hdf5-blosc2/src/blosc2_filter.c still uses the macro c-blosc2 3.x dropped).
#                       Needs HDF5 (apt-get install libhdf5-dev). Runs tables.tests.test_suite
#                       twice: BLOSC2_FILTER=0 (PyTables' direct-chunk blosc2 path, its default)
#                       and BLOSC2_FILTER=1 (through the HDF5 filter pipeline); the last line is
#                       the sum, each run has its own line before it.
#          hdf5plugin   hdf5plugin 7.1.0 from its PyPI sdist, HDF5PLUGIN_SYSTEM_LIBRARIES=blosc2
#                       (found with pkg-config: PKG_CONFIG_PATH=prefix/lib/pkgconfig), with h5py
#                       (wheel); runs `python -m hdf5plugin.test`.
#          imagecodecs, hdf5-blosc2, h5zblosc2, caterva2: not implemented yet (exit 2).
#   --ref  build and test against the reference c-blosc2 3.3.5 (the lib/ and include/ of the
#          blosc2==4.14.1 wheel) instead, for the baseline counts.
#
# Environment:
#   B2ND_PREFIX          libb2nd install prefix (default build/install; ./scripts/install.sh)
#   CLIENTS_TIMEOUT      limit for one test-suite run, seconds (default 3600)
#   PYTABLES_PATHS       which PyTables runs: "direct,filter" (default), "direct" or "filter"
#   PYTABLES_TESTS       comma-separated modules of tables.tests to run instead of the whole
#                        test_suite (e.g. test_carray,test_earray,test_tables: the ones that
#                        exercise blosc2); the whole suite takes ~1 h per run on 2 busy cores
#   HDF5PLUGIN_STRIP     passed to hdf5plugin's build; default: every filter but blosc2 is
#                        stripped (their tests then skip); set it empty to build them all.
#   PYBLOSC2_WHEEL       a python-blosc2 wheel built against libb2nd (default: the one
#                        scripts/python-blosc2-tests.sh leaves in build/python-blosc2-tests/wheel,
#                        if any). hdf5plugin's suite uses python-blosc2 when importable: with such a
#                        wheel, the libb2nd venv gets it and the --ref venv gets blosc2==4.14.1;
#                        without one neither venv has python-blosc2 and those tests skip in both.
#
# Everything goes under build/clients/NAME/: the sdist, an unpacked source tree and a venv per
# mode (src-b2nd/, venv/; src-ref/, ref-venv/), wheels, build-MODE.log, test logs. Extensions are
# linked with an rpath to the library's directory and LD_LIBRARY_PATH is set too (PyTables'
# __init__ dlopens "libblosc2.so" by name before importing its extensions). Requires Python >=
# 3.11, a C compiler, pkg-config and PyPI. Exit status: 0 when no test failed, 1 when some did,
# 2 when the build or a library check failed.
set -uo pipefail

usage() { sed -n '2,43p' "$0" | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

root=$(cd "$(dirname "$0")/.." && pwd)
NAME="" REF=0
for a in "$@"; do
    case $a in
        --ref) REF=1 ;;
        -h|--help) usage 0 ;;
        -*) echo "unknown option $a" >&2; usage ;;
        *) [[ -z $NAME ]] || usage; NAME=$a ;;
    esac
done
[[ -n $NAME ]] || usage

PREFIX=${B2ND_PREFIX:-$root/build/install}
PREFIX=$(cd "$PREFIX" 2>/dev/null && pwd) || { echo "no install prefix $PREFIX (run ./scripts/install.sh build/install)" >&2; exit 2; }
PY=${PYTHON:-python3}
TIMEOUT=${CLIENTS_TIMEOUT:-3600}
REF_VERSION=4.14.1   # python-blosc2 wheel that bundles c-blosc2 3.3.5
MODE=$([[ $REF == 1 ]] && echo ref || echo b2nd)
work=$root/build/clients/$NAME
log() { printf '== %s\n' "$*" >&2; }
die() { echo "$NAME: $*" >&2; exit 2; }

# --- helpers -------------------------------------------------------------------------------

sdist() {  # DIST VERSION -> prints the path of a fresh unpacked tree $work/src-$MODE/DIST-VERSION
    local dist=$1 ver=$2 tgz
    tgz=$(ls "$work/$dist-$ver".tar.gz 2>/dev/null | head -1)
    if [[ -z $tgz ]]; then
        log "downloading the $dist==$ver sdist from PyPI"
        "$PY" -m pip download --quiet --no-deps --no-binary "$dist" "$dist==$ver" -d "$work" >&2 \
            || die "pip download of the $dist sdist failed"
        tgz=$(ls "$work/$dist-$ver".tar.gz 2>/dev/null | head -1)
        [[ -n $tgz ]] || die "no $dist-$ver.tar.gz after pip download"
    fi
    rm -rf "$work/src-$MODE" && mkdir -p "$work/src-$MODE" && tar xzf "$tgz" -C "$work/src-$MODE" || die "unpacking $tgz"
    echo "$work/src-$MODE/$dist-$ver"
}

make_venv() {  # DIR PACKAGES... (binary wheels only)
    local dir=$1; shift
    if [[ ! -x $dir/bin/python ]]; then
        log "creating $dir"
        "$PY" -m venv "$dir" || die "venv"
        "$dir/bin/python" -m pip install --quiet --upgrade pip || die "pip upgrade"
    fi
    if [[ ! -f $dir/.deps-ok || $(cat "$dir/.deps-ok") != "$*" ]]; then
        log "installing into $(basename "$dir"): $*"
        "$dir/bin/python" -m pip install --quiet --only-binary :all: "$@" || die "pip install $*"
        echo "$*" >"$dir/.deps-ok"
    fi
}

# LIBDIR INCDIR LIBFILE: the library clients are built against. For --ref, the blosc2 wheel in
# VENV (installed there if missing).
select_lib() {  # VENV
    if (( REF )); then
        if ! "$1/bin/python" -m pip show blosc2 >/dev/null 2>&1; then
            log "installing the reference wheel blosc2==$REF_VERSION into $(basename "$1")"
            "$1/bin/python" -m pip install --quiet --only-binary :all: "blosc2==$REF_VERSION" || die "pip install blosc2"
        fi
        local site
        site=$("$1/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
        LIBDIR=$site/blosc2/lib INCDIR=$site/blosc2/include
        [[ -f $LIBDIR/libblosc2.so && -f $INCDIR/blosc2.h ]] || die "no lib/libblosc2.so or include/blosc2.h in $site/blosc2"
        LIBFILE=$(readlink -f "$LIBDIR/libblosc2.so")
    else
        LIBDIR=$PREFIX/lib INCDIR=$PREFIX/include
        LIBFILE=$(readlink -f "$PREFIX/lib/libb2nd.so")
    fi
    [[ -f $LIBFILE ]] || die "no library $LIBFILE"
    # dynamic linking by soname: a rebuilt library at the same path needs no rebuild of the client
    STAMP="$NAME $MODE $LIBFILE"
}

check_ldd() {  # FILE...: each must resolve libblosc2/libb2nd into LIBDIR
    local f r
    for f in "$@"; do
        r=$(ldd "$f" | awk '/libb2nd|libblosc2/ {print $3}')
        [[ -n $r ]] || die "$f is not linked to libblosc2/libb2nd"
        [[ $(dirname "$(readlink -f "$r")") == "$(readlink -f "$LIBDIR")" ]] \
            || die "$f resolves the Blosc2 library to $r, not into $LIBDIR"
        log "ldd: $(basename "$f") -> $r"
    done
}

# Python module used by the test runners: every libblosc2*/libb2nd* mapped into the process must
# come from $CLIENTS_LIBDIR, and at least one must be mapped.
write_maps_check() {
    cat >"$work/clients_maps.py" <<'EOF'
import os, sys

def mapped():
    libs = set()
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split(None, 5)
            if len(parts) == 6:
                path = parts[5].strip()
                if os.path.basename(path).startswith(("libblosc2", "libb2nd")):
                    libs.add(path)
    return sorted(libs)

def check(when):
    want = os.path.realpath(os.environ["CLIENTS_LIBDIR"])
    libs = mapped()
    bad = [p for p in libs if os.path.dirname(os.path.realpath(p)) != want]
    print(f"== maps {when}: {' '.join(libs) or 'none'}", file=sys.stderr)
    if not libs or bad:
        print(f"== maps check FAILED {when}: want only {want}/, got {libs}", file=sys.stderr)
        sys.exit(3)

def run_unittest(suite, label):
    """Run a unittest suite, print failing ids and 'N passed, N failed, N skipped'."""
    import unittest
    res = unittest.TextTestRunner(stream=sys.stdout, verbosity=2).run(suite)
    failed = [t for t, _ in res.failures + res.errors] + list(res.unexpectedSuccesses)
    nfail = len(res.failures) + len(res.errors) + len(res.unexpectedSuccesses)
    nskip = len(res.skipped)
    npass = res.testsRun - nfail - nskip
    for t in failed:
        print(f"FAILED {label}: {t.id() if hasattr(t, 'id') else t}", file=sys.stderr)
    return npass, nfail, nskip
EOF
}

# --- pytables ------------------------------------------------------------------------------

pytables() {
    local ver=3.11.1 venv whl src paths p
    venv=$work/$([[ $REF == 1 ]] && echo ref-venv || echo venv)
    make_venv "$venv" setuptools wheel "numpy>=2" "Cython>=3.1" packaging py-cpuinfo numexpr
    select_lib "$venv"
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    if [[ ! -f $work/wheel-$MODE/.built-against || $(cat "$work/wheel-$MODE/.built-against") != "$STAMP" ]] \
            || ! "$venv/bin/python" -m pip show tables >/dev/null 2>&1; then
        src=$(sdist tables "$ver") || exit 2
        rm -rf "$work/wheel-$MODE" && mkdir -p "$work/wheel-$MODE"
        log "building PyTables $ver against $LIBDIR (log: $work/build-$MODE.log; ~7 min on 2 cores)"
        # BLOSC2_DIR: PREFIX with include/ and lib/; PYTABLES_NO_BLOSC2_WHEEL: do not take the
        # headers/library of an installed python-blosc2 wheel instead; --no-build-isolation:
        # pyproject.toml's build requirements include the blosc2 wheel.
        BLOSC2_DIR=$(dirname "$LIBDIR") PYTABLES_NO_BLOSC2_WHEEL=1 \
            CPPFLAGS="-DBLOSC2_MAX_DIM=B2ND_MAX_DIM${CPPFLAGS:+ $CPPFLAGS}" \
            LDFLAGS="-Wl,-rpath,$LIBDIR${LDFLAGS:+ $LDFLAGS}" \
            "$venv/bin/python" -m pip wheel --no-deps --no-build-isolation -w "$work/wheel-$MODE" -v "$src" \
            >"$work/build-$MODE.log" 2>&1 || { tail -30 "$work/build-$MODE.log" >&2; die "build failed"; }
        grep -F "Found blosc2 headers" "$work/build-$MODE.log" | head -1 | sed 's/^ */== /' >&2
        # --no-deps: tables depends on the blosc2 wheel, which would put a second libblosc2 in
        # the process in the libb2nd venv (the --ref venv has it already: it is the library)
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$work"/wheel-$MODE/tables-*.whl || die "pip install"
        echo "$STAMP" >"$work/wheel-$MODE/.built-against"
    fi
    whl=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')/tables
    check_ldd "$whl"/hdf5extension*.so "$whl"/tableextension*.so "$whl"/utilsextension*.so
    write_maps_check
    cat >"$work/run_tests.py" <<'EOF'
import os, sys, tempfile
sys.path.insert(0, os.environ["CLIENTS_WORK"])
import clients_maps
import tables
clients_maps.check("after import tables")
import numpy as np
# exercise both blosc2 paths once, so that the check below sees what compressing loaded
with tempfile.TemporaryDirectory() as d:
    fn = os.path.join(d, "smoke.h5")
    with tables.open_file(fn, "w") as f:
        a = np.arange(200_000, dtype="i8").reshape(200, 1000)
        f.create_carray("/", "c", obj=a, filters=tables.Filters(5, "blosc2:zstd"))
        t = f.create_table("/", "t", np.zeros(10_000, dtype=[("x", "i4"), ("y", "f8")]),
                           filters=tables.Filters(5, "blosc2"))
    with tables.open_file(fn) as f:
        assert (f.root.c[5:7, 3:9] == a[5:7, 3:9]).all() and len(f.root.t[:]) == 10_000
clients_maps.check("after blosc2 compression")
from tables.tests import common, test_suite
common.print_versions()
import importlib, unittest
only = [m.strip() for m in os.environ.get("PYTABLES_TESTS", "").split(",") if m.strip()]
if only:
    suite = unittest.TestSuite(importlib.import_module(f"tables.tests.{m}").suite() for m in only)
else:
    suite = test_suite.suite()
res = clients_maps.run_unittest(suite, os.environ["CLIENTS_LABEL"])
clients_maps.check("after the test suite")
print("%d passed, %d failed, %d skipped" % res)
EOF
    paths=${PYTABLES_PATHS:-direct,filter}
    local tp=0 tf=0 ts=0 rc=0 line n
    for p in ${paths//,/ }; do
        case $p in direct) n=0 ;; filter) n=1 ;; *) die "PYTABLES_PATHS: unknown $p" ;; esac
        local run=$work/run-$MODE-$p
        rm -rf "$run" && mkdir -p "$run"
        log "PyTables test suite ($MODE, BLOSC2_FILTER=$n: $p path), log $work/test-$MODE-$p.log"
        (cd "$run" && BLOSC2_FILTER=$n CLIENTS_WORK=$work CLIENTS_LIBDIR=$LIBDIR CLIENTS_LABEL=$p \
            TMPDIR=$run timeout "$TIMEOUT" "$venv/bin/python" "$work/run_tests.py") >"$work/test-$MODE-$p.log" 2>&1
        local r=$?
        grep -E '^== maps|^FAILED ' "$work/test-$MODE-$p.log" | cut -c1-240 >&2
        line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test-$MODE-$p.log" | tail -1)
        if [[ -z $line ]]; then
            tail -20 "$work/test-$MODE-$p.log" >&2
            die "the $p run ended without a summary (exit $r)"
        fi
        echo "$p ($MODE): $line"
        read -r a _ b _ c _ <<<"$line"
        tp=$((tp + a)) tf=$((tf + b)) ts=$((ts + c))
        (( b )) && rc=1
    done
    echo "$tp passed, $tf failed, $ts skipped"
    return $rc
}

# --- hdf5plugin ----------------------------------------------------------------------------

hdf5plugin() {
    local ver=7.1.0 venv site src pyb2=() wheel
    venv=$work/$([[ $REF == 1 ]] && echo ref-venv || echo venv)
    wheel=${PYBLOSC2_WHEEL:-$(ls "$root"/build/python-blosc2-tests/wheel/blosc2-*.whl 2>/dev/null | head -1)}
    make_venv "$venv" "setuptools>=77" wheel py-cpuinfo==9.0.0 pkgconfig h5py numpy
    if [[ -n $wheel ]]; then
        if (( REF )); then
            pyb2=("blosc2==$REF_VERSION")
        else
            [[ -f $wheel ]] || die "PYBLOSC2_WHEEL $wheel not found"
            if ! "$venv/bin/python" -m pip show blosc2 >/dev/null 2>&1; then
                log "installing python-blosc2 built against libb2nd: $wheel"
                "$venv/bin/python" -m pip install --quiet --only-binary :all: "$wheel" || die "pip install $wheel"
            fi
        fi
        [[ ${#pyb2[@]} -gt 0 ]] && make_venv "$venv" "setuptools>=77" wheel py-cpuinfo==9.0.0 pkgconfig h5py numpy "${pyb2[@]}"
    elif "$venv/bin/python" -m pip show blosc2 >/dev/null 2>&1 && (( ! REF )); then
        die "$venv has python-blosc2 but no PYBLOSC2_WHEEL is given"
    fi
    if (( REF )) && [[ -z $wheel ]]; then
        # the reference library without the python-blosc2 module (same tests as libb2nd's venv)
        local reflib=$root/build/clients/ref-lib
        if [[ ! -f $reflib/blosc2/lib/libblosc2.so ]]; then
            log "installing the reference wheel blosc2==$REF_VERSION into $reflib (no deps, not importable)"
            "$venv/bin/python" -m pip install --quiet --no-deps --only-binary :all: --target "$reflib" "blosc2==$REF_VERSION" || die "pip install blosc2"
        fi
        LIBDIR=$reflib/blosc2/lib INCDIR=$reflib/blosc2/include LIBFILE=$(readlink -f "$LIBDIR/libblosc2.so")
        STAMP="$NAME $MODE $LIBFILE"
    else
        select_lib "$venv"
    fi
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    local strip
    strip=${HDF5PLUGIN_STRIP-bshuf,blosc,bzip2,fcidecomp,htj2k,lz4,sperr,sz,sz3,zfp,zstd}
    STAMP="$STAMP strip=$strip"
    if [[ ! -f $work/wheel-$MODE/.built-against || $(cat "$work/wheel-$MODE/.built-against") != "$STAMP" ]] \
            || ! "$venv/bin/python" -m pip show hdf5plugin >/dev/null 2>&1; then
        src=$(sdist hdf5plugin "$ver") || exit 2
        rm -rf "$work/wheel-$MODE" && mkdir -p "$work/wheel-$MODE"
        log "building hdf5plugin $ver with HDF5PLUGIN_SYSTEM_LIBRARIES=blosc2 against $LIBDIR (HDF5PLUGIN_STRIP=$strip; log $work/build-$MODE.log)"
        HDF5PLUGIN_SYSTEM_LIBRARIES=blosc2 HDF5PLUGIN_STRIP=$strip \
            PKG_CONFIG_PATH="$LIBDIR/pkgconfig${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}" \
            LDFLAGS="-Wl,-rpath,$LIBDIR${LDFLAGS:+ $LDFLAGS}" \
            "$venv/bin/python" -m pip wheel --no-deps --no-build-isolation -w "$work/wheel-$MODE" -v "$src" \
            >"$work/build-$MODE.log" 2>&1 || { tail -30 "$work/build-$MODE.log" >&2; die "build failed"; }
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$work"/wheel-$MODE/hdf5plugin-*.whl || die "pip install"
        echo "$STAMP" >"$work/wheel-$MODE/.built-against"
    fi
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    check_ldd "$site"/hdf5plugin/plugins/libh5blosc2.so
    write_maps_check
    cat >"$work/run_tests.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["CLIENTS_WORK"])
import clients_maps
import numpy as np, h5py, hdf5plugin
print("== hdf5plugin", hdf5plugin.version, "h5py", h5py.version.version, "HDF5", h5py.version.hdf5_version,
      "config", hdf5plugin.get_config().build_config, file=sys.stderr)
with h5py.File(os.path.join(os.getcwd(), "smoke.h5"), "w") as f:
    a = np.arange(100_000, dtype="f4").reshape(100, 1000)
    f.create_dataset("d", data=a, chunks=(10, 1000), **hdf5plugin.Blosc2(cname="zstd", clevel=5))
with h5py.File(os.path.join(os.getcwd(), "smoke.h5"), "r") as f:
    assert (f["d"][...] == a).all()
clients_maps.check("after blosc2 compression")
import unittest
from hdf5plugin import test
res = clients_maps.run_unittest(test.suite(), "hdf5plugin")
clients_maps.check("after the test suite")
print("%d passed, %d failed, %d skipped" % res)
EOF
    local run=$work/run-$MODE
    rm -rf "$run" && mkdir -p "$run"
    log "hdf5plugin test suite ($MODE), log $work/test-$MODE.log"
    (cd "$run" && CLIENTS_WORK=$work CLIENTS_LIBDIR=$LIBDIR TMPDIR=$run \
        timeout "$TIMEOUT" "$venv/bin/python" "$work/run_tests.py") >"$work/test-$MODE.log" 2>&1
    local r=$? line
    grep -E '^== |^FAILED ' "$work/test-$MODE.log" | cut -c1-300 >&2
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test-$MODE.log" | tail -1)
    [[ -n $line ]] || { tail -20 "$work/test-$MODE.log" >&2; die "the test run ended without a summary (exit $r)"; }
    echo "$line"
    [[ $line == *" 0 failed,"* ]]
}

case $NAME in
    pytables) mkdir -p "$work"; pytables ;;
    hdf5plugin) mkdir -p "$work"; hdf5plugin ;;
    imagecodecs|hdf5-blosc2|h5zblosc2|caterva2)
        echo "$NAME: not implemented yet (see docs/CLIENTS.md)" >&2; exit 2 ;;
    *) echo "unknown client $NAME" >&2; usage ;;
esac
