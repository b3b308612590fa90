//! Every chunk in tests/data/compat and tests/data/raw, written
//! by c-blosc 1.x and c-blosc2 2.x/3.x, decodes to its known content.

use b2nd::chunk::{DParams, Decompressor};
use std::path::PathBuf;

fn testdata(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn int32_sequence(nbytes: usize) -> Vec<u8> {
    (0u32..).flat_map(|i| i.to_le_bytes()).take(nbytes).collect()
}

fn decode(bytes: &[u8]) -> Vec<u8> {
    let (nbytes, _, _) = b2nd::chunk::Header::sizes(bytes).unwrap();
    let mut out = vec![0u8; nbytes as usize];
    let n = Decompressor::new(DParams::default()).decompress(bytes, &mut out).unwrap();
    assert_eq!(n, nbytes as usize);
    out
}

#[test]
fn every_blosc_cdata_file_decodes_to_the_int32_sequence() {
    let dir = testdata("compat");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !name.starts_with("blosc-") || !name.ends_with(".cdata") {
            continue;
        }
        let bytes = std::fs::read(&path).unwrap();
        let out = decode(&bytes);
        let expected = int32_sequence(out.len());
        // Bytes after the last whole item of the bitshuffle files are not in
        // them: the old encoder left them out of the stream (the 1.18.0
        // typesize-4 file stores 0x40 0x41 0x42 there), so compare whole items.
        let cmp = match () {
            _ if name.contains("bitshuffle8") => out.len() / 8 * 8,
            _ if name.contains("bitshuffle4") => out.len() / 4 * 4,
            _ => out.len(),
        };
        let first_diff = out[..cmp].iter().zip(&expected[..cmp]).position(|(a, b)| a != b);
        assert_eq!(first_diff, None, "{name}: {} bytes", out.len());
        if !name.contains("bitshuffle") {
            assert_eq!(out.len(), 4_000_000, "{name}");
        }
        checked += 1;
    }
    assert_eq!(checked, 27);
}

#[test]
fn the_rainfall_grid_decodes() {
    let bytes = std::fs::read(testdata("raw/rainfall-grid-150x150.bin")).unwrap();
    let out = decode(&bytes);
    assert_eq!(out.len(), 90_000);
    let values: Vec<f32> = out.chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    assert!(values.iter().all(|v| v.is_finite() && *v >= 0.0 && *v < 1000.0));
}

#[test]
fn shuffled_golden_files_unshuffle_to_the_sequence() {
    let seq = int32_sequence(4_000_000);
    let sh = std::fs::read(testdata("compat/shuffle-2.20.0.cdata")).unwrap();
    let mut out = vec![0u8; seq.len()];
    b2nd::filters::shuffle::unshuffle(4, &sh, &mut out);
    assert_eq!(out, seq);
    b2nd::filters::shuffle::shuffle(4, &seq, &mut out);
    assert_eq!(out, sh);
    let bsh = std::fs::read(testdata("compat/bitshuffle-2.20.0.cdata")).unwrap();
    b2nd::filters::bitshuffle::bitunshuffle(4, &bsh, &mut out, 5);
    assert_eq!(out, seq);
    b2nd::filters::bitshuffle::bitshuffle(4, &seq, &mut out);
    assert_eq!(out, bsh);
}
