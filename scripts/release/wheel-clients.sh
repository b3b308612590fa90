#!/usr/bin/env bash
# The libb2nd wheel as its users take it (docs/CLIENTS.md, "From the libb2nd wheel"): in a
# fresh venv, python-blosc2 built from its sdist against the wheel by one pip command, its test
# subset; then hdf5plugin, built against it the same way in the same venv, and its tests.
# Nothing sets LD_LIBRARY_PATH: the wheel's pkg-config files give the run path.
#
#   scripts/release/wheel-clients.sh dist/libb2nd-VERSION-py3-none-manylinux_2_17_x86_64...whl
#
# PYBLOSC2_TESTS  the python-blosc2 test files (default below); PYBLOSC2_*_SRC as for
# scripts/python-blosc2-tests.sh (offline build). Prints one "N passed, N failed, N skipped"
# per client and exits non-zero when one failed.
set -uo pipefail
cd "$(dirname "$0")/../.." || exit 2
root=$PWD
wheel=$(readlink -f "${1:?usage: wheel-clients.sh WHEEL}")
read -r -a tests <<<"${PYBLOSC2_TESTS:-tests/test_schunk.py tests/test_compress2.py tests/test_open.py tests/test_mmap.py tests/ndarray/test_ndarray.py tests/ndarray/test_slice.py tests/ndarray/test_getitem.py tests/ndarray/test_resize.py tests/ndarray/test_persistency.py tests/ndarray/test_metalayers.py}"
rc=0

echo "== python-blosc2 4.14.1 on $(basename "$wheel")"
./scripts/python-blosc2-tests.sh --wheel "$wheel" "${tests[@]}" || rc=1

venv=$root/build/python-blosc2-tests/wheel-venv
work=$root/build/release/hdf5plugin
[ -x "$venv/bin/python" ] || { echo "no venv $venv: the python-blosc2 build failed" >&2; exit 2; }
rm -rf "$work" && mkdir -p "$work"
echo "== hdf5plugin 7.1.0 on the same venv (log: $work/build.log)"
# hdf5plugin reads pkg-config through the `pkgconfig` module, which its build requirements lack:
# it is installed beside the rest and the build runs without isolation. (--force-reinstall:
# python-blosc2's test dependencies brought hdf5plugin's PyPI wheel, c-blosc2 linked in.)
"$venv/bin/python" -m pip install --quiet 'setuptools>=77' wheel py-cpuinfo==9.0.0 pkgconfig h5py || exit 2
(unset LD_LIBRARY_PATH
 HDF5PLUGIN_SYSTEM_LIBRARIES=blosc2 HDF5PLUGIN_STRIP=bshuf,blosc,bzip2,fcidecomp,htj2k,lz4,sperr,sz,sz3,zfp,zstd \
   PKG_CONFIG_PATH="$("$venv/bin/python" -m libb2nd --pkgconfig-dir)" \
   "$venv/bin/python" -m pip install -v --no-build-isolation --no-binary hdf5plugin --force-reinstall --no-deps hdf5plugin==7.1.0) >"$work/build.log" 2>&1 \
  || { tail -20 "$work/build.log" >&2; exit 2; }
unset LD_LIBRARY_PATH
libdir=$("$venv/bin/python" -m libb2nd --libdir)
plugin=$("$venv/bin/python" -c 'import hdf5plugin, os; print(os.path.join(hdf5plugin.PLUGIN_PATH, "libh5blosc2.so"))')
resolved=$(ldd "$plugin" | awk '/libb2nd|libblosc2/ {print $3}')
[[ $resolved == "$libdir"/* ]] || { echo "$plugin does not load libb2nd from the wheel: ${resolved:-not linked}" >&2; exit 2; }
echo "  $(basename "$plugin") -> $resolved (no LD_LIBRARY_PATH)"
cd "$work" || exit 2
"$venv/bin/python" - "$libdir" >"$work/test.log" 2>&1 <<'EOF'
import sys, unittest
import numpy as np, h5py, hdf5plugin, blosc2
with h5py.File("smoke.h5", "w") as f:
    a = np.arange(100_000, dtype="f4").reshape(100, 1000)
    f.create_dataset("d", data=a, chunks=(10, 1000), **hdf5plugin.Blosc2(cname="zstd", clevel=5))
with h5py.File("smoke.h5", "r") as f:
    assert (f["d"][...] == a).all()
maps = open("/proc/self/maps").read()
assert sys.argv[1] + "/libb2nd.so.0" in maps, "the wheel's libb2nd.so.0 is not mapped"
assert "libblosc2.so" not in maps, "a c-blosc2 library is mapped"
from hdf5plugin import test
res = unittest.TextTestRunner(verbosity=1).run(test.suite())
bad = len(res.failures) + len(res.errors)
skipped = len(res.skipped)
print("%d passed, %d failed, %d skipped" % (res.testsRun - bad - skipped, bad, skipped))
EOF
line=$(grep -E '^[0-9]+ passed, [0-9]+ failed, [0-9]+ skipped$' "$work/test.log" | tail -1)
[ -n "$line" ] || { tail -20 "$work/test.log"; exit 1; }
echo "hdf5plugin: $line"
[[ $line == *" 0 failed,"* ]] || rc=1
exit $rc
