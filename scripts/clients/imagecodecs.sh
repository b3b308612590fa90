# shellcheck shell=bash
# The imagecodecs client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh imagecodecs` runs
# the function imagecodecs below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

# --- imagecodecs ---------------------------------------------------------------------------

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
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$work/wheel-$MODE"/imagecodecs-*.whl || die "pip install"
        echo "$STAMP" >"$work/wheel-$MODE/.built-against"
    fi
    site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
    check_ldd "$site"/imagecodecs/_blosc2*.so
    [[ -n $src ]] || src=$work/src-$MODE/imagecodecs-$ver
    [[ -f $src/tests/test_imagecodecs.py ]] || src=$(sdist imagecodecs "$ver") || exit 2
    local run=$work/run-$MODE
    { rm -rf "$run" && mkdir -p "$run" && cp -r "$src/tests" "$run/"; } || die "copying the tests"
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
