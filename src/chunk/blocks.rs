//! Chunks whose uncompressed bytes are not one contiguous buffer: the block
//! jobs themselves make each block (a b2nd array gathers it from a C-order
//! buffer) or hand each decoded block on (scattered into a C-order buffer),
//! on every worker thread and without a chunk-sized copy in between.

use crate::error::Result;

/// The uncompressed bytes of a chunk, made block by block (from any thread).
pub trait BlockSource: Sync {
    /// The chunk's length in bytes.
    fn len(&self) -> usize;
    /// Whether the chunk is empty.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// The length of the blocks [`BlockSource::fill`] makes (the last one
    /// may be shorter).
    fn block_bytes(&self) -> usize;
    /// Write block `j` into `out`, which is exactly its length.
    fn fill(&self, j: usize, out: &mut [u8]) -> Result<()>;
}

/// Where the decoded blocks of a chunk go (from any thread).
pub trait BlockSink: Sync {
    /// The length of the blocks the sink takes (the last one may be shorter).
    fn block_bytes(&self) -> usize;
    /// Whether block `j` is needed at all: the others are not decoded.
    fn wants(&self, j: usize) -> bool;
    /// The bytes `lo..hi` of block `j` (of `len` bytes) that [`BlockSink::put`]
    /// reads: the block's other bytes may be left undecoded.  The whole
    /// block unless the sink says otherwise.
    fn span(&self, j: usize, len: usize) -> (usize, usize) {
        let _ = j;
        (0, len)
    }
    /// Take decoded block `j` (only its [`BlockSink::span`] is sure to be
    /// decoded).
    fn put(&self, j: usize, block: &[u8]) -> Result<()>;
}

/// The whole chunk a source makes, as one buffer (for the paths that need
/// it contiguous: prefilters, dictionaries, delta's reference block).
pub(crate) fn materialize(source: &dyn BlockSource, out: &mut Vec<u8>) -> Result<()> {
    let bb = source.block_bytes().max(1);
    out.clear();
    out.resize(source.len(), 0);
    for (j, b) in out.chunks_mut(bb).enumerate() {
        source.fill(j, b)?;
    }
    Ok(())
}

