#!/usr/bin/env python3
"""Read a set of cross files (tests/cross_files.rs) with python-blosc2.

Usage: cross_check.py DIR [DIR ...]. Each DIR holds manifest.txt, the frames
and arrays it names and the bytes each must read back to, and byteorder.txt
(the writer's: zfp files are skipped across byte orders). Prints one line per
set, "N read back, N failed, N skipped", and exits 1 if any file failed.
"""
import sys
from pathlib import Path

import blosc2
import numpy as np


def read(kind, path):
    obj = blosc2.open(str(path), mode="r")
    if kind in ("b2nd", "b2nd-sparse"):
        return np.ascontiguousarray(obj[...]).tobytes()
    return b"".join(obj.decompress_chunk(i) for i in range(obj.nchunks))


def check(folder):
    folder = Path(folder)
    ok, failed, skipped = 0, 0, 0
    writer = (folder / "byteorder.txt").read_text().strip()
    for line in (folder / "manifest.txt").read_text().splitlines():
        kind, name, expected = line.split()
        if name.startswith("zfp-") and writer != sys.byteorder:
            skipped += 1  # zfp streams are words in the writer's byte order
            continue
        want = (folder / expected).read_bytes()
        try:
            got = read(kind, folder / name)
        except Exception as e:  # noqa: BLE001  (a file python-blosc2 cannot open is a failure, not a crash)
            print(f"{folder.name}/{name}: {type(e).__name__}: {e}")
            failed += 1
            continue
        if got != want:
            print(f"{folder.name}/{name}: {len(got)} bytes read, {len(want)} expected, contents differ")
            failed += 1
        else:
            ok += 1
    print(f"python-blosc2 {blosc2.__version__} on {folder}: {ok} read back, {failed} failed, {skipped} skipped")
    return failed


if __name__ == "__main__":
    sys.exit(1 if sum(check(d) for d in sys.argv[1:]) else 0)
