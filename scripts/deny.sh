#!/usr/bin/env bash
# cargo-deny over the workspace (deny.toml): the licenses of every crate on an allow-list
# that matches what the release archives ship (scripts/release/deny_licenses.py checks that
# part both ways), duplicate versions reported, crates only from crates.io. The advisory
# database lives on GitHub, which this project's machines cannot reach: `advisories` is not
# checked here (run `cargo deny check advisories` where it can be fetched).
# cargo-deny is built from crates.io once, unoptimized (it only reads metadata; a debug build
# takes a third of the time), into build/tools/cargo-deny.
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_DENY_VERSION=0.20.2
root=build/tools/cargo-deny
if ! "$root/bin/cargo-deny" --version 2>/dev/null | grep -qx "cargo-deny $CARGO_DENY_VERSION"; then
  cargo install --quiet --locked --debug --root "$root" "cargo-deny@$CARGO_DENY_VERSION"
fi
"$root/bin/cargo-deny" --version
"$root/bin/cargo-deny" --locked check licenses bans sources
python3 scripts/release/deny_licenses.py
