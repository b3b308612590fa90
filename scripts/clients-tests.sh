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

# The helpers several clients use (log, die, sdist, make_venv, select_lib, check_ldd, ...), then
# the client's own file, scripts/clients/NAME.sh, and its function.
# shellcheck source=clients/common.sh
source "$root/scripts/clients/common.sh"

case $NAME in
    pytables)
        # shellcheck source=clients/pytables.sh
        source "$root/scripts/clients/pytables.sh"; mkdir -p "$work"; pytables ;;
    hdf5plugin)
        # shellcheck source=clients/hdf5plugin.sh
        source "$root/scripts/clients/hdf5plugin.sh"; mkdir -p "$work"; hdf5plugin ;;
    h5zblosc2)
        # shellcheck source=clients/h5zblosc2.sh
        source "$root/scripts/clients/h5zblosc2.sh"; mkdir -p "$work"; h5zblosc2 ;;
    hdf5-blosc2)
        # shellcheck source=clients/hdf5-blosc2.sh
        source "$root/scripts/clients/hdf5-blosc2.sh"; mkdir -p "$work"; hdf5_blosc2 ;;
    phdf5)
        # shellcheck source=clients/phdf5.sh
        source "$root/scripts/clients/phdf5.sh"; mkdir -p "$work"; phdf5 ;;
    adios2)
        # shellcheck source=clients/adios2.sh
        source "$root/scripts/clients/adios2.sh"; mkdir -p "$work"; adios2 ;;
    imagecodecs)
        # shellcheck source=clients/imagecodecs.sh
        source "$root/scripts/clients/imagecodecs.sh"; mkdir -p "$work"; imagecodecs ;;
    caterva2)
        # shellcheck source=clients/caterva2.sh
        source "$root/scripts/clients/caterva2.sh"; mkdir -p "$work"; caterva2 ;;
    *) echo "unknown client $NAME" >&2; usage ;;
esac
