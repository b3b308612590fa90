"""python-blosc2 reads the b2nd array test_b2nd wrote: shape, dtype and every value."""
import sys

import blosc2
import numpy as np

a = blosc2.open(sys.argv[1])
x = a[:]
i, j, k = np.indices((13, 7, 29))
ok = a.shape == (13, 7, 29) and a.chunks == (5, 4, 10) and a.blocks == (2, 3, 4) and x.dtype == np.int32
ok = ok and bool((x == i * 10000 + j * 100 + k).all()) and "user" in a.schunk.meta
print("b2nd_check:", "ok" if ok else "FAILED", a.shape, a.chunks, a.blocks, x.dtype)
sys.exit(0 if ok else 1)
