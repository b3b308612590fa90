//! The tuner: each chunk's codec, filters, level, split mode and block size
//! chosen for the caller's goal ([`Tuning`]: tradeoff, mode, bandwidth), by
//! timing candidates on samples of the chunks themselves. What c-blosc2
//! reaches as the Btune plugin (`tuner_id = BLOSC_BTUNE`, `BTUNE_TRADEOFF`),
//! with no plugin and no trained model (docs/PLUGINS.md, "The tuner").
//!
//! - A **hard readapt** searches the whole space ([`space`]), a trial at a
//!   time (`search`: its stages): the fast codecs on every pipeline, Zstd,
//!   the best one's neighbours, Zlib and LZ4HC, the levels of the best codec
//!   and pipeline pairs, the winner's neighbours, a last word between the
//!   best of three pipelines. A trial whose first span cannot beat what it
//!   competes with (even 20% faster and smaller) stops there. What the
//!   budget does not let one chunk run goes on over the next ones, the
//!   choice meanwhile the best found.
//! - A **soft readapt** tries the choice's neighbours once, with its
//!   pipeline, and moves to one at least 3% better.
//! - The first chunk gets a hard readapt (unless [`Tuning::hint`]), then the
//!   [`Schedule`](crate::params::Schedule) says when the next ones come. A
//!   chunk whose signature (what LZ4 makes of a few pieces of it, whatever
//!   the choice) moves away from the data the choice was made for by a
//!   factor of 1.5 brings a hard readapt forward, on that chunk; so does,
//!   for the chunk after, a chunk whose ratio moves from what the choice
//!   gave, twice in a row: data that changes along the array is followed.
//! - The budget: the first chunk runs what its choice needs (the looks that
//!   choose and their best one's neighbours), then the first search goes on
//!   while its trials have cost less than four chunks'
//!   compression (at the speed of the best candidate found) and a tenth of
//!   the time spent compressing chunks; later readapts wait, and their
//!   searches pause, while the trials since the first search have cost more
//!   than a twentieth of that time (a quarter for the forward ones). Tuning a
//!   long series costs about 1.2 times compressing it with the final choice
//!   fixed.
//!
//! Every chunk is compressed once, with the best candidate known when it
//! comes, on the caller's threads: it is an ordinary chunk. The trials run
//! on one thread beside it, on spans of the chunk; their
//! times are divided by the threads the chunk's blocks will keep busy, and
//! are no less than moving their bytes takes where the chunk lies (a copy
//! of the chunk, and storing it as it is through the library where it does
//! not compress, timed when a search starts). A search that goes on over
//! later chunks brings their figures into the terms of the chunk it began
//! on (its first full-size candidate, timed again on each).

pub mod grid;
pub mod score;
mod search;
pub mod space;
pub(crate) mod trial;

