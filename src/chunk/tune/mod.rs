//! The tuner: each chunk's codec, filters, level, split mode and block size
//! chosen for the caller's goal ([`Tuning`]: tradeoff, mode, bandwidth), by
//! timing candidates on samples of the chunks themselves. What c-blosc2
//! reaches as the Btune plugin (`tuner_id = BLOSC_BTUNE`, `BTUNE_TRADEOFF`),
//! with no plugin and no trained model (docs/PLUGINS.md, "The tuner").
//!
//! - A **hard readapt** searches the whole space ([`space`]): every filter
//!   pipeline with BloscLZ, LZ4 and Zstd at the level the goal suggests (and
//!   the first two at level 1), on small blocks; the three best pipelines
//!   with Zlib and LZ4HC; then, on blocks of their real size, the levels of
//!   the three best codec and pipeline pairs, climbing from that level; then
//!   the winner's neighbours (a level up or down, the other split mode, the
//!   three best pipelines, the other block sizes), moving to the best; last,
//!   the best candidates of three pipelines are timed again on more of the
//!   chunk. A trial whose first span cannot beat what it competes with (even
//!   20% faster and smaller) stops there.
//! - A **soft readapt** tries the choice's neighbours once, with its
//!   pipeline, and moves to one at least 3% better.
//! - The first chunk gets a hard readapt (unless [`Tuning::hint`]), then the
//!   [`Schedule`](crate::params::Schedule) says when the next ones come. A
//!   chunk whose ratio moves away from what the choice gave (by a factor of
//!   1.5, twice in a row) brings a hard readapt forward: data that changes
//!   along the array is followed.
//! - Scheduled readapts wait while the trials have cost more than a twentieth
//!   of the time spent compressing chunks (a quarter for the forward ones):
//!   tuning a long series costs at most about 1.05 times compressing it with
//!   the final choice fixed, plus the first hard readapt.
//!
//! Every chunk is compressed once, with the best candidate known when it
//! comes, on the caller's threads: it is an ordinary chunk. The trials run
//! on one thread beside it, on spans of the chunk; their
//! times are divided by the threads the chunk's blocks will keep busy.

pub mod grid;
pub mod score;
pub mod space;
pub(crate) mod trial;

use self::score::Figures;
use self::space::{Candidate, Pipeline, Split, BLOCKSIZES};
use self::trial::{real_blocksize, Budget, Trials};
use super::compress::{Compressor, Input};
use crate::codecs::Codec;
use crate::error::Result;
use crate::params::{CParams, PerfMode, Repeat, SplitMode, Tuning};
use std::time::{Duration, Instant};

/// Chunks smaller than this are compressed with the choice as it is (a
/// sample of them says little): the short last chunk of an array, say.
pub const MIN_TUNED_BYTES: usize = 16 << 10;
/// The first look at each pipeline and codec: blocks of at most 64 KiB, a
/// thirty-second of the chunk in all, from 32 to 128 KiB.
fn quick(n: usize) -> Budget {
    Budget { bytes: (n / 32).clamp(32 << 10, 128 << 10), max_block: 64 << 10, runs: 2 }
}
/// Levels, split and block sizes: blocks of their real size, an eighth of
/// the chunk in all, from 64 to 512 KiB (at least one block).
fn full(n: usize) -> Budget {
    Budget { bytes: (n / 8).clamp(64 << 10, 512 << 10), max_block: 0, runs: 2 }
}
/// The last word between the finalists of a hard readapt: a quarter of the
/// chunk, from 128 KiB to 1 MiB, each timed twice, interleaved.
fn verify(n: usize) -> Budget {
    Budget { bytes: (n / 4).clamp(128 << 10, 1 << 20), max_block: 0, runs: 3 }
}
/// Codec and pipeline pairs whose levels a hard readapt climbs.
const FINALISTS: usize = 3;
/// Share of the compression time scheduled readapts may spend.
const SCHEDULED_SHARE: f64 = 0.05;
/// Share of the compression time readapts brought forward by a change may spend.
const FORWARD_SHARE: f64 = 0.25;
/// A chunk's ratio this far from the reference counts as a change.
const DRIFT: f64 = 1.5;
/// How much better than its first span a trial's whole sample may turn out:
/// a first span whose times and size, this much smaller, still lose ends
/// the trial.
const OPTIMISM: f64 = 0.8;
/// A soft readapt moves to a neighbour that scores this much better only:
/// two measurements of the same candidate differ by a few percent.
const SOFT_MARGIN: f64 = 0.97;

