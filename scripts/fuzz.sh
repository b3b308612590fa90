#!/usr/bin/env bash
# Coverage-guided fuzzing of libb2nd with libFuzzer, on the stable toolchain: the library is
# built as a static library with LLVM's sanitizer-coverage pass (`-C passes=sancov-module`,
# inline 8-bit counters, PC table, comparison tracing), with panic=abort, overflow checks and
# debug assertions (a panic is a finding), and linked into C targets built by Debian's
# clang-14 with -fsanitize=fuzzer,address (ASan checks the targets' buffers and every
# allocation, libFuzzer's -malloc_limit_mb flags allocations beyond 1 GiB).
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]      (default 60 s; targets: chunk frame b2nd mutate)
#   scripts/fuzz.sh --runs N [TARGET...]                  N inputs per target from a fixed seed
#                                                         (repeatable: what CI runs)
#   scripts/fuzz.sh --setup                               only install what it needs (below)
#
# Targets (fuzz/targets/fuzz_TARGET.c): chunk (decompress, getitem, queries; 1 and 2
# threads), frame (super-chunk from a buffer or a file, then every read), b2nd (an array
# from a frame, slices, whole copies, squeeze; b2nd metalayer decoding), mutate (stateful: a
# sequence of changes of a frame file, contiguous or sparse, checked against a model after
# each, with reopens). Seeds come from
# fuzz/seedgen.c (chunks, frames and arrays of every codec and filter, written at each run)
# and from tests/data; the corpus grows under build/fuzz/corpus/. Inputs that crashed go
# to build/fuzz/crashes/TARGET/; once fixed they are kept in fuzz/regressions/TARGET/,
# which every run replays first. Prints, per target: runs, execs/s, coverage, findings.
# Exit status: non-zero when a regression input or the fuzzing found a problem.
# Needs clang-14 and libclang-rt-14-dev (Debian); installs them with apt-get when missing.
set -uo pipefail
cd "$(dirname "$0")/.." || exit 2
budget=()
fresh=0
setup_only=0
if [[ ${1:-} == --setup ]]; then
    setup_only=1  # install clang-14 and libFuzzer's runtime when missing, then stop
elif [[ ${1:-} == --runs ]]; then
    budget=(-runs="$2" -seed=1)
    fresh=1  # a repeatable run starts from the seeds alone
    shift 2
else
    budget=(-max_total_time="${1:-60}")
    shift || true
