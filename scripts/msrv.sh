#!/usr/bin/env bash
# Build the workspace with its oldest supported Rust: the `rust-version` that every crate's
# Cargo.toml states (the workspace's members and loom/ must agree). The toolchain comes from
# rustup (minimal profile); the build goes to target/msrv. Every target of every crate is
# built (library, C library, tool, tests, examples) with every feature, from Cargo.lock as
# it is: a dependency that needs a newer Rust fails here.
#
#   scripts/msrv.sh [cargo build options...]
set -euo pipefail
cd "$(dirname "$0")/.."
manifests=(Cargo.toml crates/capi/Cargo.toml crates/cli/Cargo.toml tests/core-cdylib/Cargo.toml loom/Cargo.toml)
msrv=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' Cargo.toml)
for m in "${manifests[@]}"; do
  v=$(sed -n 's/^rust-version = "\(.*\)"/\1/p' "$m")
  [ "$v" = "$msrv" ] || { echo "msrv.sh: $m says rust-version \"$v\", Cargo.toml \"$msrv\"" >&2; exit 1; }
done
echo "== rust-version $msrv (${#manifests[@]} manifests agree)"
rustup toolchain install "$msrv" --profile minimal >/dev/null 2>&1 || rustup toolchain install "$msrv" --profile minimal
rustc "+$msrv" --version
cargo "+$msrv" build --locked --workspace --all-targets --all-features --target-dir target/msrv "$@" 2>&1 | tail -4
(cd loom && RUSTFLAGS="--cfg loom" cargo "+$msrv" build --locked --tests --target-dir ../target/msrv "$@" 2>&1 | tail -4)
echo "msrv: the workspace builds with Rust $msrv"