/// What the tuner did before a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readapt {
    /// Nothing: the chunk was compressed with the choice as it was.
    None,
    Soft,
    Hard,
}

/// What the tuner did for the last chunk.
#[derive(Debug, Clone, Copy)]
pub struct Decision {
    /// The chunk's number since the tuner started.
    pub nchunk: u64,
    /// The parameters it was compressed with (`None`: the caller's, when no
    /// candidate applies: a small chunk before any choice, or a fallback).
    pub choice: Option<Candidate>,
    pub readapt: Readapt,
    /// Trials run for it.
    pub trials: u32,
    /// Their time.
    pub trial_time: Duration,
    /// The chunk: input bytes, chunk bytes, compression seconds (on the caller's threads).
    pub figures: Figures,
}

/// Totals since the tuner started.
#[derive(Debug, Clone, Copy, Default)]
pub struct Totals {
    pub chunks: u64,
    /// Chunks that had a readapt before them.
    pub explored: u64,
    pub trials: u64,
    pub trial_time: Duration,
    /// Time compressing the chunks themselves.
    pub compress_time: Duration,
}

/// The tuner of one compression context.
pub(crate) struct Tuner {
    tuning: Tuning,
    /// The caller's parameters (what is not tuned, and the fallback).
    base: CParams,
    tune_blocksize: bool,
    choice: Option<Candidate>,
    trials: Trials,
    // the schedule
    waits_left: u32,
    softs: u32,
    hards: u32,
    soft_only: bool,
    stopped: bool,
    hard_next: bool,
    forward: bool,
    /// The trials' time of the first readapt (outside the budget).
    first_spent: Duration,
    /// The context's threads, as the last chunk found them.
    nthreads: usize,
    // the drift watch
    reference: Option<f64>,
    off: u32,
    // working space, kept
    ranked: Vec<(Candidate, Figures)>,
    /// The current hard readapt's finalists: the best of its full-size
    /// trials, three pipelines.
    finals: [Option<(Candidate, Figures)>; 3],
    whole: Vec<u8>,
    /// The chunk size and threads the context's scratch holds blocks for.
    blocks_for: usize,
    blocks_threads: usize,
    printed_header: bool,
    totals: Totals,
    last: Option<Decision>,
}

impl Tuner {
    pub fn new(tuning: Tuning, base: &CParams) -> Tuner {
        let base = CParams { tuner: None, use_dict: false, ..base.clone() };
        let choice = if tuning.hint { hint(&base) } else { None };
        let nthreads = base.nthreads.max(1) as usize;
        Tuner {
            tuning,
            tune_blocksize: base.blocksize == 0,
            trials: Trials::new(&base),
            base,
            hard_next: choice.is_none(),
            choice,
            waits_left: tuning.schedule.waits,
            softs: 0,
            hards: 0,
            soft_only: false,
            stopped: false,
            forward: false,
            first_spent: Duration::ZERO,
            nthreads,
            reference: None,
            off: 0,
            ranked: Vec::with_capacity(64),
            finals: [None; 3],
            whole: Vec::new(),
            blocks_for: 0,
            blocks_threads: 0,
            printed_header: false,
            totals: Totals::default(),
            last: None,
        }
    }

    pub fn last(&self) -> Option<&Decision> {
        self.last.as_ref()
    }

    pub fn totals(&self) -> &Totals {
        &self.totals
    }

