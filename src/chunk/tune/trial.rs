//! Timing a candidate on a sample of the chunk being compressed: two spans
//! of the chunk, centred at a quarter and three quarters of it, the same
//! bytes for every candidate of a comparison (codecs and levels are weighed
//! on the same data). Each span is compressed as a chunk of its own, in
//! blocks of the candidate's size (a span grows to one block where blocks
//! are larger: a block size is timed as the chunk will have it), and
//! decompressed when the mode counts that time, by a one-thread context kept
//! from chunk to chunk, so that a warm tuner allocates nothing. A trial
//! whose first span shows it cannot win stops there (a first look, on a
//! small piece of it first; a slow codec's, on a smaller piece before).

use super::score::Figures;
use super::space::Candidate;
use crate::chunk::blocksize;
use crate::chunk::header::EXTENDED_HEADER_LENGTH;
use crate::chunk::{Compressor, DParams, Decompressor};
use crate::codecs::Codec;
use crate::params::CParams;
use std::time::{Duration, Instant};

/// The spans a sample is made of, spread over the chunk.
const SPANS: usize = 2;
/// The piece a first look that may be hopeless is timed on first...
const PROBE: usize = 16 << 10;
/// ...and before it, with a slow codec, this one.
const SMALL_PROBE: usize = 4 << 10;
/// A signature's pieces: this many, of this size, spread over the chunk.
const SIG_PIECES: usize = 4;
const SIG_PIECE: usize = 4 << 10;
/// A trial faster than this is repeated (up to [`Budget::runs`] runs) and
/// its fastest run kept, so that one interruption does not decide.
const REPEAT_BELOW: Duration = Duration::from_micros(300);

/// How much of the chunk a trial reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Bytes of sample to aim at (whole blocks; at least one block).
    pub bytes: usize,
    /// Blocks no larger than this in the sample (0: the candidate's own
    /// block size, the spans grown to hold one block each), for quick first
    /// looks at slow candidates.
    pub max_block: usize,
    /// Runs of a fast trial (one under [`REPEAT_BELOW`]), the fastest kept:
    /// fewer for first looks, more where small differences decide.
    pub runs: u32,
}

/// The trial contexts and buffers of one tuner.
pub(crate) struct Trials {
    comp: Compressor,
    decomp: Decompressor,
    out: Vec<u8>,
    back: Vec<u8>,
    /// Time spent in trials since the tuner started.
    pub spent: Duration,
    /// Trials run since the tuner started.
    pub count: u64,
    /// Time spent taking signatures (not trials: outside their budget).
    pub probed: Duration,
    /// Whether a trial has run (the buffers are warm).
    warm: bool,
    /// The codecs a trial has run (bit `1 << code`). A codec's first run in
    /// a process takes its code's pages in: LZ4's first look, on a 16 KiB
    /// piece timed once, so ran at a quarter of its speed and was judged
    /// hopeless.
    codecs_run: u8,
    /// The largest chunk the trial context's scratch holds blocks for.
    blocks_for: usize,
    /// The largest span and block a trial has run on (their pages touched).
    touched: (usize, usize),
    /// The largest block a trial with filters has run on (the pages of the
    /// filters' scratch, which a block without filters leaves untouched:
    /// shuffle's first trial in 512 KiB blocks, after stores in them, ran
    /// at a third of its speed).
    filtered_touched: usize,
    /// The largest span a trial has decompressed (the pages of `back`
    /// touched; a store's or a copy's floor touches `out` only).
    back_touched: usize,
    /// What the destination the chunk is compressed into has beyond the
    /// chunk's bytes ([`Trials::room`]).
    pub headroom: usize,
    /// Whether the last [`Trials::store_floor`] saw its candidate store the
    /// whole chunk (then a sample that candidate, or another, stores says
    /// what the chunk would get).
    pub stored_whole: bool,
    /// Seconds per byte moved when the chunk is copied as it lies (the last
    /// [`Trials::copy_floor`]), and when spans of a sample's sizes are,
    /// again and again, in a cache as a trial's spans are (measured once
    /// each for that chunk size): what a trial's bytes take more to move
    /// in the chunk than in its spans ([`Trials::penalty`]).
    chunk_floor: f64,
    span_floors: [(usize, f64); 8],
}

