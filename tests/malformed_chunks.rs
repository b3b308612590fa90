//! Crafted and truncated chunks: every one gets an error, none crashes or
//! reads out of bounds.

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::{Codec, ALL};
use b2nd::Error;

fn sample_chunks() -> Vec<Vec<u8>> {
    let src: Vec<u8> = (0u32..50_000).flat_map(|i| (i / 5).to_le_bytes()).collect();
    let mut out = Vec::new();
    for codec in ALL {
        for shuffle in 0..=2 {
            let mut p = CParams::classic(codec, 5, shuffle, 4, shuffle == 1);
            p.blocksize = 16 * 1024;
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
    let chunk = &sample_chunks()[4];
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
    let mut d = Decompressor::new(DParams { nthreads: 2, typesize: 4, ..DParams::default() });
    let mut out = vec![0u8; 200_000];
    let mut state = 0x1234_5678u32;
    for chunk in sample_chunks() {
        for _ in 0..200 {
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
