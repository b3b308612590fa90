"""python-blosc2 (the reference wheel) reads the b2nd arrays a cross-compatibility program
wrote (`<name>.b2nd`, with the values its writer read back as `<name>.values`): the same
values, or a failure where the writer could not read its own array either."""
import glob
import os
import sys

import blosc2
import numpy as np

d = sys.argv[1]
bad = n = 0
for path in sorted(glob.glob(os.path.join(d, "*.b2nd"))):
    vals = path[:-5] + ".values"
    n += 1
    try:
        got = np.ascontiguousarray(blosc2.open(path)[...]).tobytes()
    except Exception as e:  # noqa: BLE001
        got = None
        err = e
    want = None
    if os.path.exists(vals):
        with open(vals, "rb") as f:
            want = f.read()
    if got != want:
        bad += 1
        print("differs:", os.path.basename(path), f"(read failed: {err})" if got is None else "")
print(f"plugins_check: {n} arrays, {bad} differ")
sys.exit(1 if bad or n == 0 else 0)
