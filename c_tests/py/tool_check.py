"""The `b2nd` tool against python-blosc2's own reports: for every .b2nd array in the
given directories, `b2nd info --json` must give the shape, chunks, blocks, dtype,
typesize, codec, sizes and chunk count python-blosc2 gives, `b2nd verify` must pass,
and `b2nd dump` of small numeric arrays must print NumPy's values.
usage: tool_check.py B2ND_EXE DIR..."""
import glob
import json
import os
import subprocess
import sys

import blosc2
import numpy as np

exe, dirs = sys.argv[1], sys.argv[2:]
bad = n = 0


def fail(path, what):
    global bad
    bad += 1
    print(f"{os.path.basename(path)}: {what}")


for d in dirs:
    for path in sorted(glob.glob(os.path.join(d, "*.b2nd"))):
        n += 1
        a = blosc2.open(path)
        info = json.loads(subprocess.run([exe, "info", "--json", path], capture_output=True, text=True, check=True).stdout)
        b = info.get("b2nd", {})
        want = {
            "shape": list(a.shape), "chunkshape": list(a.chunks), "blockshape": list(a.blocks),
        }
        for k, v in want.items():
            if b.get(k) != v:
                fail(path, f"{k} {b.get(k)} != {v}")
        if np.dtype(b.get("dtype", "|u1")) != a.dtype:
            fail(path, f"dtype {b.get('dtype')} != {a.dtype}")
        sc = a.schunk
        for k, v in (("nbytes", sc.nbytes), ("cbytes", sc.cbytes), ("nchunks", sc.nchunks), ("typesize", sc.typesize)):
            if info[k] != v:
                fail(path, f"{k} {info[k]} != {v}")
        if info["codec"] != sc.cparams.codec.name.lower():
            fail(path, f"codec {info['codec']} != {sc.cparams.codec.name.lower()}")
        names = [f["name"] for f in info["filters"]]
        py = [f.name.lower() for f in sc.cparams.filters if f != blosc2.Filter.NOFILTER]
        if names != py:
            fail(path, f"filters {names} != {py}")
        r = subprocess.run([exe, "verify", path], capture_output=True, text=True, check=False)
        # an array its writer cannot read back fails verify for the same reason
        readable = os.path.exists(path[:-5] + ".values") if glob.glob(os.path.join(d, "*.values")) else True
        if (r.returncode == 0) != readable:
            fail(path, f"verify exit {r.returncode}: {r.stdout.strip()[-200:]}")
        if readable and a.size <= 1000 and a.dtype.kind in "iuf":
            out = subprocess.run([exe, "dump", path], capture_output=True, text=True, check=True).stdout
            ref = np.array2string(a[...], separator=", ", threshold=1000, max_line_width=10**9)
            if "".join(out.split()) != "".join(ref.split()):
                fail(path, "dump differs from NumPy: " + "".join(out.split())[:80] + " vs " + "".join(ref.split())[:80])
print(f"tool_check: {n} arrays, {bad} problems")
sys.exit(1 if bad or n == 0 else 0)
