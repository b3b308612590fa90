# shellcheck shell=bash
# The phdf5 client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh phdf5` runs
# the function phdf5 below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

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
    { hcflags=$(pkg-config --cflags hdf5-openmpi) && hlibs=$(pkg-config --libs hdf5-openmpi); } \
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
    { scflags=$(pkg-config --cflags "$(hdf5_pc)") && slibs=$(pkg-config --libs "$(hdf5_pc)"); } \
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
