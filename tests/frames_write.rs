//! Frames rebuilt from their parts come out byte-identical to what c-blosc2
//! 3.3 wrote (header, metalayers, offsets index recipe, trailer).

use b2nd::chunk::{CParams, SplitMode};
use b2nd::frame::writer::{write_cframe, FrameParts, Info};
use b2nd::frame::FrameView;
use b2nd::schunk::{Storage, SuperChunk};
use std::path::PathBuf;

fn info_of(f: &FrameView) -> Info {
    let h = &f.header;
    Info {
        cparams: cparams_of(f),
        tcomp: h.tcomp,
        tdecomp: h.tdecomp,
        nbytes: h.nbytes,
        chunksize: h.chunksize,
        vl_blocks: h.vl_blocks(),
        metalayers: h.metalayers.clone(),
        vlmetalayers: f.trailer.vlmetalayers.clone(),
    }
}

fn rebuild(bytes: &[u8]) -> Vec<u8> {
    let f = FrameView::parse(bytes).unwrap();
    let info = info_of(&f);
    let parts = FrameParts {
        info: &info,
        chunks: f.chunks_section(),
        offsets: f.offsets(),
        index_capacity: f.nchunks(),
    };
    write_cframe(&parts).unwrap()
}

fn in_memory_cframe(cparams: CParams) -> SuperChunk {
    let dparams = b2nd::chunk::DParams::default();
    SuperChunk::new(cparams, dparams, Storage { contiguous: true, ..Storage::default() }).unwrap()
}

fn first_difference(a: &[u8], b: &[u8]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y).or((a.len() != b.len()).then_some(a.len().min(b.len())))
}

#[test]
#[cfg_attr(miri, ignore = "Miri: files (isolation)")]
fn frames_written_by_c_blosc2_3_are_rebuilt_byte_for_byte() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for rel in [
        "compat/varchunks-lz4-3.0.0.b2frame",
        "compat/vlblocks-lz4-fixed-3.0.0.b2frame",
        "compat/vlblocks-lz4-variable-3.0.0.b2frame",
        "b2nd/example_day_month_temp.b2nd",
    ] {
        let bytes = std::fs::read(dir.join(rel)).unwrap();
        let again = rebuild(&bytes);
        assert_eq!(first_difference(&again, &bytes), None, "{rel}");
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri: files (isolation)")]
fn rebuilt_frames_of_older_versions_still_parse_and_keep_their_chunks() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for rel in ["frames/frame_simple-zstd.b2frame", "b2nd/example_item_prices.b2nd"] {
        let bytes = std::fs::read(dir.join(rel)).unwrap();
        let again = rebuild(&bytes);
        let (a, b) = (FrameView::parse(&again).unwrap(), FrameView::parse(&bytes).unwrap());
        assert_eq!(a.nchunks(), b.nchunks());
        assert_eq!(a.header.metalayers, b.header.metalayers);
        for i in 0..a.nchunks() {
            assert_eq!(a.chunk_bytes(i).unwrap(), b.chunk_bytes(i).unwrap(), "{rel} chunk {i}");
        }
    }
}

fn cparams_of(f: &FrameView) -> CParams {
    let h = &f.header;
    CParams {
        compcode: h.compcode(),
        compcode_meta: h.compcode_meta,
        clevel: h.clevel(),
        use_dict: h.use_dict(),
        typesize: h.typesize,
        nthreads: 1,
        blocksize: h.blocksize,
        splitmode: SplitMode::from_code(h.splitmode()),
        filters: h.filters,
        filters_meta: h.filters_meta,
        owner: 0,
        schunk: None,
        tuner: None,
    }
}

