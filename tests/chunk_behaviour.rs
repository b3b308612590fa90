//! Round trips through the safe chunk API, and the places where libb2nd is
//! deliberately right where c-blosc2 3.3.5 is not.

use b2nd::chunk::header::filter;
use b2nd::chunk::{CParams, Compressor, DParams, Decompressor, Header, SplitMode};
use b2nd::codecs::{Codec, ALL};

/// The codecs the tests go through: every one, or under Miri BloscLZ alone
/// (the others are C libraries, which Miri cannot call).
const CODECS: &[Codec] = if cfg!(miri) { &[Codec::BloscLz] } else { &ALL };
/// LZ4 where a test wants any codec, or BloscLZ under Miri.
const LZ4: Codec = if cfg!(miri) { Codec::BloscLz } else { Codec::Lz4 };
/// Zstd where a test wants any codec, or BloscLZ under Miri.
const ZSTD: Codec = if cfg!(miri) { Codec::BloscLz } else { Codec::Zstd };

fn ints(n: usize) -> Vec<u8> {
    (0u32..).flat_map(|i| (i.wrapping_mul(7) / 3).to_le_bytes()).take(n).collect()
}

fn compress(p: CParams, src: &[u8]) -> Vec<u8> {
    let mut c = Compressor::new(p).unwrap();
    let mut dst = vec![0u8; src.len() + 32];
    let n = c.compress(src, &mut dst).unwrap();
    assert!(n > 0);
    dst.truncate(n);
    dst
}

fn decompress(chunk: &[u8], nthreads: i16) -> Vec<u8> {
    let (nbytes, _, _) = Header::sizes(chunk).unwrap();
    let mut out = vec![0u8; nbytes as usize];
    let mut d = Decompressor::new(DParams { nthreads, typesize: 8, ..DParams::default() });
    assert_eq!(d.decompress(chunk, &mut out).unwrap(), nbytes as usize);
    out
}

#[test]
fn every_codec_pipeline_and_thread_count_round_trips() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    // (Under Miri 4 kB in blocks of 1 kB: it is slow.)
    let src = ints(if cfg!(miri) { 4_003 } else { 1_000_003 });
    for &codec in CODECS {
        for shuffle in 0..=2 {
            for delta in [false, true] {
                for nthreads in [1, 2] {
                    let mut p = CParams::classic(codec, 5, shuffle, 4, delta);
                    p.nthreads = nthreads;
                    if cfg!(miri) {
                        p.blocksize = 1024;
                    }
                    let chunk = compress(p, &src);
                    assert!(chunk.len() <= src.len() + 32, "{codec:?} {shuffle} {delta}");
                    if shuffle > 0 {
                        assert!(chunk.len() < src.len() / 2, "{codec:?} {shuffle} {delta}");
                    }
                    assert_eq!(decompress(&chunk, nthreads), src, "{codec:?} {shuffle} {delta} {nthreads}");
                }
            }
        }
    }
}

#[test]
fn getitem_on_delta_chunks_returns_the_items() {
    // (Under Miri 8 kB in blocks of 1 kB: it is slow.)
    let (n, blocksize, starts) = if cfg!(miri) {
        (8_000, 1024, [0i64, 10, 256, 260, 1000, 1900])
    } else {
        (400_000, 16 * 1024, [0i64, 10, 4096, 4100, 50_000, 99_900])
    };
    let src = ints(n);
    let mut p = CParams::classic(LZ4, 5, 1, 4, true);
    p.blocksize = blocksize;
    let chunk = compress(p, &src);
    let mut d = Decompressor::new(DParams::default());
    let mut out = vec![0u8; 400];
    for start in starts {
        assert_eq!(d.getitem(&chunk, start, 100, &mut out).unwrap(), 400);
        let s = start as usize * 4;
        assert_eq!(out, src[s..s + 400], "start {start}");
    }
}

#[test]
fn delta_round_trips_sizes_that_are_not_multiples_of_the_typesize() {
    // (Under Miri up to 4 kB: it is slow.)
    let sizes: &[usize] = if cfg!(miri) { &[33, 1001, 4099] } else { &[33, 1001, 65_539, 300_001] };
    for &n in sizes {
        let src = ints(n);
        for typesize in [2, 4, 8, 12] {
            let p = CParams::classic(Codec::BloscLz, 5, 1, typesize, true);
            assert_eq!(decompress(&compress(p, &src), 1), src, "n {n} typesize {typesize}");
        }
    }
}

