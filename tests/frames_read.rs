//! Every frame in tests/data (written by c-blosc2 and python-blosc2)
//! parses, and its chunks decode to the content its README gives.

use b2nd::chunk::{CParams, DParams, Decompressor, Header, Special};
use b2nd::frame::{ChunkRef, FrameView};
use std::path::PathBuf;

fn testdata(rel: &str) -> Vec<u8> {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel);
    std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
}

/// All chunks of a frame, decoded and concatenated.
fn decode_all(f: &FrameView) -> Vec<u8> {
    let mut d = Decompressor::new(DParams::default());
    let mut out = Vec::new();
    for i in 0..f.nchunks() {
        let chunk = f.chunk_bytes(i).unwrap();
        let (n, _, _) = Header::sizes(&chunk).unwrap();
        let mut buf = vec![0u8; n as usize];
        assert_eq!(d.decompress(&chunk, &mut buf).unwrap(), n as usize, "chunk {i}");
        out.extend_from_slice(&buf);
    }
    out
}

#[test]
fn frame_simple_files_decode_to_the_same_bytes() {
    let mut first: Option<Vec<u8>> = None;
    for codec in ["blosclz", "lz4", "lz4hc", "zlib", "zstd"] {
        let bytes = testdata(&format!("frames/frame_simple-{codec}.b2frame"));
        let f = FrameView::parse(&bytes).unwrap();
        assert_eq!(f.nchunks(), 10, "{codec}");
        assert_eq!(f.header.typesize, 4);
        assert_eq!(f.header.nbytes, 2_000_000);
        let data = decode_all(&f);
        assert_eq!(data.len(), 2_000_000);
        match &first {
            None => first = Some(data),
            Some(d) => assert!(d == &data, "{codec} differs from blosclz"),
        }
    }
}

#[test]
fn compat_frames_with_variable_chunks_and_vl_blocks_decode() {
    let bytes = testdata("compat/varchunks-lz4-3.0.0.b2frame");
    let f = FrameView::parse(&bytes).unwrap();
    assert_eq!(f.header.chunksize, 0);
    assert!(f.header.variable_chunks());
    assert_eq!(f.nchunks(), 5);
    assert_eq!(decode_all(&f).len(), 4321);

    for name in ["vlblocks-lz4-fixed-3.0.0.b2frame", "vlblocks-lz4-variable-3.0.0.b2frame"] {
        let bytes = testdata(&format!("compat/{name}"));
        let f = FrameView::parse(&bytes).unwrap();
        assert!(f.header.vl_blocks(), "{name}");
        assert_eq!(f.nchunks(), 5, "{name}");
        let data = decode_all(&f);
        assert_eq!(data.len(), 10_000, "{name}");
        assert!(data.iter().all(|b| b.is_ascii()), "{name}: blocks hold ASCII patterns");
    }
}

#[test]
fn b2nd_files_have_their_metalayer_and_values() {
    let bytes = testdata("b2nd/example_item_prices.b2nd");
    let f = FrameView::parse(&bytes).unwrap();
    let meta = f.header.metalayers.iter().find(|m| m.name == "b2nd").expect("b2nd metalayer");
    assert_eq!(meta.content[2], 3, "ndim 3");
    let values: Vec<f32> =
        decode_all(&f).chunks_exact(4).map(|c| f32::from_le_bytes(c.try_into().unwrap())).collect();
    // Chunks cover the extended shape (16, 30, 250): the padding decodes too.
    assert_eq!(values.len(), 16 * 30 * 250);
    let sum: f64 = values.iter().map(|&v| f64::from(v)).sum();
    assert!((sum - 18_800_850.0).abs() < 100.0, "sum {sum}");

    let bytes = testdata("b2nd/example_day_month_temp.b2nd");
    let f = FrameView::parse(&bytes).unwrap();
    assert_eq!(f.header.header_len, 165);
    assert!(f.header.metalayers.iter().any(|m| m.name == "b2nd"));
    assert_eq!(decode_all(&f).len() as i64, f.header.nbytes);
}

