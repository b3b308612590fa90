# shellcheck shell=bash
# The pytables client of scripts/clients-tests.sh (its usage text documents it): sourced by that
# script after its setup and scripts/clients/common.sh; `scripts/clients-tests.sh pytables` runs
# the function pytables below.
# shellcheck disable=SC2154  # root and work: set by scripts/clients-tests.sh

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
        "$venv/bin/python" -m pip install --quiet --no-deps --force-reinstall "$work/wheel-$MODE"/tables-*.whl || die "pip install"
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
            local f ndone=0
            for f in "$run"/parts/*; do [[ -e $f && ${f##*/} != *tmp* ]] && ndone=$((ndone + 1)); done
            log "resuming: $ndone parts done in $run/parts"
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
        cat "$work/test-$MODE-$p.log".w* >"$work/test-$MODE-$p.log.new" && rm -f "$work/test-$MODE-$p.log".w*
        # the counts: the sum over the parts, once every part has them
        local count have part parts=()
        count=$(cat "$run/parts/.count" 2>/dev/null || echo 0)
        for part in "$run"/parts/[0-9][0-9][0-9][0-9]-*; do
            [[ -e $part && $part != *.tmp && $part != *.claim ]] && parts+=("$part")
        done
        have=${#parts[@]}
        if (( count > 0 && have == count )); then
            awk '{p += $1; f += $2; s += $3} END {printf "%d passed, %d failed, %d skipped\n", p, f, s}' "${parts[@]}" \
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
