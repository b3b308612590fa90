#!/usr/bin/env bash
# Run every test: Rust unit and integration tests (the generated-header check among them), the
# C tests through the installed CMake package (with the ABI and cross-compatibility
# tests against the reference c-blosc2 3.3.5 from the blosc2==4.14.1 wheel), linking
# through pkg-config and -lblosc2, and a short, repeatable fuzzing run (with the replay
# of every input the fuzzers found).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never
# The tests' release builds skip the shipped library's cross-crate LTO: each of some 30 test
# programs would redo it (it made a target's test build several times slower). The release
# archive (stage "a release archive") is built as shipped, with LTO, and tested unpacked.
export CARGO_PROFILE_RELEASE_LTO=false
venv=$(B2ND_NEEDS=pkg-config ./scripts/setup.sh)
export PATH="$venv/bin:$PATH"  # cmake and python from the venv
ref=$("$venv/bin/python" -c 'import blosc2, os; print(os.path.dirname(blosc2.__file__))')

# Each stage's wall time, printed at the end (and on a failure), so that a CI log says
# where the time goes.
timings=()
stage_name="setup (scripts/setup.sh)"
stage_start=0
stage() {
  timings+=("$(printf '%6ds  %s' $((SECONDS - stage_start)) "$stage_name")")
  stage_name=$1
  stage_start=$SECONDS
  [ "$1" = "done" ] || echo "== $1"
}
report_timings() {
  [ "$stage_name" = "done" ] || stage "done"
  echo "== time per stage (total ${SECONDS}s)"
  printf '%s\n' "${timings[@]}"
}
trap report_timings EXIT

stage "gates: rustfmt, shellcheck and ruff (scripts/lint.sh)"
rustup component add rustfmt clippy >/dev/null 2>&1 || true  # (a minimal toolchain lacks them)
cargo fmt --all --check
(cd loom && cargo fmt --check)
./scripts/lint.sh

# The toolchains of the later stages (Debian packages, Rust targets, PyPI tools) install in
# the background while the stages before them build and test: one after the other, as
# apt-get takes a lock; each stage waits for its own (build/setup/NAME.rc). A machine that
# cannot install a target's toolchain (no network) skips that stage, and says so.
rm -rf build/setup && mkdir -p build/setup
(
  trap - EXIT
  set +e
  for step in "i686 setup" "aarch64 setup-build" "windows setup" "macos setup" "wasm32 setup"; do
    read -r name what <<<"$step"
    ./scripts/cross.sh "$name" "$what" >"build/setup/$name.log" 2>&1
    echo $? >"build/setup/$name.rc"
  done
  ./scripts/release.sh --setup >build/setup/release.log 2>&1; echo $? >build/setup/release.rc
  ./scripts/fuzz.sh --setup >build/setup/fuzz.log 2>&1; echo $? >build/setup/fuzz.rc
) </dev/null &
# setup_ok NAME: waits for NAME's setup; 0 if it succeeded, else its log's end and 1
setup_ok() {
  while [ ! -s "build/setup/$1.rc" ]; do sleep 2; done
  [ "$(cat "build/setup/$1.rc")" = 0 ] && return 0
  tail -3 "build/setup/$1.log"
  return 1
}

stage "clippy, warnings as errors"
cargo clippy --workspace --all-targets --all-features -- -D warnings

stage "cargo-deny: licenses, bans, sources (scripts/deny.sh)"
./scripts/deny.sh

stage "cargo test: build"
cargo test --release --features ndarray --no-run 2>&1 | tail -1
# (the shared and static C libraries, which the tests' build does not link: stage "install"
# takes them and the tool from here, built with the tests' features so nothing is rebuilt)
cargo build --release -p b2nd-capi -p b2nd-cli --features b2nd/ndarray 2>&1 | tail -1
stage "cargo test: run"
# (crates/capi/tests/headers.rs: include/ is what cbindgen generates from the sources)
cargo test --release --features ndarray -- --include-ignored 2>&1
echo "== the README's Rust example (examples/rust/arrays.rs)"
./target/release/examples/arrays

stage "cargo doc, warnings as errors"
RUSTDOCFLAGS="-D warnings" cargo doc --no-deps --features ndarray 2>&1 | tail -3

stage "zlib-ng's portable kernels, built without the venv's cmake (other architectures use them)"
PATH="${PATH#"$venv/bin:"}" B2ND_ZLIB_NG_PORTABLE=1 cargo test --test zlib_golden --target-dir target/portable 2>&1

stage "install"
# (of the library and tool the Rust tests built: target/release; the demo's install.sh builds)
rm -rf build/install build/c_tests build/c_tests_asan
./scripts/install.sh build/install --built target/release

stage "C tests (ctest)"
# A shared library on the core crate alone, for the core_cdylib_* tests.
cargo build --release -p b2nd-core-cdylib 2>&1 | tail -1
"$venv/bin/cmake" -S c_tests -B build/c_tests -DCMAKE_PREFIX_PATH="$PWD/build/install" \
  -DREF_BLOSC2_PREFIX="$ref" -DCORE_CDYLIB="$PWD/target/release/libb2nd_embed.so" -DCMAKE_BUILD_TYPE=Release >/dev/null