#[test]
fn forced_block_sizes_are_adjusted_and_stated_truly() {
    // (Under Miri 8 kB: it is slow.)
    let src = ints(if cfg!(miri) { 8_000 } else { 100_000 });
    for forced in [1001, 4097, 7, 250_000] {
        let mut p = CParams::classic(LZ4, 5, 1, 4, false);
        p.blocksize = forced;
        let chunk = compress(p, &src);
        let h = Header::parse(&chunk).unwrap();
        assert!(h.blocksize as usize <= src.len());
        assert!(h.blocksize < 4 || h.blocksize % 4 == 0, "forced {forced}: {}", h.blocksize);
        assert_eq!(decompress(&chunk, 1), src, "forced {forced}");
    }
}

#[test]
fn corrupted_chunks_fail_cleanly_with_two_threads() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    // (Under Miri 20 kB in blocks of 2 kB: it is slow.)
    let (n, blocksize, at) = if cfg!(miri) { (20_000, 2048, 1_000) } else { (2_000_000, 32 * 1024, 5_000) };
    let src = ints(n);
    let mut p = CParams::classic(ZSTD, 5, 1, 4, true);
    p.blocksize = blocksize;
    let chunk = compress(p, &src);
    let mut d = Decompressor::new(DParams { nthreads: 2, typesize: 4, ..DParams::default() });
    let mut out = vec![0u8; src.len()];
    for pos in [200usize, at, chunk.len() / 2, chunk.len() - 10] {
        let mut bad = chunk.clone();
        for b in &mut bad[pos..pos + 8] {
            *b ^= 0x5a;
        }
        // Either an error or (if the flip hit slack) success; never a hang or a crash.
        let _ = d.decompress(&bad, &mut out);
    }
    let mut bad = chunk.clone();
    bad[32..36].copy_from_slice(&(chunk.len() as i32 + 100).to_le_bytes());
    assert!(d.decompress(&bad, &mut out).is_err());
}

#[test]
fn clevel_zero_and_tiny_buffers_are_memcpyed() {
    let src = ints(1000);
    let chunk = compress(CParams::classic(Codec::Zstd, 0, 1, 4, false), &src);
    assert_eq!(chunk.len(), 1032);
    assert_eq!(decompress(&chunk, 1), src);
    let tiny = ints(31);
    let chunk = compress(CParams::classic(Codec::Lz4, 9, 1, 4, false), &tiny);
    assert_eq!(chunk.len(), 63);
    assert_eq!(decompress(&chunk, 1), tiny);
}

#[test]
fn all_zero_buffers_become_zero_special_chunks() {
    let src = vec![0u8; if cfg!(miri) { 1 << 14 } else { 1 << 20 }]; // (Miri is slow)
    let chunk = compress(CParams::classic(Codec::BloscLz, 5, 1, 4, false), &src);
    assert_eq!(chunk.len(), 32);
    assert_eq!(decompress(&chunk, 1), src);
}

#[test]
#[cfg_attr(miri, ignore = "Miri: calls the C codecs lz4 and zstd")]
fn dictionaries_round_trip_for_lz4_and_zstd() {
    let src = ints(2_000_000);
    for codec in [Codec::Lz4, Codec::Lz4hc, Codec::Zstd] {
        let mut p = CParams::classic(codec, 5, 1, 4, false);
        p.use_dict = true;
        p.splitmode = SplitMode::Never;
        let chunk = compress(p, &src);
        assert!(Header::parse(&chunk).unwrap().use_dict() || !chunk.is_empty());
        assert_eq!(decompress(&chunk, 2), src, "{codec:?}");
    }
    // Buffers too small to sample a dictionary from are compressed without one,
    // and the header must not claim one.
    for n in [4321usize, 20_000] {
        let small = ints(n);
        for codec in [Codec::Lz4, Codec::Lz4hc, Codec::Zstd] {
            let mut p = CParams::classic(codec, 9, 1, 4, false);
            p.use_dict = true;
            let chunk = compress(p, &small);
            if n < 5120 {
                assert!(!Header::parse(&chunk).unwrap().use_dict(), "{codec:?} {n}");
            }
            assert_eq!(decompress(&chunk, 1), small, "{codec:?} {n}");
        }
    }
    let mut p = CParams::classic(Codec::BloscLz, 5, 1, 4, false);
    p.use_dict = true;
    assert!(Compressor::new(p).unwrap().compress(&src, &mut vec![0u8; src.len()]).is_err());
}

