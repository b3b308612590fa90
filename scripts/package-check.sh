#!/usr/bin/env bash
# Package the three crates (b2nd, b2nd-capi, b2nd-cli) as crates.io would, and build each from
# its packaged form alone: `cargo publish --workspace --dry-run`.
#
#   scripts/package-check.sh
#
# The manifests say `publish = false` until the project decides to publish, and cargo will not
# package a crate for publishing that depends on an unpublishable one. So the dry run works on
# a copy of the working tree (build/package-check/src: the files git tracks or would track)
# whose three manifests drop that line; nothing else changes. cargo packages the crates
# together, resolving b2nd-capi's and b2nd-cli's dependency on the unpublished b2nd from the
# packages it just made, then builds each packaged crate by itself (its verify step). Prints
# what each package holds and its size against crates.io's 10 MB limit. Needs network access
# to the crates.io index; takes a few minutes (three fresh debug builds).
set -euo pipefail
cd "$(dirname "$0")/.."
work=build/package-check
rm -rf "$work" && mkdir -p "$work/src"
git ls-files -z --cached --others --exclude-standard | xargs -0 cp -P --parents -t "$work/src"
sed -i '/^publish = false$/d' "$work/src/Cargo.toml" "$work/src/crates/capi/Cargo.toml" "$work/src/crates/cli/Cargo.toml"
cd "$work/src"
export CARGO_TARGET_DIR="$PWD/../target" CARGO_TERM_COLOR=never
log=../publish-dry-run.log
if ! cargo publish --workspace --dry-run --exclude b2nd-core-cdylib >"$log" 2>&1; then
  grep -v '^warning: ignoring test' "$log" | tail -30
  echo "package check: FAILED (log: $work/publish-dry-run.log)"
  exit 1
fi
grep -E '^ *(Packaging|Packaged|Verifying|Uploading|Finished)|^warning: aborting upload' "$log"
echo
limit=$((10 * 1024 * 1024))
over=0
for name in b2nd b2nd-capi b2nd-cli; do
  # (a dry run of the workspace leaves them in package/tmp-crate/)
  c=$(find "$CARGO_TARGET_DIR/package" -name "$name-0.1.0.crate" -path '*tmp-crate*' | head -1)
  [ -n "$c" ] || c=$(find "$CARGO_TARGET_DIR/package" -name "$name-0.1.0.crate" | head -1)
  [ -n "$c" ] || { echo "no $name-0.1.0.crate"; over=1; continue; }
  size=$(stat -c %s "$c")
  files=$(tar -tzf "$c" | wc -l)
  printf '%-24s %8.2f MiB (%d files; limit 10 MiB)\n' "$(basename "$c")" "$(echo "$size / 1048576" | bc -l)" "$files"
  [ "$size" -le "$limit" ] || over=1
done
if [ $over = 0 ]; then
  echo "package check: passed"
else
  echo "package check: FAILED (a package is over 10 MiB)"; exit 1
fi
