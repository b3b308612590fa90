"""Btune 1.2.1 without models on the tuner benchmark's datasets (scripts/bench_tuner.sh --btune).

  bench_tuner_btune.py DATA_DIR OUT_DIR [NAME ...]

Runs in a venv with python-blosc2 3.6.1 (c-blosc2 2.19.1, whose private context layout
Btune 1.2.1 was built for) and blosc2-btune 1.2.1, with that venv's bin/ first in PATH (so
that c-blosc2 finds the plugin). For each dataset, perf mode and tradeoff 0, 0.5 and 1: a
super-chunk of 4 MiB chunks, 1 thread, tuned by Btune (BTUNE_TRADEOFF, BTUNE_PERF_MODE; no
BTUNE_MODELS_DIR), every chunk appended (timed: Btune's exploration included), then every
chunk decompressed (timed). Writes OUT_DIR/NAME.btune.json.
"""

import glob
import json
import os
import sys
import time

import blosc2
import numpy as np

CHUNK = 4 << 20


def run(data, typesize, mode, tradeoff):
    os.environ["BTUNE_TRADEOFF"] = str(tradeoff)
    os.environ["BTUNE_PERF_MODE"] = mode
    os.environ.pop("BTUNE_MODELS_DIR", None)
    os.environ.pop("BTUNE_TRACE", None)
    cparams = {"typesize": typesize, "tuner": blosc2.Tuner.BTUNE, "nthreads": 1}
    sc = blosc2.SChunk(chunksize=CHUNK, cparams=cparams, dparams={"nthreads": 1})
    ctime = 0.0
    for i in range(0, len(data), CHUNK):
        part = data[i : i + CHUNK]
        t = time.perf_counter()
        sc.append_data(part)
        ctime += time.perf_counter() - t
    dtime = 0.0
    for i in range(sc.nchunks):
        t = time.perf_counter()
        sc.decompress_chunk(i)
        dtime += time.perf_counter() - t
    cp = sc.cparams
    return {
        "perf_mode": mode,
        "tradeoff": tradeoff,
        "nbytes": sc.nbytes,
        "cbytes": sc.cbytes,
        "ctime": ctime,
        "dtime": dtime,
        "last": {"codec": str(cp.codec), "clevel": cp.clevel, "filters": [str(f) for f in cp.filters if f]},
    }


def main(data_dir, out_dir, names):
    for path in sorted(glob.glob(os.path.join(data_dir, "*.npy"))):
        name = os.path.basename(path)[:-4]
        if names and name not in names:
            continue
        a = np.load(path, mmap_mode="r")
        data = memoryview(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
        rows = []
        for mode in ["COMP", "DECOMP", "BALANCED"]:
            for tradeoff in [0.0, 0.5, 1.0]:
                r = run(data, a.dtype.itemsize, mode, tradeoff)
                print(f"{name} {mode} {tradeoff}: ratio {r['nbytes'] / r['cbytes']:.2f}, "
                      f"{r['nbytes'] / r['ctime'] / 1e6:.0f} MB/s, last {r['last']}", file=sys.stderr)
                rows.append(r)
        with open(os.path.join(out_dir, name + ".btune.json"), "w") as f:
            json.dump({"dataset": name, "blosc2": blosc2.__version__, "rows": rows}, f)


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], set(sys.argv[3:]))