fi
targets=("$@")
(( ${#targets[@]} )) || targets=(chunk frame b2nd mutate)
CLANG=${CLANG:-clang-14}
if ! command -v "$CLANG" >/dev/null || ! ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
    echo "== fuzz: installing clang-14 and libclang-rt-14-dev" >&2
    { apt-get install -y clang-14 libclang-rt-14-dev || { apt-get update && apt-get install -y clang-14 libclang-rt-14-dev; }; } >/dev/null 2>&1 \
        || { echo "fuzz: clang-14 with libFuzzer is not available; install clang-14 and libclang-rt-14-dev" >&2; exit 2; }
fi
(( setup_only == 0 )) || exit 0
venv=$(./scripts/setup.sh)
export PATH="$venv/bin:$PATH"  # cmake and python from the venv
# Frames are changed without syncs (the journal still records every change): fuzzing looks
# for wrong logic, and a sync per close only waits on the disk (the stateful target made
# 14 runs a second beside another process writing files; 353 without syncs, same machine).
# What syncs guarantee is tested by tests/power_loss.rs. B2ND_DURABILITY=consistent overrides.
export B2ND_DURABILITY=${B2ND_DURABILITY:-off}
out=build/fuzz
mkdir -p "$out"

echo "== fuzz: building libb2nd with coverage instrumentation (target/fuzz)" >&2
RUSTFLAGS="-C passes=sancov-module -C llvm-args=-sanitizer-coverage-level=3 \
-C llvm-args=-sanitizer-coverage-inline-8bit-counters -C llvm-args=-sanitizer-coverage-pc-table \
-C llvm-args=-sanitizer-coverage-trace-compares -C panic=abort -C debug-assertions -C overflow-checks" \
cargo build --release --lib --target x86_64-unknown-linux-gnu --target-dir target/fuzz >"$out/build.log" 2>&1 \
    || { tail -20 "$out/build.log" >&2; exit 2; }
# (an explicit --target keeps the flags off build scripts)
lib=target/fuzz/x86_64-unknown-linux-gnu/release/libb2nd_capi.a

# seeds: generated with the normal build of the library
cargo build --release --lib >>"$out/build.log" 2>&1 || { tail -20 "$out/build.log" >&2; exit 2; }
cc -O1 -std=c11 -D_DEFAULT_SOURCE -Iinclude fuzz/seedgen.c target/release/libb2nd_capi.a -lpthread -ldl -lm -o "$out/seedgen" \
    || exit 2
rm -rf "$out/seeds" && mkdir -p "$out"/seeds/{chunk,frame,b2nd,mutate}
# mutate: a few sequences of changes
for k in 0 1 2 3; do
    printf '%b\x00\x01\x00\x03\x01\x05\x02\x04\x02\x00\x07\x06\x02\x08\x00\x02\x09\x03\x02\x05\x00\x08\x01' "\\x0$k" >"$out/seeds/mutate/seq-$k"
done
"$out/seedgen" "$out/seeds" >/dev/null || exit 2
i=0
for f in tests/data/frames/*.b2frame tests/data/b2nd/*.b2nd; do
    [[ $(stat -c %s "$f") -le 65536 ]] || continue
    { printf '\000'; cat "$f"; } >"$out/seeds/frame/data-$((i++))"
done
for f in tests/data/b2nd/*.b2nd; do cp "$f" "$out/seeds/b2nd/"; done

rc=0
printf '%-8s %10s %10s %8s %8s %s\n' target runs execs/s cov features findings
for t in "${targets[@]}"; do
    src=fuzz/targets/fuzz_$t.c
    [[ -f $src ]] || { echo "no target $t" >&2; rc=2; continue; }
    "$CLANG" -g -O1 -fsanitize=fuzzer,address -std=c11 -D_DEFAULT_SOURCE -Iinclude "$src" "$lib" \
        -lpthread -ldl -lm -o "$out/fuzz_$t" 2>"$out/$t.build.log" || { cat "$out/$t.build.log" >&2; rc=2; continue; }
    corpus=$out/corpus/$t
    if (( fresh )); then corpus=$out/fresh-corpus/$t; rm -rf "$corpus"; fi
    mkdir -p "$corpus" "$out/crashes/$t" "fuzz/regressions/$t"
    opts=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=20 -max_len=65536)
    # the regressions first: each input once
    if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
        if ! ASAN_OPTIONS=detect_leaks=0 "$out/fuzz_$t" "${opts[@]}" "fuzz/regressions/$t"/* >"$out/$t.regressions.log" 2>&1; then
            echo "$t: a regression input fails again (see $out/$t.regressions.log)" >&2
            rc=1
        fi
    fi
    ASAN_OPTIONS=detect_leaks=0 "$out/fuzz_$t" "${opts[@]}" "${budget[@]}" -print_final_stats=1 \
        -artifact_prefix="$out/crashes/$t/" "$corpus" "$out/seeds/$t" >"$out/$t.log" 2>&1
    status=$?
    runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/$t.log" | tail -1)
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$out/$t.log" | tail -1)
    cov=$(grep -o 'cov: [0-9]*' "$out/$t.log" | tail -1 | cut -d' ' -f2)
    ft=$(grep -o 'ft: [0-9]*' "$out/$t.log" | tail -1 | cut -d' ' -f2)
    found=$(find "$out/crashes/$t" -type f | wc -l)
    printf '%-8s %10s %10s %8s %8s %s\n' "$t" "${runs:-?}" "${speed:-?}" "${cov:-?}" "${ft:-?}" "$found"
    if (( status != 0 || found > 0 )); then
        grep -m3 -E 'ERROR|panicked|SUMMARY|malloc\(' "$out/$t.log" >&2
        echo "$t: finding(s) in $out/crashes/$t/ (log $out/$t.log)" >&2
        rc=1
    fi
done
exit $rc
