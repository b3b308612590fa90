#!/usr/bin/env python3
"""Frames written by python-blosc2 (a real client of c-blosc2 3.3.5), for `xframes pyverify`.

    pywrite.py DIR

writes super-chunks and NDArrays with python-blosc2's high-level API into DIR, plus
DIR/manifest.json describing what each frame must contain. The expected chunk contents
are computed here from the data handed to python-blosc2 (not read back from it); the
expected metalayer and vlmetalayer bytes are the msgpack encodings of the values given
(the b2nd metalayer is encoded by hand from the b2nd format). Every expectation is also
checked against python-blosc2's own view of the frame before the manifest is written, so
a wrong expectation fails here and not later.

Manifest schema (shared with `xframes write`, read by `xframes pyverify` and pycheck.py):
  {"version": 1, "writer": "pywrite", "frames": [ {
     "name", "path" (relative to DIR), "storage": "cframe"|"sframe"|"buffer"|"offset",
     "offset", "nchunks", "nbytes", "typesize", "chunksize", "cbytes" (python's view),
     "meta_order": [names], "meta": {name: hex}, "vlmeta_order": [names], "vlmeta": {name: hex},
     "slice": hex FNV-1a 64 of all chunks' contents or null,
     "chunks": [ {"nbytes", "hash": hex FNV-1a 64 of the decompressed chunk or null,
                  "special" (python's view), "cbytes" (python's view)} ] } ] }
"""
import json
import math
import os
import shutil
import sys

import blosc2
import msgpack
import numpy as np

FAILURES = []


