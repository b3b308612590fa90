//! Crafted and truncated chunks: every one gets an error, none crashes or
//! reads out of bounds.

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::{Codec, ALL};
use b2nd::Error;

/// The codecs the tests go through: every one, or under Miri BloscLZ alone
/// (the others are C libraries, which Miri cannot call).
const CODECS: &[Codec] = if cfg!(miri) { &[Codec::BloscLz] } else { &ALL };

/// Under Miri smaller chunks, in smaller blocks: it is slow.
const MIRI: bool = cfg!(miri);

fn sample_chunks() -> Vec<Vec<u8>> {
    let src: Vec<u8> =
        (0u32..if MIRI { 2_500 } else { 50_000 }).flat_map(|i| (i / 5).to_le_bytes()).collect();
    let mut out = Vec::new();
    for &codec in CODECS {
        for shuffle in 0..=2 {
            let mut p = CParams::classic(codec, 5, shuffle, 4, shuffle == 1);
            p.blocksize = if MIRI { 2 * 1024 } else { 16 * 1024 };
            let mut c = Compressor::new(p).unwrap();
            let mut dst = vec![0u8; src.len() + 32];
            let n = c.compress(&src, &mut dst).unwrap();
            dst.truncate(n);
            out.push(dst);
        }
    }
    out
}

fn set_i32(b: &mut [u8], at: usize, v: i32) {
    b[at..at + 4].copy_from_slice(&v.to_le_bytes());
}

#[test]
fn truncations_fail() {
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 200_000];
    for chunk in sample_chunks() {
        for cut in [0, 1, 15, 16, 31, 32, 40, chunk.len() / 2, chunk.len() - 1] {
            assert!(d.decompress(&chunk[..cut], &mut out).is_err(), "cut {cut}");
            assert!(d.getitem(&chunk[..cut], 10, 10, &mut out).is_err(), "cut {cut}");
        }
    }
}

#[test]
fn crafted_headers_fail_with_the_expected_codes() {
    // (LZ4 with shuffle and delta; under Miri BloscLZ)
    let chunk = &sample_chunks()[if MIRI { 1 } else { 4 }];
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 200_000];
    let mut c = chunk.clone();
    let len = c.len() as i32;
    set_i32(&mut c, 12, len + 1); // cbytes past the buffer
    assert_eq!(d.decompress(&c, &mut out), Err(Error::InvalidHeader));
    let mut c = chunk.clone();
    set_i32(&mut c, 12, i32::MAX); // huge cbytes
    assert_eq!(d.decompress(&c, &mut out), Err(Error::InvalidHeader));
    let mut c = chunk.clone();
    set_i32(&mut c, 8, 0); // zero blocksize
    assert_eq!(d.decompress(&c, &mut out), Err(Error::InvalidHeader));
    let mut c = chunk.clone();
    set_i32(&mut c, 8, 1); // tiny blocksize: bstarts past the end
    assert_eq!(d.decompress(&c, &mut out), Err(Error::ReadBuffer));
    let mut c = chunk.clone();
    set_i32(&mut c, 4, 150_000_000); // nbytes larger than the destination
    assert_eq!(d.decompress(&c, &mut out), Err(Error::WriteBuffer));
    let mut c = chunk.clone();
    let len = c.len() as i32;
    set_i32(&mut c, 32, len + 1000); // bstart out of range
    assert_eq!(d.decompress(&c, &mut out), Err(Error::Data));
    let mut c = chunk.clone();
    set_i32(&mut c, 32, -5);
    assert_eq!(d.decompress(&c, &mut out), Err(Error::Data));
    let mut c = chunk.clone();
    c[16] = 200; // unknown filter
    assert_eq!(d.decompress(&c, &mut out), Err(Error::FilterPipeline));
    let mut c = chunk.clone();
    c[31] = 0x70; // unknown special value
    assert_eq!(d.decompress(&c, &mut out), Err(Error::InvalidHeader));
    let mut c = chunk.clone();
    c[2] = (c[2] & 0x1f) | (5 << 5); // reserved codec format
    assert!(d.decompress(&c, &mut out).is_err());
    let mut c = chunk.clone();
    let bstart = i32::from_le_bytes(c[32..36].try_into().unwrap()) as usize;
    set_i32(&mut c, bstart, i32::MAX); // stream length past the end
    assert_eq!(d.decompress(&c, &mut out), Err(Error::ReadBuffer));
    let mut c = chunk.clone();
    set_i32(&mut c, bstart, -300); // run of a non-byte value
    c[bstart + 4] = 1;
    assert_eq!(d.decompress(&c, &mut out), Err(Error::RunLength));
}

