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
#          h5zblosc2    the HDF Group's Blosc2 filter plugin (HDFGroup/hdf5_plugins, BLOSC2/, from
#                       a local checkout: H5ZBLOSC2_SRC, see below), built with its CMake twice
#                       (against libb2nd and against the reference) with the system HDF5 (apt-get
#                       install cmake libhdf5-dev hdf5-tools); runs its ctest tests (example program,
#                       h5repack -f UD=32026,... per codec, h5dump against expected output) and
#                       cross checks: h5repack through one library's plugin, h5diff through the
#                       other's (both directions), the example's file of each read with the other.
#          hdf5-blosc2  Blosc/hdf5-blosc2 (v3.0.1, the copy in the hdf5plugin 7.1.0 sdist, or
#                       HDF5_BLOSC2_SRC): its filter library, plugin and example compiled directly
#                       (its CMakeLists.txt always builds c-blosc2 from GitHub), twice; runs the
#                       example (its only test) and the same cross checks as h5zblosc2.
#          phdf5        parallel HDF5 (Debian's libhdf5-openmpi-dev, openmpi-bin) with H5Zblosc2
#                       (H5ZBLOSC2_SRC, as for h5zblosc2) compiled by mpicc against the openmpi
#                       libhdf5, twice (libb2nd, the reference); scripts/clients/phdf5_blosc2.c
#                       run under mpiexec with PHDF5_RANKS ranks (default 4): collective writes
#                       of chunked datasets (several codecs and shuffles, chunks spanning ranks,
#                       written and read in slabs), read back on every rank; each build writes,
#                       reads its own file and the other build's.
#          adios2       ADIOS2 2.12.1 (ADIOS2_SRC, a checkout of ornladios/ADIOS2 at v2.12.1) with
#                       MPI and its Blosc2 operator, built twice with CMake (against libb2nd and
#                       against the reference; cached in build/clients/adios2/, a few minutes each
#                       on 2 cores) from a copy whose find_package(Blosc2 2.10.1) is patched to
#                       accept Blosc2 3.x (ornladios/ADIOS2#5097; it refuses c-blosc2 3.x too).
#                       Runs its tests of the operator (TestBPWriteReadBlosc2,
#                       TestBPChangingShapeWithinStep; BP3/4/5) serially and under mpiexec with each
#                       of ADIOS2_RANKS (default "2 4"), then cross reads: scripts/clients/adios2/
#                       built against each ADIOS2 writes BP3/4/5 files with 4 ranks
#                       (ADIOS2_CROSS_RANKS), the other build reads them with one rank less, and
#                       both builds' bpls print the same data. Needs Open MPI (apt-get install g++
#                       make libopenmpi-dev openmpi-bin python3); CMake from PATH or the project's
#                       venv. C_BLOSC2_SRC=<c-blosc2 tree>: the reference is c-blosc2 built from
#                       that source (BLOSC_DEPENDENCY_MODE=EXTERNAL: apt-get install liblz4-dev
#                       libzstd-dev zlib1g-dev) instead of the wheel's.
#          imagecodecs  imagecodecs 2026.3.6 from its PyPI sdist, Blosc2 extension only
#                       (IMAGECODECS_ONLY=blosc2 + a build hook module written into build/), with
#                       python-blosc2 and zarr; runs `pytest -k blosc2 tests/test_imagecodecs.py`.
#          caterva2     caterva2 2026.9.2 (pure Python) from its PyPI sdist, `pip install
#                       "caterva2-2026.9.2.tar.gz[tests]"` into a venv that already has python-blosc2
#                       (PYBLOSC2_WHEEL; --ref: blosc2==4.14.1) and the hdf5plugin wheel of the
#                       hdf5plugin client (build/clients/hdf5plugin/wheel-MODE, built first when
#                       missing; the PyPI one has c-blosc2 3.3.2 linked in statically), which pip
#                       keeps. Runs `pytest --pyargs caterva2.tests -k "not test_loadfromurl"` (that
#                       one downloads from github.com) without CATERVA2_SECRET, in a private network
#                       namespace (unshare -n, loopback only) when possible; a .pth hook in the venv
#                       records the map of every Python process (its servers too) and refuses
#                       connections beyond loopback.
#   --ref  build and test against the reference c-blosc2 3.3.5 (the lib/ and include/ of the
#          blosc2==4.14.1 wheel) instead, for the baseline counts.
#
# Environment:
#   B2ND_PREFIX          libb2nd install prefix (default build/install; ./scripts/install.sh)
#   CLIENTS_TIMEOUT      limit for one test-suite run, seconds (default 3600)
#   PYTABLES_PATHS       which PyTables runs: "direct,filter" (default), "direct" or "filter"
#   PYTABLES_TESTS       comma-separated modules of tables.tests to run instead of the whole
#                        test_suite (e.g. test_carray,test_earray,test_tables: the ones that
#                        exercise blosc2); the whole suite (6851 tests) takes about 2 h per run
#                        on this 2-core machine, most of it in test_tables' Blosc2 cases
#   PYTABLES_JOBS        test processes running the suite's classes side by side (default 1;
#                        2 on this 2-core machine halves the whole suite's time)
#   PYTABLES_RESUME      1: keep the test classes an earlier run of the same build finished
#                        (run-MODE-PATH/parts/) and run only the rest, so that a long suite can
#                        be run in pieces; the counts are the sum over all parts
#   HDF5PLUGIN_STRIP     passed to hdf5plugin's build; default: every filter but blosc2 is
#                        stripped (their tests then skip); set it empty to build them all.
#   PYBLOSC2_WHEEL       a python-blosc2 wheel built against libb2nd (default: the one
#                        scripts/python-blosc2-tests.sh leaves in build/python-blosc2-tests/wheel,
#                        if any). hdf5plugin's suite uses python-blosc2 when importable: with such a
#                        wheel, the libb2nd venv gets it and the --ref venv gets blosc2==4.14.1;
#                        without one neither venv has python-blosc2 and those tests skip in both.
#                        Same for imagecodecs. caterva2 needs it (exit 2 without one).
#   H5ZBLOSC2_SRC        a checkout of https://github.com/HDFGroup/hdf5_plugins (or its BLOSC2/)
#                        at commit af80431813863bd25edcb7acda1dc15cab26ccec (the last commit that
#                        changed BLOSC2/); required by h5zblosc2, which prints how to get it.
#   HDF5_BLOSC2_SRC      a checkout of https://github.com/Blosc/hdf5-blosc2 to use instead of the
#                        copy in the hdf5plugin 7.1.0 sdist (src/, executables/example.c)
#   PHDF5_RANKS          phdf5's rank count (default 4)
#   ADIOS2_SRC           a checkout of https://github.com/ornladios/ADIOS2 at v2.12.1; required by
#                        adios2, which prints how to get it (copied and patched, never modified)
#   ADIOS2_RANKS         the rank counts of ADIOS2's MPI tests (default "2 4")
#   ADIOS2_CROSS_RANKS   ranks writing the cross-read files (default 4; they are read with one less)
#   C_BLOSC2_SRC         adios2 only: a c-blosc2 source tree to build the reference from (its
#                        version from include/blosc2.h; installed in build/clients/c-blosc2-VERSION)
#
# Everything goes under build/clients/NAME/: the sdist, an unpacked source tree and a venv per
# mode (src-b2nd/, venv/; src-ref/, ref-venv/), wheels, build-MODE.log, test logs. Extensions are
# linked with an rpath to the library's directory and LD_LIBRARY_PATH is set too (PyTables'
# __init__ dlopens "libblosc2.so" by name before importing its extensions). The HDF5 plugins
# (h5zblosc2, hdf5-blosc2) are built in plugin-b2nd/ and plugin-ref/ in both modes (the cross
# checks need both; the reference comes from build/clients/ref-lib) and run without
# LD_LIBRARY_PATH: it would override their rpath, and PREFIX/lib has a libblosc2.so.9 too; their
# /proc/self/maps check reads the files through each plugin in a Python process of our own (the
# system libhdf5 through ctypes). Requires Python >=
# 3.11, a C compiler, pkg-config and PyPI. Exit status: 0 when no test failed, 1 when some did,
# 2 when the build or a library check failed.
set -uo pipefail

usage() { sed -n '2,/^set -uo/p' "$0" | grep '^#' | sed 's/^# \{0,1\}//'; exit "${1:-2}"; }

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

# REF_LIBDIR REF_INCDIR: the reference library and headers, installed with pip --target into
# build/clients/ref-lib (no dependencies, not importable: nothing but the files of the wheel).
ref_lib() {
    local reflib=$root/build/clients/ref-lib
    if [[ ! -f $reflib/blosc2/lib/libblosc2.so ]]; then
        log "installing the reference wheel blosc2==$REF_VERSION into $reflib (no deps, not importable)"
        "$PY" -m pip install --quiet --no-deps --only-binary :all: --target "$reflib" "blosc2==$REF_VERSION" >&2 || die "pip install blosc2"
    fi
    REF_LIBDIR=$reflib/blosc2/lib REF_INCDIR=$reflib/blosc2/include
    [[ -f $REF_LIBDIR/libblosc2.so && -f $REF_INCDIR/blosc2.h ]] || die "no lib/libblosc2.so or include/blosc2.h in $reflib/blosc2"
}

# The reference library (ref_lib) as the one clients are built against: LIBDIR, INCDIR,
# LIBFILE and STAMP as select_lib sets them, for venvs without the python-blosc2 module.
use_ref_lib() {
    ref_lib
    LIBDIR=$REF_LIBDIR INCDIR=$REF_INCDIR LIBFILE=$(readlink -f "$REF_LIBDIR/libblosc2.so")
    STAMP="$NAME $MODE $LIBFILE"
}

# mpiexec's flags for more ranks than cores, and as root (Open MPI refuses root otherwise)
mpi_flags() { echo "--oversubscribe$([[ $(id -u) == 0 ]] && echo " --allow-run-as-root")"; }

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
# One part per test class, in the suite's order. A finished part leaves its counts in
# parts/<n>-<class id>; with PYTABLES_RESUME=1 a later run of the same build skips those parts.
def cases(s):
    for t in s:
        if isinstance(t, unittest.TestSuite):
            yield from cases(t)
        else:
            yield t
parts = []
for t in cases(suite):
    key = f"{type(t).__module__}.{type(t).__qualname__}"
    if not parts or parts[-1][0] != key:
        parts.append((key, []))
    parts[-1][1].append(t)