    /// Compress `input` into `dst` with `comp` (the context this tuner
    /// belongs to), choosing its parameters first.
    pub fn compress(&mut self, comp: &mut Compressor, input: Input<'_>, dst: &mut [u8]) -> Result<usize> {
        let n = input.len();
        self.nthreads = comp.params().nthreads.max(1) as usize;
        let readapt = if n >= MIN_TUNED_BYTES { self.plan() } else { Readapt::None };
        let (count0, spent0) = (self.trials.count, self.trials.spent);
        if readapt != Readapt::None {
            let mut whole = std::mem::take(&mut self.whole);
            if let Some(chunk) = comp.tuning_bytes(input, &mut whole)? {
                self.readapt(readapt, chunk);
            }
            self.whole = whole;
            if self.totals.explored == 0 {
                self.first_spent = self.trials.spent;
            }
        }
        // the chunk itself, with the choice (or the caller's parameters)
        let params = match &self.choice {
            Some(c) => c.params(comp.params()),
            None => self.base_now(comp),
        };
        comp.retune(params);
        if self.blocks_for < n || self.blocks_threads != self.nthreads {
            // (a choice may bring larger blocks than any before it: their
            // scratch is there from the start, on every thread)
            comp.reserve_blocks(n);
            (self.blocks_for, self.blocks_threads) = (n, self.nthreads);
        }
        let start = Instant::now();
        let mut used = self.choice;
        let mut r = comp.compress_untuned(input, dst);
        if self.choice.is_some() && !matches!(r, Ok(n) if n > 0) {
            // what the caller's parameters do is the answer when the choice fails
            comp.retune(self.base_now(comp));
            used = None;
            r = comp.compress_untuned(input, dst);
        }
        let elapsed = start.elapsed();
        let cbytes = r?;
        let figures =
            Figures { nbytes: n as u64, cbytes: cbytes as u64, ctime: elapsed.as_secs_f64(), dtime: 0.0 };
        self.totals.chunks += 1;
        self.totals.compress_time += elapsed;
        self.totals.explored += u64::from(readapt != Readapt::None);
        self.totals.trials = self.trials.count;
        self.totals.trial_time = self.trials.spent;
        let decision = Decision {
            nchunk: self.totals.chunks - 1,
            choice: used,
            readapt,
            trials: (self.trials.count - count0) as u32,
            trial_time: self.trials.spent - spent0,
            figures,
        };
        if n >= MIN_TUNED_BYTES && cbytes > 0 {
            self.watch(figures.ratio(), readapt != Readapt::None);
        }
        if self.tuning.trace {
            self.trace(&decision);
        }
        self.last = Some(decision);
        Ok(cbytes)
    }

    /// The caller's parameters, with what the context has now that is not
    /// tuned (threads, super-chunk).
    fn base_now(&self, comp: &Compressor) -> CParams {
        let now = comp.params();
        CParams { nthreads: now.nthreads, schunk: now.schunk.clone(), tuner: now.tuner, ..self.base.clone() }
    }

    /// What to do before the next chunk, by the schedule and the budget.
    fn plan(&mut self) -> Readapt {
        let real = self.totals.compress_time.as_secs_f64();
        let spent = (self.trials.spent - self.first_spent).as_secs_f64();
        if self.hard_next {
            let first = self.choice.is_none();
            if first || !self.forward || spent <= FORWARD_SHARE * real {
                self.hard_next = false;
                self.forward = false;
                return Readapt::Hard;
            }
            return Readapt::None;
        }
        if self.stopped {
            return Readapt::None;
        }
        if self.waits_left > 0 {
            self.waits_left -= 1;
            return Readapt::None;
        }
        if spent > SCHEDULED_SHARE * real {
            return Readapt::None; // (stays due: tried again at the next chunk)
        }
        let s = self.tuning.schedule;
        self.waits_left = s.waits;
        if self.soft_only || self.softs < s.softs_before_hard {
            self.softs += 1;
            return Readapt::Soft;
        }
        self.softs = 0;
        self.hards += 1;
        if self.hards >= s.hards_before_stop {
            match s.repeat {
                Repeat::Stop => self.stopped = true,
                Repeat::Soft => self.soft_only = true,
                Repeat::All => self.hards = 0,
            }
        }
        Readapt::Hard
    }

    /// A chunk's ratio against the reference the choice set: a change of
    /// [`DRIFT`] twice in a row brings a hard readapt forward.
    fn watch(&mut self, ratio: f64, fresh: bool) {
        match self.reference {
            Some(r) if !fresh => {
                if ratio > r * DRIFT || ratio * DRIFT < r {
                    self.off += 1;
                    if self.off >= 2 {
                        self.hard_next = true;
                        self.forward = true;
                        self.off = 0;
                        self.reference = None;
                    }
                } else {
                    self.off = 0;
                    self.reference = Some(0.8 * r + 0.2 * ratio);
                }
            }
            _ => {
                self.reference = Some(ratio);
                self.off = 0;
            }
        }
    }

