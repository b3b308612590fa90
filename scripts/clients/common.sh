# shellcheck shell=bash
# The helpers of scripts/clients-tests.sh that several clients use, sourced by it after its
# setup (root, NAME, REF, MODE, PREFIX, PY, TIMEOUT, REF_VERSION, work) and before the client's
# own file, scripts/clients/NAME.sh. A helper that one client alone uses is in that file.
# shellcheck disable=SC2154  # root, work: set by scripts/clients-tests.sh; lib, other: by the caller of h5_cross_checks

log() { printf '== %s\n' "$*" >&2; }
# shellcheck disable=SC2153  # NAME: the client (scripts/clients-tests.sh), not a misspelt name
die() { echo "$NAME: $*" >&2; exit 2; }

# --- helpers -------------------------------------------------------------------------------

first_file() {  # PATH...: prints the first that exists (a glob's first match), or nothing
    local f
    for f in "$@"; do
        if [[ -e $f ]]; then echo "$f"; return; fi
    done
}

sdist() {  # DIST VERSION -> prints the path of a fresh unpacked tree $work/src-$MODE/DIST-VERSION
    local dist=$1 ver=$2 tgz
    tgz=$(first_file "$work/$dist-$ver.tar.gz")
    if [[ -z $tgz ]]; then
        log "downloading the $dist==$ver sdist from PyPI"
        "$PY" -m pip download --quiet --no-deps --no-binary "$dist" "$dist==$ver" -d "$work" >&2 \
            || die "pip download of the $dist sdist failed"
        tgz=$(first_file "$work/$dist-$ver.tar.gz")
        [[ -n $tgz ]] || die "no $dist-$ver.tar.gz after pip download"
    fi
    { rm -rf "$work/src-$MODE" && mkdir -p "$work/src-$MODE" && tar xzf "$tgz" -C "$work/src-$MODE"; } || die "unpacking $tgz"
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
    # shellcheck disable=SC2034  # STAMP: read by the client's function (scripts/clients/NAME.sh)
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
    # shellcheck disable=SC2034  # STAMP: read by the client's function, as select_lib's
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

# --- HDF5 filter plugins (h5zblosc2, hdf5-blosc2; run_ctest: adios2 too) ------------------

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
    local ex=$1 exfile=$2 exdset=$3 orig ud name w r sizes_b2nd sizes_ref
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
        mapfile -t sizes_b2nd < <(h5dump -pH "$run/$name-b2nd.h5" 2>/dev/null | grep -oE 'SIZE [0-9]+ ' | cut -d' ' -f2)
        mapfile -t sizes_ref < <(h5dump -pH "$run/$name-ref.h5" 2>/dev/null | grep -oE 'SIZE [0-9]+ ' | cut -d' ' -f2)
        echo "== $name compressed sizes: b2nd" "${sizes_b2nd[@]}" "ref" "${sizes_ref[@]}" >>"$CHECK_LOG"
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

# The serial HDF5's pkg-config name, which the tools (h5dump, h5repack: libhdf5_serial) use:
# Debian's plain "hdf5" follows its alternatives, and names the MPI build once
# libhdf5-openmpi-dev is installed (the phdf5 client's).
hdf5_pc() { if pkg-config --exists hdf5-serial 2>/dev/null; then echo hdf5-serial; else echo hdf5; fi; }

# --- python-blosc2 and pytest (imagecodecs, caterva2) --------------------------------------

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
    PYB2_WHEEL=${PYBLOSC2_WHEEL:-$(first_file "$root"/build/python-blosc2-tests/wheel/blosc2-*.whl)}
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
