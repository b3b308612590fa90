"""Time and peak memory of `b2nd convert` and `b2nd repack` on a large array,
against copying the file, and against python-blosc2 doing the same jobs
(blosc2.asarray of a memory-mapped .npy; np.save of an opened array; a repack
through blosc2.asarray of the opened array). Each job runs in its own process;
its peak RSS is the kernel's figure for that process (os.wait4).
usage: bench_convert.py B2ND_EXE WORKDIR [GB]   (default 1 GB of float64 items)"""
import os
import subprocess
import sys
import time

exe, work = sys.argv[1], sys.argv[2]
gb = float(sys.argv[3]) if len(sys.argv) > 3 else 1.0
os.makedirs(work, exist_ok=True)
rows = int(gb * (1 << 30) / 8 / 16000)
npy, arr, back, same, other, copied = (os.path.join(work, n) for n in ("a.npy", "a.b2nd", "back.npy", "same.b2nd", "other.b2nd", "copy.b2nd"))

# The data is made in a child process: a child's peak RSS starts from its parent's
# size at fork time, so this process stays small.
MAKE = f"""
import numpy as np
m = np.lib.format.open_memmap({npy!r}, mode="w+", dtype="<f8", shape=({rows}, 16000))
for i in range(0, {rows}, 500):
    r = np.arange(i, min(i + 500, {rows}))[:, None]
    m[i:i + 500] = np.sin(r / 50.0) * np.cos(np.arange(16000) / 70.0) * 100 + r
m.flush()
"""
if not os.path.exists(npy) or os.path.getsize(npy) < rows * 16000 * 8:
    subprocess.run([sys.executable, "-c", MAKE], check=True)


def run(label, cmd):
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    if status != 0:
        print(f"{label}: failed: {proc.stderr.read().decode()}")
        sys.exit(1)
    if label:
        print(f"| {label} | {dt:.2f} | {ru.ru_maxrss / 1024:.0f} |")
    return dt, ru.ru_maxrss / 1024


def rm(*paths):
    for p in paths:
        subprocess.run(["rm", "-rf", p], check=False)


py = sys.executable
print(f"{rows} x 16000 float64 ({rows * 16000 * 8 / 1e9:.2f} GB of items), {os.cpu_count()} cores\n")
print("| job | seconds | peak RSS (MB) |\n|---|---|---|")
rm(arr, back, same, other, copied)
run("b2nd convert .npy -> .b2nd (python-blosc2's defaults)", [exe, "convert", npy, arr])
run("python-blosc2: blosc2.asarray(np.load(mmap_mode='r'))", [py, "-c", f"import blosc2, numpy as np; blosc2.asarray(np.load({npy!r}, mmap_mode='r'), urlpath={arr + '.py'!r}, mode='w')"])
print(subprocess.run([exe, "info", arr], capture_output=True, text=True, check=False).stdout.split("b2nd:")[-1].strip().replace("\n", " "), file=sys.stderr)
run("b2nd convert .b2nd -> .npy", [exe, "convert", arr, back])
rm(back)
run("python-blosc2: np.save(blosc2.open(...)[:])", [py, "-c", f"import blosc2, numpy as np; np.save({back!r}, blosc2.open({arr!r})[:])"])
# cp and a repack to the same parameters, alternating, three rounds each: medians
cps, reps, peaks = [], [], []
for _ in range(3):
    rm(copied, same)
    cps.append(run(None, ["cp", arr, copied])[0])
    t, peak = run(None, [exe, "repack", arr, same])
    reps.append(t)
    peaks.append(peak)
print(f"| cp of the .b2nd file ({os.path.getsize(arr) / 1e6:.0f} MB; median of 3) | {sorted(cps)[1]:.2f} | |")
print(f"| b2nd repack, same parameters (median of 3, alternating with cp) | {sorted(reps)[1]:.2f} | {max(peaks):.0f} |")
run("b2nd repack --codec lz4 --chunks 500,4000 --blocks 50,4000", [exe, "repack", "--codec", "lz4", "--chunks", "500,4000", "--blocks", "50,4000", arr, other])
rm(arr + ".py", back, same, other, copied)