impl Trials {
    pub fn new(base: &CParams) -> Trials {
        let p = CParams { nthreads: 1, tuner: None, ..base.clone() };
        let comp = Compressor::new(CParams { clevel: p.clevel.min(9), ..p }).unwrap_or_else(|_| {
            Compressor::new(CParams::default()).expect("the default parameters are valid")
        });
        Trials {
            comp,
            decomp: Decompressor::new(DParams { nthreads: 1, ..DParams::default() }),
            out: Vec::new(),
            back: Vec::new(),
            spent: Duration::ZERO,
            count: 0,
            probed: Duration::ZERO,
            warm: false,
            codecs_run: 0,
            blocks_for: 0,
            touched: (0, 0),
            filtered_touched: 0,
            back_touched: 0,
            headroom: EXTENDED_HEADER_LENGTH + 64,
            stored_whole: false,
            chunk_floor: 0.0,
            span_floors: [(0, 0.0); 8],
        }
    }

    /// The output a trial on `len` bytes of a chunk of `n` bytes gets: room
    /// for the header, and what the chunk's destination has beyond its
    /// bytes and header, in proportion. A chunk whose blocks do not
    /// compress is stored block by block where its destination has room
    /// for their offsets and sizes, else written again as one copy (as
    /// c-blosc2 does): twice the time, in a destination of the chunk's size
    /// and the header, as a super-chunk's is. A sample with more room than
    /// the chunk would time the first way where the chunk takes the second.
    fn room(&self, len: usize, n: usize) -> usize {
        let extra = self.headroom.saturating_sub(EXTENDED_HEADER_LENGTH) as u128;
        len + self.headroom.min(EXTENDED_HEADER_LENGTH) + (extra * len as u128 / n.max(1) as u128) as usize
    }

    /// The output buffer and the trial context's block scratch, sized once
    /// for a whole chunk of `n` bytes (a warm tuner allocates nothing).
    fn size_for(&mut self, n: usize) {
        self.size_out(n);
        if self.blocks_for < n {
            self.comp.reserve_blocks(n);
            self.blocks_for = n;
        }
    }

    /// The output buffer, sized once for a whole chunk of `n` bytes and its
    /// destination's headroom (a warm tuner allocates nothing).
    fn size_out(&mut self, n: usize) {
        let cap = n + self.headroom.max(EXTENDED_HEADER_LENGTH + 64);
        if self.out.len() < cap {
            self.out = vec![0; cap];
        }
    }

    /// The figures of `cand` on a sample of `chunk` (compressed as `base`
    /// says for what is not tuned), or `None` when it fails to compress.
    /// The sample's spans are compressed one after the other; when
    /// `hopeless` says the first span's figures cannot win, the trial stops
    /// there and returns them.
    pub fn measure(
        &mut self,
        chunk: &[u8],
        base: &CParams,
        cand: &Candidate,
        budget: Budget,
        with_dtime: bool,
        hopeless: Option<&dyn Fn(&Figures) -> bool>,
    ) -> Option<Figures> {
        let start = Instant::now();
        let r = self.run(chunk, base, cand, budget, with_dtime, hopeless);
        self.spent += start.elapsed();
        self.count += 1;
        r
    }

