#!/usr/bin/env bash
# Make sure the tools the build and tests need are here: a Python venv in .venv with
# cmake, the reference c-blosc2 (PyPI wheel blosc2==4.14.1) and a run-time plugin
# (blosc2-openzl==0.0.1, for the tests of plugin loading). Prints the venv path.
set -euo pipefail
cd "$(dirname "$0")/.."
# The README's prerequisites, checked before anything is built
for tool in cargo cc make python3 ${B2ND_NEEDS:-}; do
  command -v "$tool" >/dev/null || {
    echo "$tool not found: the README lists what the scripts need (\"Two commands\"; on Debian or Ubuntu: sudo apt-get install gcc make pkg-config python3-venv git ca-certificates, and Rust from rustup)" >&2
    exit 2
  }
done
venv=$PWD/.venv
if [ ! -x "$venv/bin/cmake" ] || ! "$venv/bin/python" -c 'import blosc2, blosc2_openzl, sys; sys.exit(blosc2.__version__ != "4.14.1")' 2>/dev/null; then
  [ -x "$venv/bin/pip" ] || python3 -m venv "$venv" >&2
  "$venv/bin/pip" install --quiet --disable-pip-version-check cmake blosc2==4.14.1 blosc2-openzl==0.0.1 >&2
fi
echo "$venv"
