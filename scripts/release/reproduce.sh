#!/usr/bin/env bash
# Are two release builds of one commit byte-identical? Clones HEAD twice, into directories of
# different names and depths (build/repro/a/ and build/repro/second-tree/x/), runs
# scripts/release.sh VERSION --no-test [TARGET...] in each, and compares every file of their
# dist/ (SHA256SUMS included). For a file that differs, lists the archive members that differ.
#
#   scripts/release/reproduce.sh VERSION [TARGET...]
#
# Prints "N passed, N failed": one per file of dist/. Each clone builds from nothing (its own
# target/dist), so this takes twice a release build.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$PWD
version=${1:?usage: reproduce.sh VERSION [TARGET...]}; shift
work=$root/build/repro
rm -rf "$work"
dirs=("$work/a" "$work/second-tree/x")
commit=$(git rev-parse HEAD)  # (both clones at this commit, whatever main becomes meanwhile)
for d in "${dirs[@]}"; do
  mkdir -p "$(dirname "$d")"
  git clone -q --no-hardlinks "$root" "$d"
  git -C "$d" checkout -q "$commit"
  echo "== release build in $d"
  (cd "$d" && ./scripts/release.sh "$version" --no-test "$@") >"$d.log" 2>&1 || { tail -20 "$d.log"; exit 1; }
done
passed=0 failed=0
a=${dirs[0]}/dist b=${dirs[1]}/dist
for f in $(cd "$a" && ls); do
  if cmp -s "$a/$f" "$b/$f"; then
    passed=$((passed + 1)); echo "  identical  $f"
  else
    failed=$((failed + 1)); echo "  DIFFERENT  $f"
    # shellcheck disable=SC2016 # ($TAR_FILENAME: tar's, in the command it runs per member)
    case $f in
      *.tar.gz) diff <(tar -xzOf "$a/$f" --to-command='sha256sum | sed "s|-|$TAR_FILENAME|"') \
                     <(tar -xzOf "$b/$f" --to-command='sha256sum | sed "s|-|$TAR_FILENAME|"') | grep '^[<>]' | head -20 || true ;;
      *.zip|*.whl) diff <(python3 -c 'import zipfile,hashlib,sys; z=zipfile.ZipFile(sys.argv[1]); [print(hashlib.sha256(z.read(n)).hexdigest(), n) for n in z.namelist()]' "$a/$f") \
                        <(python3 -c 'import zipfile,hashlib,sys; z=zipfile.ZipFile(sys.argv[1]); [print(hashlib.sha256(z.read(n)).hexdigest(), n) for n in z.namelist()]' "$b/$f") | grep '^[<>]' | head -20 || true ;;
    esac
  fi
done
echo "reproducible: $passed passed, $failed failed"
[ "$failed" = 0 ]
