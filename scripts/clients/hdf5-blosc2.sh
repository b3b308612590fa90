# shellcheck shell=bash
# The hdf5-blosc2 client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh hdf5-blosc2` runs
# the function hdf5_blosc2 below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

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
    # shellcheck disable=SC2034  # other: read by h5_cross_checks and h5_maps_checks (common.sh)
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
    CP=0 CF=0 CS=0
    # the example registers the filter itself (register_blosc2, through libblosc2_filter), writes
    # example.h5 (/dset, float32 100x100x100, blosclz clevel 4 + shuffle), reads it back and
    # compares: it is run once per library by the cross checks, its files then read crosswise
    h5_cross_checks example example.h5 dset
    h5_maps_checks example.h5 dset
    echo "$CP passed, $CF failed, $CS skipped"
    (( CF == 0 ))
}
