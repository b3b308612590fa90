"""libb2nd, installed as a Python package: the C library (c-blosc2 3.3's API), its headers,
CMake and pkg-config files, for other builds to find, as the cmake and ninja wheels carry
their programs. `python -m libb2nd --help` prints the paths; these functions return them.
"""
import os
import sys

__all__ = ["get_cmake_dir", "get_include", "get_libdir", "get_library", "get_pkgconfig_dir", "get_prefix", "get_tool"]

_HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("libb2nd")
    except PackageNotFoundError:  # metadata missing (a copy run from a source tree): say so, do not guess
        return "unknown"


__version__ = _version()


def get_prefix():
    """The install prefix: the directory holding lib/, include/ and bin/."""
    return _HERE


def get_cmake_dir():
    """The directory of the CMake packages (Blosc2/ and B2nd/): for CMAKE_PREFIX_PATH, or
    with /Blosc2 appended, for Blosc2_DIR."""
    return os.path.join(_HERE, "lib", "cmake")


def get_pkgconfig_dir():
    """The directory of blosc2.pc and b2nd.pc: for PKG_CONFIG_PATH."""
    return os.path.join(_HERE, "lib", "pkgconfig")


def get_libdir():
    """The directory of the shared library (on Windows, bin/ holds the DLL and lib/ its
    import libraries)."""
    return os.path.join(_HERE, "lib")


def get_include():
    """The directory of blosc2.h, b2nd.h and the headers they include."""
    return os.path.join(_HERE, "include")


def get_library():
    """The path of the shared library itself (for ctypes, or a loader's search)."""
    if sys.platform == "win32":
        return os.path.join(_HERE, "bin", "libblosc2.dll")
    if sys.platform == "darwin":
        return os.path.join(_HERE, "lib", "libblosc2.9.dylib")
    return os.path.join(_HERE, "lib", "libb2nd.so.0")


def get_tool():
    """The path of the b2nd command-line tool."""
    return os.path.join(_HERE, "bin", "b2nd.exe" if sys.platform == "win32" else "b2nd")
