//! The zlib codec writes the bytes c-blosc2 3.3.5 writes: both run zlib-ng
//! 2.3.3, built here by `build.rs` from `vendor/zlib-ng`. The chunks in
//! `tests/data/golden/` were written by the reference (the blosc2 4.14.1 wheel)
//! from the input below; the test also passes with zlib-ng's portable kernels
//! (`B2ND_ZLIB_NG_PORTABLE=1`), which `scripts/test.sh` checks.

use b2nd::chunk::header::filter;
use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::Codec;

/// 40,000 int32 values `(i*i) % 1009 + i / 97`, little-endian.
fn input() -> Vec<u8> {
    (0i64..40_000).flat_map(|i| (((i * i) % 1009 + i / 97) as i32).to_le_bytes()).collect()
}

fn golden(level: u8) -> Vec<u8> {
    let path = format!("{}/tests/data/golden/zlib-l{level}-shuffle-int32.chunk", env!("CARGO_MANIFEST_DIR"));
    std::fs::read(&path).unwrap_or_else(|e| panic!("{path}: {e}"))
}

#[test]
fn zlib_chunks_are_the_bytes_c_blosc2_writes() {
    let src = input();
    for level in [1u8, 5, 9] {
        let mut p = CParams {
            compcode: Codec::Zlib as u8,
            clevel: level,
            typesize: 4,
            nthreads: 1,
            ..CParams::default()
        };
        p.filters = [filter::SHUFFLE, 0, 0, 0, 0, 0]; // where python-blosc2 puts `filters=[SHUFFLE]`
        let ours = Compressor::new(p).unwrap().compress_to_vec(&src).unwrap();
        let theirs = golden(level);
        assert_eq!(ours.len(), theirs.len(), "level {level}: chunk sizes");
        let first = ours.iter().zip(&theirs).position(|(a, b)| a != b);
        assert!(first.is_none(), "level {level}: chunk bytes differ from byte {first:?} on");
    }
}

#[test]
fn zlib_chunks_of_c_blosc2_decode() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    let src = input();
    for level in [1u8, 5, 9] {
        for nthreads in [1, 2] {
            let mut out = vec![0u8; src.len()];
            let mut d = Decompressor::new(DParams { nthreads, ..DParams::default() });
            assert_eq!(d.decompress(&golden(level), &mut out).unwrap(), src.len());
            assert!(out == src, "level {level}, {nthreads} threads");
        }
    }
}
