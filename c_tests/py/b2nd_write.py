"""python-blosc2 writes b2nd arrays of several dtypes and shapes (with padded edge
chunks), each with its items as raw C-order bytes beside it, and a list for
`test_b2nd pycheck` to read them back through the b2nd C API."""
import os
import sys

import blosc2
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(1234)
cases = [
    ("f8_2d", rng.standard_normal((37, 23)), (10, 7), (4, 3)),
    ("i2_3d", np.arange(11 * 13 * 17, dtype=np.int16).reshape(11, 13, 17), (4, 5, 6), (2, 5, 3)),
    ("u1_1d", (np.arange(1000) % 251).astype(np.uint8), (300,), (64,)),
    ("f4_4d", rng.random((5, 6, 7, 8), dtype=np.float32), (2, 3, 4, 5), (1, 3, 2, 5)),
    ("c16_2d", (rng.random((9, 10)) + 1j * rng.random((9, 10))).astype(np.complex128), (4, 4), (2, 2)),
]
with open(os.path.join(out, "list.txt"), "w") as lst:
    for name, arr, chunks, blocks in cases:
        path = os.path.join(out, name + ".b2nd")
        if os.path.exists(path):
            os.remove(path)
        a = blosc2.asarray(arr, urlpath=path, mode="w", chunks=chunks, blocks=blocks)
        assert np.array_equal(a[...], arr)
        arr.tofile(os.path.join(out, name + ".bin"))
        lst.write(f"{name} {arr.itemsize} {arr.ndim} {' '.join(map(str, arr.shape))}\n")
print("b2nd_write: wrote", len(cases), "arrays to", out)