#[test]
fn trunc_prec_keeps_the_requested_precision() {
    // (Under Miri 2000 items: it is slow.)
    let src: Vec<u8> =
        (0..if cfg!(miri) { 2_000 } else { 10_000 }).flat_map(|i| (i as f32 * 0.123).to_ne_bytes()).collect();
    let mut p = CParams::classic(LZ4, 5, 1, 4, false);
    p.filters[0] = filter::TRUNC_PREC;
    p.filters_meta[0] = 10;
    let out = decompress(&compress(p, &src), 1);
    for (a, b) in out.chunks_exact(4).zip(src.chunks_exact(4)) {
        let (a, b) = (u32::from_ne_bytes(a.try_into().unwrap()), u32::from_ne_bytes(b.try_into().unwrap()));
        assert_eq!(a, b & !((1 << 13) - 1));
    }
}

/// Data whose blocks take every stream form: codec output, runs of one byte
/// (a noisy ramp, then constant and zero stretches) and raw copies (noise).
fn mixed(n: usize) -> Vec<u8> {
    let mut s = 7u32;
    let stretch = if cfg!(miri) { 1_000 } else { 20_000 }; // (Miri is slow)
    (0..n)
        .map(|i| match (i / stretch) % 4 {
            0 => (i / 7) as u8 ^ ((i % 13 == 0) as u8),
            1 => 0x5A,
            2 => 0,
            _ => {
                s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (s >> 24) as u8
            }
        })
        .collect()
}

#[test]
fn getitem_of_part_of_a_block_matches_the_whole_chunk() {
    // Reads that start or end inside a block decode only what they need
    // (the streams before the range are skipped, the others stop at its
    // end); every layout must still give the bytes a whole decode gives.
    // (Under Miri 8 kB in blocks of 2 kB, fewer layouts: it is slow.)
    let (n, blocksize, a, b, c, e) = if cfg!(miri) {
        (8_000, 2048, 600, 250, 400, 100)
    } else {
        (300_000, 48 * 1024, 12_000, 5000, 9000, 1000)
    };
    let layouts: &[(i32, i32)] = if cfg!(miri) {
        &[(0, 1), (1, 12), (2, 4)]
    } else {
        &[(0, 1), (0, 4), (1, 2), (1, 4), (1, 8), (1, 12), (1, 16), (2, 4), (1, 1)]
    };
    let src = mixed(n);
    for &codec in CODECS {
        for &(shuffle, typesize) in layouts {
            for split in [SplitMode::Always, SplitMode::Never, SplitMode::Auto] {
                for use_dict in [false, true] {
                    if use_dict && !matches!(codec, Codec::Lz4 | Codec::Lz4hc | Codec::Zstd) {
                        continue;
                    }
                    let mut p = CParams::classic(codec, 5, shuffle, typesize, false);
                    p.blocksize = blocksize;
                    p.splitmode = split;
                    p.use_dict = use_dict;
                    let n = src.len() / typesize as usize * typesize as usize;
                    let chunk = compress(p, &src[..n]);
                    let whole = decompress(&chunk, 1);
                    assert_eq!(whole, src[..n]);
                    let mut d = Decompressor::new(DParams::default());
                    let ts = typesize as usize;
                    let items = n / ts;
                    for (start, count) in [
                        (0, 1),
                        (3, 10),
                        (e, 1),
                        (a, 500 * a / 12_000),
                        (b, c),
                        (items - 7, 7),
                        (items / 2, items / 2),
                        (0, items),
                    ] {
                        let mut out = vec![0u8; count * ts];
                        let got = d.getitem(&chunk, start as i64, count as i64, &mut out).unwrap();
                        assert_eq!(got, count * ts);
                        assert!(
                            out == whole[start * ts..(start + count) * ts],
                            "{codec:?} shuffle {shuffle} typesize {typesize} {split:?} dict {use_dict}: items {start}+{count}"
                        );
                    }
                }
            }
        }
    }
}

