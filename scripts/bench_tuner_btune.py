"""Btune 1.2.1 without models on the tuner benchmark's datasets (scripts/bench_tuner.sh --btune).

  bench_tuner_btune.py DATA_DIR OUT_DIR [NAME ...]

Runs in a venv with python-blosc2 3.6.1 (c-blosc2 2.19.1, whose private context layout
Btune 1.2.1 was built for) and blosc2-btune 1.2.1, with that venv's bin/ first in PATH (so
that c-blosc2 finds the plugin). For each dataset, perf mode and tradeoff 0, 0.5 and 1: a
super-chunk of 4 MiB chunks, 1 thread, tuned by Btune (BTUNE_TRADEOFF, BTUNE_PERF_MODE; no
BTUNE_MODELS_DIR), every chunk appended (timed: Btune's exploration included), then every
chunk decompressed (timed). Writes OUT_DIR/NAME.btune.json. Each row runs in a process of
its own, stopped after BTUNE_ROW_TIMEOUT seconds (default 600), and written with
"timeout" (or "failed" and the exit status: a negative one is the signal that killed it)
and no figures; BTUNE_MODES (default COMP,DECOMP,BALANCED) picks the perf modes.
"""

import glob
import json
import os
import subprocess
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
    """Each row in a process of its own, stopped after BTUNE_ROW_TIMEOUT seconds (default
    600): some of Btune's runs explore for many minutes (and some crash). The JSON is
    rewritten after each row."""
    limit = float(os.environ.get("BTUNE_ROW_TIMEOUT", "600"))
    modes = os.environ.get("BTUNE_MODES", "COMP,DECOMP,BALANCED").split(",")
    for path in sorted(glob.glob(os.path.join(data_dir, "*.npy"))):
        name = os.path.basename(path)[:-4]
        if names and name not in names:
            continue
        rows = []
        for mode in modes:
            for tradeoff in [0.0, 0.5, 1.0]:
                try:
                    out = subprocess.run([sys.executable, __file__, "--row", path, mode, str(tradeoff)],
                                         check=True, capture_output=True, text=True, timeout=limit)
                    r = json.loads(out.stdout)
                    print(f"{name} {mode} {tradeoff}: ratio {r['nbytes'] / r['cbytes']:.2f}, "
                          f"{r['nbytes'] / r['ctime'] / 1e6:.0f} MB/s, last {r['last']}", file=sys.stderr)
                except subprocess.TimeoutExpired:
                    r = {"perf_mode": mode, "tradeoff": tradeoff, "timeout": limit}
                    print(f"{name} {mode} {tradeoff}: stopped after {limit:.0f} s", file=sys.stderr)
                except subprocess.CalledProcessError as e:
                    r = {"perf_mode": mode, "tradeoff": tradeoff, "failed": e.returncode}
                    print(f"{name} {mode} {tradeoff}: failed ({e.returncode})", file=sys.stderr)
                rows.append(r)
                with open(os.path.join(out_dir, name + ".btune.json"), "w") as f:
                    json.dump({"dataset": name, "blosc2": blosc2.__version__, "rows": rows}, f)


def row(path, mode, tradeoff):
    a = np.load(path, mmap_mode="r")
    data = memoryview(np.ascontiguousarray(a).reshape(-1).view(np.uint8))
    print(json.dumps(run(data, a.dtype.itemsize, mode, float(tradeoff))))


if __name__ == "__main__":
    if sys.argv[1] == "--row":
        row(*sys.argv[2:5])
    else:
        main(sys.argv[1], sys.argv[2], set(sys.argv[3:]))
