#!/usr/bin/env python3
"""Read the frames `xframes write` made with python-blosc2 and check them against the manifest.

    pycheck.py DIR MANIFEST

MANIFEST is the manifest.json `xframes write` leaves in DIR (schema in pywrite.py); its
expected values come from xframes' scenario model, not from the library that wrote the
frames. For every frame: open it the way its storage says (blosc2.open for files and sparse
directories, blosc2.open(offset=...) for frames inside a file, and for the "buffer" frames
both blosc2.open and blosc2.schunk_from_cframe), then compare nchunks, nbytes, cbytes,
typesize, chunksize, metalayer names and raw bytes, vlmetalayer names and raw bytes (and
that python-blosc2 can decode them), every chunk's nbytes, cbytes, special type and the
FNV-1a 64 hash of its decompressed bytes, and the whole-frame get_slice hash.
"""
import json
import os
import sys

import blosc2
import msgpack

FAILED = 0
CHECKS = 0


def fnv1a(data: bytes) -> str:
    h = 0xCBF29CE484222325
    for b in data:
        h ^= b
        h = (h * 0x100000001B3) & 0xFFFFFFFFFFFFFFFF
    return f"{h:016x}"


def check(cond, label, what):
    global FAILED, CHECKS
    CHECKS += 1
    if not cond:
        FAILED += 1
        print(f"  [{label}] {what}", file=sys.stderr)
    return cond


def verify(label, sc, fr, frame_backed=True):
    """Compare one opened super-chunk with its manifest entry; returns the number of failures."""
    before = FAILED
    check(sc.nchunks == fr["nchunks"], label, f"nchunks {sc.nchunks}, expected {fr['nchunks']}")
    check(sc.nbytes == fr["nbytes"], label, f"nbytes {sc.nbytes}, expected {fr['nbytes']}")
    check(sc.typesize == fr["typesize"], label, f"typesize {sc.typesize}, expected {fr['typesize']}")
    check(sc.chunksize == fr["chunksize"], label, f"chunksize {sc.chunksize}, expected {fr['chunksize']}")
    if frame_backed and "cbytes_at_least" in fr:
        # a frame libb2nd changed keeps holes: its chunks section is at least its chunks
        least = fr["cbytes_at_least"]
        check(sc.cbytes >= least, label, f"cbytes {sc.cbytes}, expected at least {least}")
    elif frame_backed:
        check(sc.cbytes == fr["cbytes"], label, f"cbytes {sc.cbytes}, expected {fr['cbytes']}")
    names = list(sc.meta.keys())
    check(names == fr["meta_order"], label, f"metalayers {names}, expected {fr['meta_order']}")
    for name in fr["meta_order"]:
        if name in names:
            raw = blosc2.blosc2_ext.meta__getitem__(sc, name)
            check(raw.hex() == fr["meta"][name], label, f"metalayer {name}: {raw.hex()}, expected {fr['meta'][name]}")
    vnames = list(sc.vlmeta)
    check(vnames == fr["vlmeta_order"], label, f"vlmetalayers {vnames}, expected {fr['vlmeta_order']}")
    for name in fr["vlmeta_order"]:
        if name in vnames:
            raw = sc.vlmeta.get_vlmeta(name)
            check(raw.hex() == fr["vlmeta"][name], label,
                  f"vlmetalayer {name}: {raw.hex()}, expected {fr['vlmeta'][name]}")
            # the public accessor decodes msgpack; the contents xframes writes are valid msgpack
            try:
                value = sc.vlmeta[name]
                check(value == msgpack.unpackb(raw), label, f"vlmeta[{name!r}] decodes to {value!r}")
            except Exception as exc:  # noqa: BLE001
                check(False, label, f"vlmeta[{name!r}] raised {exc!r}")
    for i, c in enumerate(fr["chunks"]):
        if i >= sc.nchunks:
            break
        raw = sc.get_chunk(i)
        special = (raw[31] >> 4) & 7
        check(special == c["special"], label, f"chunk {i}: special {special}, expected {c['special']}")
        check(len(raw) == c["cbytes"], label, f"chunk {i}: cbytes {len(raw)}, expected {c['cbytes']}")
        out = sc.decompress_chunk(i)
        check(len(out) == c["nbytes"], label, f"chunk {i}: nbytes {len(out)}, expected {c['nbytes']}")
        if c["hash"] is not None:
            h = fnv1a(out)
            check(h == c["hash"], label, f"chunk {i}: hash {h}, expected {c['hash']}")
    if fr.get("slice") is not None:
        whole = sc.get_slice(0, sc.nbytes // sc.typesize)
        h = fnv1a(bytes(whole))
        check(h == fr["slice"], label, f"get_slice hash {h}, expected {fr['slice']}")
    return FAILED - before


def main():
    if len(sys.argv) != 3:
        print("usage: pycheck.py DIR MANIFEST", file=sys.stderr)
        return 2
    d, mpath = sys.argv[1], sys.argv[2]
    with open(mpath) as f:
        manifest = json.load(f)
    blosc2.set_nthreads(1)
    frames = manifest["frames"]
    check(len(frames) > 0, "manifest", "no frames")
    for fr in frames:
        path = os.path.join(d, fr["path"])
        bad = 0
        try:
            if fr["storage"] == "offset":
                bad += verify(fr["name"], blosc2.open(path, mode="r", offset=fr["offset"]), fr)
            elif fr["storage"] == "buffer":
                bad += verify(fr["name"], blosc2.open(path, mode="r"), fr)
                with open(path, "rb") as f:
                    cframe = f.read()
                bad += verify(fr["name"] + " (schunk_from_cframe)", blosc2.schunk_from_cframe(cframe, copy=False), fr)
            else:
                bad += verify(fr["name"], blosc2.open(path, mode="r"), fr)
        except Exception as exc:  # noqa: BLE001
            check(False, fr["name"], f"raised {exc!r}")
            bad += 1
        print(f"pycheck {fr['name']:<28} {'ok' if bad == 0 else 'FAILED'}")
    print(f"pycheck: {CHECKS} checks, {FAILED} failed")
    return 0 if FAILED == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