    fn run(
        &mut self,
        chunk: &[u8],
        base: &CParams,
        cand: &Candidate,
        budget: Budget,
        with_dtime: bool,
        hopeless: Option<&dyn Fn(&Figures) -> bool>,
    ) -> Option<Figures> {
        let mut p = cand.params(base);
        p.nthreads = 1;
        p.schunk = None;
        let n = chunk.len();
        let typesize = p.typesize.clamp(1, 255) as usize;
        let real = real_blocksize(&p, n);
        let mut block = real;
        if budget.max_block > 0 && block > budget.max_block {
            block = (budget.max_block / typesize).max(1) * typesize;
        }
        let mut span = ((budget.bytes / SPANS) / typesize).max(1) * typesize;
        if budget.max_block > 0 {
            block = block.min(span);
        } else {
            // whole blocks of the candidate's size: a block size is timed
            // as the chunk will have it
            span = span.max(block);
        }
        // (spans that would cover the chunk: the whole chunk, or one block
        // where they grew to blocks of half the chunk or more)
        let (pieces, span) = if span * SPANS < n {
            (SPANS, span)
        } else if budget.max_block == 0 && block * SPANS >= n {
            (1, block.min(n))
        } else {
            (1, n)
        };
        if block != real || span < n {
            // (said explicitly: a span's own automatic block size would be
            // that of a smaller chunk)
            p.blocksize = block as i32;
        }
        // With delta, a piece is compressed as the chunk's later blocks
        // are: against the chunk's block 0, from a block boundary (as a
        // chunk of its own, its first block would be its own reference,
        // which suits data alike nearby far better than the chunk's blocks
        // get: the samples would rank delta above what the chunk gives it)
        let delta = p.filters.contains(&crate::params::filter::DELTA);
        let reference = &chunk[..if delta { block.min(n) } else { 0 }];
        let at = |i: usize| {
            let r = span_at(n, span, pieces, i);
            if delta {
                let start = r.start / block * block;
                start..start + r.len()
            } else {
                r
            }
        };
        // sized for the whole chunk once (its blocks too): a warm tuner
        // allocates nothing (fresh zeroed pages: mapped as the trials first
        // touch them; a trial larger than any before runs once untimed)
        let need = self.room(span, n);
        self.size_for(n);
        if with_dtime && self.back.len() < span {
            self.back = vec![0; n];
            self.back_touched = 0;
        }
        let bit = 1 << (cand.codec as u8);
        if self.codecs_run & bit == 0 {
            // the codec's first run, untimed, on a small piece (its code
            // and its contexts' tables taken in)
            let first = at(0);
            let len = ((SMALL_PROBE / typesize).max(1) * typesize).min(first.len());
            self.comp.retune(CParams { blocksize: block.min(len) as i32, ..p.clone() });
            let (piece, room) = (&chunk[first.start..][..len], self.room(len, n));
            let c = compress(&mut self.comp, piece, first.start, reference, &mut self.out[..room])?;
            if with_dtime && c > 0 {
                self.decomp.decompress(&self.out[..c], &mut self.back[..len]).ok()?;
            }
            self.codecs_run |= bit;
        }
        if let (Some(h), true) = (hopeless, budget.max_block > 0 && pieces > 1) {
            // a first look that cannot win shows it on a small piece, timed
            // once: a slow codec costs little where a fast one is better
            let first = at(0);
            if matches!(cand.codec, Codec::Zstd | Codec::Zlib | Codec::Lz4hc) && span > 2 * SMALL_PROBE {
                // a slow codec shows a hopeless case on a smaller piece
                // still, judged as if it took half the time and half the
                // size it did there (a small piece compresses worse)
                let len = (SMALL_PROBE / typesize).max(1) * typesize;
                let piece = (first.start, len);
                self.comp.retune(CParams { blocksize: block.min(len) as i32, ..p.clone() });
                let f = self.once(chunk, piece, reference, with_dtime)?;
                let f = moved(f, self.penalty(chunk, len));
                let halved = Figures {
                    cbytes: (f.cbytes / 2).max(1),
                    ctime: f.ctime / 2.0,
                    dtime: f.dtime / 2.0,
                    ..f
                };
                if h(&halved) {
                    return Some(f);
                }
            }
            if span > 2 * PROBE {
                let len = (PROBE / typesize).max(1) * typesize;
                self.comp.retune(CParams { blocksize: block.min(len) as i32, ..p.clone() });
                let f = self.once(chunk, (first.start, len), reference, with_dtime)?;
                let f = moved(f, self.penalty(chunk, len));
                if h(&f) {
                    return Some(f);
                }
            }
        }
        self.comp.retune(p);
        let back_fresh = with_dtime && span > self.back_touched;
        let filtered = cand.pipeline != super::space::Pipeline::None;
        let scratch_fresh = filtered && block > self.filtered_touched;
        if !self.warm || span > self.touched.0 || block > self.touched.1 || back_fresh || scratch_fresh {
            // the first trial of a tuner, or one with a larger span or larger
            // blocks than any before, would time the first touches of its
            // buffers' pages (costly on some virtual machines)
            let r = at(0);
            let piece = &chunk[r.clone()];
            let cbytes = compress(&mut self.comp, piece, r.start, reference, &mut self.out[..need])?;
            if with_dtime && cbytes > 0 {
                self.decomp.decompress(&self.out[..cbytes], &mut self.back[..piece.len()]).ok()?;
            }
            self.warm = true;
            self.touched = (self.touched.0.max(span), self.touched.1.max(block));
            if filtered {
                self.filtered_touched = self.filtered_touched.max(block);
            }
            if with_dtime {
                self.back_touched = self.back_touched.max(span);
            }
        }
        let pen = self.penalty(chunk, span);
        let below = REPEAT_BELOW / pieces as u32;
        let mut total = Figures { nbytes: 0, cbytes: 0, ctime: 0.0, dtime: 0.0 };
        for i in 0..pieces {
            let r = at(i);
            let piece = &chunk[r.clone()];
            let (comp, out) = (&mut self.comp, &mut self.out[..need]);
            let (ctime, cbytes) =
                fastest(budget.runs, below, || compress(comp, piece, r.start, reference, out))?;
            if cbytes == 0 {
                return None;
            }
            let mut dtime = 0.0;
            if with_dtime {
                let (out, back) = (&self.out[..cbytes], &mut self.back[..piece.len()]);
                let decomp = &mut self.decomp;
                let got;
                (dtime, got) = fastest(budget.runs, below, || decomp.decompress(out, back).ok())?;
                if got != piece.len() {
                    return None;
                }
            }
            total = total.add(&Figures { nbytes: piece.len() as u64, cbytes: cbytes as u64, ctime, dtime });
            if i == 0 && pieces > 1 && hopeless.is_some_and(|h| h(&moved(total, pen))) {
                break;
            }
        }
        Some(moved(total, pen))
    }
}

