# CMake package for libb2nd (Linux and other ELF systems, macOS; Windows has its own, in
# cmake/windows/), under c-blosc2's package name: find_package(Blosc2) gives the targets
# Blosc2::blosc2_shared and Blosc2::blosc2_static, as c-blosc2's does.
# Relocatable: everything is found relative to this file (<prefix>/lib/cmake/Blosc2/).

get_filename_component(_b2nd_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

include(CMakeFindDependencyMacro)
set(THREADS_PREFER_PTHREAD_FLAG TRUE)
find_dependency(Threads)

# The shared library and the name programs record for it: on macOS c-blosc2's
# (lib/libblosc2.9.dylib, install name @rpath/libblosc2.9.dylib), elsewhere libb2nd.so.0.
if(APPLE)
  set(_b2nd_shared "${_b2nd_prefix}/lib/libblosc2.9.dylib")
  set(_b2nd_soname "@rpath/libblosc2.9.dylib")
else()
  set(_b2nd_shared "${_b2nd_prefix}/lib/libb2nd.so.0")
  set(_b2nd_soname "libb2nd.so.0")
endif()

# The Python package (pip install libb2nd; python -m libb2nd --cmake-dir) sits in a venv that
# no loader searches and carries no static library: what links against its shared library
# records the library's directory as a run path (CMake's own run path is dropped at install).
if(EXISTS "${_b2nd_prefix}/__init__.py" AND NOT TARGET Blosc2::blosc2_shared)
  set(_b2nd_rpath "LINKER:-rpath,${_b2nd_prefix}/lib")
else()
  set(_b2nd_rpath "")
endif()

if(NOT TARGET Blosc2::blosc2_shared)
  add_library(Blosc2::blosc2_shared SHARED IMPORTED)
  set_target_properties(Blosc2::blosc2_shared PROPERTIES
    IMPORTED_LOCATION "${_b2nd_shared}"
    IMPORTED_SONAME "${_b2nd_soname}"
    INTERFACE_INCLUDE_DIRECTORIES "${_b2nd_prefix}/include"
    INTERFACE_LINK_OPTIONS "${_b2nd_rpath}")
endif()

if(NOT TARGET Blosc2::blosc2_static AND EXISTS "${_b2nd_prefix}/lib/libb2nd.a")
  add_library(Blosc2::blosc2_static STATIC IMPORTED)
  set_target_properties(Blosc2::blosc2_static PROPERTIES
    IMPORTED_LOCATION "${_b2nd_prefix}/lib/libb2nd.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_b2nd_prefix}/include"
    INTERFACE_LINK_LIBRARIES "Threads::Threads;${CMAKE_DL_LIBS};m")
endif()

set(Blosc2_INCLUDE_DIRS "${_b2nd_prefix}/include")
set(Blosc2_LIBRARIES Blosc2::blosc2_shared)
set(Blosc2_THREADS_FOUND TRUE)
set(Blosc2_LZ4_FOUND TRUE)
set(Blosc2_ZLIB_FOUND TRUE)
set(Blosc2_ZSTD_FOUND TRUE)
set(Blosc2_FOUND TRUE)
unset(_b2nd_shared)
unset(_b2nd_soname)
unset(_b2nd_rpath)
unset(_b2nd_prefix)