/// Items whose byte planes differ in kind: byte 0 a noisy ramp, byte 1
/// noise in the first half of the buffer and zero after, byte 2 (and every
/// third byte on) the constant 0x5A, byte 3 noise, the rest zero: split
/// blocks store the constant planes as runs of one byte, and byte 3's
/// plane as is (no codec shrinks noise).
fn planes(items: usize, ts: usize) -> Vec<u8> {
    let mut s = 11u32;
    let mut out = Vec::with_capacity(items * ts);
    for i in 0..items {
        for j in 0..ts {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            out.push(match j {
                0 => (i / 3) as u8 ^ ((s >> 29) as u8),
                1 if i < items / 2 => (s >> 24) as u8,
                3 => (s >> 16) as u8,
                _ if j % 3 == 2 => 0x5A,
                _ => 0,
            });
        }
    }
    out
}

/// The numbers of streams stored as runs (size 0 or negative) and as is
/// (size that of the plane) in the split blocks of `chunk`.
fn run_and_stored_streams(chunk: &[u8], ts: usize) -> (usize, usize) {
    let view = b2nd::chunk::view::ChunkView::open(chunk).unwrap();
    let blocksize = view.header.blocksize as usize;
    let full_blocks = view.header.nbytes as usize / blocksize;
    let (mut runs, mut stored) = (0, 0);
    for j in 0..full_blocks {
        let mut pos = view.bstart(j) as usize;
        for _ in 0..ts {
            let csize = i32::from_le_bytes(chunk[pos..pos + 4].try_into().unwrap());
            pos += 4 + if csize > 0 { csize as usize } else { usize::from(csize < 0) };
            runs += usize::from(csize <= 0);
            stored += usize::from(csize as usize == blocksize / ts);
        }
    }
    (runs, stored)
}

#[test]
fn split_blocks_with_planes_stored_as_runs_or_as_is_decode_to_the_items() {
    // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
    b2nd::chunk::set_min_bytes_per_thread(0);
    // The unshuffle makes run planes itself (without writing them out) and
    // reads planes stored as is in the chunk (without copying them out)
    // when it can; every codec, item size and thread count must give the
    // items, whole and through getitem, including the last, unsplit block.
    // (Under Miri 2000 items in blocks of 1 kB: it is slow.)
    let (items, blocksize, sizes, mid): (usize, i32, &[usize], usize) = if cfg!(miri) {
        (2_000 + 13, 1024, &[2, 3, 8], 300)
    } else {
        (40_000 + 13, 16 * 1024, &[2, 3, 4, 8, 16], 3000)
    };
    for &codec in CODECS {
        for &ts in sizes {
            let src = planes(items, ts);
            let mut p = CParams::classic(codec, 5, 1, ts as i32, false);
            p.blocksize = blocksize;
            p.splitmode = SplitMode::Always;
            let chunk = compress(p, &src);
            let (runs, stored) = run_and_stored_streams(&chunk, ts);
            assert!(runs > 0, "{codec:?} ts {ts}: no run streams to test");
            assert!(ts < 4 || stored > 0, "{codec:?} ts {ts}: no streams stored as is to test");
            for nthreads in [1, 2] {
                assert!(decompress(&chunk, nthreads) == src, "{codec:?} ts {ts} {nthreads} threads");
            }
            let mut d = Decompressor::new(DParams::default());
            for (start, count) in [(0, 1), (5, mid), (items / 2 - 100, 200), (items - 20, 20)] {
                let mut out = vec![0u8; count * ts];
                assert_eq!(d.getitem(&chunk, start as i64, count as i64, &mut out).unwrap(), count * ts);
                assert!(
                    out == src[start * ts..(start + count) * ts],
                    "{codec:?} ts {ts}: items {start}+{count}"
                );
            }
        }
    }
}

