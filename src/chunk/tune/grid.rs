//! The yardsticks the tuner is measured by (`b2nd tune`,
//! scripts/bench_tuner.sh): a full grid of candidates timed on the same
//! chunks, and a tuned run over a series of chunks beside the same series
//! compressed with the run's final choice fixed.

use super::score::Figures;
use super::space::Candidate;
use super::{Decision, Totals};
use crate::chunk::{Compressor, DParams, Decompressor};
use crate::error::{Error, Result};
use crate::params::{CParams, Tuning};
use std::time::Instant;

/// A candidate and what it did to the chunks.
#[derive(Debug, Clone, Copy)]
pub struct Point {
    pub candidate: Candidate,
    pub figures: Figures,
}

/// Compress and decompress each chunk of `chunks` with `params`, on
/// `params.nthreads` threads, each `repeats` times (at least once; the
/// fastest time counts): their figures summed.
pub fn measure(chunks: &[&[u8]], params: &CParams, repeats: u32) -> Result<Figures> {
    let mut c = Compressor::new(CParams { tuner: None, ..params.clone() })?;
    let mut d = Decompressor::new(DParams {
        nthreads: params.nthreads,
        typesize: params.typesize,
        ..DParams::default()
    });
    let mut out = Vec::new();
    let mut back = Vec::new();
    measure_with(&mut c, &mut d, chunks, repeats, &mut out, &mut back)
}

fn measure_with(
    c: &mut Compressor,
    d: &mut Decompressor,
    chunks: &[&[u8]],
    repeats: u32,
    out: &mut Vec<u8>,
    back: &mut Vec<u8>,
) -> Result<Figures> {
    let mut total = Figures { nbytes: 0, cbytes: 0, ctime: 0.0, dtime: 0.0 };
    for chunk in chunks {
        out.resize(chunk.len() + 64, 0);
        back.resize(chunk.len(), 0);
        let (mut ct, mut dt, mut n) = (f64::INFINITY, f64::INFINITY, 0);
        for _ in 0..repeats.max(1) {
            let t = Instant::now();
            n = c.compress_untuned(super::super::compress::Input::Slice(chunk), out)?;
            ct = ct.min(t.elapsed().as_secs_f64());
            let t = Instant::now();
            let got = d.decompress(&out[..n], back)?;
            dt = dt.min(t.elapsed().as_secs_f64());
            if got != chunk.len() || back[..] != chunk[..] {
                return Err(Error::Failure);
            }
        }
        total = total.add(&Figures { nbytes: chunk.len() as u64, cbytes: n as u64, ctime: ct, dtime: dt });
    }
    Ok(total)
}

/// Every candidate of `candidates` on the same `chunks` (with what `base`
/// says of threads and typesize), `progress` told after each one.
pub fn grid(
    chunks: &[&[u8]],
    base: &CParams,
    candidates: &[Candidate],
    repeats: u32,
    mut progress: impl FnMut(usize, usize),
) -> Result<Vec<Point>> {
    let base = CParams { tuner: None, ..base.clone() };
    let mut c = Compressor::new(base.clone())?;
    let mut d =
        Decompressor::new(DParams { nthreads: base.nthreads, typesize: base.typesize, ..DParams::default() });
    let (mut out, mut back) = (Vec::new(), Vec::new());
    let mut points = Vec::with_capacity(candidates.len());
    for (i, cand) in candidates.iter().enumerate() {
        c.retune(cand.params(&base));
        let figures = measure_with(&mut c, &mut d, chunks, repeats, &mut out, &mut back)?;
        points.push(Point { candidate: *cand, figures });
        progress(i + 1, candidates.len());
    }
    Ok(points)
}

/// The best point of `points` for `tuning` (by [`Figures::beats`]).
pub fn best<'a>(points: &'a [Point], tuning: &Tuning) -> Option<&'a Point> {
    points.iter().reduce(|a, b| if b.figures.beats(&a.figures, tuning) { b } else { a })
}