    fn readapt(&mut self, kind: Readapt, chunk: &[u8]) {
        let found = match (kind, self.choice) {
            (Readapt::Soft, Some(c)) => self.soft(chunk, c),
            _ => self.hard(chunk),
        };
        if let Some(c) = found {
            self.choice = Some(c);
        }
    }

    fn with_dtime(&self) -> bool {
        self.tuning.perf_mode != PerfMode::Comp
    }

    /// The figures of `c` on a sample of `chunk`, its times as the chunk will
    /// take them on the context's threads: one thread's time over the threads
    /// the chunk's blocks can keep busy (a chunk of few large blocks leaves
    /// threads idle).
    /// With `beat`, a trial stops after its first span when that cannot
    /// score below `beat` ([`OPTIMISM`]), and returns the span's figures.
    fn measure(&mut self, chunk: &[u8], c: &Candidate, budget: Budget, beat: Option<f64>) -> Option<Figures> {
        let dt = self.with_dtime();
        let busy = if self.nthreads > 1 {
            let blocks = chunk.len().div_ceil(real_blocksize(&c.params(&self.base), chunk.len()));
            self.nthreads.min(blocks).max(1) as f64
        } else {
            1.0
        };
        let tuning = self.tuning;
        let hopeless = move |f: &Figures| {
            let best_case = Figures {
                nbytes: f.nbytes,
                cbytes: ((f.cbytes as f64 * OPTIMISM) as u64).max(1),
                ctime: f.ctime / busy * OPTIMISM,
                dtime: f.dtime / busy * OPTIMISM,
            };
            beat.is_some_and(|b| best_case.score(&tuning) > b)
        };
        let hopeless: Option<&dyn Fn(&Figures) -> bool> = if beat.is_some() { Some(&hopeless) } else { None };
        let spent0 = self.trials.spent;
        let f = self.trials.measure(chunk, &self.base, c, budget, dt, hopeless);
        let took = self.trials.spent - spent0;
        let f = f.map(|f| Figures { ctime: f.ctime / busy, dtime: f.dtime / busy, ..f });
        if self.tuning.trace_trials {
            match &f {
                Some(f) => eprintln!(
                    "  trial {:<46} {:>4}K {:>7.3}x {:>9.1} {:>9.1} score {:.4e} {:>6}us",
                    c.describe(),
                    f.nbytes >> 10,
                    f.ratio(),
                    f.cspeed() / 1e6,
                    if dt { f.dspeed() / 1e6 } else { f64::NAN },
                    f.score(&self.tuning),
                    took.as_micros()
                ),
                None => eprintln!("  trial {:<46} failed", c.describe()),
            }
        }
        f
    }

    /// [`Tuner::measure`] on blocks of their real size, the result kept
    /// among the readapt's finalists: the best three of different pipelines.
    fn measure_full(&mut self, chunk: &[u8], c: &Candidate, beat: Option<f64>) -> Option<Figures> {
        let f = self.measure(chunk, c, full(chunk.len()), beat)?;
        let t = self.tuning;
        let slot = match self.finals.iter().position(|x| x.is_some_and(|(x, _)| x.pipeline == c.pipeline)) {
            Some(i) => Some(i),
            None => (0..3).max_by(|&i, &j| match (&self.finals[i], &self.finals[j]) {
                (None, None) => std::cmp::Ordering::Equal,
                (None, _) => std::cmp::Ordering::Greater,
                (_, None) => std::cmp::Ordering::Less,
                (Some(a), Some(b)) => a.1.score(&t).total_cmp(&b.1.score(&t)),
            }),
        };
        if let Some(i) = slot {
            if self.finals[i].is_none_or(|(_, w)| f.beats(&w, &t)) {
                self.finals[i] = Some((*c, f));
            }
        }
        Some(f)
    }

