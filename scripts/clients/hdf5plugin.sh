# shellcheck shell=bash
# The hdf5plugin client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh hdf5plugin` runs
# the function hdf5plugin below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

# --- hdf5plugin ----------------------------------------------------------------------------

hdf5plugin() {
    local ver=7.1.0 venv site src pyb2=() wheel
    venv=$work/$([[ $REF == 1 ]] && echo ref-venv || echo venv)
    wheel=${PYBLOSC2_WHEEL:-$(first_file "$root"/build/python-blosc2-tests/wheel/blosc2-*.whl)}
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
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$work/wheel-$MODE"/hdf5plugin-*.whl || die "pip install"
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