/// A tuned run over a series of chunks.
#[derive(Debug, Clone)]
pub struct Run {
    /// What the tuner did for each chunk.
    pub decisions: Vec<Decision>,
    pub totals: Totals,
    /// The whole run: compressing every chunk, with the trials.
    pub seconds: f64,
    /// Decompressing every chunk the run wrote (on the same threads).
    pub dseconds: f64,
    /// The choice the run ended with (`None`: the chunks were too small to tune).
    pub last: Option<Candidate>,
    /// The same chunks compressed with the first run's final choice fixed
    /// (its parameters, the same threads, a fresh context as the run's;
    /// the runs' final choices rarely differ), in seconds: what the run is
    /// weighed against.
    pub fixed_seconds: f64,
    /// The chunk bytes the run wrote.
    pub cbytes: u64,
}

/// Where a run's chunks come from: `read(i, buf)` puts chunk `i` of `n` in
/// `buf` (read again for each pass, so that no more than one chunk is held).
pub struct Series<'a> {
    pub n: usize,
    pub read: &'a mut dyn FnMut(usize, &mut Vec<u8>) -> Result<()>,
}

/// Compress the chunks of `series` one after the other with a tuner for
/// `tuning` (on `base`'s threads and typesize), and the same chunks with
/// the first run's final choice fixed, in `repeats` interleaved rounds of a
/// run each way (the fastest of each counts: a busy machine slows single
/// runs by as much as tuning costs). Both ways do the same between their
/// chunks (each is read, then decompressed): only the compressions are
/// timed.
pub fn run(series: Series<'_>, base: &CParams, tuning: &Tuning, repeats: u32) -> Result<Run> {
    let Series { n, read } = series;
    let mut chunk = Vec::new();
    let (mut out, mut back) = (Vec::new(), Vec::new());
    let mut best: Option<Run> = None;
    let mut d =
        Decompressor::new(DParams { nthreads: base.nthreads, typesize: base.typesize, ..DParams::default() });
    // one run over the chunks with `c` (a fresh context, each way: both pay
    // for their first chunk's warming up): its seconds compressing and
    // decompressing, chunk bytes and the tuner's decisions
    let mut pass = |c: &mut Compressor, decisions: &mut Vec<Decision>| -> Result<(f64, f64, u64)> {
        let (mut cbytes, mut seconds, mut dseconds) = (0, 0.0, 0.0);
        for i in 0..n {
            read(i, &mut chunk)?;
            out.resize(chunk.len() + 64, 0);
            let t = Instant::now();
            let len = c.compress(&chunk, &mut out)?;
            seconds += t.elapsed().as_secs_f64();
            cbytes += len as u64;
            back.resize(chunk.len(), 0);
            let t = Instant::now();
            d.decompress(&out[..len], &mut back)?;
            dseconds += t.elapsed().as_secs_f64();
            if let Some(d) = c.tuner_decision() {
                decisions.push(*d);
            }
        }
        Ok((seconds, dseconds, cbytes))
    };
    let mut fixed: Option<CParams> = None;
    let mut fastest = f64::INFINITY;
    for _ in 0..repeats.max(1) {
        let mut c = Compressor::new(CParams { tuner: Some(*tuning), ..base.clone() })?;
        let mut decisions = Vec::with_capacity(n);
        let (seconds, dseconds, cbytes) = pass(&mut c, &mut decisions)?;
        let totals = c.tuner_totals().copied().unwrap_or_default();
        let last = decisions.iter().rev().find_map(|d| d.choice);
        let fixed = fixed.get_or_insert_with(|| match last {
            Some(c) => c.params(base),
            None => CParams { tuner: None, ..base.clone() },
        });
        let r = Run { decisions, totals, seconds, dseconds, last, fixed_seconds: 0.0, cbytes };
        if best.as_ref().is_none_or(|b| r.seconds < b.seconds) {
            best = Some(r);
        }
        let mut c = Compressor::new(fixed.clone())?;
        let (seconds, _, _) = pass(&mut c, &mut Vec::new())?;
        fastest = fastest.min(seconds);
    }
    let mut run = best.ok_or(Error::Failure)?;
    run.fixed_seconds = fastest;
    Ok(run)
}