    /// The best of the readapt's finalists, each timed again twice on a
    /// larger sample, interleaved (the fastest of each counts).
    fn final_word(&mut self, chunk: &[u8], fallback: Candidate) -> Candidate {
        let finals = self.finals;
        if finals.iter().flatten().count() < 2 {
            return fallback;
        }
        let mut best: [Option<Figures>; 3] = [None; 3];
        for _ in 0..2 {
            for (i, (c, _)) in finals.iter().enumerate().filter_map(|(i, x)| x.map(|x| (i, x))) {
                if let Some(f) = self.measure(chunk, &c, verify(chunk.len()), None) {
                    best[i] = Some(match best[i] {
                        None => f,
                        Some(o) => Figures { ctime: o.ctime.min(f.ctime), dtime: o.dtime.min(f.dtime), ..o },
                    });
                }
            }
        }
        let t = self.tuning;
        finals
            .iter()
            .zip(best)
            .filter_map(|(c, f)| Some((c.as_ref()?.0, f?)))
            .reduce(|a, b| if b.1.beats(&a.1, &t) { b } else { a })
            .map_or(fallback, |(c, _)| c)
    }

    /// The score of the third best pipeline in `ranked` (its best
    /// candidate's), when three have been tried: what a first look must beat
    /// to count.
    fn third_pipeline(&self) -> Option<f64> {
        // each pipeline's best score (pipelines are fewer than 8)
        let mut pipes: [Option<(Pipeline, f64)>; 8] = [None; 8];
        for (c, f) in &self.ranked {
            let s = f.score(&self.tuning);
            match pipes.iter_mut().find(|x| x.is_none_or(|(p, _)| p == c.pipeline)) {
                Some(Some((_, best))) => *best = best.min(s),
                Some(slot) => *slot = Some((c.pipeline, s)),
                None => {}
            }
        }
        let mut three = [f64::INFINITY; 3];
        for (_, s) in pipes.into_iter().flatten() {
            if s < three[2] {
                three[2] = s;
                three.sort_by(f64::total_cmp);
            }
        }
        three[2].is_finite().then_some(three[2])
    }

    /// The best of `ranked` (by [`Figures::beats`]) first.
    fn sort_ranked(&mut self) {
        let t = self.tuning;
        self.ranked.sort_by(|a, b| {
            if a.1.beats(&b.1, &t) {
                std::cmp::Ordering::Less
            } else if b.1.beats(&a.1, &t) {
                std::cmp::Ordering::Greater
            } else {
                std::cmp::Ordering::Equal
            }
        });
    }

    /// The level a hard readapt starts from: 1 at tradeoff 0, 5 at 0.5, 9 at 1.
    fn start_level(&self) -> u8 {
        (1.0 + 8.0 * self.tuning.tradeoff.clamp(0.0, 1.0)).round() as u8
    }

    fn hard(&mut self, chunk: &[u8]) -> Option<Candidate> {
        self.finals = [None; 3];
        let typesize = self.typesize();
        let level = self.start_level();
        let blocksize = if self.tune_blocksize { 0 } else { self.base.blocksize.max(0) as u32 };
        let at =
            |codec, pipeline| Candidate { codec, clevel: level, pipeline, split: Split::Auto, blocksize };
        // 1. every pipeline with the three fast codecs
        self.ranked.clear();
        // (the fast codecs first: their figures bound the slower ones'
        // trials; and at their level 1 too, below a tradeoff of 1: there
        // they give up early on data that hardly compresses)
        let low = level > 1 && self.tuning.tradeoff < 1.0;
        let firsts = [(Codec::BloscLz, 1), (Codec::Lz4, 1), (Codec::BloscLz, level), (Codec::Lz4, level)];
        for (codec, l) in firsts.into_iter().skip(if low { 0 } else { 2 }).chain([(Codec::Zstd, level)]) {
            for &pipeline in Pipeline::all(typesize) {
                let c = Candidate { clevel: l, ..at(codec, pipeline) };
                let beat = self.third_pipeline();
                if let Some(f) = self.measure(chunk, &c, quick(chunk.len()), beat) {
                    self.ranked.push((c, f));
                }
            }
        }
        self.sort_ranked();
        let mut pipes = [None; 3];
        let mut np = 0;
        for (c, _) in &self.ranked {
            if np < pipes.len() && !pipes.contains(&Some(c.pipeline)) {
                pipes[np] = Some(c.pipeline);
                np += 1;
            }
        }
        // 2. the two slow codecs with the three best pipelines
        for pipeline in pipes.into_iter().flatten() {
            for codec in [Codec::Zlib, Codec::Lz4hc] {
                let c = at(codec, pipeline);
                let beat = self.ranked.get(FINALISTS - 1).map(|(_, f)| f.score(&self.tuning));
                if let Some(f) = self.measure(chunk, &c, quick(chunk.len()), beat) {
                    self.ranked.push((c, f));
                }
            }
        }
        self.sort_ranked();
        // 3. the levels of the best pairs, on blocks of their real size
        let mut finalists = [None; FINALISTS];
        let mut nf = 0;
        for (c, _) in &self.ranked {
            if nf == FINALISTS {
                break;
            }
            let pair =
                |x: &Option<Candidate>| x.is_some_and(|x| (x.codec, x.pipeline) == (c.codec, c.pipeline));
            if !finalists.iter().any(pair) {
                finalists[nf] = Some(*c);
                nf += 1;
            }
        }
        let mut best: Option<(Candidate, Figures)> = None;
        for c in finalists.into_iter().flatten() {
            let c = self.explicit_split(c, chunk.len());
            if let Some((c, f)) = self.climb(chunk, c) {
                if best.is_none_or(|(_, b)| f.beats(&b, &self.tuning)) {
                    best = Some((c, f));
                }
            }
        }
        // 4. the neighbours of the winner: level, split, the other good
        // pipelines, block sizes
        let (c, f) = best?;
        let (c, _) = self.polish(chunk, c, f, &pipes, 1, 1.0);
        // 5. the best three seen, again, on more of the chunk
        Some(self.final_word(chunk, c))
    }

