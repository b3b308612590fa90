"""python-blosc2 with the tuner (tuner=blosc2.Tuner.BTUNE, libb2nd's own tuner).

  tuner_check.py write DIR   (python-blosc2 built against libb2nd) compress with the
                             tuner: compress2, an SChunk frame, an NDArray; check that
                             the tuner ran (a tradeoff of 1 compresses at least as well
                             as python-blosc2's defaults) and that each reads back
  tuner_check.py check DIR   (any python-blosc2, c-blosc2's wheel included) read what
                             `write` wrote and compare with the data
"""

import os
import sys

import blosc2
import numpy as np


def data(n, seed=0):
    rng = np.random.default_rng(seed)
    i = np.arange(n, dtype=np.float64)
    return np.sin(i * 1e-3) * 1000 + rng.integers(0, 256, n) * 1e-9


def ramp(n):
    return (np.arange(n, dtype=np.int64) * 3 + (np.arange(n) * 7919 >> 5) % 4).astype(np.int64)


TUNED = {"tuner": blosc2.Tuner.BTUNE}


def write(d):
    a = data(1 << 19)
    c = blosc2.compress2(a, cparams=blosc2.CParams(typesize=8, **TUNED))
    assert np.array_equal(np.frombuffer(blosc2.decompress2(c), dtype=np.float64), a)
    with open(os.path.join(d, "compress2.chunk"), "wb") as f:
        f.write(c)

    path = os.path.join(d, "schunk.b2frame")
    blosc2.remove_urlpath(path)
    r = ramp(1 << 20)
    sc = blosc2.SChunk(chunksize=1 << 20, data=r, cparams={"typesize": 8, **TUNED}, urlpath=path, contiguous=True)
    assert sc.cparams.tuner == blosc2.Tuner.BTUNE, sc.cparams
    assert np.array_equal(np.frombuffer(sc[:], dtype=np.int64), r)

    path = os.path.join(d, "array.b2nd")
    blosc2.remove_urlpath(path)
    arr = blosc2.asarray(a.reshape(512, 1024), cparams=TUNED, urlpath=path, chunks=(128, 1024), blocks=(32, 1024))
    assert np.array_equal(arr[:], a.reshape(512, 1024))

    # the tuner ran: at a tradeoff of 1 it compresses at least as well as the defaults
    os.environ["BTUNE_TRADEOFF"] = "1"
    try:
        tuned = len(blosc2.compress2(a, cparams=blosc2.CParams(typesize=8, **TUNED)))
    finally:
        del os.environ["BTUNE_TRADEOFF"]
    plain = len(blosc2.compress2(a, cparams=blosc2.CParams(typesize=8)))
    print(f"compress2: tuned at tradeoff 1 {tuned} bytes, python-blosc2's defaults {plain} bytes")
    assert tuned <= plain, (tuned, plain)


def check(d):
    a = data(1 << 19)
    with open(os.path.join(d, "compress2.chunk"), "rb") as f:
        assert np.array_equal(np.frombuffer(blosc2.decompress2(f.read()), dtype=np.float64), a)
    sc = blosc2.open(os.path.join(d, "schunk.b2frame"))
    assert np.array_equal(np.frombuffer(sc[:], dtype=np.int64), ramp(1 << 20))
    arr = blosc2.open(os.path.join(d, "array.b2nd"))
    assert np.array_equal(arr[:], a.reshape(512, 1024))


if __name__ == "__main__":
    {"write": write, "check": check}[sys.argv[1]](sys.argv[2])
    print(f"tuner_check {sys.argv[1]}: ok (python-blosc2 {blosc2.__version__} on {blosc2.blosclib_version})")
