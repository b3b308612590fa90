#!/usr/bin/env python3
"""Benchmark driver: libb2nd against the reference c-blosc2, one library per process.

For each thread count and each round, runs the worker (benches/bench_worker.c) once with
our library and once with c-blosc2, as separate processes, alternating which goes first
(round 0: ours first, round 1: c-blosc2 first, ...). Every measurement is paired with the
other library's measurement of the same round: the table's ratio is the median over the
rounds of those paired ratios (ours MB/s / c-blosc2 MB/s; above 1 = libb2nd faster), and
the MB/s columns are medians over the rounds. Prints Markdown on stdout, progress on stderr.

usage: scripts/bench.py --ours OURS.so --ref REF.so --worker build/bench_worker --data DIR
         [--suites chunks,schunk,b2nd,plugins] [--threads 1,2,4,8,16] [--rounds 5] [--reps 3]
         [--only SUBSTR] [--json FILE] [--load N] [--rainfall FILE]
(scripts/bench.sh builds everything and calls this.) Python 3 standard library only.
"""
import argparse
import contextlib
import ctypes
import datetime
import json
import math
import os
import signal
import statistics
import subprocess
import sys
import time

WORKER_TIMEOUT_S = 600
SUITES = ("chunks", "schunk", "b2nd", "plugins")
# A case counts as slower with more threads below this fraction of its speed at half
# as many (smaller differences are within the rounds' noise on a shared machine).
SLOWER = 0.95

NAMES = {"ours": "libb2nd", "ref": "c-blosc2"}


def fail(msg):
    raise SystemExit("bench.py: " + msg)


def set_pdeathsig():
    """In a child: be killed when the driver dies, however it dies (Linux)."""
    with contextlib.suppress(OSError, AttributeError):  # no prctl (not Linux)
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