    /// `c` with the split mode its codec and level give a chunk of `n` bytes
    /// said explicitly.
    fn explicit_split(&self, c: Candidate, n: usize) -> Candidate {
        if c.split != Split::Auto {
            return c;
        }
        if self.typesize() == 1 {
            return Candidate { split: Split::Never, ..c };
        }
        let p = c.params(&self.base);
        let bs = real_blocksize(&p, n);
        let splits = crate::chunk::blocksize::split(
            SplitMode::Auto,
            p.compcode,
            p.clevel,
            crate::chunk::header::flags_from_filters(&p.filters),
            p.typesize,
            bs as i32,
        );
        Candidate { split: if splits { Split::Always } else { Split::Never }, ..c }
    }

    /// The best level of `c`'s codec and pipeline: from its level, two
    /// steps then one each way while that is better.
    fn climb(&mut self, chunk: &[u8], c: Candidate) -> Option<(Candidate, Figures)> {
        let mut seen: [Option<Figures>; 10] = [None; 10];
        let mut at = |this: &mut Self, level: u8, beat: Option<f64>| -> Option<Figures> {
            if let Some(f) = seen[level as usize] {
                return Some(f);
            }
            let f = this.measure_full(chunk, &Candidate { clevel: level, ..c }, beat)?;
            seen[level as usize] = Some(f);
            Some(f)
        };
        let mut level = c.clevel;
        let mut best = at(self, level, None)?;
        for step in [2u8, 1] {
            loop {
                let mut moved = false;
                for next in [level.checked_sub(step), level.checked_add(step)].into_iter().flatten() {
                    if !(1..=9).contains(&next) || next == level {
                        continue;
                    }
                    if let Some(f) = at(self, next, Some(best.score(&self.tuning))) {
                        if f.beats(&best, &self.tuning) {
                            (level, best) = (next, f);
                            moved = true;
                            break;
                        }
                    }
                }
                if !moved || step == 1 {
                    break;
                }
            }
        }
        Some((Candidate { clevel: level, ..c }, best))
    }

