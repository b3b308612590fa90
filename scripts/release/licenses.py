#!/usr/bin/env python3
"""The licenses of everything a release archive holds, into OUTDIR (scripts/release.sh).

    licenses.py TARGET OUTDIR

- LICENSE: libb2nd's own;
- the C libraries compiled in: zlib-ng and zfp (vendor/), zstd, lz4 and libdeflate (the
  sources the -sys crates build);
- rust/: each Rust crate linked into the library or the tool for TARGET (cargo metadata:
  normal dependencies of b2nd-capi and b2nd-cli, not build or test ones), its license files;
- rust-std/: the licenses of Rust's standard library, linked into both (the toolchain's);
- README: what is where, each crate with its version and license expression.
Exits non-zero when a crate ships no license file, so that no archive goes out without one.
"""
import glob
import json
import os
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

# (file in OUTDIR, crate whose sources hold it or None for this repository, path inside, what)
C_LIBRARIES = [
    ("zlib-ng-LICENSE.md", None, "vendor/zlib-ng/LICENSE.md", "zlib-ng (vendor/zlib-ng), the zlib codec"),
    ("zfp-LICENSE", None, "vendor/zfp/LICENSE", "zfp 1.0.1 (vendor/zfp), the zfp plugin codecs"),
    ("zfp-NOTICE", None, "vendor/zfp/NOTICE", "zfp's notice"),
    ("zstd-LICENSE", "zstd-sys", "zstd/LICENSE", "Zstandard (zstd-sys), under its BSD option"),
    ("lz4-LICENSE", "lz4-sys", "liblz4/lib/LICENSE", "LZ4's library (lz4-sys: lib/, BSD-2-Clause)"),
    ("libdeflate-COPYING", "libdeflate-sys", "libdeflate/COPYING", "libdeflate (libdeflate-sys)"),
]
LICENSE_NAMES = ("LICENSE", "LICENCE", "COPYING", "NOTICE", "UNLICENSE", "COPYRIGHT")


def metadata(target):
    out = subprocess.run(
        ["cargo", "metadata", "--format-version", "1", "--filter-platform", target, "--locked"],
        cwd=ROOT, check=True, capture_output=True, text=True,
    ).stdout
    return json.loads(out)


def shipped(meta):
    """The packages linked into b2nd-capi's library and b2nd-cli's tool (not the roots; not
    proc-macro crates, which run in the compiler, nor what only they use)."""
    pkgs = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    roots = [p["id"] for p in meta["packages"] if p["name"] in ("b2nd-capi", "b2nd-cli")]
    seen, todo = set(), list(roots)
    while todo:
        node = nodes[todo.pop()]
        for dep in node["deps"]:
            macro = any("proc-macro" in t["kind"] for t in pkgs[dep["pkg"]]["targets"])
            if any(k["kind"] is None for k in dep["dep_kinds"]) and not macro and dep["pkg"] not in seen:
                seen.add(dep["pkg"])
                todo.append(dep["pkg"])
    return sorted((pkgs[i] for i in seen), key=lambda p: (p["name"], p["version"]))


def main(target, outdir):
    meta = metadata(target)
    by_name = {p["name"]: p for p in meta["packages"]}
    if os.path.exists(outdir):
        shutil.rmtree(outdir)
    os.makedirs(outdir)
    readme = ["Licenses of what this archive holds", "", "LICENSE: libb2nd (BSD-3-Clause)", ""]
    shutil.copy(os.path.join(ROOT, "LICENSE"), os.path.join(outdir, "LICENSE"))
    readme.append("C libraries compiled into the library:")
    for name, crate, path, what in C_LIBRARIES:
        base = ROOT if crate is None else os.path.dirname(by_name[crate]["manifest_path"])
        shutil.copy(os.path.join(base, path), os.path.join(outdir, name))
        readme.append(f"  {name}: {what}")
    readme += ["", "Rust crates linked into the library (lib/) or the tool (bin/b2nd), in rust/NAME-VERSION/:"]
    missing = []
    for p in shipped(meta):
        if p["source"] is None:  # the workspace's own crates: libb2nd's license
            continue
        src = os.path.dirname(p["manifest_path"])
        files = sorted(
            f for f in os.listdir(src)
            if f.upper().startswith(LICENSE_NAMES) and os.path.isfile(os.path.join(src, f))
        )
        if not files:
            missing.append(f"{p['name']} {p['version']}")
            continue
        dest = os.path.join(outdir, "rust", f"{p['name']}-{p['version']}")
        os.makedirs(dest)
        for f in files:
            shutil.copy(os.path.join(src, f), os.path.join(dest, f))
        readme.append(f"  {p['name']} {p['version']}: {p['license']}")
    sysroot = subprocess.run(["rustc", "--print", "sysroot"], check=True, capture_output=True, text=True).stdout.strip()
    std = os.path.join(sysroot, "share", "doc", "rust")
    os.makedirs(os.path.join(outdir, "rust-std"))
    for f in ["COPYRIGHT-library.html"] + sorted(
        os.path.relpath(g, std) for g in glob.glob(os.path.join(std, "licenses", "*.txt"))
    ):
        if os.path.isfile(os.path.join(std, f)):
            shutil.copy(os.path.join(std, f), os.path.join(outdir, "rust-std", os.path.basename(f)))
    readme += ["", "rust-std/: Rust's standard library, linked into both (MIT OR Apache-2.0; the toolchain's files)"]
    with open(os.path.join(outdir, "README"), "w") as f:
        f.write("\n".join(readme) + "\n")
    if missing:
        sys.exit("crates without a license file: " + ", ".join(missing))


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
