#!/usr/bin/env bash
# Benchmark libb2nd against the reference c-blosc2 3.3.5 (from the blosc2==4.14.1 wheel).
# Each library runs in its own process (build/bench_worker, from benches/bench_worker.c),
# in interleaved rounds; scripts/bench.py pairs the rounds and prints Markdown tables.
# usage: scripts/bench.sh [bench.py options: --suites chunks,schunk,b2nd,plugins
#                          --threads 1,2,4,8,16 --rounds 5 --reps 3 --only SUBSTR --json FILE --load N]
#        scripts/bench.sh --prepare-only   (build and fetch what a run needs; print the reference library)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(./scripts/setup.sh)
ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')
cargo build --release --lib >&2
mkdir -p build/bench-data
cc -O2 -std=c11 -D_POSIX_C_SOURCE=200809L -Iinclude benches/bench_worker.c -ldl -lm -o build/bench_worker

# Real float64 data: the JPL DE421 ephemeris coefficients, from the PyPI package de421.
# Its only release (2008.1) is a source archive holding the coefficients as .npy arrays
# (float64, C order); their payloads, concatenated in name order, make de421.f64. Should
# the download ever be a wheel holding de421.bsp (an SPK/DAF file), the bytes from offset
# 8192 on (past the file record and comments) are taken instead.
if [ ! -s build/bench-data/de421.f64 ]; then
  if ! ls build/bench-data/de421-* >/dev/null 2>&1; then
    "$venv/bin/pip" download --quiet --disable-pip-version-check --no-deps -d build/bench-data de421==2008.1 >&2
  fi
  "$venv/bin/python" - build/bench-data <<'EOF'
import ast, glob, os, struct, sys, tarfile, zipfile
d = sys.argv[1]
pkg = sorted(glob.glob(os.path.join(d, "de421-*")))[0]
if zipfile.is_zipfile(pkg):
    z = zipfile.ZipFile(pkg)
    members = {n: (lambda n=n: z.read(n)) for n in z.namelist()}
else:
    t = tarfile.open(pkg)
    members = {m.name: (lambda m=m: t.extractfile(m).read()) for m in t.getmembers() if m.isfile()}
bsp = [n for n in members if n.endswith(".bsp")]
if bsp:
    raw = members[bsp[0]]()[8192:]
else:
    parts = []
    for n in sorted(n for n in members if os.path.basename(n).startswith("jpl-") and n.endswith(".npy")):
        b = members[n]()
        assert b[:6] == b"\x93NUMPY", n
        hlen, hstart = (struct.unpack("<H", b[8:10])[0], 10) if b[6] == 1 else (struct.unpack("<I", b[8:12])[0], 12)
        header = ast.literal_eval(b[hstart:hstart + hlen].decode("latin1"))
        assert header["descr"] == "<f8" and not header["fortran_order"], (n, header)
        parts.append(b[hstart + hlen:])
    raw = b"".join(parts)
raw = raw[: len(raw) // 8 * 8]
assert raw, "no DE421 data found in " + pkg
with open(os.path.join(d, "de421.f64.tmp"), "wb") as f:
    f.write(raw)
os.replace(os.path.join(d, "de421.f64.tmp"), os.path.join(d, "de421.f64"))
print(f"de421.f64: {len(raw)} bytes from {os.path.basename(pkg)}", file=sys.stderr)
EOF
fi

if [[ ${1:-} == --prepare-only ]]; then
  echo "$ref/lib/libblosc2.so"
  exit 0
fi
exec "$venv/bin/python" scripts/bench.py --ours "$PWD/target/release/libb2nd_capi.so" --ref "$ref/lib/libblosc2.so" \
  --worker build/bench_worker --data build/bench-data --rainfall tests/data/raw/rainfall-grid-150x150.bin "$@"
