# CMake toolchain file: Windows x86-64 programs built on Linux with mingw-w64
# (Debian's gcc-mingw-w64), run under wine (ctest runs each test through it).
#   cmake -DCMAKE_TOOLCHAIN_FILE=cmake/windows/mingw-w64-x86_64.cmake ...
# The tests find libblosc2.dll through WINEPATH (scripts/cross_windows.sh sets it).
set(CMAKE_SYSTEM_NAME Windows)
set(CMAKE_SYSTEM_PROCESSOR x86_64)
set(CMAKE_C_COMPILER x86_64-w64-mingw32-gcc)
set(CMAKE_CXX_COMPILER x86_64-w64-mingw32-g++)
set(CMAKE_RC_COMPILER x86_64-w64-mingw32-windres)
set(CMAKE_FIND_ROOT_PATH /usr/x86_64-w64-mingw32)
# programs of the build machine (python, the compilers); libraries and headers of
# the target; packages from both (the install given in CMAKE_PREFIX_PATH)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE BOTH)
find_program(_b2nd_wine NAMES wine wine64 REQUIRED)
set(CMAKE_CROSSCOMPILING_EMULATOR ${_b2nd_wine})
