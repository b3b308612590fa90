# CMake package for libb2nd on Windows, under c-blosc2's package name and
# install layout: bin/libblosc2.dll, its import libraries lib/libblosc2.dll.a
# (MinGW) and lib/libblosc2.lib (MSVC), the static lib/libblosc2.a.
# find_package(Blosc2) gives Blosc2::blosc2_shared and Blosc2::blosc2_static.
# Relocatable: everything is found relative to this file (<prefix>/lib/cmake/Blosc2/).

get_filename_component(_b2nd_prefix "${CMAKE_CURRENT_LIST_DIR}/../../.." ABSOLUTE)

if(MSVC)
  set(_b2nd_implib "${_b2nd_prefix}/lib/libblosc2.lib")
else()
  set(_b2nd_implib "${_b2nd_prefix}/lib/libblosc2.dll.a")
endif()

if(NOT TARGET Blosc2::blosc2_shared)
  add_library(Blosc2::blosc2_shared SHARED IMPORTED)
  set_target_properties(Blosc2::blosc2_shared PROPERTIES
    IMPORTED_LOCATION "${_b2nd_prefix}/bin/libblosc2.dll"
    IMPORTED_IMPLIB "${_b2nd_implib}"
    INTERFACE_INCLUDE_DIRECTORIES "${_b2nd_prefix}/include")
endif()

# (the Python package, pip install libb2nd, carries no static library)
if(NOT TARGET Blosc2::blosc2_static AND EXISTS "${_b2nd_prefix}/lib/libblosc2.a")
  add_library(Blosc2::blosc2_static STATIC IMPORTED)
  set_target_properties(Blosc2::blosc2_static PROPERTIES
    IMPORTED_LOCATION "${_b2nd_prefix}/lib/libblosc2.a"
    INTERFACE_INCLUDE_DIRECTORIES "${_b2nd_prefix}/include"
    INTERFACE_LINK_LIBRARIES "ws2_32;userenv;bcrypt;ntdll;advapi32")
endif()

set(Blosc2_INCLUDE_DIRS "${_b2nd_prefix}/include")
set(Blosc2_LIBRARIES Blosc2::blosc2_shared)
set(Blosc2_THREADS_FOUND TRUE)
set(Blosc2_LZ4_FOUND TRUE)
set(Blosc2_ZLIB_FOUND TRUE)
set(Blosc2_ZSTD_FOUND TRUE)
set(Blosc2_FOUND TRUE)
unset(_b2nd_implib)
unset(_b2nd_prefix)