#[test]
#[cfg_attr(miri, ignore = "Miri: files (isolation)")]
fn appending_the_chunks_again_gives_the_same_frame() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    for rel in [
        "compat/varchunks-lz4-3.0.0.b2frame",
        "b2nd/example_day_month_temp.b2nd",
        "compat/vlblocks-lz4-fixed-3.0.0.b2frame",
    ] {
        let bytes = std::fs::read(dir.join(rel)).unwrap();
        let f = FrameView::parse(&bytes).unwrap();
        let mut c = in_memory_cframe(cparams_of(&f));
        c.set_nthreads(f.header.tcomp, f.header.tdecomp);
        for m in &f.header.metalayers {
            c.meta_add(&m.name, &m.content).unwrap();
        }
        for i in 0..f.nchunks() {
            c.append_chunk(&f.chunk_bytes(i).unwrap()).unwrap();
        }
        for m in &f.trailer.vlmetalayers {
            let content = c_vlmeta_decoded(&m.content);
            c.vlmeta_add(&m.name, &content, None).unwrap();
        }
        assert_eq!(c.chunksize(), f.header.chunksize, "{rel}");
        assert_eq!(first_difference(&c.to_cframe().unwrap(), &bytes), None, "{rel}");
    }
}

#[test]
fn mutations_keep_the_frame_readable_and_consistent() {
    use b2nd::chunk::{Compressor, DParams, Decompressor};
    // (Under Miri BloscLZ: LZ4 is a C library.)
    let codec = if cfg!(miri) { b2nd::codecs::Codec::BloscLz } else { b2nd::codecs::Codec::Lz4 };
    let p = CParams::classic(codec, 5, 1, 4, false);
    let mut comp = Compressor::new(p.clone()).unwrap();
    let chunk_of = |comp: &mut Compressor, seed: u32, n: usize| {
        let src: Vec<u8> = (0..n as u32).flat_map(|i| (i / 7 + seed).to_le_bytes()).take(n).collect();
        let mut dst = vec![0u8; n + 32];
        let k = comp.compress(&src, &mut dst).unwrap();
        dst.truncate(k);
        (src, dst)
    };
    let mut f = in_memory_cframe(p.clone());
    let mut expect: Vec<Vec<u8>> = Vec::new();
    for s in 0..4 {
        let (src, c) = chunk_of(&mut comp, s, 4000);
        f.append_chunk(&c).unwrap();
        expect.push(src);
    }
    let (src, c) = chunk_of(&mut comp, 100, 4000);
    f.insert_chunk(1, &c).unwrap();
    expect.insert(1, src);
    let (src, c) = chunk_of(&mut comp, 200, 4000);
    f.update_chunk(2, &c).unwrap();
    expect[2] = src;
    f.delete_chunk(0).unwrap();
    expect.remove(0);
    f.reorder(&[3, 2, 1, 0]).unwrap();
    expect.reverse();
    let zeros = {
        let mut z = vec![0u8; 4000 + 32];
        let k = comp.compress(&[0u8; 4000], &mut z).unwrap();
        z.truncate(k);
        z
    };
    f.update_chunk(1, &zeros).unwrap();
    expect[1] = vec![0u8; 4000];
    assert_eq!(f.chunksize(), 4000);
    let bytes = f.to_cframe().unwrap().into_owned();
    let v = FrameView::parse(&bytes).unwrap();
    assert_eq!(v.nchunks(), 4);
    assert_eq!(v.header.nbytes, 16_000);
    let mut d = Decompressor::new(DParams::default());
    for (i, want) in expect.iter().enumerate() {
        let mut out = vec![0u8; 4000];
        d.decompress(&v.chunk_bytes(i).unwrap(), &mut out).unwrap();
        assert_eq!(&out, want, "chunk {i}");
    }
    assert!(f.delete_chunk(9).is_err());
    assert!(f.reorder(&[0, 0, 1, 2]).is_err());
    let (_, short) = chunk_of(&mut comp, 7, 2000);
    f.insert_chunk(0, &short).unwrap();
    assert_eq!(f.chunksize(), 0, "a shorter chunk in the middle makes chunks variable");
}

fn c_vlmeta_decoded(stored: &[u8]) -> Vec<u8> {
    let (n, _, _) = b2nd::chunk::Header::sizes(stored).unwrap();
    let mut out = vec![0u8; n as usize];
    b2nd::chunk::Decompressor::new(b2nd::chunk::DParams::default()).decompress(stored, &mut out).unwrap();
    out
}
