# shellcheck shell=bash
# The adios2 client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh adios2` runs
# the function adios2 below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

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
        { rm -rf "$ADIOS2_COPY" && mkdir -p "$ADIOS2_COPY" && cp -a "$src/." "$ADIOS2_COPY/"; } || die "cannot copy $src"
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
    local -A BD=([b2nd]=$work/build-b2nd [ref]=$work/build-$ref_dir)
    local -A LABEL=([b2nd]="libb2nd ($PREFIX)" [ref]=$REF_LABEL)
    adios2_build "${LABEL[b2nd]}" "${BD[b2nd]}" "$PREFIX/lib/cmake/Blosc2" "$PREFIX/lib"
    adios2_build "${LABEL[ref]}" "${BD[ref]}" "$REF_CMAKE_DIR" "$REF_LIBDIR"
    if (( REF )); then lib=ref other=b2nd; else lib=b2nd other=ref; fi
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