    /// Move from `c` to its best neighbour while that beats it, `rounds`
    /// times at most: a level up or down, the other split mode, the
    /// pipelines of `pipes`, the other block sizes (when tuned).
    fn polish(
        &mut self,
        chunk: &[u8],
        mut c: Candidate,
        mut f: Figures,
        pipes: &[Option<Pipeline>],
        rounds: usize,
        margin: f64,
    ) -> (Candidate, Figures) {
        let n = chunk.len();
        for _ in 0..rounds {
            let mut next = [None; 12];
            let mut k = 0;
            let mut push = |x: Candidate| {
                if k < next.len() {
                    next[k] = Some(x);
                    k += 1;
                }
            };
            if c.clevel > 1 {
                push(Candidate { clevel: c.clevel - 1, ..c });
            }
            if c.clevel < 9 {
                push(Candidate { clevel: c.clevel + 1, ..c });
            }
            if self.typesize() > 1 {
                let other = if c.split == Split::Always { Split::Never } else { Split::Always };
                push(Candidate { split: other, ..c });
            }
            for p in pipes.iter().flatten() {
                if *p != c.pipeline {
                    push(self.explicit_split(Candidate { pipeline: *p, split: Split::Auto, ..c }, n));
                }
            }
            if self.tune_blocksize {
                let now = real_blocksize(&c.params(&self.base), n);
                for b in std::iter::once(0).chain(BLOCKSIZES) {
                    let alt = Candidate { blocksize: b, ..c };
                    if b != c.blocksize
                        && (b as usize) < n
                        && real_blocksize(&alt.params(&self.base), n) != now
                    {
                        push(alt);
                    }
                }
            }
            let mut moved = false;
            for alt in next.into_iter().flatten() {
                let beat = f.score(&self.tuning) * margin;
                if let Some(g) = self.measure_full(chunk, &alt, Some(beat)) {
                    if g.score(&self.tuning) < beat {
                        (c, f) = (alt, g);
                        moved = true;
                    }
                }
            }
            if !moved {
                break;
            }
        }
        (c, f)
    }

    fn soft(&mut self, chunk: &[u8], c: Candidate) -> Option<Candidate> {
        let c = self.explicit_split(c, chunk.len());
        let f = self.measure(chunk, &c, full(chunk.len()), None)?;
        Some(self.polish(chunk, c, f, &[], 1, SOFT_MARGIN).0)
    }

    fn typesize(&self) -> usize {
        if self.base.typesize > 255 {
            1
        } else {
            self.base.typesize.max(1) as usize
        }
    }

    fn trace(&mut self, d: &Decision) {
        if !self.printed_header {
            self.printed_header = true;
            eprintln!(
                "b2nd tuner: tradeoff {:.2}, mode {}, bandwidth {} MB/s",
                self.tuning.tradeoff,
                self.tuning.perf_mode.name(),
                self.tuning.bandwidth / 1_000_000
            );
            eprintln!(
                "| {:>6} | {:7} | {:>5} | {:17} | {:6} | {:>5} | {:>8} | {:>9} | {:7} | {:>6} | {:>8} |",
                "chunk",
                "codec",
                "level",
                "filters",
                "split",
                "block",
                "ratio",
                "MB/s",
                "readapt",
                "trials",
                "ms"
            );
        }
        let (codec, level, filters, split, block) = match d.choice {
            Some(c) => {
                (c.codec.name(), c.clevel, c.pipeline.name(), c.split.name(), space::size_name(c.blocksize))
            }
            None => (
                "(given)",
                self.base.clevel,
                "(given)",
                "-",
                space::size_name(self.base.blocksize.max(0) as u32),
            ),
        };
        let readapt = match d.readapt {
            Readapt::None => "-",
            Readapt::Soft => "soft",
            Readapt::Hard => "hard",
        };
        eprintln!(
            "| {:>6} | {:7} | {:>5} | {:17} | {:6} | {:>5} | {:>7.2}x | {:>9.1} | {:7} | {:>6} | {:>8.2} |",
            d.nchunk,
            codec,
            level,
            filters,
            split,
            block,
            d.figures.ratio(),
            d.figures.cspeed() / 1e6,
            readapt,
            d.trials,
            d.trial_time.as_secs_f64() * 1e3
        );
    }
}

/// The caller's parameters as a candidate, when they are one (Btune's `cparams_hint`).
fn hint(base: &CParams) -> Option<Candidate> {
    let codec = Codec::from_compcode(base.compcode)?;
    let typesize = if base.typesize > 255 { 1 } else { base.typesize.max(1) as usize };
    let pipeline = Pipeline::all(typesize)
        .iter()
        .copied()
        .find(|p| p.filters(typesize) == (base.filters, base.filters_meta))?;
    let split = match base.splitmode {
        SplitMode::Always => Split::Always,
        SplitMode::Never => Split::Never,
        SplitMode::Auto | SplitMode::ForwardCompat => Split::Auto,
    };
    Some(Candidate {
        codec,
        clevel: base.clevel.clamp(1, 9),
        pipeline,
        split,
        blocksize: base.blocksize.max(0) as u32,
    })
}
