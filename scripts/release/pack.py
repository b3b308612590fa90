#!/usr/bin/env python3
"""Reproducible release archives and wheels from a staged directory (scripts/release.sh).

    pack.py tar   DIR OUT.tar.gz TOP     DIR's tree under TOP/, as a gzip'd tar
    pack.py zip   DIR OUT.zip TOP        the same as a zip (no symbolic links: Windows)
    pack.py wheel DIR OUTDIR VERSION TAG a wheel of the package libb2nd whose tree is DIR
                                         (DIR/libb2nd/...), platform tag TAG

Every output depends on the files' contents, names and executable bits alone: entries
sorted by name, every time stamp SOURCE_DATE_EPOCH (default: 0, which zip raises to its
1980 floor), owner root, modes 0755 or 0644 (directories and executables, the rest),
gzip with no name and no time in its header, and fixed compression levels.
"""
import base64
import gzip
import hashlib
import io
import os
import stat
import sys
import tarfile
import time
import zipfile

EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH", "0"))
# zip's DOS time stamps start in 1980 and are local-time-free fields: the same tuple always
ZIP_TIME = max(time.gmtime(EPOCH)[:6], (1980, 1, 1, 0, 0, 0))


def walk(root):
    """(relative path, full path) of everything under root, sorted, directories included."""
    out = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in dirnames + filenames:
            full = os.path.join(dirpath, name)
            out.append((os.path.relpath(full, root).replace(os.sep, "/"), full))
    out.sort()
    return out


def mode_of(full):
    st = os.lstat(full)
    if stat.S_ISDIR(st.st_mode) or st.st_mode & 0o111:
        return 0o755
    return 0o644


def make_tar(root, out, top):
    raw = io.BytesIO()
    with tarfile.open(fileobj=raw, mode="w", format=tarfile.GNU_FORMAT) as tar:
        entries = [(top, root)] + [(f"{top}/{rel}", full) for rel, full in walk(root)]
        for name, full in entries:
            info = tar.gettarinfo(full, arcname=name)
            info.mtime = EPOCH
            info.uid = info.gid = 0
            info.uname = info.gname = "root"
            if not info.issym():
                info.mode = mode_of(full)
            if info.isfile():
                with open(full, "rb") as f:
                    tar.addfile(info, f)
            else:
                tar.addfile(info)
    with open(out, "wb") as f, gzip.GzipFile(filename="", mode="wb", fileobj=f, mtime=0, compresslevel=9) as gz:
        gz.write(raw.getvalue())


def zip_entry(name, mode, is_dir=False):
    info = zipfile.ZipInfo(name + ("/" if is_dir else ""), date_time=ZIP_TIME)
    info.create_system = 3  # Unix, so that the mode below is read
    info.external_attr = ((stat.S_IFDIR if is_dir else stat.S_IFREG) | mode) << 16
    if is_dir:
        info.external_attr |= 0x10  # MS-DOS directory bit
    info.compress_type = zipfile.ZIP_DEFLATED
    return info


def make_zip(root, out, top):
    with zipfile.ZipFile(out, "w") as z:
        z.writestr(zip_entry(top, 0o755, True), b"")
        for rel, full in walk(root):
            if os.path.islink(full):
                sys.exit(f"{full}: a symbolic link, which a zip for Windows cannot hold")
            if os.path.isdir(full):
                z.writestr(zip_entry(f"{top}/{rel}", 0o755, True), b"")
            else:
                with open(full, "rb") as f:
                    z.writestr(zip_entry(f"{top}/{rel}", mode_of(full)), f.read(), compresslevel=9)


METADATA = """\
Metadata-Version: 2.1
Name: libb2nd
Version: {version}
Summary: libb2nd, the Blosc2 formats in safe Rust with c-blosc2 3.3's C API: the shared library, headers, CMake and pkg-config files and the b2nd tool
Home-page: https://blosc.org/
License: BSD-3-Clause (libb2nd); the libraries compiled in, each under its own license: libb2nd/licenses/
Requires-Python: >=3.8
Description-Content-Type: text/markdown

# libb2nd

A drop-in for the c-blosc2 3.3 C library, for programs that build against a Blosc2 install:

    python -m libb2nd --cmake-dir       # for CMAKE_PREFIX_PATH / Blosc2_DIR
    python -m libb2nd --pkgconfig-dir   # for PKG_CONFIG_PATH
    python -m libb2nd --libdir          # the shared library's directory
    python -m libb2nd --includes        # -I flags for the headers

The CMake and pkg-config files of this package record the library's directory as the run
path of what links against it, so nothing needs LD_LIBRARY_PATH. The `b2nd` command looks
inside Blosc2 files and converts them. The licenses of everything inside are in
libb2nd/licenses/.
"""


def make_wheel(root, outdir, version, tag):
    name = f"libb2nd-{version}"
    info = f"libb2nd-{version}.dist-info"
    files = {}
    for rel, full in walk(root):
        if os.path.isdir(full):
            continue
        if os.path.islink(full):
            sys.exit(f"{full}: a symbolic link, which a wheel cannot hold")
        with open(full, "rb") as f:
            files[rel] = (f.read(), mode_of(full))
    files[f"{info}/METADATA"] = (METADATA.format(version=version).encode(), 0o644)
    files[f"{info}/WHEEL"] = (
        ("Wheel-Version: 1.0\nGenerator: libb2nd scripts/release/pack.py\nRoot-Is-Purelib: false\n"
         + "".join(f"Tag: py3-none-{t}\n" for t in tag.split("."))).encode(),
        0o644,
    )
    files[f"{info}/entry_points.txt"] = (b"[console_scripts]\nb2nd = libb2nd.__main__:tool\n", 0o644)
    files[f"{info}/top_level.txt"] = (b"libb2nd\n", 0o644)
    record = []
    for rel in sorted(files):
        data = files[rel][0]
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{rel},sha256={digest},{len(data)}")
    record.append(f"{info}/RECORD,,")
    files[f"{info}/RECORD"] = (("\n".join(record) + "\n").encode(), 0o644)
    out = os.path.join(outdir, f"{name}-py3-none-{tag}.whl")
    # the dist-info last, as the wheel spec recommends
    order = sorted(r for r in files if not r.startswith(info)) + sorted(r for r in files if r.startswith(info))
    with zipfile.ZipFile(out, "w") as z:
        for rel in order:
            data, mode = files[rel]
            z.writestr(zip_entry(rel, mode), data, compresslevel=9)
    print(out)


def main(argv):
    if len(argv) >= 4 and argv[0] == "tar":
        make_tar(argv[1], argv[2], argv[3])
    elif len(argv) >= 4 and argv[0] == "zip":
        make_zip(argv[1], argv[2], argv[3])
    elif len(argv) >= 5 and argv[0] == "wheel":
        make_wheel(argv[1], argv[2], argv[3], argv[4])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