os.makedirs("parts", exist_ok=True)
with open(os.path.join("parts", ".count"), "w") as f:
    f.write(f"{len(parts)}\n")
# Workers (PYTABLES_JOBS) take parts in order, each claiming one (an exclusive create) before
# running it; the script sums the parts once every worker is done.
ran = 0
for i, (key, tests) in enumerate(parts):
    done = os.path.join("parts", f"{i:04d}-{key}")
    if os.path.exists(done):
        continue
    try:
        os.close(os.open(done + ".claim", os.O_CREAT | os.O_EXCL | os.O_WRONLY))
    except FileExistsError:
        continue  # another worker's
    res = clients_maps.run_unittest(unittest.TestSuite(tests), os.environ["CLIENTS_LABEL"])
    with open(done + ".tmp", "w") as f:
        f.write("%d %d %d\n" % res)
    os.replace(done + ".tmp", done)
    os.remove(done + ".claim")
    ran += 1
clients_maps.check("after the test suite")
print(f"== worker {os.environ.get('PYTABLES_WORKER', '0')}: {ran} parts run", file=sys.stderr)
EOF
    paths=${PYTABLES_PATHS:-direct,filter}
    local tp=0 tf=0 ts=0 rc=0 line n
    for p in ${paths//,/ }; do
        case $p in direct) n=0 ;; filter) n=1 ;; *) die "PYTABLES_PATHS: unknown $p" ;; esac
        local run=$work/run-$MODE-$p append=0
        if [[ ${PYTABLES_RESUME:-0} == 1 && -f $run/.stamp && $(cat "$run/.stamp") == "$STAMP ${PYTABLES_TESTS:-}" ]]; then
            log "resuming: $(ls "$run/parts" 2>/dev/null | grep -vc tmp) parts done in $run/parts"
            append=1
        else
            rm -rf "$run" && mkdir -p "$run"
            echo "$STAMP ${PYTABLES_TESTS:-}" >"$run/.stamp"
        fi
        local jobs=${PYTABLES_JOBS:-1} k r=0 pids=()
        log "PyTables test suite ($MODE, BLOSC2_FILTER=$n: $p path, $jobs worker(s)), log $work/test-$MODE-$p.log"
        mkdir -p "$run/parts" && rm -f "$run"/parts/*.claim "$run"/parts/*.tmp
        for ((k = 0; k < jobs; k++)); do
            (cd "$run" && BLOSC2_FILTER=$n CLIENTS_WORK=$work CLIENTS_LIBDIR=$LIBDIR CLIENTS_LABEL=$p \
                PYTABLES_WORKER=$k TMPDIR=$run timeout "$TIMEOUT" "$venv/bin/python" "$work/run_tests.py") \
                >"$work/test-$MODE-$p.log.w$k" 2>&1 &
            pids+=($!)
        done
        for k in "${pids[@]}"; do wait "$k" || r=$?; done
        cat "$work"/test-$MODE-$p.log.w* >"$work/test-$MODE-$p.log.new" && rm -f "$work"/test-$MODE-$p.log.w*
        # the counts: the sum over the parts, once every part has them
        local count have
        count=$(cat "$run/parts/.count" 2>/dev/null || echo 0)
        have=$(ls "$run/parts" | grep -E '^[0-9]{4}-' | grep -cvE '\.(tmp|claim)$' || true)
        if (( count > 0 && have == count )); then
            ls "$run/parts" | grep -E '^[0-9]{4}-' | grep -vE '\.(tmp|claim)$' | (cd "$run/parts" && xargs cat) |
                awk '{p += $1; f += $2; s += $3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' \
                >>"$work/test-$MODE-$p.log.new"
        else
            echo "== $have of $count test classes have counts" >>"$work/test-$MODE-$p.log.new"
        fi
        if (( append )); then
            cat "$work/test-$MODE-$p.log.new" >>"$work/test-$MODE-$p.log" && rm -f "$work/test-$MODE-$p.log.new"
        else
            mv -f "$work/test-$MODE-$p.log.new" "$work/test-$MODE-$p.log"
        fi
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
        use_ref_lib
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

# --- h5zblosc2 -----------------------------------------------------------------------------

# Counters of the checks run by the shell (not by a test suite): check NAME CMD... runs CMD
# (output appended to $CHECK_LOG), counts it as passed or failed and prints failures.
check() {
    local name=$1; shift
    printf '\n### %s: %s\n' "$name" "$*" >>"$CHECK_LOG"
    if "$@" >>"$CHECK_LOG" 2>&1; then
        CP=$((CP + 1))
    else
        CF=$((CF + 1)); echo "FAILED $name" >&2
    fi
}

# ctest in DIR, its results added to the counters (a test ctest reports as "Not Run" or
# "Skipped" counts as skipped), its log in FILE
run_ctest() {  # DIR LOGFILE [CTEST ARGUMENTS...]
    (cd "$1" && timeout "$TIMEOUT" ctest --output-on-failure "${@:3}") >"$2" 2>&1
    local p f s
    p=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .* Passed ' "$2")
    s=$(grep -cE '^ *[0-9]+/[0-9]+ Test +#[0-9]+: .*(Not Run|Skipped)' "$2")
    f=$(grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$2" | grep -vcE ' Passed |Not Run|Skipped')
    grep -E '^ *[0-9]+/[0-9]+ Test +#[0-9]+: ' "$2" | grep -vE ' Passed |Not Run|Skipped' | sed 's/^ */FAILED ctest: /' >&2
    (( p + f + s )) || { tail -20 "$2" >&2; die "ctest in $1 ran no test"; }
    log "ctest in $(basename "$1")${3:+ ${*:3}}: $p passed, $f failed, $s skipped (log $2)"
    CP=$((CP + p)) CF=$((CF + f)) CS=$((CS + s))
}

# Python module: read every named dataset of an HDF5 file through the system libhdf5 (ctypes),
# so that the filter plugin of HDF5_PLUGIN_PATH is loaded into this process, then check the map.
write_h5_reader() {
    cat >"$work/h5_read.py" <<'EOF'
import ctypes, hashlib, os, sys
sys.path.insert(0, os.environ["CLIENTS_WORK"])
import clients_maps
h5 = ctypes.CDLL(os.environ.get("CLIENTS_LIBHDF5", "libhdf5_serial.so"))
hid = ctypes.c_int64
for f, r in [("H5Fopen", hid), ("H5Dopen2", hid), ("H5Dget_type", hid), ("H5Dget_space", hid),
             ("H5Tget_size", ctypes.c_size_t), ("H5Sget_simple_extent_npoints", ctypes.c_int64)]:
    getattr(h5, f).restype = r
h5.H5Fopen.argtypes = [ctypes.c_char_p, ctypes.c_uint, hid]
h5.H5Dopen2.argtypes = [hid, ctypes.c_char_p, hid]
for f in ["H5Dget_type", "H5Dget_space", "H5Tget_size", "H5Sget_simple_extent_npoints",
          "H5Dclose", "H5Tclose", "H5Sclose", "H5Fclose"]:
    getattr(h5, f).argtypes = [hid]
h5.H5Dread.argtypes = [hid, hid, hid, hid, hid, ctypes.c_void_p]
assert h5.H5open() >= 0
path, names = sys.argv[1], sys.argv[2:]
fid = h5.H5Fopen(path.encode(), 0, 0)  # H5F_ACC_RDONLY, H5P_DEFAULT
assert fid >= 0, path
for name in names:
    d = h5.H5Dopen2(fid, name.encode(), 0)
    assert d >= 0, name
    t, sp = h5.H5Dget_type(d), h5.H5Dget_space(d)
    n = h5.H5Sget_simple_extent_npoints(sp) * h5.H5Tget_size(t)
    buf = ctypes.create_string_buffer(n)
    assert h5.H5Dread(d, t, 0, 0, 0, buf) >= 0, f"H5Dread {name}"  # H5S_ALL, H5P_DEFAULT
    print(f"== {os.path.basename(path)}:{name} {n} bytes sha1 {hashlib.sha1(buf.raw).hexdigest()[:16]}", file=sys.stderr)
    h5.H5Sclose(sp); h5.H5Tclose(t); h5.H5Dclose(d)
h5.H5Fclose(fid)
clients_maps.check(f"after reading {os.path.basename(path)} through the filter")
EOF
}

