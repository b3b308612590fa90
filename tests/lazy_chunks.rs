//! Lazy chunks (README_CHUNK_FORMAT.rst, "Trailer"): header, bstarts and a
//! trailer in memory, blocks read on demand from the frame that holds them.

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor, Header, LazySource};
use b2nd::codecs::Codec;
use b2nd::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};

/// A frame in memory: `pad` bytes, then the chunk.
struct Frame {
    bytes: Vec<u8>,
    reads: AtomicUsize,
}

impl LazySource for Frame {
    fn read(&self, nchunk: i32, chunk_offset: i64, offset: i64, buf: &mut [u8]) -> Result<()> {
        assert_eq!(nchunk, 7);
        let at = usize::try_from(chunk_offset + offset).map_err(|_| Error::FileRead)?;
        let src = self.bytes.get(at..at + buf.len()).ok_or(Error::FileRead)?;
        buf.copy_from_slice(src);
        self.reads.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// The lazy form of `chunk`, stored at byte `offset` of its frame.
fn lazy_of(chunk: &[u8], offset: i64) -> Vec<u8> {
    let h = Header::parse(chunk).unwrap();
    let n = h.nblocks();
    let mut lazy = chunk[..32].to_vec();
    lazy[31] |= 0x08;
    let bstart = |j: usize| i32::from_le_bytes(chunk[32 + 4 * j..36 + 4 * j].try_into().unwrap());
    if h.memcpyed() {
        lazy.extend(std::iter::repeat_n(0, 4 * n));
    } else {
        lazy.extend_from_slice(&chunk[32..32 + 4 * n]);
    }
    lazy.extend_from_slice(&7i32.to_le_bytes());
    lazy.extend_from_slice(&offset.to_le_bytes());
    for j in 0..n {
        let size = if h.memcpyed() {
            (h.nbytes as usize - j * h.blocksize as usize).min(h.blocksize as usize) as i32
        } else {
            // Blocks compressed by several threads may be stored out of order.
            let next = (0..n).map(bstart).filter(|&b| b > bstart(j)).min().unwrap_or(h.cbytes);
            next - bstart(j)
        };
        lazy.extend_from_slice(&size.to_le_bytes());
    }
    lazy
}

fn check(p: CParams, src: &[u8]) {
    let mut c = Compressor::new(p.clone()).unwrap();
    let mut chunk = vec![0u8; src.len() + 32];
    let n = c.compress(src, &mut chunk).unwrap();
    chunk.truncate(n);
    let pad = 1000usize;
    let mut frame = vec![0xee; pad];
    frame.extend_from_slice(&chunk);
    let frame = Frame { bytes: frame, reads: AtomicUsize::new(0) };
    let lazy = lazy_of(&chunk, pad as i64);
    let mut d = Decompressor::new(DParams { nthreads: p.nthreads, typesize: 4, ..DParams::default() });
    let mut out = vec![0u8; src.len()];
    assert_eq!(d.decompress(&lazy, &mut out), Err(Error::InvalidParam));
    assert_eq!(
        d.decompress_lazy(&lazy, &mut out, Some(&frame)).unwrap_or_else(|e| panic!("{p:?}: {e:?}")),
        src.len()
    );
    assert_eq!(out, src);
    let before = frame.reads.load(Ordering::Relaxed);
    let mut part = vec![0u8; 400];
    d.getitem_bytes_lazy(&lazy, 123_456, 400, &mut part, Some(&frame))
        .unwrap_or_else(|e| panic!("{p:?}: {e:?}"));
    assert_eq!(part, src[123_456..123_856]);
    let reads = frame.reads.load(Ordering::Relaxed) - before;
    assert!(reads <= 4, "getitem read {reads} times");
}

fn ints(n: usize) -> Vec<u8> {
    (0u32..).flat_map(|i| (i / 3).to_le_bytes()).take(n).collect()
}

#[test]
fn lazy_chunks_decode_through_their_source() {
    let src = ints(1_000_000);
    for (codec, shuffle, delta, nthreads) in
        [(Codec::Lz4, 1, false, 1), (Codec::Zstd, 2, true, 2), (Codec::BloscLz, 1, true, 1)]
    {
        let mut p = CParams::classic(codec, 5, shuffle, 4, delta);
        p.blocksize = 64 * 1024;
        p.nthreads = nthreads;
        check(p, &src);
    }
    let mut p = CParams::classic(Codec::Zstd, 5, 1, 4, false);
    p.use_dict = true;
    check(p, &src);
    let mut p = CParams::classic(Codec::Lz4, 0, 1, 4, false);
    p.blocksize = 64 * 1024;
    check(p, &src);
}

#[test]
fn lazy_trailers_that_lie_fail() {
    let src = ints(200_000);
    let mut p = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    p.blocksize = 32 * 1024;
    let mut c = Compressor::new(p).unwrap();
    let mut chunk = vec![0u8; src.len() + 32];
    let n = c.compress(&src, &mut chunk).unwrap();
    chunk.truncate(n);
    let frame = Frame { bytes: chunk.clone(), reads: AtomicUsize::new(0) };
    let lazy = lazy_of(&chunk, 0);
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; src.len()];
    let trailer = lazy.len() - 4 * Header::parse(&chunk).unwrap().nblocks() - 12;
    let mut bad = lazy.clone();
    bad[trailer + 12..trailer + 16].copy_from_slice(&i32::MAX.to_le_bytes());
    assert!(d.decompress_lazy(&bad, &mut out, Some(&frame)).is_err());
    let mut bad = lazy.clone();
    bad[trailer + 4..trailer + 12].copy_from_slice(&(-5i64).to_le_bytes());
    assert!(d.decompress_lazy(&bad, &mut out, Some(&frame)).is_err());
    let mut bad = lazy.clone();
    bad[trailer + 4..trailer + 12].copy_from_slice(&(1i64 << 40).to_le_bytes());
    assert_eq!(d.decompress_lazy(&bad, &mut out, Some(&frame)), Err(Error::FileRead));
    assert_eq!(d.decompress_lazy(&lazy[..lazy.len() - 1], &mut out, Some(&frame)), Err(Error::ReadBuffer));
}

/// `chunk` with its blocks stored in the order `order` (block `order[k]`
/// goes k-th), and `alias` blocks pointed at another block's bytes.
fn restored(chunk: &[u8], order: &[usize], alias: &[(usize, usize)]) -> Vec<u8> {
    let h = Header::parse(chunk).unwrap();
    let n = h.nblocks();
    let bstart = |j: usize| i32::from_le_bytes(chunk[32 + 4 * j..36 + 4 * j].try_into().unwrap()) as usize;
    let end = |j: usize| (0..n).map(bstart).filter(|&b| b > bstart(j)).min().unwrap_or(h.cbytes as usize);
    let mut out = chunk[..32 + 4 * n].to_vec();
    for &j in order {
        let at = out.len() as i32;
        out[32 + 4 * j..36 + 4 * j].copy_from_slice(&at.to_le_bytes());
        out.extend_from_slice(&chunk[bstart(j)..end(j)]);
    }
    for &(j, to) in alias {
        let s: [u8; 4] = out[32 + 4 * to..36 + 4 * to].try_into().unwrap();
        out[32 + 4 * j..36 + 4 * j].copy_from_slice(&s);
    }
    let cbytes = out.len() as i32;
    out[12..16].copy_from_slice(&cbytes.to_le_bytes());
    out
}

#[test]
fn a_frame_file_gives_each_lazy_block_its_stored_size_in_any_order() {
    // Chunks whose blocks are stored in order, in reverse, and with two
    // blocks sharing their bytes: the lazy chunks a frame file hands out
    // give every block the size from its start to the next larger start,
    // and reads through them return the items.
    use b2nd::schunk::{Storage, SuperChunk};
    let block = 4096;
    let mut src = ints(16 * block);
    let (b2, b3) = src.split_at_mut(3 * block);
    b3[..block].copy_from_slice(&b2[2 * block..]); // blocks 2 and 3 hold the same items
    let mut p = CParams::classic(Codec::Lz4, 5, 1, 4, false);
    p.blocksize = block as i32;
    let mut c = Compressor::new(p.clone()).unwrap();
    let mut chunk = vec![0u8; src.len() + 64];
    let n = c.compress(&src, &mut chunk).unwrap();
    chunk.truncate(n);
    let nblocks = Header::parse(&chunk).unwrap().nblocks();
    assert_eq!(nblocks, 16);
    let forward: Vec<usize> = (0..16).collect();
    let backward: Vec<usize> = (0..16).rev().collect();
    let chunks = [
        chunk.clone(),
        restored(&chunk, &forward, &[(3, 2)]),
        restored(&chunk, &backward, &[]),
        restored(&chunk, &backward, &[(3, 2)]),
    ];
    let dir = b2nd::os::temp_dir().join(format!("b2nd-lazy-order-{}", b2nd::os::process_id()));
    std::fs::create_dir_all(&dir).unwrap();
    for (k, contiguous) in [true, false].into_iter().enumerate() {
        let path = dir.join(format!("f{k}.b2frame")).to_str().unwrap().to_string();
        let _ = std::fs::remove_file(&path);
        let _ = std::fs::remove_dir_all(&path);
        let storage = Storage { contiguous, urlpath: Some(path), ..Storage::default() };
        let mut sc = SuperChunk::new(p.clone(), DParams::default(), storage).unwrap();
        for ch in &chunks {
            sc.append_chunk(ch).unwrap();
        }
        for (i, ch) in chunks.iter().enumerate() {
            let lazy = sc.lazy_chunk(i).unwrap();
            let want = lazy_of(ch, 0);
            let sizes = |l: &[u8]| l[l.len() - 4 * nblocks..].to_vec();
            assert_eq!(sizes(&lazy), sizes(&want), "chunk {i}, contiguous {contiguous}");
            let mut out = vec![0u8; src.len()];
            assert_eq!(sc.decompress_chunk(i, &mut out).unwrap(), src.len());
            assert!(out == src, "chunk {i}");
            let items = (src.len() / 4) as i64;
            let mut part = vec![0u8; 4 * 700];
            for b in 0..16i64 {
                let start = (i as i64 * items + b * 1024 + 300).min((i as i64 + 1) * items - 700);
                sc.get_slice(start, start + 700, &mut part).unwrap();
                let at = (start - i as i64 * items) as usize * 4;
                assert!(part == src[at..at + 4 * 700], "chunk {i}, block {b}");
            }
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