#[test]
fn shuffled_blocks_stored_whole_as_is_decode_to_the_items() {
    // Unsplit blocks, the first half of them ints, the rest noise: a block
    // of noise is one stream that no codec shrinks, stored as is and
    // unshuffled from the chunk itself. Item sizes that do and do not
    // divide the last block; 1 and 2 threads.
    b2nd::chunk::set_min_bytes_per_thread(0);
    let mut s = 7u32;
    let n = if cfg!(miri) { 4_001 } else { 100_003 };
    let mut src = ints(n / 2);
    src.extend((n / 2..n).map(|_| {
        s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
        (s >> 24) as u8
    }));
    for &codec in CODECS {
        for ts in [2, 4, 8] {
            let mut p = CParams::classic(codec, 5, 1, ts, false);
            p.blocksize = if cfg!(miri) { 1024 } else { 16 * 1024 };
            p.splitmode = SplitMode::Never;
            let chunk = compress(p, &src);
            let view = b2nd::chunk::view::ChunkView::open(&chunk).unwrap();
            let bs = view.header.blocksize as usize;
            let stored = (0..n / bs)
                .filter(|&j| {
                    let at = view.bstart(j) as usize;
                    i32::from_le_bytes(chunk[at..at + 4].try_into().unwrap()) as usize == bs
                })
                .count();
            assert!(!view.header.memcpyed() && stored > 0, "{codec:?} ts {ts}: no block stored as is");
            for nthreads in [1, 2] {
                assert!(decompress(&chunk, nthreads) == src, "{codec:?} ts {ts} {nthreads} threads");
            }
        }
    }
}

/// Items whose first `noisy` bytes are noise and the rest a slow ramp, as
/// floats' mantissas and exponents are.
fn noisy_low_bytes(items: usize, ts: usize, noisy: usize) -> Vec<u8> {
    let mut s = 99u32;
    let mut out = Vec::with_capacity(items * ts);
    for i in 0..items {
        for j in 0..ts {
            s = s.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
            out.push(if j < noisy { (s >> 24) as u8 } else { (i >> 9) as u8 ^ j as u8 });
        }
    }
    out
}

#[test]
fn blocks_written_with_planes_in_place_are_the_blocks_written_alone() {
    // Split, shuffled blocks whose first planes are noise are written with
    // their planes in place once a block has shown it pays; each block
    // must still come out as the same block compressed alone (a one-block
    // chunk: its first block is always written the usual way), with 1 and
    // 2 threads, and decode to the items.
    b2nd::chunk::set_min_bytes_per_thread(0);
    let (items, blocksize) = if cfg!(miri) { (1_024, 1024) } else { (64 * 1024, 32 * 1024) };
    for &codec in CODECS {
        for (ts, noisy) in [(8, 5), (4, 2), (2, 1), (8, 8), (4, 1)] {
            let src = noisy_low_bytes(items, ts, noisy);
            for nthreads in [1, 2] {
                let mut p = CParams::classic(codec, 5, 1, ts as i32, false);
                p.blocksize = blocksize;
                p.splitmode = SplitMode::Always;
                p.nthreads = nthreads;
                let chunk = compress(p.clone(), &src);
                assert!(decompress(&chunk, nthreads) == src, "{codec:?} ts {ts} {nthreads} threads");
                let view = b2nd::chunk::view::ChunkView::open(&chunk).unwrap();
                if view.header.memcpyed() {
                    continue;
                }
                let nblocks = src.len() / blocksize as usize;
                let mut starts: Vec<usize> = (0..nblocks).map(|j| view.bstart(j) as usize).collect();
                starts.push(chunk.len());
                let mut sorted = starts.clone();
                sorted.sort_unstable();
                for j in 0..nblocks {
                    let end = sorted[sorted.iter().position(|&x| x == starts[j]).unwrap() + 1];
                    let block = &src[j * blocksize as usize..(j + 1) * blocksize as usize];
                    let mut q = p.clone();
                    q.nthreads = 1;
                    let alone = compress(q, block);
                    let one = b2nd::chunk::view::ChunkView::open(&alone).unwrap();
                    if one.header.memcpyed() {
                        continue;
                    }
                    assert!(
                        chunk[starts[j]..end] == alone[one.bstart(0) as usize..],
                        "{codec:?} ts {ts} {nthreads} threads: block {j} differs"
                    );
                }
            }
        }
    }
}