use self::score::Figures;
use self::search::{Search, MAX_NEIGHBOURS};
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
/// thirty-second of the chunk in all, from 32 to 128 KiB, timed once.
fn quick(n: usize) -> Budget {
    Budget { bytes: (n / 32).clamp(32 << 10, 128 << 10), max_block: 64 << 10, runs: 1 }
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
/// The whole chunk, timed once.
fn whole(n: usize) -> Budget {
    Budget { bytes: n, max_block: 0, runs: 1 }
}
/// Whether a sample of a chunk of `n` bytes was stored (a ratio under
/// [`STORED`]) and left some of the chunk out. Such a sample shows how fast
/// its candidate gives up, and nothing of the chunk's blocks that compress,
/// which take many times longer where the candidate gives up at once on the
/// others: two blocks of an image's sea stored at 14 GB/s, the whole chunk
/// with its ice at the top compressed at 2.9 GB/s.
fn stored_sample(f: &Figures, n: usize) -> bool {
    (f.nbytes as usize) < n && stored(f)
}
/// A ratio below this is a store.
const STORED: f64 = 1.05;
/// Whether `f` are a store's figures (a ratio under [`STORED`]).
fn stored(f: &Figures) -> bool {
    (f.nbytes as f64) < STORED * f.cbytes as f64
}
/// Codec and pipeline pairs whose levels a hard readapt climbs.
const FINALISTS: usize = 3;
/// The first search's trials may cost this many chunks' compression (at the
/// speed of the best candidate found) beyond its first looks...
const FIRST_CHUNKS: f64 = 4.0;
/// ...and this share of the time spent compressing chunks.
const SEARCH_SHARE: f64 = 0.10;
/// Share of the compression time scheduled readapts may spend.
const SCHEDULED_SHARE: f64 = 0.05;
/// Share of the compression time readapts brought forward by a change may spend.
const FORWARD_SHARE: f64 = 0.25;
/// A chunk's ratio this far from the reference counts as a change.
const DRIFT: f64 = 1.5;
/// Choices remembered with the signature of the data they were made for...
const MEMORY: usize = 8;
/// ...and how near a new signature must be to one of theirs for its choice
/// to be taken up again at once.
const RECALL: f64 = 1.2;
/// Share of the compression time the signatures that look at each chunk
/// before it is compressed may take.
const PROBE_SHARE: f64 = 0.02;
/// How much better than its first span a trial's whole sample may turn out:
/// a first span whose times and size, this much smaller, still lose ends
/// the trial.
const OPTIMISM: f64 = 0.8;
/// What a time measured below the floor (the time the chunk's bytes take to
/// move) still counts, on top of the floor: enough to order candidates that
/// all run at the speed of memory, too little to make them look slow.
const BELOW_FLOOR: f64 = 0.1;
/// A time `t` measured on a sample, as the chunk will take it: no less than
/// `moved` (its bytes' moving), plus [`BELOW_FLOOR`] of what was measured
/// below that.
fn floored(t: f64, moved: f64) -> f64 {
    t.max(moved) + BELOW_FLOOR * t.min(moved)
}

/// A soft readapt moves to a neighbour that scores this much better only:
/// two measurements of the same candidate differ by a few percent.
const SOFT_MARGIN: f64 = 0.97;

/// What the tuner did before a chunk.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Readapt {
    /// Nothing: the chunk was compressed with the choice as it was.
    None,
    Soft,
    /// A hard readapt began: the first trials of a search.
    Hard,
    /// More trials of a hard readapt begun on an earlier chunk.
    Continued,
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
    /// Chunks that had a readapt begin before them.
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
    /// The trials' time of the first search (outside the later readapts'
    /// budget).
    first_spent: Duration,
    /// The context's threads, as the last chunk found them.
    nthreads: usize,
    // the drift watch
    reference: Option<f64>,
    off: u32,
    /// The signature of the data the choice was made for (and of the
    /// chunks since, that did not move from it).
    signature: Option<f64>,
    /// The signature of the chunk the choice was made (or recalled) for.
    chosen_for: Option<f64>,
    /// Earlier choices, with the signature of the data they were made
    /// for and when they were last used (chunks): the least recent goes.
    memory: [Option<(f64, Candidate, u64)>; MEMORY],
    // working space, kept
    ranked: Vec<(Candidate, Figures)>,
    /// The current hard readapt's finalists: the best of its full-size
    /// trials, three pipelines.
    finals: [Option<(Candidate, Figures)>; 3],
    /// The hard readapt under way.
    search: Option<Search>,
    /// The candidate whose figures set the terms the search's figures are
    /// in, those figures, and the chunk they were timed on; the factors
    /// that bring the current chunk's figures into them (time, decompression
    /// time, size), and the chunk they are for.
    frame: Option<(Candidate, Figures, u64)>,
    scale: [f64; 3],
    scale_at: Option<u64>,
    /// Seconds per byte a chunk's bytes take to move (read or written)
    /// where they lie, measured when the first search starts (and again
    /// when the chunks' size changes): the least time a candidate's bytes
    /// take, however fast it runs on a sample in a cache.
    floor: f64,
    /// The chunk size [`Tuner::floor`] was measured on.
    floor_for: usize,
    /// The same for compression: no less than [`Tuner::floor`], and where
    /// the chunk does not compress, what storing it as it is takes through
    /// the library (its attempts and copies).
    cfloor: f64,
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
            signature: None,
            chosen_for: None,
            memory: [None; MEMORY],
            ranked: Vec::with_capacity(64),
            finals: [None; 3],
            search: None,
            floor: 0.0,
            floor_for: 0,
            cfloor: 0.0,
            frame: None,
            scale: [1.0; 3],
            scale_at: None,
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
        // (the trials' outputs get the room the chunk's has: Trials::room)
        self.trials.headroom = dst.len().saturating_sub(n);
        if let Some(chunk) = comp.plain_bytes(input).filter(|_| n >= MIN_TUNED_BYTES) {
            self.look_ahead(chunk);
        }
        let mut readapt = if n >= MIN_TUNED_BYTES { self.plan() } else { Readapt::None };
        let (count0, spent0) = (self.trials.count, self.trials.spent + self.trials.probed);
        if readapt == Readapt::None
            && n >= MIN_TUNED_BYTES
            && self.search.is_some_and(|s| self.may_search(&s, n))
        {
            readapt = Readapt::Continued;
        }
        if readapt != Readapt::None {
            let forward = readapt == Readapt::Hard && std::mem::take(&mut self.forward);
            let mut whole = std::mem::take(&mut self.whole);
            if let Some(chunk) = comp.tuning_bytes(input, &mut whole)? {
                let before = (self.chosen_for, self.choice);
                self.readapt(readapt, forward, chunk);
                if self.signature.is_none() {
                    self.hard_began(before, chunk);
                }
            }
            self.whole = whole;
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
        self.totals.explored += u64::from(matches!(readapt, Readapt::Soft | Readapt::Hard));
        self.totals.trials = self.trials.count;
        self.totals.trial_time = self.trials.spent + self.trials.probed;
        let decision = Decision {
            nchunk: self.totals.chunks - 1,
            choice: used,
            readapt,
            trials: (self.trials.count - count0) as u32,
            trial_time: self.trials.spent + self.trials.probed - spent0,
            figures,
        };
        if n >= MIN_TUNED_BYTES && cbytes > 0 {
            self.watch(figures.ratio(), used != self.last.and_then(|d| d.choice));
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
            let first = self.choice.is_none() && self.search.is_none();
            if first || !self.forward || spent <= FORWARD_SHARE * real {
                self.hard_next = false;
                return Readapt::Hard;
            }
            return Readapt::None;
        }
        if self.search.is_some() {
            return Readapt::None; // (the search under way goes on first)
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

    /// Before a chunk is compressed, while their budget ([`PROBE_SHARE`])
    /// allows: its signature against the reference (that of the data the
    /// choice was made for); one that moved by [`DRIFT`] brings a hard
    /// readapt forward, on this chunk. (A chunk's
    /// ratio with the choice says nothing where the choice stores the bytes
    /// as they are; a signature still sees the data change, and sees it
    /// before the chunk is written.)
    fn look_ahead(&mut self, chunk: &[u8]) {
        // (also while a search is paused: what it found was for other data
        // when that changed)
        if self.choice.is_none() || self.hard_next {
            return;
        }
        if self.trials.probed.as_secs_f64() > PROBE_SHARE * self.totals.compress_time.as_secs_f64() {
            return;
        }
        if self.probe(chunk) {
            (self.hard_next, self.forward) = (true, true);
            (self.reference, self.off) = (None, 0);
            // the choice is kept for data like that it was made for; one
            // made for data like this chunk's is taken up again at once (a
            // readapt the budget holds back, or one that does not better
            // it, leaves this chunk to it, not to a choice for other data)
            let now = self.signature.unwrap_or(0.0);
            if let (Some(sig), Some(c)) = (self.chosen_for, self.choice) {
                self.remember(sig, c);
            }
            if let Some(c) = self.recall(now) {
                self.choice = Some(c);
                self.chosen_for = Some(now);
                if self.tuning.trace_trials {
                    eprintln!("  recalled {}", c.describe());
                }
            }
        }
    }

    /// A hard readapt began on `chunk`: the choice it may replace (`before`:
    /// it, and the signature of the data it was made for) is kept for that
    /// data, so that a change back to such data takes it up again at once,
    /// where the budget would hold a readapt back (an image's polar rows,
    /// after a fast choice for its middle ones, a readapt brought forward
    /// by the chunks' ratios, not by a signature); and the chunk's
    /// signature is the reference the next chunks' are held to.
    fn hard_began(&mut self, before: (Option<f64>, Option<Candidate>), chunk: &[u8]) {
        if let (Some(sig), Some(c)) = before {
            self.remember(sig, c);
        }
        self.probe(chunk);
        self.chosen_for = self.signature;
    }

    /// Keep `c` as the choice for data whose signature is `sig`: in place
    /// of one for a signature within [`RECALL`] of it, else of the least
    /// recently used.
    fn remember(&mut self, sig: f64, c: Candidate) {
        let now = self.totals.chunks;
        let near = |x: f64| x < sig * RECALL && x * RECALL > sig;
        let slot = self
            .memory
            .iter()
            .position(|m| m.is_some_and(|(x, _, _)| near(x)))
            .or_else(|| self.memory.iter().position(Option::is_none))
            .or_else(|| (0..MEMORY).min_by_key(|&i| self.memory[i].map_or(0, |(_, _, used)| used)));
        if let Some(i) = slot {
            self.memory[i] = Some((sig, c, now));
        }
    }

    /// The remembered choice made for the signature nearest `sig`, within
    /// [`RECALL`] of it.
    fn recall(&mut self, sig: f64) -> Option<Candidate> {
        let now = self.totals.chunks;
        let far = |x: f64| (x / sig).ln().abs();
        let i = (0..MEMORY)
            .filter(|&i| self.memory[i].is_some_and(|(x, _, _)| far(x) < RECALL.ln()))
            .min_by(|&i, &j| {
                let key = |k: usize| self.memory[k].map_or(f64::INFINITY, |(x, _, _)| far(x));
                key(i).total_cmp(&key(j))
            })?;
        let (x, c, _) = self.memory[i]?;
        self.memory[i] = Some((x, c, now));
        Some(c)
    }

    /// `chunk`'s signature (the ratio LZ4 at level 1 gets on pieces of it,
    /// shuffled where items have more than one byte: whatever the choice,
    /// so that a choice that stores the bytes as they are, or a pipeline
    /// blind to what the data became, does not hide a change): whether it
    /// moved by [`DRIFT`] from the reference, which it then replaces;
    /// otherwise the reference follows it a little (set when there is none).
    fn probe(&mut self, chunk: &[u8]) -> bool {
        let pipeline = if self.typesize() > 1 { Pipeline::Shuffle } else { Pipeline::None };
        let sig = Candidate { codec: Codec::Lz4, clevel: 1, pipeline, split: Split::Never, blocksize: 0 };
        let probed = self.trials.probed;
        let Some(now) = self.trials.signature(chunk, &self.base, &sig) else { return false };
        let (moved, next) = match self.signature {
            Some(r) => {
                let moved = now > r * DRIFT || now * DRIFT < r;
                (moved, if moved { now } else { 0.8 * r + 0.2 * now })
            }
            None => (false, now),
        };
        if self.tuning.trace_trials {
            eprintln!(
                "  signature {:>7.3}x (reference {:.3}x) {:>6}us{}",
                now,
                next,
                (self.trials.probed - probed).as_micros(),
                if moved { " moved" } else { "" }
            );
        }
        self.signature = Some(next);
        moved
    }

    fn readapt(&mut self, kind: Readapt, forward: bool, chunk: &[u8]) {
        match (kind, self.choice) {
            (Readapt::Soft, Some(c)) => {
                if let Some(c) = self.soft(chunk, c) {
                    self.choice = Some(c);
                }
                return;
            }
            (Readapt::Continued, _) if self.search.is_some() => {}
            _ => {
                // (one brought forward before the first search has chosen
                // keeps the first's budget; after, its own, even when it
                // replaces the first search, paused)
                let first = self.choice.is_none() || self.search.is_some_and(|s| s.first && s.owed());
                let spent = self.trials.spent;
                // (the memory's speed: measured once for a chunk size; a
                // readapt's budget is better spent on its candidates)
                if self.floor_for != chunk.len() {
                    self.floor = self.trials.copy_floor(chunk);
                    self.floor_for = chunk.len();
                }
                // (and for compression, what storing it as it is takes
                // through the library, where no candidate compresses it:
                // the least time there; decompressing what was stored so
                // is a copy)
                let bare = self.bare(chunk.len());
                let stored = self.trials.store_floor(chunk, &self.base, &bare);
                self.cfloor = stored.map_or(self.floor, |f| self.floor.max(f));
                if first {
                    self.first_spent += self.trials.spent - spent;
                }
                (self.frame, self.scale) = (None, [1.0; 3]);
                // (the signatures are held to this chunk's from now: the
                // data the choice is made for)
                self.signature = None;
                self.search = Some(self.new_search(first, forward));
                self.ranked.clear();
                self.finals = [None; 3];
            }
        }
        // the search's trials, while the budget allows (the first search's
        // first looks and their neighbours whatever it says)
        let n = chunk.len();
        while let Some(mut s) = self.search.take() {
            if !s.owed() && !self.may_search(&s, n) {
                self.search = Some(s);
                break;
            }
            let spent = self.trials.spent;
            self.rescale(chunk);
            self.advance(&mut s, chunk);
            if self.frame.is_none() {
                // the first candidate timed on blocks of their real size
                // anchors the search's terms
                self.frame = s.best().map(|(c, f)| (c, f, self.totals.chunks));
            }
            if s.first {
                self.first_spent += self.trials.spent - spent;
            }
            if s.done() {
                // (what follows, a soft readapt, weighs one chunk's figures)
                (self.frame, self.scale) = (None, [1.0; 3]);
            } else {
                self.search = Some(s);
            }
        }
    }

    /// On a chunk other than the one the search's terms were set on, the
    /// anchor timed again: the factors that bring this chunk's figures into
    /// those terms (chunks differ: a candidate timed on an easy chunk must
    /// not beat one timed on a hard one for that).
    fn rescale(&mut self, chunk: &[u8]) {
        let now = self.totals.chunks;
        let Some((c, f0, at)) = self.frame else { return };
        if at == now || self.scale_at == Some(now) {
            return;
        }
        self.scale_at = Some(now);
        self.scale = [1.0; 3];
        if let Some(fk) = self.measure(chunk, &c, full(chunk.len()), None) {
            let per = |x: f64, f: &Figures| x / f.nbytes.max(1) as f64;
            let ratio = |a: f64, b: f64| if a > 0.0 && b > 0.0 { a / b } else { 1.0 };
            self.scale = [
                ratio(per(f0.ctime, &f0), per(fk.ctime, &fk)),
                ratio(per(f0.dtime, &f0), per(fk.dtime, &fk)),
                ratio(per(f0.cbytes as f64, &f0), per(fk.cbytes as f64, &fk)),
            ];
        }
    }

    /// Whether the search `s` may run another trial now (on chunks of `n`
    /// bytes): the first one while its trials have cost less than
    /// [`FIRST_CHUNKS`] chunks at the best candidate's speed and
    /// [`SEARCH_SHARE`] of the compression time; the others while the
    /// trials since the first have cost less than their share of it.
    fn may_search(&self, s: &Search, n: usize) -> bool {
        let real = self.totals.compress_time.as_secs_f64();
        if s.first {
            let est = self.best_time(s, n);
            self.trials.spent.as_secs_f64() <= FIRST_CHUNKS * est + SEARCH_SHARE * real
        } else {
            let share = if s.forward { FORWARD_SHARE } else { SCHEDULED_SHARE };
            (self.trials.spent - self.first_spent).as_secs_f64() <= share * real
        }
    }

    /// The time a chunk of `n` bytes takes to compress with the best
    /// candidate the search `s` has found (0 before any).
    fn best_time(&self, s: &Search, n: usize) -> f64 {
        let t = self.tuning;
        let f = s.best().map(|(_, f)| f).or_else(|| {
            self.ranked.iter().map(|(_, f)| *f).reduce(|a, b| if b.beats(&a, &t) { b } else { a })
        });
        f.map_or(0.0, |f| f.ctime / f.nbytes.max(1) as f64 * n as f64)
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
        let (tuning, floor, cfloor, [sc, sd, sr]) = (self.tuning, self.floor, self.cfloor, self.scale);
        // the chunk's time: one thread's over the threads kept busy, and no
        // less than moving its bytes takes where the chunk lies (plus a
        // little of the time measured, so that candidates below that floor
        // keep their order: the one that gives up sooner on bytes that do
        // not compress still wins); in the terms of the chunk the search
        // began on
        let as_chunk = move |f: &Figures, k: f64| {
            let bytes = (f.nbytes + f.cbytes) as f64;
            let dtime = if f.dtime > 0.0 { floored(f.dtime / busy * k, floor * bytes) * sd } else { 0.0 };
            let cbytes = ((f.cbytes as f64 * sr) as u64).max(1);
            Figures { ctime: floored(f.ctime / busy * k, cfloor * bytes) * sc, dtime, cbytes, ..*f }
        };
        let hopeless = move |f: &Figures| {
            let small = Figures { cbytes: ((f.cbytes as f64 * OPTIMISM) as u64).max(1), ..*f };
            beat.is_some_and(|b| as_chunk(&small, OPTIMISM).score(&tuning) > b)
        };
        let hopeless: Option<&dyn Fn(&Figures) -> bool> = if beat.is_some() { Some(&hopeless) } else { None };
        let spent0 = self.trials.spent;
        let f = self.trials.measure(chunk, &self.base, c, budget, dt, hopeless);
        let took = self.trials.spent - spent0;
        let f = f.map(|f| as_chunk(&f, 1.0));
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
    /// A sample its candidate stored (every block given up on) that would
    /// win is timed again on the whole chunk ([`stored_sample`]), unless
    /// the readapt saw the whole chunk stored by the candidate that gives
    /// up soonest ([`Search::bare`]): then nothing in it compresses.
    fn measure_full(&mut self, chunk: &[u8], c: &Candidate, beat: Option<f64>) -> Option<Figures> {
        let n = chunk.len();
        let mut f = self.measure(chunk, c, full(n), beat)?;
        let suspect = !self.trials.stored_whole && stored_sample(&f, n);
        if suspect && beat.is_none_or(|b| f.score(&self.tuning) < b) {
            f = self.measure(chunk, c, whole(n), None)?;
        }
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

    /// The three best pipelines of `ranked` (sorted), best first.
    fn top_pipes(&self) -> [Option<Pipeline>; 3] {
        let mut pipes = [None; 3];
        let mut np = 0;
        for (c, _) in &self.ranked {
            if np < pipes.len() && !pipes.contains(&Some(c.pipeline)) {
                pipes[np] = Some(c.pipeline);
                np += 1;
            }
        }
        pipes
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

    /// The level Zstd's looks take: 1 where compression time counts, below
    /// a tradeoff of 0.9 (each of its levels above costs several times the
    /// time for a little more ratio: level 5 takes some 7 times level 1's
    /// time for 1.2 times its ratio, worth it only from a tradeoff of 0.9;
    /// a finalist's climb goes up from 1 where it pays), else the level
    /// the goal suggests.
    fn zstd_level(&self) -> u8 {
        if !self.decomp_only() && self.tuning.tradeoff < 0.9 {
            1
        } else {
            self.start_level()
        }
    }

    /// Whether only the decompression time counts (`DECOMP`).
    fn decomp_only(&self) -> bool {
        self.tuning.perf_mode == PerfMode::Decomp
    }

    /// The level Zlib and LZ4HC are first timed at: where only the
    /// decompression time counts, 5 at tradeoff 0 to 9 at 1 (their higher
    /// levels cost compression time alone, and LZ4HC's decompress faster
    /// than its first ones: 5000 MB/s at level 7 where level 1 gives 2600
    /// on the shaded relief), else the level the goal suggests.
    pub(super) fn slow_level(&self) -> u8 {
        if self.decomp_only() {
            (5.0 + 4.0 * self.tuning.tradeoff.clamp(0.0, 1.0)).round() as u8
        } else {
            self.start_level()
        }
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

    /// The neighbours of `c` on chunks of `n` bytes: a level up and down,
    /// the other fast codec (BloscLZ and LZ4), the other split mode, the pipelines of `pipes`, the other block sizes
    /// (when tuned).
    fn neighbours(
        &self,
        c: Candidate,
        pipes: &[Option<Pipeline>],
        n: usize,
    ) -> [Option<Candidate>; MAX_NEIGHBOURS] {
        let mut next = [None; MAX_NEIGHBOURS];
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
        match c.codec {
            Codec::BloscLz => push(Candidate { codec: Codec::Lz4, ..c }),
            Codec::Lz4 => push(Candidate { codec: Codec::BloscLz, ..c }),
            _ => {}
        }
        if self.typesize() > 1 && c.pipeline != Pipeline::None {
            // (split streams of bytes left in place rarely help: not tried)
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
                if b != c.blocksize && (b as usize) < n && real_blocksize(&alt.params(&self.base), n) != now {
                    push(alt);
                }
            }
        }
        next
    }

    /// A soft readapt: `c`'s neighbours (not its pipelines), moving to one
    /// that scores [`SOFT_MARGIN`] of `c`'s or better.
    fn soft(&mut self, chunk: &[u8], c: Candidate) -> Option<Candidate> {
        let n = chunk.len();
        let mut c = self.explicit_split(c, n);
        let mut f = self.measure(chunk, &c, full(n), None)?;
        for alt in self.neighbours(c, &[], n).into_iter().flatten() {
            let beat = f.score(&self.tuning) * SOFT_MARGIN;
            if let Some(g) = self.measure_full(chunk, &alt, Some(beat)) {
                if g.score(&self.tuning) < beat {
                    (c, f) = (alt, g);
                }
            }
        }
        Some(c)
    }

    /// The block size candidates start from: the library's (0) when the
    /// caller leaves it to the library, else the caller's.
    fn tuned_blocksize(&self) -> u32 {
        if self.tune_blocksize {
            0
        } else {
            self.base.blocksize.max(0) as u32
        }
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
            Readapt::Continued => "hard+",
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn times_below_the_floor_keep_their_order_and_stay_near_it() {
        let moved = 1e-3;
        // above the floor: the time, and a tenth of the floor
        assert_eq!(floored(3e-3, moved), 3e-3 + BELOW_FLOOR * moved);
        // below it: near the floor, and still in the order measured
        let (quick, quicker) = (floored(6e-4, moved), floored(2e-4, moved));
        assert!(quicker < quick && quick < floored(moved, moved));
        assert!(quicker >= moved && quick <= moved * (1.0 + BELOW_FLOOR));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_signature_sees_the_data_change_whatever_the_choice() {
        // noise, then a ramp: with a choice that stores noise as it is, the
        // chunks' ratio is 1 on both; their signatures differ
        let base = CParams { typesize: 4, ..CParams::default() };
        let mut t = Tuner::new(Tuning::default(), &base);
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let noise: Vec<u8> = (0..1 << 18)
            .flat_map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x as u32).to_le_bytes()
            })
            .collect();
        let ramp: Vec<u8> = (0u32..1 << 18).flat_map(|i| (i / 3).to_le_bytes()).collect();
        assert!(!t.probe(&noise), "the first sets the reference");
        assert!(!t.probe(&noise[4096..]), "the same kind of data");
        assert!(t.probe(&ramp), "noise to a ramp");
        assert!(!t.probe(&ramp), "the reference follows");
        assert!(t.probe(&noise), "and back");
        assert!(t.trials.probed > Duration::ZERO && t.trials.count == 0, "not trials");
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_search_times_each_candidate_once_and_ends() {
        let chunk: Vec<u8> = (0u32..1 << 17).flat_map(|i| (i / 3 + (i * 7919) % 5).to_le_bytes()).collect();
        let base = CParams { typesize: 4, ..CParams::default() };
        for perf_mode in [PerfMode::Comp, PerfMode::Decomp, PerfMode::Balanced] {
            for tradeoff in [0.0, 0.5, 1.0] {
                let tuning = Tuning { tradeoff, perf_mode, ..Tuning::default() };
                let mut t = Tuner::new(tuning, &base);
                let mut s = t.new_search(true, false);
                let mut steps = 0;
                while !s.done() {
                    t.advance(&mut s, &chunk);
                    steps += 1;
                    assert!(steps < 1000, "{perf_mode:?} {tradeoff}: the search does not end");
                }
                // the first looks and the stages after them: no candidate twice
                let ranked: Vec<Candidate> = t.ranked.iter().map(|(c, _)| *c).collect();
                for (i, c) in ranked.iter().enumerate() {
                    assert!(!ranked[..i].contains(c), "{perf_mode:?} {tradeoff}: {} twice", c.describe());
                }
                assert!(t.choice.is_some());
            }
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_sample_stored_by_a_candidate_that_would_win_is_timed_on_the_whole_chunk() {
        // noise, but for a first eighth that compresses: the sample's spans
        // (a quarter and three quarters in) are stored, the chunk is not
        let n = 4 << 20;
        let mut chunk = crate::filters::shuffle::tests::random_bytes(n, 7);
        for (i, b) in chunk[..n / 8].iter_mut().enumerate() {
            *b = (i / 64 % 7) as u8;
        }
        let base = CParams { typesize: 1, ..CParams::default() };
        let mut t = Tuner::new(Tuning::default(), &base);
        let bare = t.bare(n);
        let sample = t.measure(&chunk, &bare, full(n), None).expect("sampled");
        assert!(stored_sample(&sample, n), "the sample is stored: {:.3}x", sample.ratio());
        // a whole chunk its bare candidate does not store: the sample is
        // timed again on all of it, where it wins (no score to beat) ...
        assert_eq!(t.trials.store_floor(&chunk, &base, &bare), None);
        assert!(!t.trials.stored_whole);
        let f = t.measure_full(&chunk, &bare, None).expect("measured");
        assert_eq!(f.nbytes, n as u64);
        assert!(f.ratio() > 1.1, "the whole chunk: {:.3}x", f.ratio());
        // ... not where it loses
        let f = t.measure_full(&chunk, &bare, Some(0.0)).expect("measured");
        assert!(f.nbytes < n as u64);
        // and not when the whole chunk was seen stored
        let noise = [&chunk[n / 8..], &chunk[n / 4..3 * n / 8]].concat();
        assert!(t.trials.store_floor(&noise, &base, &bare).is_some() && t.trials.stored_whole);
        let f = t.measure_full(&noise, &bare, None).expect("measured");
        assert!(f.nbytes < n as u64);
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs")]
    fn a_choice_a_hard_readapt_may_replace_is_kept_for_its_data() {
        let mut t = Tuner::new(Tuning::default(), &CParams { typesize: 4, ..CParams::default() });
        let c = Candidate {
            codec: Codec::Lz4hc,
            clevel: 8,
            pipeline: Pipeline::None,
            split: Split::Never,
            blocksize: 0,
        };
        let chunk = crate::filters::shuffle::tests::random_bytes(256 << 10, 7);
        t.hard_began((Some(6.5), Some(c)), &chunk);
        assert_eq!(t.recall(6.4), Some(c));
        // the new reference: this chunk's signature (noise: about 1)
        assert!(t.chosen_for.is_some_and(|s| s < 1.2), "{:?}", t.chosen_for);
        // nothing to keep before a first choice
        let mut t = Tuner::new(Tuning::default(), &CParams { typesize: 4, ..CParams::default() });
        t.hard_began((None, None), &chunk);
        assert_eq!(t.memory.iter().flatten().count(), 0);
    }

    #[test]
    fn a_choice_is_recalled_for_data_like_that_it_was_made_for() {
        let mut t = Tuner::new(Tuning::default(), &CParams { typesize: 4, ..CParams::default() });
        let c = |clevel| Candidate {
            codec: Codec::Lz4,
            clevel,
            pipeline: Pipeline::Shuffle,
            split: Split::Never,
            blocksize: 0,
        };
        assert_eq!(t.recall(2.0), None, "nothing remembered");
        t.remember(2.0, c(1));
        t.remember(6.0, c(2));
        assert_eq!(t.recall(6.3), Some(c(2)));
        assert_eq!(t.recall(1.8), Some(c(1)));
        assert_eq!(t.recall(4.0), None, "too far from either");
        // one for a near signature takes the other's place
        t.remember(6.4, c(3));
        assert_eq!(t.recall(5.9), Some(c(3)));
        assert_eq!(t.memory.iter().flatten().count(), 2);
        // when full, the least recently used goes
        for (k, sig) in (3..).zip([10.0, 20.0, 40.0, 80.0, 160.0, 320.0]) {
            t.totals.chunks = k;
            t.remember(sig, c(4));
        }
        t.totals.chunks = 10;
        assert_eq!(t.recall(2.0), Some(c(1)), "used last");
        t.totals.chunks = 11;
        t.remember(640.0, c(5));
        assert_eq!(t.recall(6.4), None, "the least recently used went");
        assert_eq!((t.recall(2.0), t.recall(640.0)), (Some(c(1)), Some(c(5))));
    }
}