#[test]
fn random_corruption_never_panics() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    let mut d = Decompressor::new(DParams { nthreads: 2, typesize: 4, ..DParams::default() });
    let mut out = vec![0u8; 200_000];
    let mut state = 0x1234_5678u32;
    for chunk in sample_chunks() {
        for _ in 0..if MIRI { 8 } else { 200 } {
            let mut c = chunk.clone();
            for _ in 0..4 {
                state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                let at = (state as usize >> 8) % c.len();
                c[at] ^= (state >> 24) as u8 | 1;
            }
            let _ = d.decompress(&c, &mut out);
            let _ = d.getitem(&c, 100, 1000, &mut out);
        }
    }
    let _ = Codec::Zstd;
}

/// Chunks that name the plugin filters and codecs (ids 32-40) in any slot,
/// with any meta, decoded with and without a super-chunk (and with a `b2nd`
/// metalayer that may not match): an error or some bytes, never a crash.
#[test]
fn crafted_plugin_chunks_never_panic() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    use b2nd::chunk::header::filter;
    use b2nd::chunk::SchunkView;
    use std::sync::Arc;
    let src: Vec<u8> =
        (0u32..if MIRI { 2_000 } else { 20_000 }).flat_map(|i| ((i as f32) * 0.5).to_le_bytes()).collect();
    let mut p = CParams::classic(if MIRI { Codec::BloscLz } else { Codec::Lz4 }, 5, 1, 4, false);
    p.blocksize = if MIRI { 2 * 1024 } else { 8 * 1024 };
    p.filters[4] = filter::SHUFFLE;
    p.filters[5] = filter::BYTEDELTA;
    p.filters_meta[5] = 4;
    let mut base = vec![0u8; src.len() + 64];
    let n = Compressor::new(p).unwrap().compress(&src, &mut base).unwrap();
    base.truncate(n);
    // a b2nd metalayer of a 2-D array of 100 x 200 floats, chunks 50 x 100, blocks 25 x 40
    let meta = b2nd::ndmeta::Meta {
        shape: vec![100, 200],
        chunkshape: vec![50, 100],
        blockshape: vec![25, 40],
        dtype: "<f4".into(),
        dtype_format: 0,
    };
    let views = [
        None,
        Some(SchunkView { typesize: 4, b2nd: None }),
        Some(SchunkView { typesize: 4, b2nd: Some(Arc::from(meta.serialize().unwrap())) }),
        Some(SchunkView { typesize: 3, b2nd: Some(Arc::from(&b"\x96\x00\x02\x92\xd3"[..])) }),
    ];
    let mut out = vec![0u8; src.len()];
    let mut state = 0x9e37_79b9u32;
    let mut next = || {
        state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        state >> 8
    };
    for view in &views {
        let mut d = Decompressor::new(DParams {
            nthreads: 1 + (next() % 2) as i16,
            schunk: view.clone(),
            ..DParams::default()
        });
        for _ in 0..if MIRI { 20 } else { 400 } {
            let mut c = base.clone();
            match next() % 3 {
                // a plugin filter in a slot, with some meta
                0 => {
                    let slot = 16 + (next() % 6) as usize;
                    c[slot] = 32 + (next() % 5) as u8;
                    c[slot + 8] = next() as u8; // its meta (filters_meta follow at 24..)
                }
                // a plugin codec: user-defined format, id 32-40, some meta
                1 => {
                    c[2] = (c[2] & 0x1f) | (6 << 5);
                    c[22] = 32 + (next() % 9) as u8;
                    c[23] = next() as u8;
                }
                // both, and a typesize
                _ => {
                    c[16 + (next() % 6) as usize] = 32 + (next() % 5) as u8;
                    c[2] = (c[2] & 0x1f) | (6 << 5);
                    c[22] = 32 + (next() % 4) as u8;
                    c[3] = next() as u8;
                }
            }
            if MIRI && (33..=35).contains(&c[22]) {
                c[22] = 32; // (NDLZ for ZFP, a C library, under Miri)
            }
            let _ = d.decompress(&c, &mut out);
            let _ = d.getitem(&c, i64::from(next() % 5000), 700, &mut out);
        }
    }
}