def fnv1a(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def expect(cond, what):
    if not cond:
        FAILURES.append(what)
        print("  self-check failed:", what, file=sys.stderr)


def data(kind, n, dtype, seed):
    """Deterministic test arrays."""
    rng = np.random.default_rng(seed)
    if kind == "seq":
        a = np.arange(seed * 1000, seed * 1000 + n)
    elif kind == "smooth":
        a = np.round(np.sin(np.arange(n) / 50.0) * 1000 + seed)
    elif kind == "random":
        a = rng.integers(0, 1 << 15, n)
    else:  # sparse
        a = (rng.integers(0, 97, n) == 0).astype(np.int64) * seed
    return np.ascontiguousarray(a.astype(dtype))


class Frame:
    """What one frame must contain: chunk contents, metalayers and vlmetalayers."""

    def __init__(self, name, path, storage, typesize, offset=0):
        self.name, self.path, self.storage, self.typesize, self.offset = name, path, storage, typesize, offset
        self.chunks = []  # bytes per logical chunk
        self.meta = {}  # name -> raw bytes, insertion order
        self.vlmeta = {}

    def entry(self, sc):
        """Manifest entry; checks python-blosc2's view (sc) against the expectations."""
        n = self.name
        expect(sc.nchunks == len(self.chunks), f"{n}: nchunks {sc.nchunks} != {len(self.chunks)}")
        nbytes = sum(len(c) for c in self.chunks)
        expect(sc.nbytes == nbytes, f"{n}: nbytes {sc.nbytes} != {nbytes}")
        expect(sc.typesize == self.typesize, f"{n}: typesize {sc.typesize}")
        chunks = []
        for i, c in enumerate(self.chunks):
            got = sc.decompress_chunk(i)
            expect(got == c, f"{n}: chunk {i} content differs from the data given")
            raw = sc.get_chunk(i)
            chunks.append({"nbytes": len(c), "hash": fnv1a(c), "special": (raw[31] >> 4) & 7,
                           "cbytes": len(raw)})
        expect(list(sc.meta.keys()) == list(self.meta), f"{n}: metalayers {list(sc.meta.keys())}")
        for k, v in self.meta.items():
            expect(blosc2.blosc2_ext.meta__getitem__(sc, k) == v, f"{n}: metalayer {k} bytes")
        expect(list(sc.vlmeta) == list(self.vlmeta), f"{n}: vlmetalayers {list(sc.vlmeta)}")
        for k, v in self.vlmeta.items():
            expect(sc.vlmeta.get_vlmeta(k) == v, f"{n}: vlmetalayer {k} bytes")
        whole = b"".join(self.chunks)
        slice_hash = None
        if sc.chunksize > 0 and nbytes > 0:
            slice_hash = fnv1a(whole)
            expect(sc.get_slice(0, nbytes // self.typesize) == whole, f"{n}: get_slice")
        return {
            "name": n, "path": self.path, "storage": self.storage, "offset": self.offset,
            "nchunks": len(self.chunks), "nbytes": nbytes, "typesize": self.typesize,
            "chunksize": sc.chunksize, "cbytes": sc.cbytes,
            "meta_order": list(self.meta), "meta": {k: v.hex() for k, v in self.meta.items()},
            "vlmeta_order": list(self.vlmeta), "vlmeta": {k: v.hex() for k, v in self.vlmeta.items()},
            "slice": slice_hash, "chunks": chunks,
        }


def remove(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)


def set_vlmeta(sc, fr, key, value):
    sc.vlmeta[key] = value
    fr.vlmeta[key] = msgpack.packb(value)


def del_vlmeta(sc, fr, key):
    del sc.vlmeta[key]
    del fr.vlmeta[key]


def schunk_frames(d, out):
    # 1. contiguous file, ZSTD, typesize 4, a metalayer, every kind of mutation
    rel = "py_schunk_zstd.b2frame"
    remove(os.path.join(d, rel))
    fr = Frame("py_schunk_zstd", rel, "cframe", 4)
    meta = {"pm": b"\x01\x02\x03\x04\x05\x06\x07\x08"}
    sc = blosc2.SChunk(chunksize=4000, urlpath=os.path.join(d, rel), contiguous=True, mode="w",
                       cparams=blosc2.CParams(codec=blosc2.Codec.ZSTD, clevel=5, typesize=4, nthreads=1),
                       dparams=blosc2.DParams(nthreads=1), meta=meta)
    fr.meta["pm"] = msgpack.packb(meta["pm"])
    kinds = ["seq", "smooth", "random", "sparse", "seq"]
    for i, k in enumerate(kinds):
        a = data(k, 1000, np.int32, i + 1)
        sc.append_data(a)
        fr.chunks.append(a.tobytes())
    a = data("smooth", 1000, np.int32, 7)
    sc.insert_data(1, a, copy=True)
    fr.chunks.insert(1, a.tobytes())
    a = data("random", 1000, np.int32, 8)
    sc.update_data(3, a, copy=True)
    fr.chunks[3] = a.tobytes()
    a = np.zeros(1000, np.int32)
    sc.update_data(4, a, copy=True)  # becomes a special zeros chunk
    fr.chunks[4] = a.tobytes()
    sc.delete_chunk(0)
    del fr.chunks[0]
    set_vlmeta(sc, fr, "info", {"author": "pywrite", "n": 3})
    set_vlmeta(sc, fr, "list", [1, 2.5, "three"])
    set_vlmeta(sc, fr, "info", "updated")
    set_vlmeta(sc, fr, "bytes", b"\x00\xff" * 40)
    del_vlmeta(sc, fr, "list")
    out.append(fr.entry(sc))
    del sc

    # 2. sparse directory, LZ4, typesize 8, reopened and mutated again
    rel = "py_schunk_lz4_sparse.b2sframe"
    remove(os.path.join(d, rel))
    fr = Frame("py_schunk_lz4_sparse", rel, "sframe", 8)
    sc = blosc2.SChunk(chunksize=8000, urlpath=os.path.join(d, rel), contiguous=False, mode="w",
                       cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, typesize=8, nthreads=1),
                       dparams=blosc2.DParams(nthreads=1))
    for i, k in enumerate(["seq", "random", "smooth", "sparse"]):
        a = data(k, 1000, np.float64, i + 11)
        sc.append_data(a)
        fr.chunks.append(a.tobytes())
    set_vlmeta(sc, fr, "attrs", {"unit": "m", "scale": 0.5})
    del sc
    sc = blosc2.open(os.path.join(d, rel), mode="a")
    a = data("seq", 1000, np.float64, 20)
    sc.update_data(1, a, copy=True)
    fr.chunks[1] = a.tobytes()
    sc.delete_chunk(2)
    del fr.chunks[2]
    a = data("smooth", 500, np.float64, 21)
    sc.append_data(a)  # a shorter last chunk
    fr.chunks.append(a.tobytes())
    out.append(fr.entry(sc))
    del sc

    # 3. contiguous file, BloscLZ, typesize 2, default-ish parameters, reordered
    rel = "py_schunk_blosclz.b2frame"
    remove(os.path.join(d, rel))
    fr = Frame("py_schunk_blosclz", rel, "cframe", 2)
    sc = blosc2.SChunk(chunksize=6000, urlpath=os.path.join(d, rel), contiguous=True, mode="w",
                       cparams=blosc2.CParams(codec=blosc2.Codec.BLOSCLZ, clevel=5, typesize=2, nthreads=1),
                       dparams=blosc2.DParams(nthreads=1))
    for i in range(4):
        a = data(["seq", "smooth", "random", "sparse"][i], 3000, np.int16, i + 30)
        sc.append_data(a)
        fr.chunks.append(a.tobytes())
    sc.reorder_offsets([2, 0, 3, 1])
    fr.chunks = [fr.chunks[i] for i in [2, 0, 3, 1]]
    out.append(fr.entry(sc))
    del sc

    # 4. in-memory super-chunk serialized with to_cframe() and written to a file
    rel = "py_cframe_mem.b2frame"
    remove(os.path.join(d, rel))
    fr = Frame("py_cframe_mem", rel, "buffer", 4)
    sc = blosc2.SChunk(chunksize=4000, cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, typesize=4,
                                                              nthreads=1),
                       dparams=blosc2.DParams(nthreads=1), meta={"m": 7})
    fr.meta["m"] = msgpack.packb(7)
    for i, k in enumerate(["seq", "random", "smooth"]):
        a = data(k, 1000, np.float32, i + 40)
        sc.append_data(a)
        fr.chunks.append(a.tobytes())
    set_vlmeta(sc, fr, "desc", "an in-memory frame")
    cframe = sc.to_cframe()
    with open(os.path.join(d, rel), "wb") as f:
        f.write(cframe)
    out.append(fr.entry(blosc2.schunk_from_cframe(cframe, copy=False)))

    # 5. the same frame bytes at an offset inside a larger file
    rel = "py_cframe_offset.bin"
    fr.name, fr.path, fr.storage, fr.offset = "py_cframe_offset", rel, "offset", 500
    with open(os.path.join(d, rel), "wb") as f:
        f.write(bytes((i * 13) & 0xFF for i in range(500)))
        f.write(cframe)
    out.append(fr.entry(blosc2.open(os.path.join(d, rel), offset=500)))
    del sc


def b2nd_meta(shape, chunks, blocks, dtype):
    """The b2nd metalayer, from the b2nd format: msgpack [version 0, ndim, shape (int64),
    chunkshape (int32), blockshape (int32), dtype format 0 (numpy), dtype string (str32)]."""
    out = bytearray([0x97, 0x00, len(shape)])
    for arr, marker, width in ((shape, 0xD3, 8), (chunks, 0xD2, 4), (blocks, 0xD2, 4)):
        out.append(0x90 | len(arr))
        for v in arr:
            out.append(marker)
            out += int(v).to_bytes(width, "big", signed=True)
    out.append(0x00)
    s = np.dtype(dtype).str.encode()
    out.append(0xDB)
    out += len(s).to_bytes(4, "big")
    out += s
    return bytes(out)


def b2nd_chunks(a, chunks, blocks):
    """The contents of an NDArray's chunks: for every chunk (C order over the chunk grid) the
    chunk's region padded with zeros to the chunk shape, then cut into blocks (C order over
    the block grid of the chunk shape rounded up to whole blocks), each block's items in C
    order."""
    shape = a.shape
    grid = [math.ceil(s / c) for s, c in zip(shape, chunks)]
    ext = [math.ceil(c / b) * b for c, b in zip(chunks, blocks)]
    out = []
    for cidx in np.ndindex(*grid):
        region = tuple(slice(i * c, min((i + 1) * c, s)) for i, c, s in zip(cidx, chunks, shape))
        padded = np.zeros(ext, dtype=a.dtype)
        padded[tuple(slice(0, r.stop - r.start) for r in region)] = a[region]
        parts = []
        for bidx in np.ndindex(*[e // b for e, b in zip(ext, blocks)]):
            blk = padded[tuple(slice(i * b, (i + 1) * b) for i, b in zip(bidx, blocks))]
            parts.append(np.ascontiguousarray(blk).tobytes())
        out.append(b"".join(parts))
    return out


def ndarray_frames(d, out):
    cases = [
        # name, shape, dtype, chunks, blocks, contiguous, codec
        ("py_nd_f8", (40, 50), np.float64, (20, 25), (10, 25), True, blosc2.Codec.ZSTD),
        ("py_nd_i2_edges", (30, 17, 9), np.int16, (16, 8, 8), (8, 4, 4), True, blosc2.Codec.LZ4),
        ("py_nd_u1", (5000,), np.uint8, (1200,), (300,), True, blosc2.Codec.BLOSCLZ),
        ("py_nd_f4_sparse", (64, 64), np.float32, (32, 32), (16, 16), False, blosc2.Codec.ZSTD),
        ("py_nd_c16", (10, 10), np.complex128, (5, 10), (5, 5), True, blosc2.Codec.LZ4),
    ]
    for name, shape, dtype, chunks, blocks, contiguous, codec in cases:
        rel = name + ".b2nd"
        remove(os.path.join(d, rel))
        n = int(np.prod(shape))
        base = np.arange(n, dtype=np.float64).reshape(shape)
        if np.dtype(dtype).kind == "c":
            a = (np.sin(base / 7) + 1j * np.cos(base / 3)).astype(dtype)
        elif np.dtype(dtype).kind == "f":
            a = np.sin(base / 10).astype(dtype)
        else:
            a = (base % np.iinfo(dtype).max).astype(dtype)
        arr = blosc2.asarray(a, chunks=chunks, blocks=blocks, urlpath=os.path.join(d, rel), mode="w",
                             contiguous=contiguous,
                             cparams=blosc2.CParams(codec=codec, clevel=5, nthreads=1))
        arr.schunk.vlmeta["note"] = f"array {name}"
        fr = Frame(name, rel, "cframe" if contiguous else "sframe", np.dtype(dtype).itemsize)
        fr.chunks = b2nd_chunks(a, chunks, blocks)
        fr.meta["b2nd"] = b2nd_meta(shape, chunks, blocks, dtype)
        fr.vlmeta["note"] = msgpack.packb(f"array {name}")
        expect(np.array_equal(arr[...], a), f"{name}: array content")
        del arr
        reopened = blosc2.open(os.path.join(d, rel))  # keep the NDArray alive while its schunk is used
        out.append(fr.entry(reopened.schunk))
        del reopened

    # zeros (special chunks), then one region written
    name, rel = "py_nd_zeros_i4", "py_nd_zeros_i4.b2nd"
    remove(os.path.join(d, rel))
    shape, chunks, blocks = (100, 100), (50, 50), (25, 25)
    arr = blosc2.zeros(shape, dtype=np.int32, chunks=chunks, blocks=blocks, urlpath=os.path.join(d, rel),
                       mode="w", cparams=blosc2.CParams(codec=blosc2.Codec.LZ4, clevel=5, nthreads=1))
    arr[10:20, 60:90] = 7
    a = np.zeros(shape, np.int32)
    a[10:20, 60:90] = 7
    fr = Frame(name, rel, "cframe", 4)
    fr.chunks = b2nd_chunks(a, chunks, blocks)
    fr.meta["b2nd"] = b2nd_meta(shape, chunks, blocks, np.int32)
    del arr
    reopened = blosc2.open(os.path.join(d, rel))
    out.append(fr.entry(reopened.schunk))


def main():
    if len(sys.argv) != 2:
        print("usage: pywrite.py DIR", file=sys.stderr)
        return 2
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    blosc2.set_nthreads(1)
    frames = []
    schunk_frames(d, frames)
    ndarray_frames(d, frames)
    with open(os.path.join(d, "manifest.json"), "w") as f:
        json.dump({"version": 1, "writer": "pywrite", "library": blosc2.__version__,
                   "c_library": blosc2.VERSION_STRING, "frames": frames}, f, indent=1)
    for fr in frames:
        print(f"pywrite {fr['name']:<28} {fr['nchunks']} chunks")
    if FAILURES:
        print(f"pywrite: {len(FAILURES)} self-checks failed", file=sys.stderr)
        return 1
    print(f"pywrite: {len(frames)} frames written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
