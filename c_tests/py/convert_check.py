"""`b2nd convert` and `b2nd repack` against NumPy and python-blosc2, both ways:
- NumPy writes .npy files (every dtype python-blosc2 stores, C and Fortran order,
  0-d and empty arrays); the tool converts each to .b2nd; python-blosc2 reads the
  same values, with the chunks, blocks, codec, level and filters it would choose
  itself; the tool converts it back and the .npy is NumPy's, byte for byte.
- python-blosc2 writes arrays (with metalayers and vlmetalayers); the tool converts
  them to .npy, which NumPy loads with the same values, and repacks them with other
  parameters, which python-blosc2 reads with exactly those changed.
usage: convert_check.py B2ND_EXE WORKDIR"""
import os
import shutil
import subprocess
import sys

import blosc2
import numpy as np

exe, work = sys.argv[1], sys.argv[2]
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
bad = n = 0


def fail(name, what):
    global bad
    bad += 1
    print(f"{name}: {what}")


def read_bytes(path):
    with open(path, "rb") as f:
        return f.read()


def tool(*args):
    r = subprocess.run([exe, *args], capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError(f"b2nd {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


rng = np.random.default_rng(7)
DTYPES = [
    "<f8", "<f4", "<f2", ">f8", "|u1", "|i1", "<u2", ">i4", "<i8", "<u8", "|b1", "<c8", "<c16",
    "<U5", ">U3", "|S7", "|V6", "<M8[ns]", "<m8[s]",
    [("a", "<i4"), ("b", "<f8")],
    [("a", "<i2"), ("c", "<f4", (2, 3)), ("n", [("x", "u1"), ("y", ">u2")])],
    [(("the title", "t"), "<i4"), ("bé", "<f8")],
    np.dtype([("a", "u1"), ("b", "<f8")], align=True),
]
SHAPES = [(), (0,), (3, 0, 2), (1,), (1000,), (37, 29), (5, 6, 7), (40, 3, 5, 2)]


def values(dt, shape):
    raw = rng.integers(0, 8, size=int(np.prod(shape, dtype=np.int64)) * dt.itemsize, dtype=np.uint8)
    a = raw.view(dt).reshape(shape) if dt.itemsize else np.zeros(shape, dt)
    if dt.kind == "U" or dt.fields and any(f[0].kind == "U" for f in dt.fields.values()):
        a = np.full(shape, "ab" if dt.kind == "U" else 0, dtype=dt)
    return a


def equal(x, y):
    return x.dtype == y.dtype and x.shape == y.shape and x.tobytes() == y.tobytes()


def same_values(got, a):
    """The same items: byte for byte, field by field for structured dtypes (whose
    padding NumPy does not keep when it copies into another order)."""
    if got.shape != a.shape or got.dtype.itemsize != a.dtype.itemsize:
        return False
    if a.dtype.names:
        return all(np.ascontiguousarray(got[f]).tobytes() == np.ascontiguousarray(a[f]).tobytes() for f in a.dtype.names)
    return np.ascontiguousarray(got).tobytes() == np.ascontiguousarray(a).tobytes()


for i, d in enumerate(DTYPES):
    dt = np.dtype(d)
    for shape in SHAPES:
        for order in "CF":
            n += 1
            name = f"{dt.str if not dt.fields else 'struct'}{i}-{shape}-{order}"
            a = values(dt, shape)
            a = np.asfortranarray(a) if order == "F" else np.ascontiguousarray(a)
            src, arr, back = (os.path.join(work, f"{i}_{len(shape)}_{order}.{ext}") for ext in ("npy", "b2nd", "back.npy"))
            np.save(src, a)
            try:
                tool("convert", "--force", src, arr)
                b = blosc2.open(arr)
                got = b[()]
                if not same_values(got, a):
                    fail(name, "python-blosc2 reads other values")
                ref = blosc2.asarray(np.ascontiguousarray(a))
                if (b.chunks, b.blocks) != (ref.chunks, ref.blocks):
                    fail(name, f"chunks/blocks {b.chunks}/{b.blocks}, python-blosc2 chooses {ref.chunks}/{ref.blocks}")
                cp, rp = b.schunk.cparams, ref.schunk.cparams
                if (cp.codec, cp.clevel, list(cp.filters), list(cp.filters_meta)) != (rp.codec, rp.clevel, list(rp.filters), list(rp.filters_meta)):
                    fail(name, f"cparams {cp.codec} {cp.clevel} {cp.filters} {cp.filters_meta}, python-blosc2 {rp.codec} {rp.clevel} {rp.filters} {rp.filters_meta}")
                # NumPy writes Fortran order only for arrays that are not also C-contiguous
                stored = "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"
                tool("convert", "--force", "--order", stored, arr, back)
                if read_bytes(back) != read_bytes(src):
                    fail(name, ".npy round trip: not NumPy's bytes")
            except Exception as e:  # noqa: BLE001
                fail(name, str(e))

# python-blosc2's arrays to .npy and repacked
for i, (dt, shape, chunks, blocks) in enumerate([
    ("<f8", (300, 200), (100, 50), (20, 25)),
    ("<i4", (1000,), (128,), (16,)),
    ("|u1", (20, 30, 40), (10, 10, 10), (5, 5, 5)),
    ([("a", "<i4"), ("b", "<f8")], (500,), (64,), (16,)),
]):
    n += 1
    name = f"py{i}"
    a = values(np.dtype(dt), shape)
    src = os.path.join(work, f"py{i}.b2nd")
    b = blosc2.asarray(a, urlpath=src, mode="w", chunks=chunks, blocks=blocks)
    b.schunk.vlmeta["note"] = {"k": [1, 2]}
    del b
    try:
        out = os.path.join(work, f"py{i}.npy")
        tool("convert", "--force", src, out)
        if not equal(np.load(out), a):
            fail(name, "NumPy loads other values")
        rp = os.path.join(work, f"py{i}.repacked.b2nd")
        new_chunks = ",".join(str(max(1, c // 2)) for c in chunks)
        new_blocks = ",".join(str(max(1, bl // 2)) for bl in blocks)
        tool("repack", "--force", "--codec", "lz4hc", "--clevel", "7", "--filters", "bitshuffle", "--chunks", new_chunks, "--blocks", new_blocks, src, rp)
        r = blosc2.open(rp)
        cp = r.schunk.cparams
        if (r.chunks, r.blocks) != (tuple(max(1, c // 2) for c in chunks), tuple(max(1, bl // 2) for bl in blocks)):
            fail(name, f"repacked chunks/blocks {r.chunks}/{r.blocks}")
        if (cp.codec, cp.clevel, cp.filters[0]) != (blosc2.Codec.LZ4HC, 7, blosc2.Filter.BITSHUFFLE):
            fail(name, f"repacked cparams {cp.codec} {cp.clevel} {cp.filters}")
        if r.dtype != np.dtype(dt) or r.shape != shape or r[()].tobytes() != a.tobytes():
            fail(name, "repacked values differ")
        if r.schunk.vlmeta["note"] != {"k": [1, 2]}:
            fail(name, "vlmetalayer lost")
        # the same parameters again: sparse, every chunk copied as it is stored
        sp = os.path.join(work, f"py{i}.sparse.b2nd")
        tool("repack", "--force", "--sparse", src, sp)
        s = blosc2.open(sp)
        if s.schunk.contiguous or s[()].tobytes() != a.tobytes() or (s.chunks, s.blocks) != (chunks, blocks):
            fail(name, "sparse repack differs")
    except Exception as e:  # noqa: BLE001
        fail(name, str(e))

print(f"{n} passed, {bad} failed" if not bad else f"{n - bad} passed, {bad} failed")
sys.exit(1 if bad else 0)