class Load:
    """N busy processes for the duration of a `with` block (killed on any exit)."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        for _ in range(self.n):
            # no threads here, so preexec_fn is safe; PR_SET_PDEATHSIG must be set in the child
            child = subprocess.Popen([sys.executable, "-c", "while True: pass"],
                                     preexec_fn=set_pdeathsig, stdin=subprocess.DEVNULL)  # noqa: PLW1509
            self.procs.append(child)
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            if p.poll() is None:
                p.kill()
        for p in self.procs:
            p.wait()
        self.procs = []
        return False


def machine():
    try:
        nproc = len(os.sched_getaffinity(0))
    except AttributeError:
        nproc = os.cpu_count()
    model = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return nproc, model


def run_worker(args, lib, suite, nthreads):
    """Rows (case, op, MB/s, extra) of one worker process, and its wall time."""
    cmd = args.runner.split() + [args.worker, args.ours if lib == "ours" else args.ref, suite, str(nthreads),
           "--data", args.data, "--reps", str(args.reps)]
    if args.only:
        cmd += ["--only", args.only]
    if args.rainfall:
        cmd += ["--rainfall", args.rainfall]
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=WORKER_TIMEOUT_S, preexec_fn=set_pdeathsig, check=False)
    except subprocess.TimeoutExpired as e:
        err = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else (e.stderr or "")
        fail(f"worker timed out after {WORKER_TIMEOUT_S} s: {' '.join(cmd)}\n{err}")
    wall = time.monotonic() - t0
    if p.returncode != 0:
        fail(f"worker failed (exit status {p.returncode}): {' '.join(cmd)}\n{p.stderr}")
    rows = []
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        f = line.split("\t")
        if len(f) != 5 or f[0] != suite:
            fail(f"unexpected worker output line {line!r}: {' '.join(cmd)}")
        rows.append((f[1], f[2], float(f[3]), float(f[4])))
    if p.stderr.strip():
        sys.stderr.write(p.stderr)
    return rows, wall


def geomean(xs):
    xs = [x for x in xs if x > 0]
    return math.exp(sum(math.log(x) for x in xs) / len(xs)) if xs else float("nan")


def family(suite, op):
    if suite in ("chunks", "plugins"):
        return op
    if suite == "schunk":
        return "write" if op in ("append", "set_slice_buffer") else "read"
    if suite == "b2nd":
        return "whole array" if op in ("from_cbuffer", "to_cbuffer") else "slices"
    return op


def mbps(v):
    return f"{v:.0f}" if v >= 100 else f"{v:.1f}"


def thread_word(n):
    return f"{n} thread" + ("" if n == 1 else "s")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ours", required=True, help="our library (target/release/libb2nd_capi.so)")
    ap.add_argument("--ref", required=True, help="the reference libblosc2.so")
    ap.add_argument("--worker", required=True, help="the bench_worker executable")
    ap.add_argument("--runner", default="", help="a command the worker runs under "
                    "(wine, for a worker and libraries built for Windows: emulated figures)")
    ap.add_argument("--data", required=True, help="directory holding de421.f64 (or de421.bsp)")
    ap.add_argument("--suites", default=",".join(SUITES))
    ap.add_argument("--threads", default="1,2,4,8,16")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--reps", type=int, default=3, help="timed passes per measurement in a worker (best kept)")
    ap.add_argument("--only", help="keep measurements whose case:op contains this")
    ap.add_argument("--json", help="write the raw per-round numbers and the medians here")
    ap.add_argument("--load", type=int, default=0, help="busy processes running alongside")
    ap.add_argument("--rainfall", help="the rainfall chunk for the plugins suite "
                                       "(default: the worker's, tests/data/raw/rainfall-grid-150x150.bin)")
    args = ap.parse_args()
    suites = [s for s in args.suites.split(",") if s]
    for s in suites:
        if s not in SUITES:
            fail(f"unknown suite {s} (one of {', '.join(SUITES)})")
    try:
        threads = [int(t) for t in args.threads.split(",") if t]
    except ValueError:
        fail(f"bad --threads {args.threads}")
    if not threads or min(threads) < 1 or args.rounds < 1 or args.reps < 1 or args.load < 0:
        fail("--threads, --rounds, --reps must be positive and --load not negative")
    for path in (args.ours, args.ref, args.worker):
        if not os.path.exists(path):
            fail(f"{path} does not exist")
    # SIGTERM unwinds like Ctrl-C, so that the busy processes are killed on the way out.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    nproc, model = machine()
    date = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    # (suite, threads) -> {(case, op): {"ours": [...], "ref": [...], "ratio": [...], "extra_ours": [...], ...}}
    res = {}
    raw = []
    with Load(args.load):
        for n in threads:
            for r in range(args.rounds):
                order = ("ours", "ref") if r % 2 == 0 else ("ref", "ours")
                for suite in suites:
                    got = {}
                    for pos, lib in enumerate(order):
                        rows, wall = run_worker(args, lib, suite, n)
                        got[lib] = rows
                        raw.append({"threads": n, "round": r, "suite": suite, "lib": lib, "position": pos,
                                    "seconds": round(wall, 3),
                                    "rows": [{"case": c, "op": o, "mbps": v, "extra": e} for c, o, v, e in rows]})
                        print(f"[{thread_word(n)}, round {r + 1}/{args.rounds}, {suite}] {NAMES[lib]}: "
                              f"{len(rows)} measurements in {wall:.1f} s", file=sys.stderr, flush=True)
                    keys = {lib: [(c, o) for c, o, _, _ in got[lib]] for lib in got}
                    if keys["ours"] != keys["ref"]:
                        fail(f"{suite}: the two workers measured different cases:\n"
                             f"  ours: {keys['ours']}\n  ref: {keys['ref']}")
                    table = res.setdefault((suite, n), {})
                    for (c, o, vo, eo), (_, _, vr, er) in zip(got["ours"], got["ref"]):
                        e = table.setdefault((c, o), {"ours": [], "ref": [], "ratio": [], "extra_ours": [], "extra_ref": []})
                        e["ours"].append(vo)
                        e["ref"].append(vr)
                        e["ratio"].append(vo / vr if vr > 0 else float("nan"))
                        e["extra_ours"].append(eo)
                        e["extra_ref"].append(er)

    out = []
    p = out.append
    p(f"machine: {nproc} cores, {model}; date: {date}; {args.rounds} round{'s' if args.rounds > 1 else ''}, "
      f"best of {args.reps} pass{'es' if args.reps > 1 else ''} per measurement; threads {','.join(map(str, threads))}"
      + (f"; {args.load} busy process{'es' if args.load > 1 else ''} alongside" if args.load else "")
      + (f"; only `{args.only}`" if args.only else ""))
    p("")
    p(f"libb2nd: `{args.ours}`; c-blosc2: `{args.ref}`; each library in its own process, rounds "
      "alternating which goes first; MB/s: medians over rounds; ours/ref: median of the per-round ratios "
      "(above 1 = libb2nd faster), with their range.")
    summary = {}
    results = []
    for suite in suites:
        if not any(res.get((suite, n)) for n in threads):
            p("")
            p(f"### {suite}: no measurements" + (f" (none matches `{args.only}`)" if args.only else ""))
            continue
        for n in threads:
            table = res.get((suite, n), {})
            p("")
            p(f"### {suite}, {thread_word(n)}")
            p("")
            has_cratio = any(e["extra_ours"][0] > 0 for e in table.values())
            p("| case | op | ours MB/s | c-blosc2 MB/s | ours/ref | range |" + (" compression ratio ours / ref |" if has_cratio else ""))
            p("|---|---|---:|---:|---:|---:|" + ("---:|" if has_cratio else ""))
            fam = {}
            worst = None
            cr_diff = []
            n_cr = 0
            for (c, o), e in table.items():
                mo, mr, q = statistics.median(e["ours"]), statistics.median(e["ref"]), statistics.median(e["ratio"])
                co, cref = statistics.median(e["extra_ours"]), statistics.median(e["extra_ref"])
                line = f"| {c} | {o} | {mbps(mo)} | {mbps(mr)} | {q:.2f} | {min(e['ratio']):.2f}-{max(e['ratio']):.2f} |"
                if has_cratio:
                    line += f" {co:.3f} / {cref:.3f} |" if co > 0 else " |"
                p(line)
                if co > 0:
                    n_cr += 1
                    if any(a != b for a, b in zip(e["extra_ours"], e["extra_ref"])):
                        cr_diff.append(f"{c} ({co:.4f} / {cref:.4f})")
                fam.setdefault(family(suite, o), []).append(q)
                if worst is None or q < worst[0]:
                    worst = (q, c, o)
                results.append({"suite": suite, "threads": n, "case": c, "op": o,
                                "ours_mbps": e["ours"], "ref_mbps": e["ref"], "ratios": e["ratio"],
                                "ours_median": mo, "ref_median": mr, "ratio_median": q,
                                "cratio_ours": co if co > 0 else None, "cratio_ref": cref if cref > 0 else None})
            gm = {f: geomean(v) for f, v in fam.items()}
            p("")
            s = (f"{suite}, {thread_word(n)}: geometric mean ours/ref "
                 + ", ".join(f"{f} {g:.3f} ({len(fam[f])} case{'s' if len(fam[f]) > 1 else ''})" for f, g in gm.items())
                 + f"; worst {worst[1]} {worst[2]} {worst[0]:.2f}")
            if n_cr:
                s += (f"; compression ratios equal in all {n_cr} cases" if not cr_diff
                      else f"; compression ratios differ in {len(cr_diff)} of {n_cr} cases: " + ", ".join(cr_diff))
            p(s)
            summary.setdefault(suite, {})[str(n)] = {"geomean": gm, "worst": {"case": worst[1], "op": worst[2], "ratio": worst[0]},
                                                     "cratio_differ": cr_diff}

    # Scaling: each library's median MB/s at N threads over its median at the fewest threads run.
    scaling = {}
    base = min(threads)
    more = [n for n in threads if n != base]
    if more:
        for suite in suites:
            bt = res.get((suite, base), {})
            if not bt:
                continue
            fams = list(dict.fromkeys(family(suite, o) for _, o in bt))
            p("")
            p(f"### {suite}: scaling (geometric mean over cases of MB/s at N threads / MB/s at {thread_word(base)})")
            p("")
            p("| library | cases | " + " | ".join(f"{n} threads" for n in more) + " |")
            p("|---|---|" + "---:|" * len(more))
            for lib in ("ours", "ref"):
                for fm in ([None] + fams if len(fams) > 1 else [None]):
                    cells = []
                    for n in more:
                        t = res.get((suite, n), {})
                        xs = [statistics.median(t[k][lib]) / statistics.median(bt[k][lib])
                              for k in bt if k in t and (fm is None or family(suite, k[1]) == fm)]
                        g = geomean(xs)
                        cells.append(f"{g:.2f}")
                        scaling.setdefault(suite, {}).setdefault(lib, {}).setdefault(fm or "all", {})[str(n)] = g
                    p(f"| {NAMES[lib]} | {fm or 'all'} | " + " | ".join(cells) + " |")
            p("")
            for lib in ("ours", "ref"):
                slow = []
                for n in threads:
                    h = n // 2
                    if n % 2 or h not in threads:
                        continue
                    t, th = res.get((suite, n), {}), res.get((suite, h), {})
                    for k in t:
                        if k in th:
                            a, b = statistics.median(t[k][lib]), statistics.median(th[k][lib])
                            if a < SLOWER * b:
                                slow.append(f"{k[0]} {k[1]} at {n} ({mbps(a)} < {mbps(b)} MB/s at {h})")
                p(f"{suite}: {NAMES[lib]} more than {100 - 100 * SLOWER:.0f}% slower at N threads than at N/2: "
                  + ("none" if not slow else "; ".join(slow)))
    print("\n".join(out))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"machine": {"nproc": nproc, "cpu": model}, "date": date, "args": vars(args),
                       "raw": raw, "results": results, "summary": summary, "scaling": scaling}, f, indent=1)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        sys.exit("bench.py: interrupted")