# The data sets the cross checks compress: 1-D int32 (the filter's plain super-chunk path),
# 3-D float64 with partial edge chunks and 2-D uint8 (its b2nd path), written with h5import.
write_sample() {  # FILE
    local d=$work/sample
    rm -rf "$d" && mkdir -p "$d"
    "$PY" - "$d" <<'EOF' || return 1
import array, math, random, sys
d = sys.argv[1]
random.seed(1)
array.array("i", [(i * 3) % 1000 - 500 for i in range(200000)]).tofile(open(f"{d}/i32.bin", "wb"))
array.array("d", [math.sin(i / 50.0) * 100 for i in range(50 * 40 * 30)]).tofile(open(f"{d}/f64.bin", "wb"))
array.array("B", [random.randrange(256) if i % 7 == 0 else (i // 500) % 256
                  for i in range(300 * 500)]).tofile(open(f"{d}/u8.bin", "wb"))
for name, cls, size, dims, chunks in [("i32_1d", "IN", 32, "200000", "50000"),
                                      ("f64_3d", "FP", 64, "50 40 30", "16 16 30"),
                                      ("u8_2d", "UIN", 8, "300 500", "64 128")]:
    order = "INPUT-BYTE-ORDER LE\n" if size > 8 else ""
    with open(f"{d}/{name}.conf", "w") as f:
        f.write(f"PATH {name}\nINPUT-CLASS {cls}\nINPUT-SIZE {size}\n{order}RANK {len(dims.split())}\n"
                f"DIMENSION-SIZES {dims}\nOUTPUT-CLASS {cls}\nOUTPUT-SIZE {size}\n"
                f"CHUNKED-DIMENSION-SIZES {chunks}\n")
EOF
    h5import "$d/i32.bin" -c "$d/i32_1d.conf" "$d/f64.bin" -c "$d/f64_3d.conf" "$d/u8.bin" -c "$d/u8_2d.conf" -o "$1"
}

# Cross checks of two builds of an HDF5 filter plugin, $work/plugin-b2nd and $work/plugin-ref
# (each with plugins/ for HDF5_PLUGIN_PATH and bin/EXAMPLE), counted with check(): h5repack
# through one library's plugin, h5diff (reads every value back and compares with the
# uncompressed original) through the other's, both directions; then the example program of each
# build, and the file of each read with the other library (h5diff of the two files and h5dump).
# Uses lib, other (this mode's library and the other one) and sets run.
h5_cross_checks() {  # EXAMPLE EXAMPLE_FILE EXAMPLE_DATASET
    local ex=$1 exfile=$2 exdset=$3 orig ud name w r
    run=$work/run-$MODE
    rm -rf "$run" && mkdir -p "$run"
    CHECK_LOG=$work/test-$MODE-cross.log; : >"$CHECK_LOG"
    orig=$run/sample.h5
    write_sample "$orig" >>"$CHECK_LOG" 2>&1 || die "writing $orig failed (see $CHECK_LOG)"
    # cd_values after the two h5repack fields (flag, count): 4 set by the filter, clevel, shuffle
    # (0 none, 1 byte, 2 bit), compcode (0 blosclz, 1 lz4, 2 lz4hc, 4 zlib, 5 zstd)
    for ud in 5,1,0 5,1,1 5,1,2 5,1,4 5,1,5 9,2,5 1,0,1 0,0,0; do
        name=c${ud//,/-}
        for w in b2nd ref; do
            check "write $name with $w" env HDF5_PLUGIN_PATH="$work/plugin-$w/plugins" \
                h5repack --enable-error-stack -f UD=32026,0,7,0,0,0,0,$ud "$orig" "$run/$name-$w.h5"
        done
        for w in b2nd ref; do
            for r in b2nd ref; do
                [[ $w == "$other" && $r == "$other" ]] && continue   # the other library alone
                [[ -f $run/$name-$w.h5 ]] || { CF=$((CF + 1)); echo "FAILED read $name $w->$r (not written)" >&2; continue; }
                check "read $name written by $w with $r" env HDF5_PLUGIN_PATH="$work/plugin-$r/plugins" \
                    h5diff --enable-error-stack -r "$orig" "$run/$name-$w.h5"
            done
        done
        # information only: the compressed sizes of the data sets written by each library
        echo "== $name compressed sizes: b2nd" $(h5dump -pH "$run/$name-b2nd.h5" 2>/dev/null | grep -oE 'SIZE [0-9]+ ' | cut -d' ' -f2) \
            "ref" $(h5dump -pH "$run/$name-ref.h5" 2>/dev/null | grep -oE 'SIZE [0-9]+ ' | cut -d' ' -f2) >>"$CHECK_LOG"
    done
    for w in b2nd ref; do
        mkdir -p "$run/ex-$w"
        check "example program with $w" bash -c "cd '$run/ex-$w' && HDF5_PLUGIN_PATH='$work/plugin-$w/plugins' '$work/plugin-$w/bin/$ex'"
    done
    for r in $lib $other; do
        w=$([[ $r == b2nd ]] && echo ref || echo b2nd)
        check "example files of both libraries read with $r" env HDF5_PLUGIN_PATH="$work/plugin-$r/plugins" \
            h5diff --enable-error-stack -r "$run/ex-b2nd/$exfile" "$run/ex-ref/$exfile"
        check "h5dump of the example file of $w with $r" env HDF5_PLUGIN_PATH="$work/plugin-$r/plugins" \
            h5dump --enable-error-stack -d "/$exdset" "$run/ex-$w/$exfile"
    done
    log "checks so far: $CP passed, $CF failed (log $CHECK_LOG)"
}

# What a process loads: read files of the cross checks through each library's plugin in a
# process of our own (the system libhdf5 through ctypes), as the HDF5 tools did, and check its
# map: this library's plugin, and the other's for the cross checks. Uses LD, lib, other, run.
h5_maps_checks() {  # EXAMPLE_FILE EXAMPLE_DATASET
    local f r w libhdf5
    libhdf5=$(ldconfig -p | awk '/libhdf5(_serial)?\.so /{print $NF; exit}')
    write_maps_check
    write_h5_reader
    for r in $lib $other; do
        w=$([[ $r == b2nd ]] && echo ref || echo b2nd)
        for f in "$run/c5-1-5-$w.h5" "$run/ex-$w/$1"; do
            local names=(i32_1d f64_3d u8_2d)
            [[ $f == */ex-$w/$1 ]] && names=("$2")
            [[ -f $f ]] || continue
            CLIENTS_WORK=$work CLIENTS_LIBDIR=${LD[$r]} CLIENTS_LIBHDF5=${libhdf5:-libhdf5_serial.so} \
                HDF5_PLUGIN_PATH=$work/plugin-$r/plugins \
                "$PY" "$work/h5_read.py" "$f" "${names[@]}" 2>&1 | tee -a "$CHECK_LOG" | grep -E '^== maps' >&2
            [[ ${PIPESTATUS[0]} == 0 ]] || die "reading $f through plugin-$r failed or the maps check failed (see $CHECK_LOG)"
        done
    done
}

H5Z_COMMIT=af80431813863bd25edcb7acda1dc15cab26ccec

# The serial HDF5's pkg-config name, which the tools (h5dump, h5repack: libhdf5_serial) use:
# Debian's plain "hdf5" follows its alternatives, and names the MPI build once
# libhdf5-openmpi-dev is installed (the phdf5 client's).
hdf5_pc() { if pkg-config --exists hdf5-serial 2>/dev/null; then echo hdf5-serial; else echo hdf5; fi; }

h5zblosc2() {
    local src=${H5ZBLOSC2_SRC:-} lib other d
    unset LD_LIBRARY_PATH
    if [[ -z $src ]]; then
        cat >&2 <<EOF
h5zblosc2: set H5ZBLOSC2_SRC to a checkout of https://github.com/HDFGroup/hdf5_plugins at
commit $H5Z_COMMIT (the last commit that changed BLOSC2/;
its BLOSC2/ tree is that of master at 3ac87e44a2cd8c0fcef18615beeb024145b38c43), e.g.
  git clone https://github.com/HDFGroup/hdf5_plugins /tmp/hdf5_plugins &&
    git -C /tmp/hdf5_plugins checkout $H5Z_COMMIT
  H5ZBLOSC2_SRC=/tmp/hdf5_plugins $0 h5zblosc2 [--ref]
Needs HDF5 with its tools (apt-get install libhdf5-dev hdf5-tools) and CMake.
EOF
        exit 2
    fi
    [[ -f $src/BLOSC2/src/H5Zblosc2.c ]] && src=$src/BLOSC2
    [[ -f $src/src/H5Zblosc2.c && -f $src/config/cmake/cacheinit.cmake ]] \
        || die "H5ZBLOSC2_SRC=$src is not an hdf5_plugins tree (no BLOSC2/src/H5Zblosc2.c)"
    src=$(cd "$src" && pwd)
    for d in cmake ctest h5repack h5dump h5diff h5import; do
        command -v $d >/dev/null || die "$d not found (apt-get install cmake libhdf5-dev hdf5-tools)"
    done
    local hdf5inc=${H5ZBLOSC2_HDF5_INCLUDE:-$(pkg-config --variable=includedir "$(hdf5_pc)" 2>/dev/null)}
    [[ -n $hdf5inc && -f $hdf5inc/hdf5.h ]] || hdf5inc=/usr/include/hdf5/serial
    [[ -f $hdf5inc/hdf5.h ]] || die "no hdf5.h (apt-get install libhdf5-dev, or set H5ZBLOSC2_HDF5_INCLUDE)"
    # the plugin is built against both libraries: the cross checks write with one, read with the other
    ref_lib
    local -A LD=([b2nd]=$PREFIX/lib [ref]=$REF_LIBDIR) INC=([b2nd]=$PREFIX/include [ref]=$REF_INCDIR)
    for lib in b2nd ref; do
        local bdir=$work/plugin-$lib stamp
        stamp="$src $(readlink -f "${LD[$lib]}/libblosc2.so")"
        if [[ ! -f $bdir/.built-against || $(cat "$bdir/.built-against") != "$stamp" ]]; then
            rm -rf "$bdir"
            log "building the BLOSC2 plugin of hdf5_plugins against ${LD[$lib]} (log $work/build-$lib.log)"
            # cacheinit.cmake: the plugin's own settings (tests and example on, no downloads).
            # H5BLOSC2_CPACK_ENABLE=OFF: CPack wants the repository's top-level COPYING.
            # H5_BLOSC2_HEADER/BLOSC2_*: its "Blosc2 already configured" entry, to link the shared
            # library: through find_package(Blosc2) it prefers Blosc2::blosc2_static when present.
            # HDF5_PROVIDES_TOOLS, HDF5_LIBRARY_DIRS=/usr/lib, the -I: Debian's HDF5 is found by
            # CMake's FindHDF5 (no hdf5-config.cmake); without them the example misses hdf5.h and
            # the h5dump/h5repack tests are not defined (tools dir = HDF5_LIBRARY_DIRS/../bin).
            { cmake -C "$src/config/cmake/cacheinit.cmake" -DH5BLOSC2_CPACK_ENABLE=OFF \
                -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release \
                -DHDF5_PROVIDES_TOOLS=ON -DHDF5_LIBRARY_DIRS=/usr/lib -DCMAKE_C_FLAGS="-I$hdf5inc" \
                -DH5_BLOSC2_HEADER=blosc2.h -DBLOSC2_INCLUDE_DIRS="${INC[$lib]}" \
                -DBLOSC2_LIBRARIES="${LD[$lib]}/libblosc2.so" \
                -DCMAKE_MODULE_LINKER_FLAGS="-Wl,-rpath,${LD[$lib]}" \
              && cmake --build "$bdir" -j2; } >"$work/build-$lib.log" 2>&1 \
                || { tail -30 "$work/build-$lib.log" >&2; die "build against ${LD[$lib]} failed"; }
            echo "$stamp" >"$bdir/.built-against"
        fi
        LIBDIR=${LD[$lib]} check_ldd "$bdir/plugins/libh5blosc2.so"
    done
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
    LIBDIR=${LD[$lib]}
    # no LD_LIBRARY_PATH: the plugins find their library through their rpath (RUNPATH), which
    # LD_LIBRARY_PATH would override; PREFIX/lib has a libblosc2.so.9 too (-> libb2nd.so.0)
    CP=0 CF=0 CS=0
    # 1. the plugin's own tests: example program (write, read, h5dump) and h5repack -f UD=32026
    #    with each codec + h5dump compared with the expected output
    run_ctest "$work/plugin-$lib" "$work/test-$MODE-ctest.log"
    # 2. cross checks (h5zblosc2's example program writes h5ex_d_blosc2.h5, dataset /DS1)
    h5_cross_checks h5ex_d_blosc2 h5ex_d_blosc2.h5 DS1
    # 3. what a process loads
    h5_maps_checks h5ex_d_blosc2.h5 DS1
    echo "$CP passed, $CF failed, $CS skipped"
    (( CF == 0 ))
}

# --- parallel HDF5 (phdf5) ------------------------------------------------------------------

phdf5() {
    local src=${H5ZBLOSC2_SRC:-} lib other d ranks=${PHDF5_RANKS:-4} hcflags hlibs
    unset LD_LIBRARY_PATH   # see h5zblosc2: the plugins have an rpath
    [[ -n $src ]] || die "set H5ZBLOSC2_SRC as for h5zblosc2 ($0 h5zblosc2 prints how)"
    [[ -f $src/BLOSC2/src/H5Zblosc2.c ]] && src=$src/BLOSC2
    [[ -f $src/src/H5Zblosc2.c ]] || die "H5ZBLOSC2_SRC=$src is not an hdf5_plugins tree (no BLOSC2/src/H5Zblosc2.c)"
    for d in mpicc mpiexec pkg-config; do
        command -v $d >/dev/null || die "$d not found (apt-get install libhdf5-openmpi-dev openmpi-bin pkg-config)"
    done
    # (the openmpi HDF5 by name: pkg-config's plain "hdf5" follows Debian's alternatives)
    hcflags=$(pkg-config --cflags hdf5-openmpi) && hlibs=$(pkg-config --libs hdf5-openmpi) \
        || die "no pkg-config file hdf5-openmpi (apt-get install libhdf5-openmpi-dev)"
    ref_lib
    local -A LD=([b2nd]=$PREFIX/lib [ref]=$REF_LIBDIR) INC=([b2nd]=$PREFIX/include [ref]=$REF_INCDIR)
    # The plugin's blosc2_config.h (its CMake writes it): the headers this system has
    mkdir -p "$work/cfg"
    printf '#define %s 1\n' HAVE_SYS_TYPES_H HAVE_SYS_STAT_H STDC_HEADERS HAVE_STDLIB_H HAVE_STRING_H \
        HAVE_STRINGS_H HAVE_INTTYPES_H HAVE_STDINT_H HAVE_UNISTD_H >"$work/cfg/blosc2_config.h"
    for lib in b2nd ref; do
        mkdir -p "$work/plugin-$lib"
        # shellcheck disable=SC2086
        mpicc -O2 -shared -fPIC -I"$work/cfg" -I"${INC[$lib]}" $hcflags "$src/src/H5Zblosc2.c" \
            -o "$work/plugin-$lib/libh5blosc2.so" -L"${LD[$lib]}" -lblosc2 -Wl,-rpath,"${LD[$lib]}" $hlibs \
            >"$work/build-$lib.log" 2>&1 || { tail -20 "$work/build-$lib.log" >&2; die "the plugin does not build against ${LD[$lib]}"; }
        LIBDIR=${LD[$lib]} check_ldd "$work/plugin-$lib/libh5blosc2.so"
    done
    # The same plugin against the serial libhdf5, for the HDF5 tools (h5dump, h5diff)
    local scflags slibs
    scflags=$(pkg-config --cflags "$(hdf5_pc)") && slibs=$(pkg-config --libs "$(hdf5_pc)") \
        || die "no pkg-config file for the serial HDF5 (apt-get install libhdf5-dev hdf5-tools)"
    for lib in b2nd ref; do
        mkdir -p "$work/plugin-serial-$lib"
        # shellcheck disable=SC2086
        cc -O2 -shared -fPIC -I"$work/cfg" -I"${INC[$lib]}" $scflags "$src/src/H5Zblosc2.c" \
            -o "$work/plugin-serial-$lib/libh5blosc2.so" -L"${LD[$lib]}" -lblosc2 -Wl,-rpath,"${LD[$lib]}" $slibs \
            >>"$work/build-$lib.log" 2>&1 || { tail -20 "$work/build-$lib.log" >&2; die "the serial plugin does not build against ${LD[$lib]}"; }
        LIBDIR=${LD[$lib]} check_ldd "$work/plugin-serial-$lib/libh5blosc2.so"
    done
    # shellcheck disable=SC2086
    mpicc -O2 -Wall -Wextra $hcflags "$root/scripts/clients/phdf5_blosc2.c" -o "$work/phdf5_blosc2" $hlibs \
        >"$work/build-program.log" 2>&1 || { tail -20 "$work/build-program.log" >&2; die "phdf5_blosc2.c does not build"; }
    # shellcheck disable=SC2207
    local mpi=(mpiexec -n "$ranks" $(mpi_flags))
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
    CP=0 CF=0 CS=0
    run_mpi() {  # PLUGIN ACTION FILE [SCALE]
        local out
        out=$(PHDF5_SCALE=${4:-1} HDF5_PLUGIN_PATH=$work/plugin-$1 timeout "$TIMEOUT" "${mpi[@]}" "$work/phdf5_blosc2" "$2" "$3" 2>&1)
        local rc=$?
        printf '%s\n' "$out" >>"$work/test-$MODE.log"
        log "plugin-$1 $2 $(basename "$3"): $(printf '%s\n' "$out" | tail -2 | tr '\n' ' ')"
        if (( rc == 0 )); then CP=$((CP + 1)); else CF=$((CF + 1)); printf '%s\n' "$out" | tail -8 >&2; fi
    }
    : >"$work/test-$MODE.log"
    run_mpi $lib write "$work/$lib.h5"
    run_mpi $other write "$work/$other.h5"
    run_mpi $lib check "$work/$other.h5"
    run_mpi $other check "$work/$lib.h5"
    # Datasets 4 times as long (197 MB for the 8-byte ones): no rank's peak memory reaches one
    run_mpi $lib write "$work/$lib-x4.h5" 4
    run_mpi $other check "$work/$lib-x4.h5" 4
    rm -f "$work/$lib-x4.h5"
    # The HDF5 tools, through each library's serial plugin: h5diff finds the two files' data
    # the same; h5dump prints the same last values of every dataset from both files
    local p f ds dumps=()
    for p in $lib $other; do
        if HDF5_PLUGIN_PATH=$work/plugin-serial-$p h5diff "$work/$lib.h5" "$work/$other.h5" >>"$work/test-$MODE.log" 2>&1; then
            CP=$((CP + 1)); log "h5diff through plugin-serial-$p: $lib.h5 and $other.h5 hold the same data"
        else
            CF=$((CF + 1)); log "FAILED: h5diff through plugin-serial-$p: $lib.h5 and $other.h5 differ (or cannot be read)"
        fi
        for f in $lib $other; do
            local out=$work/h5dump-$p-$f.txt
            : >"$out"
            for ds in blosclz_shuffle_f64 lz4_noshuffle_i32 lz4hc_bitshuffle_f64 zlib_shuffle_i32 zstd_bitshuffle_i32 zstd_shuffle_f64; do
                HDF5_PLUGIN_PATH=$work/plugin-serial-$p h5dump -d "/$ds" -s "6175,990" -c "6,10" "$work/$f.h5" 2>&1 \
                    | sed -n '/DATA {/,/}/p' >>"$out"
            done
            dumps+=("$out")
        done
    done
    local same=1 n
    n=$(grep -c 'DATA {' "${dumps[0]}")
    for d in "${dumps[@]:1}"; do cmp -s "${dumps[0]}" "$d" || same=0; done
    if (( n == 6 && same )) && grep -q '(6180,997): 50.497, 50.498, 50.499' "${dumps[0]}"; then
        CP=$((CP + 1)); log "h5dump through both plugins, of both files: the same values of the 6 datasets' last rows"
    else
        CF=$((CF + 1)); log "FAILED: h5dump outputs differ or are incomplete (${dumps[*]})"
    fi
    echo "$CP passed, $CF failed, $CS skipped"
    (( CF == 0 ))
}

# --- ADIOS2 (adios2) ------------------------------------------------------------------------

ADIOS2_TAG=v2.12.1
ADIOS2_TARGETS=(Test.Engine.BP.WriteReadBlosc2.Serial Test.Engine.BP.WriteReadBlosc2.MPI
                Test.Engine.BP.ChangingShapeWithinStep.Serial Test.Engine.BP.ChangingShapeWithinStep.MPI bpls)
# The ctest entries that use the Blosc2 operator: TestBPWriteReadBlosc2 (7 tests x BP3/4/5, each
# 54 parameter sets) and TestBPChangingShapeWithinStep (its "blosc" case, x BP3/4/5)
ADIOS2_TESTS='BPWriteReadBlosc2|BPChangingShapeWithinStep'

# c-blosc2 from C_BLOSC2_SRC, built with its CMake against Debian's lz4, zstd and zlib
# (BLOSC_DEPENDENCY_MODE=EXTERNAL: nothing downloaded) and installed under build/clients/;
# sets REF_LIBDIR, REF_CMAKE_DIR and REF_LABEL
c_blosc2_from_source() {
    local src ver inst bdir stamp
    src=$(cd "$C_BLOSC2_SRC" && pwd) || die "no C_BLOSC2_SRC=$C_BLOSC2_SRC"
    ver=$(sed -nE 's/^#define BLOSC2_VERSION_STRING +"([^"]+)".*/\1/p' "$src/include/blosc2.h")
    [[ -n $ver ]] || die "C_BLOSC2_SRC=$src is not a c-blosc2 tree (no version in include/blosc2.h)"
    inst=$root/build/clients/c-blosc2-$ver bdir=$root/build/clients/c-blosc2-$ver-build
    stamp="$src $ver"
    if [[ ! -f $inst/lib/libblosc2.so || $(cat "$inst/.built-from" 2>/dev/null) != "$stamp" ]]; then
        rm -rf "$inst" "$bdir"
        log "building c-blosc2 $ver from $src into $inst (log $bdir.log)"
        { cmake -S "$src" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$inst" \
            -DBLOSC_DEPENDENCY_MODE=EXTERNAL -DBUILD_TESTS=OFF -DBUILD_EXAMPLES=OFF \
            -DBUILD_BENCHMARKS=OFF -DBUILD_FUZZERS=OFF \
          && cmake --build "$bdir" -j"$(nproc)" && cmake --install "$bdir"; } >"$bdir.log" 2>&1 \
            || { tail -20 "$bdir.log" >&2; die "c-blosc2 $ver does not build (apt-get install liblz4-dev libzstd-dev zlib1g-dev)"; }
        echo "$stamp" >"$inst/.built-from"
    fi
    REF_LIBDIR=$inst/lib REF_CMAKE_DIR=$inst/lib/cmake/Blosc2 REF_LABEL="c-blosc2 $ver (built from $src)"
    [[ -f $REF_CMAKE_DIR/Blosc2Config.cmake ]] || die "no $REF_CMAKE_DIR/Blosc2Config.cmake"
}

# ADIOS2 built in BDIR against the Blosc2 CMake package in CMAKE_DIR, whose library must be
# in LIBDIR; reconfigured and rebuilt only when the source or the package changed (the
# library is linked by soname: a rebuilt libb2nd needs no rebuild). Then our check program.
adios2_build() {  # LABEL BDIR CMAKE_DIR LIBDIR
    local label=$1 bdir=$2 cmake_dir=$3 libdir=$4 stamp t0 mpiflags
    stamp="$ADIOS2_COPY $(cat "$ADIOS2_COPY/.copied-from") $cmake_dir ${ADIOS2_TARGETS[*]}"
    mpiflags="$(mpi_flags) --mca mpi_yield_when_idle 1"
    if [[ ! -f $bdir/.built-against || $(cat "$bdir/.built-against") != "$stamp" ]]; then
        rm -rf "$bdir" "$bdir-prog"
        log "building ADIOS2 $ADIOS2_VERSION against $label (log $bdir.log)"
        t0=$SECONDS
        # MPI and the Blosc2 operator on, every optional feature that could be found off; the
        # tests that use the operator, bpls. Nothing is downloaded (GoogleTest is vendored).
        { cmake -S "$ADIOS2_COPY" -B "$bdir" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=ON \
            -DBUILD_TESTING=ON -DADIOS2_BUILD_EXAMPLES=OFF \
            -DADIOS2_USE_MPI=ON -DADIOS2_USE_Blosc2=ON -DBlosc2_DIR="$cmake_dir" \
            -DADIOS2_USE_Fortran=OFF -DADIOS2_USE_Python=OFF -DADIOS2_USE_PIP=OFF \
            -DADIOS2_USE_BigWhoop=OFF -DADIOS2_USE_BZip2=OFF -DADIOS2_USE_ZFP=OFF -DADIOS2_USE_SZ=OFF \
            -DADIOS2_USE_SZ3=OFF -DADIOS2_USE_LIBPRESSIO=OFF -DADIOS2_USE_MGARD=OFF -DADIOS2_USE_PRODM=OFF \
            -DADIOS2_USE_PNG=OFF -DADIOS2_USE_HDF5=OFF -DADIOS2_USE_HDF5_VOL=OFF -DADIOS2_USE_SST=OFF \
            -DADIOS2_USE_DataMan=OFF -DADIOS2_USE_ZeroMQ=OFF -DADIOS2_USE_DataSpaces=OFF -DADIOS2_USE_MHS=OFF \
            -DADIOS2_USE_DAOS=OFF -DADIOS2_USE_IME=OFF -DADIOS2_USE_UCX=OFF -DADIOS2_USE_Sodium=OFF \
            -DADIOS2_USE_Catalyst=OFF -DADIOS2_USE_Campaign=OFF -DADIOS2_USE_OpenSSL=OFF -DADIOS2_USE_AWSSDK=OFF \
            -DADIOS2_USE_XRootD=OFF -DADIOS2_USE_CURL=OFF -DADIOS2_USE_KVCACHE=OFF -DADIOS2_USE_Profiling=OFF \
            -DADIOS2_USE_Kokkos=OFF -DADIOS2_USE_CUDA=OFF \
            -DMPIEXEC_MAX_NUMPROCS=2 -DMPIEXEC_EXTRA_FLAGS="$mpiflags" \
          && cmake --build "$bdir" -j"$(nproc)" --target "${ADIOS2_TARGETS[@]}"; } >"$bdir.log" 2>&1 \
            || { tail -30 "$bdir.log" >&2; die "ADIOS2 does not build against $label"; }
        grep -q '^#define ADIOS2_HAVE_BLOSC2' "$bdir/source/adios2/common/ADIOSConfig.h" \
            || die "ADIOS2 was configured without Blosc2 against $label (see $bdir.log)"
        echo "$((SECONDS - t0))" >"$bdir.seconds"
        echo "$stamp" >"$bdir/.built-against"
    fi
    log "ADIOS2 against $label: configure and build took $(cat "$bdir.seconds") s on $(nproc) cores (cached in $bdir)"
    if [[ ! -x $bdir-prog/adios2_blosc2 ]]; then
        { cmake -S "$root/scripts/clients/adios2" -B "$bdir-prog" -DCMAKE_BUILD_TYPE=Release -DADIOS2_DIR="$bdir" \
            && cmake --build "$bdir-prog"; } >"$bdir-prog.log" 2>&1 \
            || { tail -20 "$bdir-prog.log" >&2; die "scripts/clients/adios2 does not build against $bdir"; }
    fi
    LIBDIR=$libdir check_ldd "$bdir/lib/libadios2_core.so" "$bdir-prog/adios2_blosc2"
}

adios2() {
    local src=${ADIOS2_SRC:-} d lib other
    unset LD_LIBRARY_PATH   # the ADIOS2 libraries have a RUNPATH; PREFIX/lib has a libblosc2.so.9 too
    if [[ -z $src ]]; then
        cat >&2 <<USAGE
adios2: set ADIOS2_SRC to a checkout of https://github.com/ornladios/ADIOS2 at $ADIOS2_TAG, e.g.
  git clone --branch $ADIOS2_TAG --depth 1 https://github.com/ornladios/ADIOS2 /tmp/ADIOS2
  ADIOS2_SRC=/tmp/ADIOS2 $0 adios2 [--ref]
Needs CMake >= 3.18, a C++ compiler, Open MPI and Python (apt-get install cmake g++ make
libopenmpi-dev openmpi-bin python3).
USAGE
        exit 2
    fi
    src=$(cd "$src" && pwd) || die "no ADIOS2_SRC=$src"
    [[ -f $src/cmake/DetectOptions.cmake && -f $src/testing/adios2/engine/bp/operations/TestBPWriteReadBlosc2.cpp ]] \
        || die "ADIOS2_SRC=$src is not an ADIOS2 tree"
    if ! command -v cmake >/dev/null; then
        PATH=$("$root/scripts/setup.sh")/bin:$PATH   # the project's venv has CMake
    fi
    for d in cmake ctest c++ mpicxx mpiexec python3 diff; do
        command -v $d >/dev/null || die "$d not found (apt-get install cmake g++ make libopenmpi-dev openmpi-bin python3)"
    done
    ADIOS2_VERSION=$(sed -nE 's/^setup_version\(([0-9.]+)\).*/\1/p' "$src/CMakeLists.txt")
    [[ v$ADIOS2_VERSION == "$ADIOS2_TAG" ]] || log "ADIOS2_SRC is ADIOS2 $ADIOS2_VERSION, not ${ADIOS2_TAG#v}: the recipe was checked with ${ADIOS2_TAG#v}"
    # A copy of the source with ADIOS2's Blosc2 version request dropped: find_package(Blosc2
    # 2.10.1) refuses every Blosc2 3.x (CMake's SameMajorVersion), c-blosc2's own as well as
    # ours, and ADIOS2 then quietly builds without the operator (ornladios/ADIOS2#5097)
    ADIOS2_COPY=$work/src
    if [[ $(cat "$ADIOS2_COPY/.copied-from" 2>/dev/null) != "$src $ADIOS2_VERSION" ]]; then
        rm -rf "$ADIOS2_COPY" && mkdir -p "$ADIOS2_COPY" && cp -a "$src/." "$ADIOS2_COPY/" || die "cannot copy $src"
        rm -rf "$ADIOS2_COPY/.git"
        sed -i 's/find_package(Blosc2 2\.10\.1/find_package(Blosc2/' "$ADIOS2_COPY/cmake/DetectOptions.cmake"
        sed -i 's/find_dependency(Blosc2 2\.10\.1)/find_dependency(Blosc2)/' "$ADIOS2_COPY/cmake/adios2-config-common.cmake.in"
        echo "$src $ADIOS2_VERSION" >"$ADIOS2_COPY/.copied-from"
    fi
    grep -q 'find_package(Blosc2 [0-9]' "$ADIOS2_COPY/cmake/DetectOptions.cmake" \
        && die "cmake/DetectOptions.cmake still asks for a Blosc2 version: update the patch for ADIOS2 $ADIOS2_VERSION"
    # Both builds: the cross checks write with one and read with the other
    local ref_dir
    if [[ -n ${C_BLOSC2_SRC:-} ]]; then
        c_blosc2_from_source; ref_dir=ref-src
    else
        ref_lib; REF_CMAKE_DIR=$REF_LIBDIR/cmake/blosc2 REF_LABEL="c-blosc2 3.3.5 (blosc2==$REF_VERSION wheel)"
        ref_dir=ref
    fi
    local -A BD=([b2nd]=$work/build-b2nd [ref]=$work/build-$ref_dir) LD=([b2nd]=$PREFIX/lib [ref]=$REF_LIBDIR)
    local -A LABEL=([b2nd]="libb2nd ($PREFIX)" [ref]=$REF_LABEL)
    adios2_build "${LABEL[b2nd]}" "${BD[b2nd]}" "$PREFIX/lib/cmake/Blosc2" "$PREFIX/lib"
    adios2_build "${LABEL[ref]}" "${BD[ref]}" "$REF_CMAKE_DIR" "$REF_LIBDIR"
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
    LIBDIR=${LD[$lib]}
    local bdir=${BD[$lib]} part p0 f0 s0 n parts=()
    CP=0 CF=0 CS=0
    # 1. ADIOS2's own tests of the operator: serial, then under mpiexec with each rank count
    #    (ctest's MPI entries take theirs from MPIEXEC_MAX_NUMPROCS: reconfigured, cheap)
    export GTEST_COLOR=no
    local label logf procs runs
    for n in serial ${ADIOS2_RANKS:-2 4}; do
        p0=$CP f0=$CF s0=$CS
        if [[ $n == serial ]]; then
            label=serial logf=$work/test-$MODE-serial.log procs=1
            run_ctest "$bdir" "$logf" -V -R "$ADIOS2_TESTS" -E '\.MPI$' --timeout 1800
        else
            label="$n ranks" logf=$work/test-$MODE-$n-ranks.log procs=$n
            cmake -DMPIEXEC_MAX_NUMPROCS="$n" "$bdir" >"$work/reconfigure-$MODE.log" 2>&1 || die "reconfiguring $bdir failed"
            run_ctest "$bdir" "$logf" -V -R "($ADIOS2_TESTS).*\\.MPI\$" --timeout 1800
        fi
        # each ctest entry runs one test over its parameter sets: GoogleTest's count (every
        # rank prints its own)
        runs=$(grep -oE '^[0-9]+: \[  PASSED  \] [0-9]+ test' "$logf" | awk '{s += $(NF - 1)} END {print s + 0}')
        parts+=("$label: $((CP - p0)) passed, $((CF - f0)) failed, $((CS - s0)) skipped ($((runs / procs)) GoogleTest cases passed)")
    done
    # 2. Cross reads: each build writes every engine's file with ADIOS2_CROSS_RANKS ranks and
    #    checks it; the other build's program checks it with one rank less; both bpls dump both
    #    files' data: the four dumps are the same
    local ranks=${ADIOS2_CROSS_RANKS:-4} e w r out
    # shellcheck disable=SC2207
    local mpi=(mpiexec $(mpi_flags)) mpiw mpir
    mpiw=("${mpi[@]}" -n "$ranks") mpir=("${mpi[@]}" -n $(( ranks > 1 ? ranks - 1 : 1 )))
    p0=$CP f0=$CF s0=$CS
    rm -rf "$work/cross-$MODE" && mkdir -p "$work/cross-$MODE"
    : >"$work/cross-$MODE.log"
    cross() {  # WHAT COMMAND...
        local what=$1; shift
        printf '\n### %s\n' "$what" >>"$work/cross-$MODE.log"
        if (cd "$work/cross-$MODE" && timeout "$TIMEOUT" "$@") >>"$work/cross-$MODE.log" 2>&1; then
            CP=$((CP + 1)); log "$what"
        else
            CF=$((CF + 1)); log "FAILED: $what (log $work/cross-$MODE.log)"
        fi
    }
    for e in BP3 BP4 BP5; do
        for w in $lib $other; do
            cross "$e: ${LABEL[$w]} writes $w-$e.bp with $ranks ranks and reads it back" \
                "${mpiw[@]}" "${BD[$w]}-prog/adios2_blosc2" write $e "$w-$e.bp"
        done
        for w in $lib $other; do
            [[ $w == "$lib" ]] && r=$other || r=$lib
            cross "$e: ${LABEL[$r]} reads $w-$e.bp with ${mpir[-1]} ranks" \
                "${mpir[@]}" "${BD[$r]}-prog/adios2_blosc2" check $e "$w-$e.bp"
        done
        local dumps=() same=1
        for w in $lib $other; do
            for r in $lib $other; do
                out=$work/cross-$MODE/bpls-$r-$w-$e.txt
                "${BD[$r]}/bin/bpls" -d "$work/cross-$MODE/$w-$e.bp" 2>&1 \
                    | sed "s|$work/cross-$MODE/$w-$e.bp||" >"$out"
                dumps+=("$out")
            done
        done
        for out in "${dumps[@]:1}"; do cmp -s "${dumps[0]}" "$out" || same=0; done
        cross "$e: bpls -d of both builds prints the same data for both files ($(wc -l <"${dumps[0]}") lines)" \
            test "$same" = 1 -a "$(grep -c 'blosclz_shuffle_f64_2d' "${dumps[0]}")" -ge 1
    done
    parts+=("cross reads: $((CP - p0)) passed, $((CF - f0)) failed, $((CS - s0)) skipped")
    for part in "${parts[@]}"; do echo "$part"; done
    echo "$CP passed, $CF failed, $CS skipped"
    (( CF == 0 ))
}

# --- hdf5-blosc2 ---------------------------------------------------------------------------

hdf5_blosc2() {
    local src=${HDF5_BLOSC2_SRC:-} lib other d bdir stamp hflags
    unset LD_LIBRARY_PATH   # see h5zblosc2: the plugins and programs have an rpath
    for d in cc h5repack h5dump h5diff h5import pkg-config; do
        command -v $d >/dev/null || die "$d not found (apt-get install libhdf5-dev hdf5-tools pkg-config)"
    done
    hflags=$(pkg-config --cflags --libs "$(hdf5_pc)") || die "no pkg-config file for HDF5 (apt-get install libhdf5-dev)"
    if [[ -z $src ]]; then
        # Blosc/hdf5-blosc2 as hdf5plugin 7.1.0 vendors it (lib/HDF5-Blosc2, v3.0.1 in its
        # doc/information.rst), from that PyPI sdist
        local ver=7.1.0 tgz=$root/build/clients/hdf5plugin/hdf5plugin-7.1.0.tar.gz
        [[ -f $tgz ]] || tgz=$work/hdf5plugin-$ver.tar.gz
        if [[ ! -f $tgz ]]; then
            log "downloading the hdf5plugin==$ver sdist from PyPI (for its copy of HDF5-Blosc2)"
            "$PY" -m pip download --quiet --no-deps --no-binary hdf5plugin "hdf5plugin==$ver" -d "$work" >&2 \
                || die "pip download of the hdf5plugin sdist failed"
        fi
        rm -rf "$work/src" && mkdir -p "$work/src"
        tar xzf "$tgz" -C "$work/src" "hdf5plugin-$ver/lib/HDF5-Blosc2" || die "unpacking $tgz"
        src=$work/src/hdf5plugin-$ver/lib/HDF5-Blosc2
    fi
    [[ -f $src/src/blosc2_filter.c && -f $src/src/blosc2_plugin.c && -f $src/executables/example.c ]] \
        || die "HDF5_BLOSC2_SRC=$src is not an hdf5-blosc2 tree (src/blosc2_filter.c, src/blosc2_plugin.c, executables/example.c)"
    src=$(cd "$src" && pwd)
    log "hdf5-blosc2 sources: $src"
    ref_lib
    local -A LD=([b2nd]=$PREFIX/lib [ref]=$REF_LIBDIR) INC=([b2nd]=$PREFIX/include [ref]=$REF_INCDIR)
    for lib in b2nd ref; do
        bdir=$work/plugin-$lib
        stamp="$src $(readlink -f "${LD[$lib]}/libblosc2.so")"
        if [[ ! -f $bdir/.built-against || $(cat "$bdir/.built-against") != "$stamp" ]]; then
            rm -rf "$bdir" && mkdir -p "$bdir/plugins" "$bdir/bin"
            log "building hdf5-blosc2's filter, plugin and example against ${LD[$lib]} (log $work/build-$lib.log)"
            # the targets of its CMakeLists.txt, compiled directly: that CMakeLists.txt always
            # builds c-blosc2 "main" from GitHub (ExternalProject_Add), with no switch for an
            # installed Blosc2. libblosc2_filter.so (blosc2_filter.c, linked to Blosc2 and HDF5),
            # the plugin libH5Zblosc2.so (blosc2_filter.c + blosc2_plugin.c), and the example
            # (its only test, add_test(test_hdf5_filter example)), linked to libblosc2_filter.
            # shellcheck disable=SC2086
            ( set -ex
              cc -O2 -fPIC -shared -I"${INC[$lib]}" "$src/src/blosc2_filter.c" -o "$bdir/libblosc2_filter.so" \
                  -L"${LD[$lib]}" -lblosc2 $hflags -Wl,-rpath,"${LD[$lib]}" -lpthread &&
              cc -O2 -fPIC -shared -I"${INC[$lib]}" "$src/src/blosc2_filter.c" "$src/src/blosc2_plugin.c" \
                  -o "$bdir/plugins/libH5Zblosc2.so" -L"${LD[$lib]}" -lblosc2 $hflags -Wl,-rpath,"${LD[$lib]}" -lpthread &&
              cc -O2 -I"${INC[$lib]}" "$src/executables/example.c" -o "$bdir/bin/example" \
                  -L"$bdir" -lblosc2_filter $hflags -Wl,-rpath,"$bdir:${LD[$lib]}" -lpthread
            ) >"$work/build-$lib.log" 2>&1 \
                || { tail -30 "$work/build-$lib.log" >&2; die "build against ${LD[$lib]} failed"; }
            echo "$stamp" >"$bdir/.built-against"
        fi
        LIBDIR=${LD[$lib]} check_ldd "$bdir/plugins/libH5Zblosc2.so" "$bdir/libblosc2_filter.so"
    done
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
    LIBDIR=${LD[$lib]}
    CP=0 CF=0 CS=0
    # the example registers the filter itself (register_blosc2, through libblosc2_filter), writes
    # example.h5 (/dset, float32 100x100x100, blosclz clevel 4 + shuffle), reads it back and
    # compares: it is run once per library by the cross checks, its files then read crosswise
    h5_cross_checks example example.h5 dset
    h5_maps_checks example.h5 dset
    echo "$CP passed, $CF failed, $CS skipped"
    (( CF == 0 ))
}

# --- imagecodecs ---------------------------------------------------------------------------

# pytest runner module used by imagecodecs and caterva2: clients_pytest.run(args, label) runs
# pytest in this process and returns (passed, failed, skipped); a test whose setup or teardown
# errs counts as failed, an xfail as skipped.
write_pytest_runner() {
    cat >"$work/clients_pytest.py" <<'EOF'
import sys
import pytest

class Counter:
    def __init__(self):
        self.passed = self.failed = self.skipped = 0
        self.failures = []
    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            if report.passed:
                self.passed += 1
            elif report.failed:
                self.failed += 1
                self.failures.append(report.nodeid)
            else:
                self.skipped += 1
        elif report.failed:
            self.failed += 1
            self.failures.append(f"{report.nodeid} ({report.when})")
        elif report.when == "setup" and report.skipped:
            self.skipped += 1

def run(args, label):
    c = Counter()
    rc = pytest.main(args, plugins=[c])
    for f in c.failures:
        print(f"FAILED {label}: {f}", file=sys.stderr)
    if rc not in (0, 1, 5):  # 5: nothing collected
        print(f"FAILED {label}: pytest exit status {rc}", file=sys.stderr)
        c.failed += 1
    return c.passed, c.failed, c.skipped
EOF
}

# python-blosc2 for a venv: with a wheel built against libb2nd (PYBLOSC2_WHEEL or the one of
# scripts/python-blosc2-tests.sh), the libb2nd venv gets it and the --ref venv blosc2==4.14.1;
# sets PYB2_WHEEL (empty: none found, then neither venv gets python-blosc2).
install_pyblosc2() {  # VENV
    PYB2_WHEEL=${PYBLOSC2_WHEEL:-$(ls "$root"/build/python-blosc2-tests/wheel/blosc2-*.whl 2>/dev/null | head -1)}
    if [[ -z $PYB2_WHEEL ]]; then
        if "$1/bin/python" -m pip show blosc2 >/dev/null 2>&1; then
            die "$1 has python-blosc2 but no PYBLOSC2_WHEEL is given"
        fi
        return
    fi
    "$1/bin/python" -m pip show blosc2 >/dev/null 2>&1 && return
    if (( REF )); then
        log "installing the reference wheel blosc2==$REF_VERSION into $(basename "$1")"
        "$1/bin/python" -m pip install --quiet --only-binary :all: "blosc2==$REF_VERSION" || die "pip install blosc2"
    else
        [[ -f $PYB2_WHEEL ]] || die "PYBLOSC2_WHEEL $PYB2_WHEEL not found"
        log "installing python-blosc2 built against libb2nd: $PYB2_WHEEL"
        "$1/bin/python" -m pip install --quiet --only-binary :all: "$PYB2_WHEEL" || die "pip install $PYB2_WHEEL"
    fi
}

imagecodecs() {
    local ver=2026.3.6 venv src="" site
    venv=$work/$([[ $REF == 1 ]] && echo ref-venv || echo venv)
    make_venv "$venv" setuptools wheel "numpy>=2" "Cython>=3.2" pytest zarr
    install_pyblosc2 "$venv"
    if (( REF )) && [[ -z $PYB2_WHEEL ]]; then
        use_ref_lib
    else
        select_lib "$venv"
    fi
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # setup.py's hook for distributors: with IMAGECODECS_ONLY=blosc2 only shared, imcd and blosc2
    # are left, and without this module the default customize_build would drop blosc2 too
    mkdir -p "$work/distributor"
    cat >"$work/distributor/imagecodecs_distributor_setup.py" <<'EOF'
"""Build hook of scripts/clients-tests.sh: keep every extension (IMAGECODECS_ONLY chose them),
point the blosc2 extension at CLIENTS_BLOSC2_INCDIR / CLIENTS_BLOSC2_LIBDIR, with an rpath."""
import os

def customize_build(extensions, options):
    inc, lib = os.environ["CLIENTS_BLOSC2_INCDIR"], os.environ["CLIENTS_BLOSC2_LIBDIR"]
    b = extensions["blosc2"]
    b["include_dirs"].append(inc)
    b["library_dirs"].append(lib)
    b["extra_link_args"].append(f"-Wl,-rpath,{lib}")
EOF
    if [[ ! -f $work/wheel-$MODE/.built-against || $(cat "$work/wheel-$MODE/.built-against") != "$STAMP" ]] \
            || ! "$venv/bin/python" -m pip show imagecodecs >/dev/null 2>&1; then
        src=$(sdist imagecodecs "$ver") || exit 2
        rm -rf "$work/wheel-$MODE" && mkdir -p "$work/wheel-$MODE"
        log "building imagecodecs $ver (IMAGECODECS_ONLY=blosc2) against $LIBDIR (log $work/build-$MODE.log)"
        IMAGECODECS_ONLY=blosc2 PYTHONPATH="$work/distributor${PYTHONPATH:+:$PYTHONPATH}" \
            CLIENTS_BLOSC2_INCDIR=$INCDIR CLIENTS_BLOSC2_LIBDIR=$LIBDIR \
            "$venv/bin/python" -m pip wheel --no-deps --no-build-isolation -w "$work/wheel-$MODE" -v "$src" \
            >"$work/build-$MODE.log" 2>&1 || { tail -30 "$work/build-$MODE.log" >&2; die "build failed"; }
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$work"/wheel-$MODE/imagecodecs-*.whl || die "pip install"
        echo "$STAMP" >"$work/wheel-$MODE/.built-against"
    fi
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    check_ldd "$site"/imagecodecs/_blosc2*.so
    [[ -n $src ]] || src=$work/src-$MODE/imagecodecs-$ver
    [[ -f $src/tests/test_imagecodecs.py ]] || src=$(sdist imagecodecs "$ver") || exit 2
    local run=$work/run-$MODE
    rm -rf "$run" && mkdir -p "$run" && cp -r "$src/tests" "$run/" || die "copying the tests"
    write_maps_check
    write_pytest_runner
    cat >"$work/run_tests.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["CLIENTS_WORK"])
import clients_maps, clients_pytest
import numpy as np, imagecodecs
try:
    import blosc2
    pyb2 = f"python-blosc2 {blosc2.__version__} on {blosc2.blosclib_version}"
except ImportError:
    pyb2 = "no python-blosc2"
print("== imagecodecs", imagecodecs.__version__, "BLOSC2", imagecodecs.BLOSC2.available,
      imagecodecs.blosc2_version(), pyb2, file=sys.stderr)
a = np.arange(100_000, dtype="f8").tobytes()
assert imagecodecs.blosc2_decode(imagecodecs.blosc2_encode(a, level=5, compressor="zstd", typesize=8)) == a
clients_maps.check("after a blosc2 round trip")
res = clients_pytest.run(["-p", "no:cacheprovider", "-rfE", "-k", "blosc2", "tests/test_imagecodecs.py"], "imagecodecs")
clients_maps.check("after the tests")
print("%d passed, %d failed, %d skipped" % res)
EOF
    log "imagecodecs tests -k blosc2 ($MODE), log $work/test-$MODE.log"
    (cd "$run" && CLIENTS_WORK=$work CLIENTS_LIBDIR=$LIBDIR TMPDIR=$run \
        timeout "$TIMEOUT" "$venv/bin/python" "$work/run_tests.py") >"$work/test-$MODE.log" 2>&1
    local r=$? line
    grep -E '^== |^FAILED ' "$work/test-$MODE.log" | cut -c1-300 >&2
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test-$MODE.log" | tail -1)
    [[ -n $line ]] || { tail -20 "$work/test-$MODE.log" >&2; die "the test run ended without a summary (exit $r)"; }
    echo "$line"
    [[ $line == *" 0 failed,"* ]]
}

# --- caterva2 ------------------------------------------------------------------------------

# The maps hook of every Python process of the caterva2 run (the test process and the servers it
# starts as children): at exit, or on SIGTERM/SIGHUP, it appends one JSON line {pid, argv, libs}
# to $CLIENTS_MAPS_LOG (libs: the libblosc2*/libb2nd* in /proc/self/maps); a connection to
# something else than loopback is refused and written at once as {pid, argv, net}. It is run by
# a .pth file in the venv's site-packages when CLIENTS_MAPS_HOOK names it: a sitecustomize.py on
# PYTHONPATH would miss the servers of test_peers.py and test_providers.py, started with
# PYTHONPATH=os.getcwd().
write_maps_hook() {  # SITE-PACKAGES
    cat >"$work/clients_maps_hook.py" <<'EOF'
"""Written by scripts/clients-tests.sh caterva2: record the Blosc2 libraries each process maps."""
import os

_LOG = os.environ.get("CLIENTS_MAPS_LOG")
if _LOG:
    import atexit, ipaddress, json, signal, socket, sys

    # once per process (a venv's lib64 -> lib makes site.py read the .pth twice)
    sys.modules["clients_maps_hook"] = type(sys)("clients_maps_hook")
    _done = []

    def _write(rec):
        rec.update(pid=os.getpid(), argv=list(sys.argv))
        fd = os.open(_LOG, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
        try:
            os.write(fd, (json.dumps(rec) + "\n").encode())
        finally:
            os.close(fd)

    def _mapped():
        libs = set()
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if os.path.basename(path).startswith(("libblosc2", "libb2nd")):
                        libs.add(path)
        return sorted(libs)

    def _dump():
        if not _done:
            _done.append(1)
            _write({"libs": _mapped()})

    atexit.register(_dump)

    # uvicorn handles SIGTERM itself, then restores the previous handler and raises the signal
    # again: with SIG_DFL there the server would die without running atexit
    def _on_signal(sig, frame):
        _dump()
        signal.signal(sig, signal.SIG_DFL)
        os.kill(os.getpid(), sig)

    for _s in (signal.SIGTERM, signal.SIGHUP):
        if signal.getsignal(_s) == signal.SIG_DFL:
            signal.signal(_s, _on_signal)

    # the tests must reach nothing but localhost: refuse (and record) anything else
    def _local(host):
        if host is None:
            return True
        if isinstance(host, bytes):
            host = host.decode()
        h = str(host).strip("[]").lower()
        if h in ("", "localhost", "localhost.localdomain", "ip6-localhost") or h.endswith(".localhost"):
            return True
        try:
            ip = ipaddress.ip_address(h.split("%")[0])
        except ValueError:
            return False
        return ip.is_loopback or ip.is_unspecified

    def _refuse(what):
        _write({"net": what})

    _getaddrinfo = socket.getaddrinfo

    def getaddrinfo(host, *a, **k):
        if not _local(host):
            _refuse(f"getaddrinfo {host}")
            raise socket.gaierror(socket.EAI_NONAME, f"{host}: refused by clients-tests.sh (not localhost)")
        return _getaddrinfo(host, *a, **k)

    socket.getaddrinfo = getaddrinfo

    def _guard(meth):
        def wrapper(self, address, *a, **k):
            if self.family in (socket.AF_INET, socket.AF_INET6) and not _local(address[0]):
                _refuse(f"connect {address!r}")
                raise OSError(101, f"{address!r}: refused by clients-tests.sh (not localhost)")
            return meth(self, address, *a, **k)
        return wrapper

    socket.socket.connect = _guard(socket.socket.connect)
    socket.socket.connect_ex = _guard(socket.socket.connect_ex)
EOF
    # site.py executes the lines of a .pth that start with "import"
    echo 'import os, sys; _p = os.environ.get("CLIENTS_MAPS_HOOK"); _p and "clients_maps_hook" not in sys.modules and exec(compile(open(_p).read(), _p, "exec"), {"__name__": "clients_maps_hook"})' \
        >"$1/clients_maps_hook.pth"
}

caterva2() {
    local ver=2026.9.2 venv site tgz h5whl run stamp netns=()
    venv=$work/$([[ $REF == 1 ]] && echo ref-venv || echo venv)
    make_venv "$venv" setuptools wheel
    install_pyblosc2 "$venv"
    (( REF )) || [[ -n $PYB2_WHEEL ]] || die "caterva2 needs python-blosc2 built against libb2nd: run scripts/python-blosc2-tests.sh or set PYBLOSC2_WHEEL"
    select_lib "$venv"
    export LD_LIBRARY_PATH="$LIBDIR${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
    # hdf5plugin: the wheel of `scripts/clients-tests.sh hdf5plugin [--ref]` (libh5blosc2.so linked
    # to the Blosc2 library), installed before caterva2[tests] so that pip keeps it. The PyPI
    # wheel's libh5blosc2.so has c-blosc2 3.3.2 linked in statically, invisible to the map check.
    h5whl=$(ls "$root"/build/clients/hdf5plugin/wheel-$MODE/hdf5plugin-*.whl 2>/dev/null | head -1)
    if [[ -z $h5whl ]]; then
        log "no hdf5plugin wheel in build/clients/hdf5plugin/wheel-$MODE: running scripts/clients-tests.sh hdf5plugin $([[ $REF == 1 ]] && echo --ref)"
        "$0" hdf5plugin $([[ $REF == 1 ]] && echo --ref) >&2
        h5whl=$(ls "$root"/build/clients/hdf5plugin/wheel-$MODE/hdf5plugin-*.whl 2>/dev/null | head -1)
        [[ -n $h5whl ]] || die "no hdf5plugin wheel in build/clients/hdf5plugin/wheel-$MODE (scripts/clients-tests.sh hdf5plugin $([[ $REF == 1 ]] && echo --ref) failed)"
    fi
    stamp="$(sha256sum "$h5whl" | cut -c1-64) caterva2==$ver"
    if [[ ! -f $venv/.caterva2-ok || $(cat "$venv/.caterva2-ok") != "$stamp" ]] \
            || ! "$venv/bin/python" -m pip show caterva2 >/dev/null 2>&1; then
        log "installing $h5whl into $(basename "$venv")"
        "$venv/bin/python" -m pip install --quiet --only-binary :all: h5py numpy || die "pip install h5py numpy"
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$h5whl" || die "pip install $h5whl"
        tgz=$work/caterva2-$ver.tar.gz
        if [[ ! -f $tgz ]]; then
            log "downloading the caterva2==$ver sdist from PyPI"
            "$PY" -m pip download --quiet --no-deps --no-binary caterva2 "caterva2==$ver" -d "$work" >&2 \
                || die "pip download of the caterva2 sdist failed"
            [[ -f $tgz ]] || die "no caterva2-$ver.tar.gz after pip download"
        fi
        log "installing caterva2[tests] $ver from $tgz (log $work/install-$MODE.log)"
        "$venv/bin/python" -m pip install --prefer-binary "$tgz[tests]" >"$work/install-$MODE.log" 2>&1 \
            || { tail -20 "$work/install-$MODE.log" >&2; die "pip install caterva2[tests] failed"; }
        echo "$stamp" >"$venv/.caterva2-ok"
    fi
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    # pip must have kept both: python-blosc2 and hdf5plugin linked to the library. The reference
    # wheel's blosc2_ext has c-blosc2 3.3.5 linked in statically (its lib/libblosc2.so is for
    # other clients): there it is the reference by construction, and only the version is checked.
    if (( REF )); then
        [[ $("$venv/bin/python" -m pip show blosc2 2>/dev/null | sed -n 's/^Version: //p') == "$REF_VERSION" ]] \
            || die "pip replaced blosc2==$REF_VERSION in $(basename "$venv")"
        log "python-blosc2: blosc2==$REF_VERSION (blosc2_ext with c-blosc2 3.3.5 linked in statically)"
        check_ldd "$site"/hdf5plugin/plugins/libh5blosc2.so
    else
        check_ldd "$site"/blosc2/blosc2_ext*.so "$site"/hdf5plugin/plugins/libh5blosc2.so
    fi
    write_maps_check
    write_pytest_runner
    write_maps_hook "$site"
    cat >"$work/run_tests.py" <<'EOF'
import os, sys
sys.path.insert(0, os.environ["CLIENTS_WORK"])
import clients_maps, clients_pytest
import numpy as np, blosc2, h5py, hdf5plugin, caterva2
print("== caterva2", caterva2.__version__, "python-blosc2", blosc2.__version__, "on", blosc2.blosclib_version,
      "hdf5plugin", hdf5plugin.version, file=sys.stderr)
a = np.arange(100_000, dtype="f8")
assert (blosc2.decompress2(blosc2.compress2(a, typesize=8)) == a.tobytes())
with h5py.File("smoke.h5", "w") as f:
    f.create_dataset("d", data=a.reshape(100, 1000), chunks=(10, 1000), **hdf5plugin.Blosc2(cname="zstd", clevel=5))
with h5py.File("smoke.h5", "r") as f:
    assert (f["d"][...] == a.reshape(100, 1000)).all()
os.remove("smoke.h5")
clients_maps.check("after blosc2 and hdf5plugin round trips")
# test_loadfromurl downloads from github.com: deselected (it also skips without CATERVA2_SECRET)
res = clients_pytest.run(["-p", "no:cacheprovider", "-rfE", "-Wignore::pytest.PytestAssertRewriteWarning",
                          "-k", "not test_loadfromurl", "--pyargs", "caterva2.tests"], "caterva2")
clients_maps.check("after the tests")
print("%d passed, %d failed, %d skipped" % res)
EOF
    # every process of the run in a network namespace of its own, with only the loopback
    # interface (when unshare/ip allow it); the server listens on localhost:8000 there
    if unshare -n true 2>/dev/null; then netns=(unshare -n)
    elif unshare -rn true 2>/dev/null; then netns=(unshare -rn)
    fi
    if (( ${#netns[@]} )) && command -v ip >/dev/null \
            && "${netns[@]}" sh -c 'ip link set lo up' 2>/dev/null; then
        log "running in a private network namespace (${netns[*]}), loopback only"
    else
        netns=() && log "no private network namespace (unshare -n failed): non-loopback connections are only refused by sitecustomize"
    fi
    run=$work/run-$MODE
    rm -rf "$run" && mkdir -p "$run/home" && : >"$work/maps-$MODE.log"
    log "caterva2 tests ($MODE), log $work/test-$MODE.log"
    # CATERVA2_SECRET unset: the server runs without login (the tests that need it skip);
    # HOME: no ~/.caterva2*.toml of the user
    (cd "$run" && env -u CATERVA2_SECRET HOME="$run/home" TMPDIR="$run" \
        CLIENTS_WORK=$work CLIENTS_LIBDIR=$LIBDIR CLIENTS_MAPS_LOG="$work/maps-$MODE.log" \
        CLIENTS_MAPS_HOOK="$work/clients_maps_hook.py" \
        timeout "$TIMEOUT" "${netns[@]}" sh -c '[ -z "$1" ] || ip link set lo up; shift; exec "$@"' sh "${netns[*]}" \
        "$venv/bin/python" "$work/run_tests.py") >"$work/test-$MODE.log" 2>&1
    local r=$? line
    grep -E '^== |^FAILED ' "$work/test-$MODE.log" | cut -c1-300 >&2
    line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test-$MODE.log" | tail -1)
    [[ -n $line ]] || { tail -20 "$work/test-$MODE.log" >&2; die "the test run ended without a summary (exit $r)"; }
    # the map of every Python process of the run (the servers included)
    "$venv/bin/python" - "$work/maps-$MODE.log" "$LIBDIR" <<'EOF' >&2 || die "maps check of the run's processes failed"
import json, os, sys
want = os.path.realpath(sys.argv[2])
recs = [json.loads(l) for l in open(sys.argv[1]) if l.strip()]
procs = [r for r in recs if "libs" in r]
net = [r for r in recs if "net" in r]
bad = sorted({p for r in procs for p in r["libs"] if os.path.dirname(os.path.realpath(p)) != want})
libs = sorted({p for r in procs for p in r["libs"]})
is_server = lambda r: any("caterva2/services/server" in a or "caterva2.services.server" in a for a in r["argv"][:2])
servers = [r for r in procs if is_server(r)]
print(f"== maps of the run's processes: {len(procs)} recorded, {sum(1 for r in procs if r['libs'])} with Blosc2 mapped, "
      f"{len(servers)} caterva2 servers ({sum(1 for r in servers if r['libs'])} with Blosc2): {' '.join(libs) or 'none'}")
for r in net:
    print(f"== network refused in pid {r['pid']} ({' '.join(r['argv'])[:120]}): {r['net']}")
ok = True
if bad:
    print(f"== maps check FAILED: want only {want}/, got {bad}"); ok = False
if not any(r["libs"] for r in procs):
    print("== maps check FAILED: no process mapped a Blosc2 library"); ok = False
if not any(r["libs"] for r in servers):
    print("== maps check FAILED: no caterva2 server process recorded with a Blosc2 library mapped"); ok = False
sys.exit(0 if ok else 1)
EOF
    echo "$line"
    [[ $line == *" 0 failed,"* ]]
}

case $NAME in
    pytables) mkdir -p "$work"; pytables ;;
    hdf5plugin) mkdir -p "$work"; hdf5plugin ;;
    h5zblosc2) mkdir -p "$work"; h5zblosc2 ;;
    hdf5-blosc2) mkdir -p "$work"; hdf5_blosc2 ;;
    phdf5) mkdir -p "$work"; phdf5 ;;
    adios2) mkdir -p "$work"; adios2 ;;
    imagecodecs) mkdir -p "$work"; imagecodecs ;;
    caterva2) mkdir -p "$work"; caterva2 ;;
    *) echo "unknown client $NAME" >&2; usage ;;
esac
