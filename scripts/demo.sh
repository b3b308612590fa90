#!/usr/bin/env bash
# Build libb2nd, install it under build/install, build the demo C program through
# the CMake package (find_package(Blosc2)) and run it.
set -euo pipefail
cd "$(dirname "$0")/.."
venv=$(./scripts/setup.sh)
export PATH="$venv/bin:$PATH"  # cmake and python from the venv
./scripts/install.sh build/install
"$venv/bin/cmake" -S examples -B build/demo -DCMAKE_PREFIX_PATH="$PWD/build/install" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$venv/bin/cmake" --build build/demo >/dev/null
cd build/demo && ./demo