impl Trials {
    /// A cheap look at what `chunk` holds: the ratio `cand` gets on
    /// [`SIG_PIECES`] pieces of [`SIG_PIECE`] bytes spread over it, each
    /// compressed alone, as one block (`None` when the chunk is too small or
    /// a piece fails). Untimed as a trial: its time goes to
    /// [`Trials::probed`].
    pub fn signature(&mut self, chunk: &[u8], base: &CParams, cand: &Candidate) -> Option<f64> {
        let start = Instant::now();
        let r = self.sign(chunk, base, cand);
        self.probed += start.elapsed();
        r
    }

    fn sign(&mut self, chunk: &[u8], base: &CParams, cand: &Candidate) -> Option<f64> {
        let n = chunk.len();
        let mut p = cand.params(base);
        let typesize = p.typesize.clamp(1, 255) as usize;
        let piece = (SIG_PIECE / typesize).max(1) * typesize;
        if n < 2 * SIG_PIECES * piece {
            return None;
        }
        (p.nthreads, p.schunk, p.blocksize) = (1, None, piece as i32);
        let need = piece + EXTENDED_HEADER_LENGTH + 64;
        self.size_out(n);
        self.comp.retune(p);
        let (mut nbytes, mut cbytes) = (0, 0);
        for i in 0..SIG_PIECES {
            let c =
                self.comp.compress(&chunk[span_at(n, piece, SIG_PIECES, i)], &mut self.out[..need]).ok()?;
            if c == 0 {
                return None;
            }
            (nbytes, cbytes) = (nbytes + piece, cbytes + c);
        }
        Some(nbytes as f64 / cbytes as f64)
    }

    /// Seconds per byte moved (read or written) when `chunk` is copied,
    /// as it lies (in memory, or in a cache a sample's span fits far
    /// better): no candidate reads the chunk and writes its output faster.
    /// The fastest of two timed copies, after one untimed when the buffer
    /// is fresh.
    pub fn copy_floor(&mut self, chunk: &[u8]) -> f64 {
        let n = chunk.len();
        if n == 0 {
            return 0.0;
        }
        let start = Instant::now();
        self.size_out(n);
        if self.touched.0 < n {
            self.out[..n].copy_from_slice(chunk);
            self.touched.0 = n;
        }
        let f = per_byte_copied(&mut self.out[..n], chunk, 2);
        self.spent += start.elapsed();
        self.chunk_floor = f;
        self.span_floors = [(0, 0.0); 8];
        self.chunk_floor
    }

    /// Seconds a trial's spans of `len` bytes of `chunk` (`len` below the
    /// chunk's size) take less per byte they move than the chunk's bytes
    /// take: a span and its output stay in a cache, from run to run, where
    /// the chunk's do not (a 256 KiB span of a float field decompressed at
    /// 16 GB/s, the 4 MiB chunk at 6 to 9; its stores, bound by moving
    /// the bytes, at 14 and 13). 0 before [`Trials::copy_floor`].
    fn penalty(&mut self, chunk: &[u8], len: usize) -> f64 {
        let n = chunk.len();
        if self.chunk_floor == 0.0 || len == 0 || len >= n {
            return 0.0;
        }
        let span = match self.span_floors.iter().find(|(l, _)| *l == len) {
            Some(&(_, f)) => f,
            None => {
                let start = Instant::now();
                let piece = &chunk[(n - len) / 2..][..len];
                self.out[..len].copy_from_slice(piece);
                let f = per_byte_copied(&mut self.out[..len], piece, 3);
                self.spent += start.elapsed();
                // (the oldest size is forgotten past eight)
                self.span_floors.rotate_right(1);
                self.span_floors[0] = (len, f);
                f
            }
        };
        (self.chunk_floor - span).max(0.0)
    }

