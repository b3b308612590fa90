"""python-blosc2 reads a frame one library wrote and the other changed (xforeign.c):
every chunk decompresses to what DST.expected holds."""
import struct
import sys

import blosc2

path = sys.argv[1]
with open(path + ".expected", "rb") as f:
    expected = f.read()
sc = blosc2.open(path)
at, i, ok = 0, 0, True
while at + 4 <= len(expected):
    (n,) = struct.unpack_from("<i", expected, at)
    at += 4
    ok = ok and i < sc.nchunks and sc.decompress_chunk(i) == expected[at:at + n]
    at += n
    i += 1
ok = ok and i == sc.nchunks
print("foreign_check:", "ok" if ok else "FAILED", path, sc.nchunks, "chunks")
sys.exit(0 if ok else 1)
