//! The plugin filters and codecs c-blosc2 registers at start, through the
//! safe API: chunks and super-chunks (the byte identity with c-blosc2 and the
//! cross-reading are in c_tests/xplugins.c).

use b2nd::chunk::header::filter;
use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::Codec;
use b2nd::schunk::{Storage, SuperChunk};
use b2nd::Error;

/// A smooth float32 field.
fn floats(n: usize) -> Vec<u8> {
    (0..n).flat_map(|i| (15.0f32 + (i as f32 * 0.01).sin() * 3.0).to_ne_bytes()).collect()
}

fn params(codec: Codec, typesize: i32, filters: &[(u8, u8)]) -> CParams {
    let mut p = CParams { compcode: codec as u8, typesize, ..CParams::default() };
    p.filters = [0; 6];
    for (k, &(f, m)) in filters.iter().enumerate() {
        p.filters[6 - filters.len() + k] = f;
        p.filters_meta[6 - filters.len() + k] = m;
    }
    p
}

fn roundtrip(p: &CParams, src: &[u8]) -> Result<(Vec<u8>, usize), Error> {
    let mut out = vec![0u8; src.len() + 64];
    let n = Compressor::new(p.clone())?.compress(src, &mut out)?;
    let mut back = vec![0u8; src.len()];
    Decompressor::new(DParams { nthreads: p.nthreads, ..DParams::default() })
        .decompress(&out[..n], &mut back)?;
    Ok((back, n))
}

#[test]
fn bytedelta_after_shuffle_round_trips_and_pays_on_floats() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    let src = floats(100_000);
    for codec in [Codec::Lz4, Codec::Zstd, Codec::BloscLz] {
        for nthreads in [1, 2] {
            let mut p = params(codec, 4, &[(filter::SHUFFLE, 0), (filter::BYTEDELTA, 4)]);
            p.nthreads = nthreads;
            let (back, with) = roundtrip(&p, &src).unwrap();
            assert_eq!(back, src);
            let (_, without) = roundtrip(&params(codec, 4, &[(filter::SHUFFLE, 0)]), &src).unwrap();
            assert!(with < without, "{codec:?}: bytedelta {with} B, shuffle alone {without} B");
        }
    }
}

#[test]
fn bytedelta_with_meta_0_needs_a_super_chunk() {
    let src = floats(10_000);
    let p = params(Codec::Lz4, 4, &[(filter::SHUFFLE, 0), (filter::BYTEDELTA, 0)]);
    assert_eq!(roundtrip(&p, &src).err(), Some(Error::FilterPipeline));
    // in a super-chunk the typesize is the super-chunk's
    for contiguous in [false, true] {
        let mut sc =
            SuperChunk::new(p.clone(), DParams::default(), Storage { contiguous, ..Storage::default() })
                .unwrap();
        sc.append_buffer(&src).unwrap();
        sc.append_buffer(&src[..3999]).unwrap();
        let mut out = vec![0u8; src.len()];
        assert_eq!(sc.decompress_chunk(0, &mut out).unwrap(), src.len());
        assert_eq!(out, src);
        assert_eq!(sc.decompress_chunk(1, &mut out).unwrap(), 3999);
        assert_eq!(out[..3999], src[..3999]);
        // the same chunk through a bare decompressor has no typesize to take
        let chunk = sc.chunk(0).unwrap().into_owned();
        assert_eq!(
            Decompressor::new(DParams::default()).decompress(&chunk, &mut out).err(),
            Some(Error::FilterPipeline)
        );
    }
}

#[test]
fn int_trunc_zeroes_low_bits_and_refuses_bad_metas() {
    let src: Vec<u8> = (0..50_000u32).flat_map(|i| (i.wrapping_mul(2654435761) >> 7).to_ne_bytes()).collect();
    let p = params(Codec::Zstd, 4, &[(filter::INT_TRUNC, (-9i8) as u8), (filter::SHUFFLE, 0)]);
    let (back, _) = roundtrip(&p, &src).unwrap();
    for (b, s) in back.chunks_exact(4).zip(src.chunks_exact(4)) {
        let (b, s) = (u32::from_ne_bytes(b.try_into().unwrap()), u32::from_ne_bytes(s.try_into().unwrap()));
        assert_eq!(b, s & !0x1ff);
    }
    for (meta, ts) in [(0i8, 4), (33, 4), (-32, 4), (8, 3)] {
        let p = params(Codec::Lz4, ts, &[(filter::INT_TRUNC, meta as u8)]);
        assert_eq!(
            roundtrip(&p, &src[..40_000 / ts as usize * ts as usize]).err(),
            Some(Error::FilterPipeline),
            "meta {meta}"
        );
    }
}