    /// Seconds per byte moved (read or written) when `cand`, a candidate
    /// that gives up at once on bytes that do not compress, stores `chunk`
    /// (the fastest of two runs, after one untimed when the buffers are
    /// fresh), when it stores it nearly as it is (a ratio under 1.05): what
    /// storing the chunk as it is really costs where it lies, attempts and
    /// copies through the library included, more than a copy alone. `None`
    /// when the candidate compresses the chunk (its time then says nothing
    /// of moving bytes: a piece of it is compressed first, and the chunk
    /// is not timed where that compresses) or fails.
    pub fn store_floor(&mut self, chunk: &[u8], base: &CParams, cand: &Candidate) -> Option<f64> {
        self.stored_whole = false;
        let start = Instant::now();
        let r = self.store(chunk, base, cand);
        self.spent += start.elapsed();
        r
    }

    fn store(&mut self, chunk: &[u8], base: &CParams, cand: &Candidate) -> Option<f64> {
        let n = chunk.len();
        let mut p = cand.params(base);
        (p.nthreads, p.schunk) = (1, None);
        let need = self.room(n, n);
        self.size_for(n);
        // (a piece first: where it compresses, the chunk is not timed,
        // which would cost as much as compressing it)
        let typesize = p.typesize.clamp(1, 255) as usize;
        let len = (PROBE / typesize).max(1) * typesize;
        if n > 2 * len {
            let piece = &chunk[n / 2 - len / 2..][..len];
            self.comp.retune(CParams { blocksize: len as i32, ..p.clone() });
            let room = self.room(len, n);
            let c = self.comp.compress(piece, &mut self.out[..room]).ok()?;
            if c == 0 || (len as f64) >= 1.05 * c as f64 {
                return None;
            }
        }
        self.comp.retune(p);
        if self.touched.0 < n {
            self.comp.compress(chunk, &mut self.out[..need]).ok()?;
            self.touched.0 = n;
        }
        let (t, cbytes) =
            fastest(2, Duration::MAX, || self.comp.compress(chunk, &mut self.out[..need]).ok())?;
        self.stored_whole = cbytes > 0 && (n as f64) < 1.05 * cbytes as f64;
        self.stored_whole.then(|| t / (n + cbytes) as f64)
    }

    /// The figures of one compression of `chunk`'s `len` bytes at `at`
    /// with the context's parameters (and one decompression, `with_dtime`),
    /// `reference` as in [`compress`].
    fn once(
        &mut self,
        chunk: &[u8],
        (at, len): (usize, usize),
        reference: &[u8],
        with_dtime: bool,
    ) -> Option<Figures> {
        let need = self.room(len, chunk.len());
        let piece = &chunk[at..at + len];
        if !self.warm {
            compress(&mut self.comp, piece, at, reference, &mut self.out[..need])?;
            self.warm = true;
        }
        let t = Instant::now();
        let cbytes = compress(&mut self.comp, piece, at, reference, &mut self.out[..need])?;
        let ctime = t.elapsed().as_secs_f64();
        if cbytes == 0 {
            return None;
        }
        let mut dtime = 0.0;
        if with_dtime {
            let t = Instant::now();
            let got = self.decomp.decompress(&self.out[..cbytes], &mut self.back[..piece.len()]).ok()?;
            dtime = t.elapsed().as_secs_f64();
            if got != piece.len() {
                return None;
            }
        }
        Some(Figures { nbytes: piece.len() as u64, cbytes: cbytes as u64, ctime, dtime })
    }
}

/// `piece` of a chunk, starting at `at`, compressed by `comp` into `out`:
/// where `reference` is not empty (the chunk's block 0, for delta) and the
/// piece starts past it, as the chunk's later blocks; else as a chunk.
fn compress(
    comp: &mut Compressor,
    piece: &[u8],
    at: usize,
    reference: &[u8],
    out: &mut [u8],
) -> Option<usize> {
    if reference.is_empty() || at == 0 {
        comp.compress(piece, out).ok()
    } else {
        comp.compress_later(piece, reference, out).ok()
    }
}

