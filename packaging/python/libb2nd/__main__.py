"""python -m libb2nd: the paths other builds need, one a line, in the order asked.

    --cmake-dir       CMake packages (for CMAKE_PREFIX_PATH)
    --pkgconfig-dir   pkg-config files (for PKG_CONFIG_PATH)
    --libdir          the shared library's directory
    --includes        -I flags for the headers (as pybind11's --includes)
    --include-dir     the headers' directory itself
    --prefix          the install prefix
    --library         the shared library's path
    --version         libb2nd's version

The `b2nd` command that pip installs runs the tool this package carries (tool() below).
"""
import argparse
import os
import subprocess
import sys

import libb2nd


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="python -m libb2nd",
        description="Paths of the libb2nd C library installed with this package.",
    )
    asks = [
        ("--cmake-dir", libb2nd.get_cmake_dir, "CMake packages Blosc2 and B2nd (for CMAKE_PREFIX_PATH)"),
        ("--pkgconfig-dir", libb2nd.get_pkgconfig_dir, "blosc2.pc and b2nd.pc (for PKG_CONFIG_PATH)"),
        ("--libdir", libb2nd.get_libdir, "the shared library's directory"),
        ("--includes", lambda: "-I" + libb2nd.get_include(), "-I flags for the headers"),
        ("--include-dir", libb2nd.get_include, "the headers' directory"),
        ("--prefix", libb2nd.get_prefix, "the install prefix (lib/, include/, bin/)"),
        ("--library", libb2nd.get_library, "the shared library's path"),
        ("--version", lambda: libb2nd.__version__, "libb2nd's version"),
    ]
    for flag, _, text in asks:
        parser.add_argument(flag, action="append_const", const=flag, dest="asked", help=text)
    args = parser.parse_args(argv)
    if not args.asked:
        parser.print_help()
        return 2
    table = {flag: fn for flag, fn, _ in asks}
    for flag in args.asked:
        print(table[flag]())
    return 0


def tool():
    """The console script `b2nd`: runs the tool with this process's arguments."""
    exe = libb2nd.get_tool()
    if not os.path.exists(exe):
        sys.exit(f"b2nd: {exe} is missing from this install of libb2nd")
    if sys.platform == "win32":
        sys.exit(subprocess.call([exe, *sys.argv[1:]]))
    os.execv(exe, [exe, *sys.argv[1:]])


if __name__ == "__main__":
    sys.exit(main())
