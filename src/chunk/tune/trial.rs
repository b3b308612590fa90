//! Timing a candidate on a sample of the chunk being compressed: two spans
//! of the chunk, the same bytes for every candidate of a comparison (block
//! sizes, codecs and levels are weighed on the same data), compressed in
//! blocks of the candidate's size, at most a span, (and decompressed when the
//! mode counts that time) by a one-thread context kept from chunk to chunk,
//! so that a warm tuner allocates nothing.

use super::score::Figures;
use super::space::Candidate;
use crate::chunk::blocksize;
use crate::chunk::header::EXTENDED_HEADER_LENGTH;
use crate::chunk::{Compressor, DParams, Decompressor};
use crate::params::CParams;
use std::time::{Duration, Instant};

/// The spans a sample is made of, spread over the chunk.
const SPANS: usize = 2;
/// A trial faster than this is repeated (up to [`MAX_REPEATS`] runs) and its
/// fastest run kept, so that one interruption does not decide.
const REPEAT_BELOW: Duration = Duration::from_micros(500);
const MAX_REPEATS: u32 = 3;

/// How much of the chunk a trial reads.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Budget {
    /// Bytes of sample to aim at (whole blocks; at least one block).
    pub bytes: usize,
    /// Blocks no larger than this in the sample (0: the candidate's own
    /// block size), for quick first looks at slow candidates.
    pub max_block: usize,
}

/// The trial contexts and buffers of one tuner.
pub(crate) struct Trials {
    comp: Compressor,
    decomp: Decompressor,
    sample: Vec<u8>,
    /// The span length `sample` was cut with, for this chunk.
    cut: Option<usize>,
    out: Vec<u8>,
    back: Vec<u8>,
    /// Time spent in trials since the tuner started.
    pub spent: Duration,
    /// Trials run since the tuner started.
    pub count: u64,
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
            sample: Vec::new(),
            cut: None,
            out: Vec::new(),
            back: Vec::new(),
            spent: Duration::ZERO,
            count: 0,
        }
    }

    /// Forget the sample: the next trials are on another chunk.
    pub fn new_chunk(&mut self) {
        self.cut = None;
    }

    /// The figures of `cand` on a sample of `chunk` (compressed as `base`
    /// says for what is not tuned), or `None` when it fails to compress.
    pub fn measure(
        &mut self,
        chunk: &[u8],
        base: &CParams,
        cand: &Candidate,
        budget: Budget,
        with_dtime: bool,
    ) -> Option<Figures> {
        let start = Instant::now();
        let r = self.run(chunk, base, cand, budget, with_dtime);
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
    ) -> Option<Figures> {
        let mut p = cand.params(base);
        p.nthreads = 1;
        p.schunk = None;
        let n = chunk.len();
        let typesize = p.typesize.clamp(1, 255) as usize;
        let mut block = real_blocksize(&p, n);
        if budget.max_block > 0 && block > budget.max_block {
            block = (budget.max_block / typesize).max(1) * typesize;
        }
        let sample: &[u8] = if n <= budget.bytes {
            chunk
        } else {
            let span = ((budget.bytes / SPANS) / typesize).max(1) * typesize;
            if self.cut != Some(span) {
                cut_sample(chunk, span, SPANS, &mut self.sample);
                self.cut = Some(span);
            }
            if block > span {
                block = span;
            }
            p.blocksize = block as i32;
            &self.sample
        };
        let need = sample.len() + EXTENDED_HEADER_LENGTH + 64;
        if self.out.len() < need {
            self.out.resize(need, 0);
        }
        self.comp.retune(p);
        let (mut ctime, mut dtime, mut cbytes) = (f64::INFINITY, 0.0, 0);
        let mut runs = 0;
        let first = Instant::now();
        while runs == 0 || (runs < MAX_REPEATS && first.elapsed() < REPEAT_BELOW) {
            let t = Instant::now();
            cbytes = self.comp.compress(sample, &mut self.out[..need]).ok()?;
            ctime = ctime.min(t.elapsed().as_secs_f64());
            runs += 1;
        }
        if cbytes == 0 {
            return None;
        }
        if with_dtime {
            if self.back.len() < sample.len() {
                self.back.resize(sample.len(), 0);
            }
            dtime = f64::INFINITY;
            let mut runs = 0;
            let first = Instant::now();
            while runs == 0 || (runs < MAX_REPEATS && first.elapsed() < REPEAT_BELOW) {
                let t = Instant::now();
                let got = self.decomp.decompress(&self.out[..cbytes], &mut self.back[..sample.len()]).ok()?;
                dtime = dtime.min(t.elapsed().as_secs_f64());
                if got != sample.len() {
                    return None;
                }
                runs += 1;
            }
        }
        Some(Figures { nbytes: sample.len() as u64, cbytes: cbytes as u64, ctime, dtime })
    }
}

/// The block size `p` gives a chunk of `n` bytes.
pub(crate) fn real_blocksize(p: &CParams, n: usize) -> usize {
    blocksize::of(p, n)
}

/// `k` spans of `span` bytes of `chunk` centred at (i + 1/2) / k of it, one
/// after the other in `out`.
fn cut_sample(chunk: &[u8], span: usize, k: usize, out: &mut Vec<u8>) {
    out.clear();
    let n = chunk.len();
    for i in 0..k {
        let centre = n * (2 * i + 1) / (2 * k);
        let start = centre.saturating_sub(span / 2).min(n.saturating_sub(span));
        out.extend_from_slice(&chunk[start..(start + span).min(n)]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_sample_is_spans_centred_over_the_chunk() {
        let chunk: Vec<u8> = (0..100u8).collect();
        let mut out = Vec::new();
        cut_sample(&chunk, 10, 2, &mut out);
        assert_eq!(out, [&chunk[20..30], &chunk[70..80]].concat());
        cut_sample(&chunk, 30, 1, &mut out);
        assert_eq!(out, &chunk[35..65]);
        // spans longer than the room they have stay inside the chunk
        cut_sample(&chunk, 60, 2, &mut out);
        assert_eq!(out, [&chunk[0..60], &chunk[40..100]].concat());
    }
}