/// Hand the wanted blocks of a decoded chunk to a sink.
pub(crate) fn put_all(chunk: &[u8], sink: &dyn BlockSink) -> Result<()> {
    let bb = sink.block_bytes().max(1);
    for (j, b) in chunk.chunks(bb).enumerate() {
        if sink.wants(j) {
            sink.put(j, b)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::chunk::header::filter;
    use crate::chunk::{CParams, Compressor, DParams, Decompressor, Special};
    use crate::codecs::Codec;
    use std::sync::Mutex;

    /// A chunk of `data` served block by block, counting the calls.
    struct Served<'a> {
        data: &'a [u8],
        bb: usize,
        calls: Mutex<Vec<usize>>,
    }

    impl BlockSource for Served<'_> {
        fn len(&self) -> usize {
            self.data.len()
        }
        fn block_bytes(&self) -> usize {
            self.bb
        }
        fn fill(&self, j: usize, out: &mut [u8]) -> Result<()> {
            self.calls.lock().unwrap().push(j);
            out.copy_from_slice(&self.data[j * self.bb..j * self.bb + out.len()]);
            Ok(())
        }
    }

    /// Keeps the blocks it wants, by number.
    struct Kept {
        bb: usize,
        want: Vec<bool>,
        got: Mutex<Vec<(usize, Vec<u8>)>>,
    }

    impl BlockSink for Kept {
        fn block_bytes(&self) -> usize {
            self.bb
        }
        fn wants(&self, j: usize) -> bool {
            self.want.get(j).copied().unwrap_or(false)
        }
        fn put(&self, j: usize, block: &[u8]) -> Result<()> {
            self.got.lock().unwrap().push((j, block.to_vec()));
            Ok(())
        }
    }

    /// The block size of the tests' chunks (under Miri smaller: it is slow).
    const BB: usize = if cfg!(miri) { 512 } else { 4096 };

    fn data(n: usize) -> Vec<u8> {
        (0..n / 4).flat_map(|i| ((i as u32 / 7) ^ (i as u32 % 13)).to_le_bytes()).collect()
    }

    fn params(filters: [u8; 6], use_dict: bool, nthreads: i16) -> CParams {
        // (Under Miri BloscLZ, which it can run: Zstd is a C library.)
        let codec = if cfg!(miri) { Codec::BloscLz } else { Codec::Zstd };
        CParams {
            compcode: codec.compcode(),
            clevel: 5,
            typesize: 4,
            nthreads,
            blocksize: BB as i32,
            use_dict,
            filters,
            ..CParams::default()
        }
    }

    #[test]
    fn a_served_chunk_compresses_to_the_bytes_of_the_buffer() {
        // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
        crate::chunk::set_min_bytes_per_thread(0);
        let src = data(BB * 9 + 1000);
        let shuffle = [0, 0, 0, 0, 0, filter::SHUFFLE];
        let delta = [0, 0, 0, 0, filter::DELTA, filter::SHUFFLE];
        for (filters, dict, streamed) in
            [(shuffle, false, true), (delta, false, false), (shuffle, true, false)]
        {
            if dict && cfg!(miri) {
                continue; // (dictionaries are for the C codecs)
            }
            for nthreads in [1, 2] {
                let p = params(filters, dict, nthreads);
                let mut want = vec![0u8; src.len() + 64];
                let n = Compressor::new(p.clone()).unwrap().compress(&src, &mut want).unwrap();
                let served = Served { data: &src, bb: BB, calls: Mutex::new(Vec::new()) };
                let mut got = vec![0u8; src.len() + 64];
                let m = Compressor::new(p).unwrap().compress_from(&served, &mut got).unwrap();
                let what = format!("filters {filters:?} dict {dict} threads {nthreads}");
                if nthreads == 1 {
                    assert!(got[..m] == want[..n], "{what}");
                } else {
                    // Blocks land in the order they are done: same size, same data.
                    assert_eq!(m, n, "{what}");
                    let mut back = vec![0u8; src.len()];
                    Decompressor::new(DParams::default()).decompress(&got[..m], &mut back).unwrap();
                    assert!(back == src, "{what}");
                }
                // Every block made once, by the block jobs or (delta, dictionaries) up front.
                let mut calls = served.calls.into_inner().unwrap();
                calls.sort_unstable();
                assert_eq!(calls, (0..src.len().div_ceil(BB)).collect::<Vec<_>>(), "streamed {streamed}");
            }
        }
    }

    #[test]
    fn a_source_that_fails_fails_the_compression() {
        // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
        crate::chunk::set_min_bytes_per_thread(0);
        struct Broken;
        impl BlockSource for Broken {
            fn len(&self) -> usize {
                8192
            }
            fn block_bytes(&self) -> usize {
                4096
            }
            fn fill(&self, j: usize, out: &mut [u8]) -> Result<()> {
                out.fill(1);
                if j == 1 {
                    Err(crate::error::Error::ReadBuffer)
                } else {
                    Ok(())
                }
            }
        }
        for nthreads in [1, 2] {
            let mut dst = vec![0u8; 9000];
            let r = Compressor::new(params([0, 0, 0, 0, 0, filter::SHUFFLE], false, nthreads))
                .unwrap()
                .compress_from(&Broken, &mut dst);
            assert!(matches!(r, Err(crate::error::Error::ReadBuffer)), "{nthreads}: {r:?}");
        }
    }

    #[test]
    fn only_the_wanted_blocks_reach_a_sink() {
        // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
        crate::chunk::set_min_bytes_per_thread(0);
        let src = data(BB * 6 + 512);
        for filters in [[0, 0, 0, 0, 0, filter::SHUFFLE], [0, 0, 0, 0, filter::DELTA, filter::SHUFFLE]] {
            let mut chunk = vec![0u8; src.len() + 64];
            let n = Compressor::new(params(filters, false, 1)).unwrap().compress(&src, &mut chunk).unwrap();
            for nthreads in [1, 2] {
                let want = vec![false, true, false, true, true, false, true];
                let sink = Kept { bb: BB, want: want.clone(), got: Mutex::new(Vec::new()) };
                let mut d = Decompressor::new(DParams { nthreads, ..DParams::default() });
                d.decompress_to(&chunk[..n], None, &sink).unwrap();
                let mut got = sink.got.into_inner().unwrap();
                got.sort();
                let expect: Vec<(usize, Vec<u8>)> = src
                    .chunks(BB)
                    .enumerate()
                    .filter(|(j, _)| want[*j])
                    .map(|(j, b)| (j, b.to_vec()))
                    .collect();
                assert_eq!(got, expect, "filters {filters:?} threads {nthreads}");
            }
        }
    }

    #[test]
    fn special_chunks_reach_a_sink_as_their_values() {
        let p = params([0, 0, 0, 0, 0, filter::SHUFFLE], false, 1);
        for (kind, value) in [(Special::Zero, 0u8), (Special::Uninit, 0), (Special::Value, 7)] {
            let mut chunk = vec![0u8; 64];
            let v = [value; 4];
            let n = crate::chunk::special::make(
                &p,
                kind,
                10000,
                (kind == Special::Value).then_some(&v[..]),
                &mut chunk,
            )
            .unwrap();
            let sink = Kept { bb: 4096, want: vec![true, false, true], got: Mutex::new(Vec::new()) };
            Decompressor::new(DParams::default()).decompress_to(&chunk[..n], None, &sink).unwrap();
            let got = sink.got.into_inner().unwrap();
            assert_eq!(
                got.iter().map(|(j, b)| (*j, b.len())).collect::<Vec<_>>(),
                vec![(0, 4096), (2, 10000 - 8192)],
                "{kind:?}"
            );
            assert!(got.iter().all(|(_, b)| b.iter().all(|&x| x == value)), "{kind:?}");
        }
    }

    /// Reads only bytes `lo..hi` of each block: keeps those, by number.
    struct Spanned {
        bb: usize,
        lo: usize,
        hi: usize,
        got: Mutex<Vec<(usize, Vec<u8>)>>,
    }

    impl BlockSink for Spanned {
        fn block_bytes(&self) -> usize {
            self.bb
        }
        fn wants(&self, _: usize) -> bool {
            true
        }
        fn span(&self, _: usize, len: usize) -> (usize, usize) {
            (self.lo.min(len), self.hi.min(len))
        }
        fn put(&self, j: usize, block: &[u8]) -> Result<()> {
            let (lo, hi) = self.span(j, block.len());
            self.got.lock().unwrap().push((j, block[lo..hi].to_vec()));
            Ok(())
        }
    }

    #[test]
    fn a_sink_that_reads_part_of_each_block_gets_those_bytes() {
        // Small chunks: every thread the blocks can feed, so the multi-threaded paths run.
        crate::chunk::set_min_bytes_per_thread(0);
        // Partly read blocks decode only as far as the part needs (streams
        // skipped, streams stopped early, items gathered from byte streams):
        // the part must hold what a whole decode gives, for every codec,
        // filter, item size and split.
        use crate::chunk::SplitMode;
        let run = if cfg!(miri) { 375 } else { 3000 };
        let src: Vec<u8> = data(BB * 5 + 1200)
            .iter()
            .enumerate()
            .map(|(i, &b)| if (i / run) % 3 == 1 { 9 } else { b })
            .collect();
        // (Under Miri, fewer item sizes and spans: it is slow.)
        let typesizes: &[i32] = if cfg!(miri) { &[4] } else { &[1, 2, 4, 8] };
        let spans: &[(usize, usize)] = if cfg!(miri) {
            &[(3, 13), (100, 300), (504, 512)]
        } else {
            &[(0, 8), (3, 13), (16, 1024), (1000, 1200), (2048, 4096), (4088, 4096)]
        };
        for &codec in crate::codecs::TESTED {
            for filter in [0, filter::SHUFFLE, filter::BITSHUFFLE] {
                for &typesize in typesizes {
                    for split in [SplitMode::Always, SplitMode::Never] {
                        let p = CParams {
                            compcode: codec.compcode(),
                            clevel: 5,
                            typesize,
                            blocksize: BB as i32,
                            splitmode: split,
                            filters: [0, 0, 0, 0, 0, filter],
                            ..CParams::default()
                        };
                        let mut chunk = vec![0u8; src.len() + 64];
                        let n = Compressor::new(p).unwrap().compress(&src, &mut chunk).unwrap();
                        for &(lo, hi) in spans {
                            for nthreads in [1, 2] {
                                let sink = Spanned { bb: BB, lo, hi, got: Mutex::new(Vec::new()) };
                                let mut d = Decompressor::new(DParams { nthreads, ..DParams::default() });
                                d.decompress_to(&chunk[..n], None, &sink).unwrap();
                                let mut got = sink.got.into_inner().unwrap();
                                got.sort();
                                let expect: Vec<(usize, Vec<u8>)> = src
                                    .chunks(BB)
                                    .enumerate()
                                    .map(|(j, b)| (j, b[lo.min(b.len())..hi.min(b.len())].to_vec()))
                                    .collect();
                                assert!(
                                    got == expect,
                                    "{codec:?} filter {filter} typesize {typesize} {split:?} span {lo}..{hi} threads {nthreads}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}
