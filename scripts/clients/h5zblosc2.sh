# shellcheck shell=bash
# The h5zblosc2 client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh h5zblosc2` runs
# the function h5zblosc2 below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

# --- h5zblosc2 -----------------------------------------------------------------------------

H5Z_COMMIT=af80431813863bd25edcb7acda1dc15cab26ccec

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
    # shellcheck disable=SC2034  # other: read by h5_cross_checks and h5_maps_checks (common.sh)
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
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