"$venv/bin/cmake" --build build/c_tests -j2 >/dev/null
(cd build/c_tests && "$venv/bin/ctest" --output-on-failure -j2)

stage "C tests under AddressSanitizer and UBSan"
"$venv/bin/cmake" -S c_tests -B build/c_tests_asan -DCMAKE_PREFIX_PATH="$PWD/build/install" \
  -DB2ND_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug >/dev/null
"$venv/bin/cmake" --build build/c_tests_asan -j2 --target test_chunk_api test_null_args test_plugins test_hooks test_b2nd test_b2nd_layouts test_conformance \
  test_schunk_api test_schunk_threads test_frame_crafted test_udio_wrapped >/dev/null
(cd build/c_tests_asan && UBSAN_OPTIONS=halt_on_error=1 "$venv/bin/ctest" --output-on-failure \
  -R '^(test_(chunk_api|null_args|plugins|hooks|b2nd|schunk_api|schunk_threads|frame_crafted)|schunk_scratch_prepare|b2nd_(zero|blocks|views|copies|unaligned|aligned|stale)_[a-z_]*|conformance_[a-z_]*|udio_wrapped_[a-z]*)$')

stage "pkg-config and -lblosc2"
export PKG_CONFIG_PATH="$PWD/build/install/lib/pkgconfig"
# shellcheck disable=SC2046  # pkg-config's flags, split into words
cc -std=c11 -Wall -Werror c_tests/test_null_args.c $(pkg-config --cflags --libs blosc2) \
  -Wl,-rpath,"$PWD/build/install/lib" -o build/null_args_pkgconfig
./build/null_args_pkgconfig
cc -std=c11 -Wall -Werror -Ibuild/install/include c_tests/test_null_args.c -Lbuild/install/lib -lblosc2 \
  -Wl,-rpath,"$PWD/build/install/lib" -o build/null_args_lblosc2
./build/null_args_lblosc2
stage "the thread pool's loom model (scripts/loom.sh)"
./scripts/loom.sh

stage "i686 built and tested (scripts/cross.sh i686 test)"
# (The emulated runs, aarch64 and s390x tests, take longer: scripts/cross.sh
# TARGET test, results in docs/PORTING.md.)
if setup_ok i686; then
  ./scripts/cross.sh i686 test
else
  echo "cross: i686 SKIPPED (its toolchain could not be installed)"
fi
stage "aarch64 built (scripts/cross.sh aarch64 build)"
if setup_ok aarch64; then
  ./scripts/cross.sh aarch64 build
else
  echo "cross: aarch64 build SKIPPED (its toolchain could not be installed)"
fi

stage "Windows x86-64 (scripts/cross.sh windows ci): mingw-w64 builds, wine runs"
# The Rust tests (the model test with 2 of its 12 seeds), the file exchanges with
# Linux and python-blosc2, the DLL's exports, the ABI, a C program on the import
# library. ctest and c-blosc2's tests under wine: scripts/cross.sh windows test.
if setup_ok windows; then
  ./scripts/cross.sh windows ci
else
  echo "cross: windows SKIPPED (mingw-w64 or wine could not be installed)"
fi

stage "macOS built and linked (scripts/cross.sh macos ci)"
# macOS: the C library for arm64 and x86-64 (zig and lld; never run here), its exports, names
# and ABI, our C tests linked, universal2. wasm32-wasip1: the core and the C library, one C
# program run under wasmtime. The tests (wasm32: Rust, C, c-blosc2's, file exchanges) take
# longer: scripts/cross.sh wasm32 test, results in docs/PORTING.md.
if setup_ok macos; then
  ./scripts/cross.sh macos ci
else
  echo "cross: macos SKIPPED (zig or llvm could not be installed)"
fi
stage "wasm32-wasip1 (scripts/cross.sh wasm32 ci)"
if setup_ok wasm32; then
  ./scripts/cross.sh wasm32 ci
else
  echo "cross: wasm32 SKIPPED (its Rust std, zig or wasmtime could not be installed)"
fi

stage "a release archive and wheel (scripts/release.sh VERSION linux-x86_64): glibc 2.17, tested unpacked"
# (the other archives, the wheels' clients and the reproducibility check: docs/RELEASE.md)
setup_ok release || true  # (release.sh installs what is missing)
./scripts/release.sh "$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)" linux-x86_64

stage "the CI workflows of .github/ (scripts/actionlint.sh; they never run here)"
./scripts/actionlint.sh

stage "fuzzing, short budget (scripts/fuzz.sh; longer runs: scripts/fuzz.sh SECONDS)"
setup_ok fuzz || true  # (fuzz.sh says what is missing)
./scripts/fuzz.sh --runs 40000
echo "all tests passed"
