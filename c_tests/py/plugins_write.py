"""python-blosc2 (the reference wheel) writes b2nd arrays with each plugin filter and codec
c-blosc2 registers at start (bytedelta, int_trunc, ndcell, ndmean, ndlz, zfp's three modes),
1 to 4 dimensions, shapes that are not multiples of the chunks or blocks, and beside each
the values it reads back itself (`<name>.values`); `list.txt` names them for
`xnd_ours checkdir` (libb2nd must read the same values)."""
import os
import sys

import blosc2
import numpy as np

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
rng = np.random.default_rng(7)
F = blosc2.Filter
C = blosc2.Codec


def smooth(shape, dtype):
    grids = np.meshgrid(*[np.arange(n) for n in shape], indexing="ij")
    x = sum(np.sin(0.09 * (k + 1) * g) * (5.0 / (k + 1)) for k, g in enumerate(grids))
    return x.astype(dtype)


def params(codec=C.ZSTD, codec_meta=0, filters=(), filters_meta=(), split=None, nthreads=1):
    fl = [F.NOFILTER] * (6 - len(filters)) + list(filters)
    fm = [0] * (6 - len(filters_meta)) + list(filters_meta)
    kw = {"codec": codec, "codec_meta": codec_meta, "filters": fl, "filters_meta": fm, "nthreads": nthreads}
    if split is not None:
        kw["splitmode"] = split
    return blosc2.CParams(**kw)


cases = []
for nt in (1, 2):
    for dt, ts in (("f4", 4), ("f8", 8), ("i2", 2)):
        cases.append((f"bytedelta-{dt}-t{nt}", smooth((300, 70), dt), (128, 40), (32, 16),
                      params(C.LZ4, 0, (F.SHUFFLE, F.BYTEDELTA), (0, ts), nthreads=nt)))
    cases.append((f"inttrunc-i4-t{nt}", (smooth((50, 60, 7), "f8") * 1000).astype("i4"), (20, 25, 7), (10, 5, 7),
                  params(C.ZSTD, 0, (F.INT_TRUNC, F.SHUFFLE), (20, 0), nthreads=nt)))
    for nd, shape, chunks, blocks in (
        (1, (1000,), (300,), (70,)),
        (2, (100, 90), (40, 33), (16, 16)),
        (3, (30, 20, 25), (12, 10, 9), (6, 5, 8)),
        (4, (10, 9, 8, 7), (5, 5, 4, 4), (4, 4, 2, 3)),
    ):
        cases.append((f"ndcell-{nd}d-t{nt}", smooth(shape, "f8"), chunks, blocks,
                      params(C.LZ4, 0, (F.NDCELL, F.SHUFFLE), (2, 0), nthreads=nt)))
        cases.append((f"ndmean-{nd}d-t{nt}", smooth(shape, "f4"), chunks, blocks,
                      params(C.ZSTD, 0, (F.NDMEAN, F.SHUFFLE), (2, 0), nthreads=nt)))
    for nd, shape, chunks, blocks in (
        (1, (1000,), (300,), (70,)),
        (2, (100, 90), (40, 33), (16, 16)),
        (3, (30, 20, 25), (12, 10, 9), (6, 5, 8)),
        (4, (10, 9, 8, 7), (5, 5, 4, 4), (4, 4, 4, 4)),
    ):
        for codec, meta in ((C.ZFP_ACC, (-3) & 0xFF), (C.ZFP_PREC, 10), (C.ZFP_RATE, 30)):
            for dt in ("f4", "f8"):
                cases.append((f"{codec.name.lower()}-{nd}d-{dt}-t{nt}", smooth(shape, dt), chunks, blocks,
                              params(codec, meta, nthreads=nt)))
    for meta in (4, 8):
        img = ((np.arange(120 * 100).reshape(120, 100) // 100 // 8 * 3 + np.arange(100) // 8) % 256).astype("u1")
        cases.append((f"ndlz{meta}-u1-t{nt}", img, (60, 50), (24, 32), params(C.NDLZ, meta, nthreads=nt)))
        cases.append((f"ndlz{meta}-u2-t{nt}", img.astype("u2") * 3, (60, 50), (24, 32),
                      params(C.NDLZ, meta, split=blosc2.SplitMode.ALWAYS_SPLIT, nthreads=nt)))

with open(os.path.join(out, "list.txt"), "w") as lst:
    for name, arr, chunks, blocks, cp in cases:
        path = os.path.join(out, name + ".b2nd")
        vals = os.path.join(out, name + ".values")
        for p in (path, vals):
            if os.path.exists(p):
                os.remove(p)
        a = blosc2.asarray(arr, urlpath=path, mode="w", chunks=chunks, blocks=blocks, cparams=cp)
        try:
            back = a[...]
        except Exception:  # noqa: BLE001  (its writer cannot read it back: neither may we)
            back = None
        if back is not None:
            np.ascontiguousarray(back).tofile(vals)
        lst.write(name + "\n")
print("plugins_write: wrote", len(cases), "arrays to", out)