/// `f`, measured on spans, with `penalty` (seconds per byte) added to its
/// times for each byte it read and wrote: its times as the chunk's bytes,
/// where they lie, would take them ([`Trials::penalty`]). Not where the
/// spans were stored: a store's time is its moving of bytes, which the
/// tuner holds to the chunk's copy floor (and stores that differ by noise
/// alone then stay in the order their trials measured).
fn moved(f: Figures, penalty: f64) -> Figures {
    if super::stored(&f) {
        return f;
    }
    let extra = (f.nbytes + f.cbytes) as f64 * penalty;
    Figures { ctime: f.ctime + extra, dtime: if f.dtime > 0.0 { f.dtime + extra } else { 0.0 }, ..f }
}

/// Seconds per byte moved (read or written) when `src` is copied into `out`
/// (as long), the fastest of `runs` copies.
fn per_byte_copied(out: &mut [u8], src: &[u8], runs: u32) -> f64 {
    let copy = || {
        out.copy_from_slice(std::hint::black_box(src));
        std::hint::black_box(&*out);
        Some(src.len())
    };
    fastest(runs, Duration::MAX, copy).map_or(0.0, |(t, _)| t / (2 * src.len().max(1)) as f64)
}

/// The fastest of runs of `f` (at least one, more up to `runs` while they
/// have taken less than `below` in all), in seconds, and what the last run
/// returned; `None` when a run fails.
fn fastest(runs: u32, below: Duration, mut f: impl FnMut() -> Option<usize>) -> Option<(f64, usize)> {
    let (mut best, mut got, mut done) = (f64::INFINITY, 0, 0);
    let first = Instant::now();
    while done == 0 || (done < runs && first.elapsed() < below) {
        let t = Instant::now();
        got = f()?;
        best = best.min(t.elapsed().as_secs_f64());
        done += 1;
    }
    Some((best, got))
}

/// The block size `p` gives a chunk of `n` bytes.
pub(crate) fn real_blocksize(p: &CParams, n: usize) -> usize {
    blocksize::of(p, n)
}