#[test]
fn corrupted_frames_fail_without_panicking() {
    let bytes = testdata("frames/frame_simple-lz4.b2frame");
    let f = FrameView::parse(&bytes).unwrap();
    let kinds: Vec<bool> = (0..10).map(|i| matches!(f.chunk(i).unwrap(), ChunkRef::Stored(_))).collect();
    assert!(kinds.iter().any(|&stored| stored));
    assert!(f.chunk(10).is_err());
    for cut in [0, 10, 86, 87, 200, bytes.len() / 2, bytes.len() - 1] {
        assert!(FrameView::parse(&bytes[..cut]).is_err(), "cut {cut}");
    }
    // A header whose cbytes runs past the end of the frame.
    let mut b = bytes.clone();
    b[39..47].copy_from_slice(&(i64::MAX / 2).to_be_bytes());
    if let Ok(f) = FrameView::parse(&b) {
        for i in 0..f.nchunks() {
            let _ = f.chunk_bytes(i);
        }
    }
    let mut state = 7u32;
    for _ in 0..3000 {
        let mut b = bytes.clone();
        for _ in 0..3 {
            state = state.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            let at = if state & 1 == 0 {
                (state >> 8) as usize % 120
            } else {
                b.len() - 1 - (state >> 8) as usize % 200
            };
            b[at] ^= (state >> 24) as u8 | 1;
        }
        if let Ok(f) = FrameView::parse(&b) {
            for i in 0..f.nchunks() {
                let _ = f.chunk_bytes(i);
            }
        }
    }
}

/// Whether every item of `bytes` (floats of `typesize` bytes, as this
/// machine stores them) is a NaN.
fn all_nan(bytes: &[u8], typesize: usize) -> bool {
    match typesize {
        4 => bytes.chunks_exact(4).all(|b| f32::from_ne_bytes(b.try_into().unwrap()).is_nan()),
        8 => bytes.chunks_exact(8).all(|b| f64::from_ne_bytes(b.try_into().unwrap()).is_nan()),
        _ => unreachable!(),
    }
}

/// NaN special chunks, written by c-blosc2 3.3.5 (python-blosc2's
/// `SChunk.fill_special`, see tests/data/README.md) and by us, decode to
/// NaNs as this machine reads floats (on a big-endian machine too), whole
/// and from any item on.
#[test]
fn nan_chunks_decode_to_the_machines_nans() {
    for (name, ts) in [("nan-f4", 4usize), ("nan-f8", 8)] {
        let bytes = testdata(&format!("golden/{name}.b2frame"));
        let f = FrameView::parse(&bytes).unwrap();
        assert_eq!((f.nchunks(), f.header.typesize as usize), (3, ts), "{name}");
        let data = decode_all(&f);
        assert_eq!(data.len(), 2500 * ts, "{name}");
        assert!(all_nan(&data, ts), "{name}: not NaN as this machine reads it: {:02x?}", &data[..ts]);
        let chunk = f.chunk_bytes(1).unwrap();
        let mut d = Decompressor::new(DParams::default());
        let mut part = vec![0u8; 7 * ts];
        assert_eq!(d.getitem(&chunk, 3, 7, &mut part).unwrap(), 7 * ts);
        assert!(all_nan(&part, ts), "{name}: getitem");

        let p = CParams { typesize: ts as i32, ..CParams::default() };
        let mut ours = vec![0u8; 64];
        let n = b2nd::chunk::special::make(&p, Special::Nan, (1000 * ts) as i32, None, &mut ours).unwrap();
        assert_eq!(&ours[..n], &chunk[..], "typesize {ts}: c-blosc2's NaN chunk, byte for byte");
        let mut back = vec![0u8; 1000 * ts];
        assert_eq!(d.decompress(&ours[..n], &mut back).unwrap(), 1000 * ts);
        assert!(all_nan(&back, ts), "typesize {ts}: our NaN chunk");
    }
}
