#!/usr/bin/env bash
# Runs every test of the project on a fresh machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
cargo test --release 2>&1