/// Span `i` of `k` spans of `span` bytes over a chunk of `n` bytes: centred
/// at (i + 1/2) / k of it, inside it.
fn span_at(n: usize, span: usize, k: usize, i: usize) -> std::ops::Range<usize> {
    let centre = n * (2 * i + 1) / (2 * k);
    let start = centre.saturating_sub(span / 2).min(n.saturating_sub(span));
    start..(start + span).min(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_sample_has_the_room_the_chunks_destination_has() {
        use crate::chunk::tune::space::{Pipeline, Split};
        // 1 MiB of noise in 64 KiB blocks: stored block by block where the
        // output has room for the blocks' offsets and sizes, else as one copy
        let chunk = crate::filters::shuffle::tests::random_bytes(1 << 20, 12_345);
        let base = CParams { typesize: 1, ..CParams::default() };
        let cand = Candidate {
            codec: crate::codecs::Codec::BloscLz,
            clevel: 1,
            pipeline: Pipeline::None,
            split: Split::Never,
            blocksize: 64 << 10,
        };
        let budget = Budget { bytes: 256 << 10, max_block: 0, runs: 1 };
        let header = EXTENDED_HEADER_LENGTH as u64;
        let mut t = Trials::new(&base);
        // a super-chunk's destination: the chunk and its header, no more
        // (two spans, each one copy)
        t.headroom = EXTENDED_HEADER_LENGTH;
        let f = t.measure(&chunk, &base, &cand, budget, false, None).unwrap();
        assert_eq!(f.cbytes, f.nbytes + 2 * header);
        // room for the offsets and sizes of the chunk's blocks: the spans
        // have it for theirs (stored block by block: larger than a copy)
        t.headroom = 1 << 10;
        let f = t.measure(&chunk, &base, &cand, budget, false, None).unwrap();
        assert!(f.cbytes > f.nbytes + 2 * header, "{} of {}", f.cbytes, f.nbytes);
        assert_eq!(t.room(256 << 10, 1 << 20), (256 << 10) + 32 + (1024 - 32) / 4);
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_sample_with_delta_is_compressed_against_the_chunks_first_block() {
        use crate::chunk::tune::space::{Pipeline, Split};
        // half a block of noise, repeated: each later block of the chunk
        // (or of a sample's smaller blocks) is its first one again, which
        // delta turns into zeros; a piece of it compressed as a chunk of
        // its own would keep its first block noise
        let bs = 32 << 10;
        let mut x = 7u32;
        let block: Vec<u8> = (0..bs / 2)
            .map(|_| {
                x = x.wrapping_mul(1_664_525).wrapping_add(1_013_904_223);
                (x >> 24) as u8
            })
            .collect();
        let chunk = block.repeat(64); // 1 MiB
        let base = CParams { typesize: 1, ..CParams::default() };
        let mut t = Trials::new(&base);
        let cand = |pipeline| Candidate {
            codec: crate::codecs::Codec::Lz4,
            clevel: 1,
            pipeline,
            split: Split::Never,
            blocksize: bs as u32,
        };
        for budget in [
            Budget { bytes: 64 << 10, max_block: 0, runs: 1 },
            Budget { bytes: 128 << 10, max_block: 16 << 10, runs: 1 },
        ] {
            let f = t.measure(&chunk, &base, &cand(Pipeline::Delta), budget, true, None).unwrap();
            assert!(f.ratio() > 20.0, "{budget:?}: {:.2}x", f.ratio());
            // (without delta, LZ4 finds each half block's repeat, no more)
            let f = t.measure(&chunk, &base, &cand(Pipeline::None), budget, true, None).unwrap();
            assert!(f.ratio() < 2.5, "{budget:?}: {:.2}x", f.ratio());
        }
        // a first look's probe too
        let hopeless = |_: &Figures| true;
        let look = Budget { bytes: 128 << 10, max_block: 64 << 10, runs: 1 };
        let f = t.measure(&chunk, &base, &cand(Pipeline::Delta), look, false, Some(&hopeless)).unwrap();
        assert_eq!(f.nbytes, PROBE as u64);
        assert!(f.ratio() > 20.0, "{:.2}x", f.ratio());
    }

    #[test]
    fn spans_are_centred_over_the_chunk_and_inside_it() {
        assert_eq!([span_at(100, 10, 2, 0), span_at(100, 10, 2, 1)], [20..30, 70..80]);
        assert_eq!(span_at(100, 30, 1, 0), 35..65);
        // spans longer than the room they have stay inside the chunk
        assert_eq!([span_at(100, 60, 2, 0), span_at(100, 60, 2, 1)], [0..60, 40..100]);
        assert_eq!(span_at(100, 100, 1, 0), 0..100);
    }

    fn lz4(blocksize: u32) -> Candidate {
        use crate::chunk::tune::space::{Pipeline, Split};
        let codec = crate::codecs::Codec::Lz4;
        Candidate { codec, clevel: 5, pipeline: Pipeline::Shuffle, split: Split::Never, blocksize }
    }

    #[test]
    fn a_span_pays_for_the_bytes_it_moves_where_the_chunk_lies_unless_stored() {
        let f = Figures { nbytes: 1000, cbytes: 400, ctime: 1e-6, dtime: 2e-6 };
        let g = moved(f, 1e-9);
        assert_eq!((g.nbytes, g.cbytes), (1000, 400));
        assert!((g.ctime - 2.4e-6).abs() < 1e-12 && (g.dtime - 3.4e-6).abs() < 1e-12);
        // no decompression timed: none added
        assert_eq!(moved(Figures { dtime: 0.0, ..f }, 1e-9).dtime, 0.0);
        // a store's time is held to the copy floor instead
        let stored = Figures { cbytes: 1000 + 32, ..f };
        assert_eq!(moved(stored, 1e-9), stored);
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: times copies of megabytes")]
    fn the_penalty_is_what_a_span_moves_faster_than_the_chunk() {
        let chunk = vec![7u8; 4 << 20];
        let base = CParams::default();
        let mut t = Trials::new(&base);
        t.size_for(chunk.len());
        assert_eq!(t.penalty(&chunk, 64 << 10), 0.0, "no copy floor yet");
        let floor = t.copy_floor(&chunk);
        assert!(floor > 0.0);
        let p = t.penalty(&chunk, 64 << 10);
        assert!((0.0..floor).contains(&p), "{p} of {floor}");
        assert_eq!(t.span_floors.iter().filter(|(l, _)| *l > 0).count(), 1);
        // once per size
        t.penalty(&chunk, 64 << 10);
        assert_eq!(t.span_floors.iter().filter(|(l, _)| *l > 0).count(), 1);
        assert_eq!(t.penalty(&chunk, chunk.len()), 0.0, "the whole chunk");
        // a new chunk size: measured again
        t.copy_floor(&chunk[..1 << 20]);
        assert_eq!(t.span_floors.iter().filter(|(l, _)| *l > 0).count(), 0);
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_codec_runs_once_untimed_before_its_first_look() {
        // (its first run takes its code in: not timed, even where the look
        // stops at its first small piece)
        let chunk: Vec<u8> = (0u32..1 << 18).flat_map(|i| (i / 5).to_le_bytes()).collect();
        let base = CParams { typesize: 4, ..CParams::default() };
        let mut t = Trials::new(&base);
        let hopeless = |f: &Figures| f.nbytes > 0;
        let look = Budget { bytes: 128 << 10, max_block: 64 << 10, runs: 1 };
        let zstd = Candidate { codec: Codec::Zstd, ..lz4(0) };
        assert_eq!(t.codecs_run, 0);
        let f = t.measure(&chunk, &base, &lz4(0), look, true, Some(&hopeless)).unwrap();
        assert_eq!((f.nbytes, t.codecs_run), (PROBE as u64, 1 << Codec::Lz4 as u8));
        let f = t.measure(&chunk, &base, &zstd, look, true, Some(&hopeless)).unwrap();
        assert_eq!(f.nbytes, SMALL_PROBE as u64);
        assert_eq!(t.codecs_run, 1 << Codec::Lz4 as u8 | 1 << Codec::Zstd as u8);
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_trial_reads_two_spans_of_whole_blocks_or_stops_after_the_first() {
        let chunk: Vec<u8> = (0u32..1 << 18).flat_map(|i| (i / 5).to_le_bytes()).collect(); // 1 MiB
        let base = CParams { typesize: 4, ..CParams::default() };
        let mut t = Trials::new(&base);
        let budget = Budget { bytes: 64 << 10, max_block: 0, runs: 1 };
        let f = t.measure(&chunk, &base, &lz4(16 << 10), budget, true, None).unwrap();
        assert_eq!(f.nbytes, 64 << 10);
        assert!(f.cbytes < f.nbytes / 2 && f.ctime > 0.0 && f.dtime > 0.0);
        // a block larger than a span: the spans grow to one block each
        let f = t.measure(&chunk, &base, &lz4(128 << 10), budget, false, None).unwrap();
        assert_eq!((f.nbytes, f.dtime), (256 << 10, 0.0));
        // blocks of half the chunk: one block
        let f = t.measure(&chunk, &base, &lz4(512 << 10), budget, false, None).unwrap();
        assert_eq!(f.nbytes, 512 << 10);
        // blocks of the chunk: the chunk
        let f = t.measure(&chunk, &base, &lz4(1 << 20), budget, false, None).unwrap();
        assert_eq!(f.nbytes, 1 << 20);
        // hopeless after the first span
        let hopeless = |f: &Figures| f.nbytes > 0;
        let f = t.measure(&chunk, &base, &lz4(16 << 10), budget, false, Some(&hopeless)).unwrap();
        assert_eq!(f.nbytes, 32 << 10);
        // a hopeless first look with spans larger than two probes: the probe alone
        let look = Budget { bytes: 128 << 10, max_block: 64 << 10, runs: 1 };
        let f = t.measure(&chunk, &base, &lz4(0), look, true, Some(&hopeless)).unwrap();
        assert_eq!(f.nbytes, PROBE as u64);
        assert!(f.ctime > 0.0 && f.dtime > 0.0);
        // blocks capped for a first look
        let quick = Budget { bytes: 64 << 10, max_block: 8 << 10, runs: 2 };
        let f = t.measure(&chunk, &base, &lz4(128 << 10), quick, false, None).unwrap();
        assert_eq!(f.nbytes, 64 << 10);
        assert_eq!(t.count, 7);
        // (the figures of the trials with delta below are not counted above)
        // moving the chunk's bytes takes some time, and not forever
        let floor = t.copy_floor(&chunk);
        assert!(floor > 0.0 && floor < 1e-6, "{floor} s per byte");
        // storing bytes as they are through the library: not on a ramp, which compresses
        use crate::chunk::tune::space::{Pipeline, Split};
        let bare = Candidate {
            codec: crate::codecs::Codec::BloscLz,
            clevel: 1,
            pipeline: Pipeline::None,
            split: Split::Never,
            blocksize: 512 << 10,
        };
        assert_eq!(t.store_floor(&chunk, &base, &Candidate { pipeline: Pipeline::Shuffle, ..bare }), None);
        let noise = crate::filters::shuffle::tests::random_bytes(1 << 20, 1);
        let stored = t.store_floor(&noise, &base, &bare).unwrap();
        assert!(stored > 0.0 && stored < 1e-6, "{stored} s per byte");
    }
}
