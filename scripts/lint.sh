#!/usr/bin/env bash
# Lint the repository's scripts: shellcheck (its default checks, style included; settings in
# .shellcheckrc) on every shell script, and ruff (`ruff check`, its default rules; settings in
# ruff.toml) on every Python file. The files are those git knows or would add: tracked, or
# untracked and not ignored. A shell script is a *.sh file, or an executable file whose first
# line is a sh/bash shebang (.ci/run, scripts/wasm/run). Prints the findings, then one line
# per tool with the number of files it checked; exits 1 on any finding, 2 when a tool cannot
# be installed.
#
# When it is not on PATH, ShellCheck comes from Debian (apt-get install shellcheck, with sudo
# when not root); ruff comes from PyPI, pinned, in a venv of its own: build/tools/ruff.
set -euo pipefail
cd "$(dirname "$0")/.."
RUFF_VERSION=0.17.6

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }

if ! command -v shellcheck >/dev/null; then
  echo "== lint: installing shellcheck (apt-get)" >&2
  { as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck \
      || { as_root apt-get update -qq && as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq shellcheck; }
  } >/dev/null || { echo "lint.sh: cannot install shellcheck (apt-get install shellcheck)" >&2; exit 2; }
fi
venv=build/tools/ruff
if [ "$("$venv/bin/ruff" --version 2>/dev/null)" != "ruff $RUFF_VERSION" ]; then
  echo "== lint: installing ruff $RUFF_VERSION into $venv" >&2
  { python3 -m venv "$venv" && "$venv/bin/pip" install -q --disable-pip-version-check "ruff==$RUFF_VERSION"; } >&2 \
    || { echo "lint.sh: cannot install ruff==$RUFF_VERSION from PyPI into $venv (needs python3-venv)" >&2; exit 2; }
fi

shell=() python=()
while IFS= read -r f; do
  [ -f "$f" ] || continue  # (deleted, not yet committed)
  case $f in
    *.sh) shell+=("$f") ;;
    *.py) python+=("$f") ;;
    *)
      if [ -x "$f" ]; then
        first=$(head -n 1 "$f" | tr -d '\0')
        [[ $first =~ ^#!.*[/[:space:]](ba|da|k)?sh([[:space:]]|$) ]] && shell+=("$f")
      fi ;;
  esac
done < <(git ls-files --cached --others --exclude-standard | sort -u)

# count TOOL OUTPUT STATUS: prints the findings (lines FILE:LINE:COL: ...), sets n; a
# non-zero status without findings (the tool failed) counts as one
count() {
  local out=$2
  [ -z "$out" ] || printf '%s\n' "$out"
  n=$(printf '%s\n' "$out" | grep -cE '^[^ :]+:[0-9]+:[0-9]+: ' || true)
  if [ "$3" != 0 ] && [ "$n" = 0 ]; then
    echo "lint.sh: $1 failed (exit $3)" >&2
    n=1
  fi
}

failed=0
status=0
out=$(shellcheck -x -f gcc "${shell[@]}" 2>&1) || status=$?
count shellcheck "$out" "$status"
echo "shellcheck $(shellcheck --version | sed -n 's/^version: //p'): ${#shell[@]} files, $n findings"
[ "$n" = 0 ] || failed=1

status=0
out=$("$venv/bin/ruff" check --quiet --no-cache --output-format concise "${python[@]}" 2>&1) || status=$?
count ruff "$out" "$status"
echo "ruff $RUFF_VERSION: ${#python[@]} files, $n findings"
[ "$n" = 0 ] || failed=1

exit "$failed"
