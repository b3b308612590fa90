//! A hard readapt as a search that runs a trial at a time: the first chunk
//! runs what its choice needs (the looks that choose, and their best one's
//! neighbours), then the rest goes on over the chunks that follow, as far as
//! the budget lets it (`Tuner::may_search`): tuning a long series costs a
//! bounded share of compressing it, whatever the speed of the choice. The
//! choice meanwhile is the best the search has found.
//!
//! The stages, in order: the looks that choose (every pipeline with BloscLZ
//! and LZ4 at level 1, or at the level the goal suggests at a tradeoff of 1
//! or 0), on small blocks; Zstd on the three best pipelines (at level 1
//! where compression time counts, below a tradeoff of 0.9)
//! (after the next stage at a tradeoff of 0); the best look's neighbours,
//! two rounds, on blocks of their real size (and where the best look was a
//! store, the best look that compresses, in the largest blocks, when its
//! look leaves it a chance); the fast codecs at that level
//! on every pipeline; the three best pipelines with Zlib and LZ4HC; the
//! levels of the three best codec and pipeline pairs, climbing from that
//! level; the winner's neighbours; the last word between the best
//! candidates of three codec and pipeline pairs, on the whole chunk. A later search
//! times the choice it may replace first. Where only the decompression time
//! counts, LZ4HC comes with Zstd (on the best pipeline), Zstd's looks before
//! the neighbours at every tradeoff, and Zlib and LZ4HC right after them
//! (the fast codecs' second looks are left out).

use super::score::Figures;
use super::space::{Candidate, Pipeline, Split, BLOCKSIZES};
use super::trial::Budget;
use super::{quick, stored, verify, Tuner, FINALISTS, OPTIMISM};
use crate::codecs::Codec;

/// Candidates of the first looks: two codecs at two levels, every pipeline.
const MAX_LOOKS: usize = 4 * 8;
/// How much faster a look's pipeline may run in the largest blocks than in
/// the look's small ones (a float field's shuffle: 1.9 times).
const LARGE_BLOCKS_GAIN: f64 = 2.0;
/// Neighbours of a candidate: a level each way, the other fast codec, the
/// other split, two other pipelines, the other block sizes.
pub(super) const MAX_NEIGHBOURS: usize = 13;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// The fast codecs on every pipeline: the looks that choose.
    Looks,
    /// Zstd on the three best pipelines (before the early neighbours when
    /// the tradeoff weighs the size).
    Zstd,
    /// The neighbours of the best first look (block sizes and split often
    /// matter most, and a search the budget holds back has them early).
    Early,
    /// The fast codecs at the level the goal suggests, on every pipeline.
    More,
    Slow,
    Climb,
    Polish,
    Final,
    Done,
}

/// One finalist's level climb: from its level, steps of two each way while
/// one is better, then one step of one.
#[derive(Debug, Clone, Copy)]
struct Climb {
    /// The finalist climbing (an index into [`Search::finalists`]).
    k: usize,
    started: bool,
    c: Candidate,
    level: u8,
    best: Option<Figures>,
    seen: [Option<Figures>; 10],
    step: u8,
    /// The next direction to try: 0 down, 1 up, 2 both tried.
    dir: u8,
}

/// A hard readapt under way.
#[derive(Debug, Clone, Copy)]
pub(super) struct Search {
    stage: Stage,
    /// The next look, or the next item of the slow codecs' or last word's stages.
    i: usize,
    /// The next neighbour.
    k: usize,
    looks: [Option<Candidate>; MAX_LOOKS],
    /// The looks after which a tuner without a choice chooses, and the
    /// early neighbours come.
    mandatory: usize,
    /// Zstd's looks before the early neighbours (and owed by a first search).
    zstd_first: bool,
    /// Whether a later search has timed the choice it starts from.
    seeded: bool,
    /// The candidate the early neighbours are of, and whether they are the
    /// second round's.
    center: Option<Candidate>,
    second_round: bool,
    /// Where the best look was a store: the best look that compresses, in
    /// the largest blocks, and its look's figures (timed after the early
    /// neighbours where those say it may win).
    compressing: Option<(Candidate, Figures)>,
    pipes: [Option<Pipeline>; 3],
    finalists: [Option<Candidate>; FINALISTS],
    climb: Climb,
    /// The best of the climbs, then of the neighbours.
    best: Option<(Candidate, Figures)>,
    neighbours: [Option<Candidate>; MAX_NEIGHBOURS],
    /// The finalists of the last word, and their figures on the larger sample.
    finals: [Option<(Candidate, Figures)>; 3],
    verified: [Option<Figures>; 3],
    /// Whether this is the tuner's first search (it chooses when its
    /// mandatory looks are done; its own budget).
    pub first: bool,
    /// Whether a change in the data brought it forward (its budget).
    pub forward: bool,
}

impl Search {
    pub fn done(&self) -> bool {
        self.stage == Stage::Done
    }

    /// Whether the search has yet to run what its chunk runs whatever the
    /// budget says: the first search, its looks that choose (and Zstd's,
    /// when the tradeoff weighs the size) and their best one's neighbours;
    /// one a change in the data brought forward (a budget let it begin), its
    /// looks that choose and Zstd's, so that the chunk that changed has a
    /// choice made on it.
    pub fn owed(&self) -> bool {
        match self.stage {
            Stage::Looks => self.first || self.forward,
            Stage::Zstd => (self.first || self.forward) && self.zstd_first,
            Stage::Early => self.first,
            _ => false,
        }
    }

    /// The best candidate of the climbs and neighbours so far.
    pub fn best(&self) -> Option<(Candidate, Figures)> {
        self.best
    }
}

impl Tuner {
    /// A new hard readapt, its first looks in order.
    pub(super) fn new_search(&self, first: bool, forward: bool) -> Search {
        let typesize = self.typesize();
        let level = self.start_level();
        let blocksize = self.tuned_blocksize();
        // The fast codecs first: their figures bound the slower ones'
        // trials; at level 1 below a tradeoff of 1 (there they give up
        // early on data that hardly compresses), at the level the goal
        // suggests after.
        let low = level > 1 && self.tuning.tradeoff < 1.0;
        let levels: &[u8] = if low { &[1, level] } else { &[level] };
        let mut looks = [None; MAX_LOOKS];
        let mut k = 0;
        for &clevel in levels {
            for codec in [Codec::BloscLz, Codec::Lz4] {
                for &pipeline in Pipeline::all(typesize) {
                    looks[k] = Some(Candidate { codec, clevel, pipeline, split: Split::Auto, blocksize });
                    k += 1;
                }
            }
        }
        let climb = Climb {
            k: 0,
            started: false,
            c: looks[0].unwrap_or_else(|| unreachable!()),
            level: 1,
            best: None,
            seen: [None; 10],
            step: 2,
            dir: 0,
        };
        Search {
            stage: Stage::Looks,
            i: 0,
            k: 0,
            looks,
            mandatory: 2 * Pipeline::all(typesize).len(),
            zstd_first: self.tuning.tradeoff > 0.0 || self.decomp_only(),
            seeded: false,
            center: None,
            second_round: false,
            compressing: None,
            pipes: [None; 3],
            finalists: [None; FINALISTS],
            climb,
            best: None,
            neighbours: [None; MAX_NEIGHBOURS],
            finals: [None; 3],
            verified: [None; 3],
            first,
            forward,
        }
    }

    /// Run the search's next trial on `chunk` (or move to its next stage),
    /// updating the choice when a stage ends.
    pub(super) fn advance(&mut self, s: &mut Search, chunk: &[u8]) {
        let n = chunk.len();
        match s.stage {
            Stage::Looks => {
                if let (false, Some(c)) = (s.seeded, self.choice.filter(|_| s.i == 0 && !s.first)) {
                    // a later search starts from the choice, timed on this
                    // data: what it finds must beat that to replace it
                    s.seeded = true;
                    let c = self.explicit_split(c, n);
                    s.best = self.measure_full(chunk, &c, None).map(|f| (c, f));
                    return;
                }
                if s.i < s.mandatory {
                    self.look(s, chunk);
                    return;
                }
                // the looks that choose are done
                self.sort_ranked();
                s.pipes = self.top_pipes();
                if self.choice.is_none() {
                    self.choice = self.ranked.first().map(|(c, _)| *c);
                }
                if s.zstd_first {
                    (s.stage, s.k) = (Stage::Zstd, 0);
                } else {
                    self.start_early(s, chunk);
                }
            }
            Stage::Zstd => {
                // Zstd with the three best pipelines (and where only the
                // decompression time counts, LZ4HC with the best: its
                // streams decompress fastest, and it costs one trial)
                let more = usize::from(self.decomp_only());
                while s.k < s.pipes.len() + more {
                    let (codec, pipe, clevel) = match s.k.checked_sub(s.pipes.len()) {
                        None => (Codec::Zstd, s.pipes[s.k], self.zstd_level()),
                        Some(_) => (Codec::Lz4hc, s.pipes[0], self.slow_level()),
                    };
                    s.k += 1;
                    let Some(pipeline) = pipe else { continue };
                    let c = Candidate {
                        codec,
                        clevel,
                        pipeline,
                        split: Split::Auto,
                        blocksize: self.tuned_blocksize(),
                    };
                    let beat = self.third_pipeline();
                    // (LZ4HC's look in blocks of its real size: its streams
                    // decompress faster in large ones, where the look is
                    // what weighs it against the fast codecs' neighbours)
                    let budget = match codec {
                        Codec::Lz4hc => Budget { max_block: 0, ..quick(n) },
                        _ => quick(n),
                    };
                    if let Some(f) = self.measure(chunk, &c, budget, beat) {
                        self.ranked.push((c, f));
                    }
                    return;
                }
                self.sort_ranked();
                s.pipes = self.top_pipes();
                if s.zstd_first {
                    self.start_early(s, chunk);
                } else {
                    s.stage = Stage::More;
                }
            }
            Stage::Early => {
                if self.try_neighbour(s, chunk) {
                    return;
                }
                if let (Some((alt, look)), Some((at, best))) = (s.compressing.take(), s.best) {
                    // timed where, twice as fast and a fifth smaller than
                    // its look, it would beat the best so far
                    let hope = Figures {
                        ctime: look.ctime / LARGE_BLOCKS_GAIN,
                        dtime: look.dtime / LARGE_BLOCKS_GAIN,
                        cbytes: ((look.cbytes as f64 * OPTIMISM) as u64).max(1),
                        ..look
                    };
                    let beat = best.score(&self.tuning);
                    if hope.score(&self.tuning) < beat && alt != at {
                        self.challenge(s, chunk, alt, beat);
                        return;
                    }
                }
                // a second round from the neighbour it moved to
                match (s.best, s.center) {
                    (Some((c, _)), Some(from)) if c != from && !s.second_round => {
                        s.second_round = true;
                        s.neighbours = self.neighbours(c, &[], n);
                        for x in s.neighbours.iter_mut() {
                            if *x == Some(from) {
                                *x = None;
                            }
                        }
                        s.center = Some(c);
                        s.k = 0;
                    }
                    _ => self.end_early(s),
                }
            }
            Stage::More => {
                if s.looks.get(s.i).copied().flatten().is_some() {
                    self.look(s, chunk);
                    return;
                }
                self.sort_ranked();
                s.pipes = self.top_pipes();
                (s.stage, s.i) = (Stage::Slow, 0);
            }
            Stage::Slow => {
                // the two slow codecs with the three best pipelines
                while s.i < 2 * s.pipes.len() {
                    // (LZ4HC first where only the decompression time counts:
                    // its streams decompress fastest)
                    let codecs = if self.decomp_only() {
                        [Codec::Lz4hc, Codec::Zlib]
                    } else {
                        [Codec::Zlib, Codec::Lz4hc]
                    };
                    let (pipe, codec) = (s.pipes[s.i / 2], codecs[s.i % 2]);
                    s.i += 1;
                    let Some(pipeline) = pipe else { continue };
                    let c = Candidate {
                        codec,
                        clevel: self.slow_level(),
                        pipeline,
                        split: Split::Auto,
                        blocksize: self.tuned_blocksize(),
                    };
                    if self.ranked.iter().any(|(x, _)| *x == c) {
                        continue; // (timed with Zstd's looks)
                    }
                    let beat = self.ranked.get(FINALISTS - 1).map(|(_, f)| f.score(&self.tuning));
                    if let Some(f) = self.measure(chunk, &c, quick(n), beat) {
                        self.ranked.push((c, f));
                    }
                    return;
                }
                self.sort_ranked();
                let mut nf = 0;
                for (c, _) in &self.ranked {
                    if nf == FINALISTS {
                        break;
                    }
                    let pair = |x: &Option<Candidate>| {
                        x.is_some_and(|x| (x.codec, x.pipeline) == (c.codec, c.pipeline))
                    };
                    if !s.finalists.iter().any(pair) {
                        s.finalists[nf] = Some(*c);
                        nf += 1;
                    }
                }
                s.stage = Stage::Climb;
            }
            Stage::Climb => self.climb_step(s, chunk),
            Stage::Polish => {
                if self.try_neighbour(s, chunk) {
                    return;
                }
                s.finals = self.finals;
                (s.stage, s.i) = (Stage::Final, 0);
                if s.finals.iter().flatten().count() < 2 {
                    s.stage = Stage::Done;
                }
            }
            Stage::Final => {
                // two rounds over the finalists, interleaved; the fastest
                // of each counts
                while s.i < 2 * s.finals.len() {
                    let k = s.i % s.finals.len();
                    s.i += 1;
                    let Some((c, _)) = s.finals[k] else { continue };
                    if let Some(f) = self.measure(chunk, &c, verify(n), None) {
                        s.verified[k] = Some(match s.verified[k] {
                            None => f,
                            Some(o) => {
                                Figures { ctime: o.ctime.min(f.ctime), dtime: o.dtime.min(f.dtime), ..o }
                            }
                        });
                    }
                    return;
                }
                let t = self.tuning;
                let won = s
                    .finals
                    .iter()
                    .zip(s.verified)
                    .filter_map(|(c, f)| Some((c.as_ref()?.0, f?)))
                    .reduce(|a, b| if b.1.beats(&a.1, &t) { b } else { a });
                if let Some((c, _)) = won {
                    if self.tuning.trace_trials {
                        eprintln!("  last word: {}", c.describe());
                    }
                    self.choice = Some(c);
                }
                s.stage = Stage::Done;
            }
            Stage::Done => {}
        }
    }

    /// The next first look.
    fn look(&mut self, s: &mut Search, chunk: &[u8]) {
        if let Some(c) = s.looks.get(s.i).copied().flatten() {
            let beat = self.third_pipeline();
            if let Some(f) = self.measure(chunk, &c, quick(chunk.len()), beat) {
                self.ranked.push((c, f));
            }
        }
        s.i += 1;
    }

    /// The best look so far on blocks of its real size, then its neighbours
    /// (not the other pipelines: the looks weighed them).
    fn start_early(&mut self, s: &mut Search, chunk: &[u8]) {
        let n = chunk.len();
        let Some((c, _)) = self.ranked.first().copied() else {
            self.end_early(s);
            return;
        };
        let c = self.explicit_split(c, n);
        match self.measure_full(chunk, &c, None) {
            Some(f) => {
                if s.best.is_none_or(|(_, b)| f.beats(&b, &self.tuning)) {
                    s.best = Some((c, f));
                    self.choice = Some(c);
                }
                s.neighbours = self.neighbours(c, &[], n);
                // and the quickest way to store bytes that do not compress
                // (the looks time small blocks, where giving up costs more)
                let bare = self.bare(n);
                if bare != c && !s.neighbours.contains(&Some(bare)) {
                    if let Some(slot) = s.neighbours.iter_mut().find(|x| x.is_none()) {
                        *slot = Some(bare);
                    }
                }
                // where the best look was a store, the best look that
                // compresses, in those largest blocks (the looks time small
                // blocks: a filter that pays in large ones loses to a store
                // there, which the floor times as in its best blocks)
                let store = self.ranked.first().is_some_and(|(_, f)| stored(f));
                s.compressing =
                    self.ranked.iter().find(|(_, f)| !stored(f)).filter(|_| store).map(|(x, f)| {
                        (self.explicit_split(Candidate { blocksize: bare.blocksize, ..*x }, n), *f)
                    });
                s.center = Some(c);
                (s.stage, s.k) = (Stage::Early, 0);
            }
            None => self.end_early(s),
        }
    }

    /// BloscLZ at level 1 with no filter, in the largest blocks tuned below
    /// a chunk of `n` bytes: what gives up soonest on bytes that do not
    /// compress, and stores them nearly at the speed of a copy.
    pub(super) fn bare(&self, n: usize) -> Candidate {
        let blocksize = if self.tune_blocksize {
            BLOCKSIZES.iter().copied().filter(|&b| (b as usize) < n).max().unwrap_or(0)
        } else {
            self.tuned_blocksize()
        };
        Candidate {
            codec: Codec::BloscLz,
            clevel: 1,
            pipeline: Pipeline::None,
            split: Split::Never,
            blocksize,
        }
    }

    /// The early neighbours are done: the stage after them.
    fn end_early(&mut self, s: &mut Search) {
        if s.zstd_first {
            // (where only the decompression time counts, the slow codecs
            // next: their compression time counts little there, and their
            // streams decompress fast; the fast codecs' higher levels
            // rarely do better)
            // (the fast codecs' next looks follow their first ones: `i`
            // is where those ended)
            if self.decomp_only() {
                (s.stage, s.i) = (Stage::Slow, 0);
            } else {
                s.stage = Stage::More;
            }
        } else {
            (s.stage, s.k) = (Stage::Zstd, 0);
        }
    }

    /// One trial of the climbs (or the move to the next finalist, or to the
    /// neighbours when the climbs are done).
    fn climb_step(&mut self, s: &mut Search, chunk: &[u8]) {
        let n = chunk.len();
        loop {
            let cl = &mut s.climb;
            let Some(fin) = s.finalists.get(cl.k).copied().flatten() else {
                // every finalist climbed: the winner's neighbours next
                match s.best {
                    Some((c, _)) => {
                        s.neighbours = self.neighbours(c, &s.pipes, n);
                        (s.stage, s.k) = (Stage::Polish, 0);
                    }
                    None => s.stage = Stage::Done,
                }
                return;
            };
            if !cl.started {
                let c = self.explicit_split(fin, n);
                *cl = Climb {
                    k: cl.k,
                    started: true,
                    c,
                    level: c.clevel,
                    best: None,
                    seen: [None; 10],
                    step: 2,
                    dir: 0,
                };
                match self.measure_full(chunk, &c, None) {
                    Some(f) => {
                        let cl = &mut s.climb;
                        cl.seen[cl.level as usize] = Some(f);
                        cl.best = Some(f);
                    }
                    None => {
                        let cl = &mut s.climb;
                        (cl.k, cl.started) = (cl.k + 1, false);
                    }
                }
                return;
            }
            let Some(best) = cl.best else {
                (cl.k, cl.started) = (cl.k + 1, false);
                continue;
            };
            if cl.dir >= 2 {
                // both ways tried without a move
                if cl.step == 2 {
                    (cl.step, cl.dir) = (1, 0);
                    continue;
                }
                self.end_climb(s);
                continue;
            }
            let next =
                if cl.dir == 0 { cl.level.checked_sub(cl.step) } else { cl.level.checked_add(cl.step) };
            cl.dir += 1;
            let Some(next) = next.filter(|l| (1..=9).contains(l) && *l != cl.level) else { continue };
            let (c, seen) = (Candidate { clevel: next, ..cl.c }, cl.seen[next as usize]);
            let tried = seen.is_none();
            let f = match seen {
                Some(f) => Some(f),
                None => {
                    let f = self.measure_full(chunk, &c, Some(best.score(&self.tuning)));
                    s.climb.seen[next as usize] = f;
                    f
                }
            };
            let cl = &mut s.climb;
            if let Some(f) = f.filter(|f| f.beats(&best, &self.tuning)) {
                (cl.level, cl.best) = (next, Some(f));
                if cl.step == 2 {
                    cl.dir = 0;
                } else {
                    self.end_climb(s);
                }
            }
            if tried {
                return;
            }
        }
    }

    /// The current finalist's climb is over: its best level against the
    /// best so far; the next finalist's climb comes next.
    fn end_climb(&mut self, s: &mut Search) {
        let cl = &mut s.climb;
        if let Some(f) = cl.best {
            let c = Candidate { clevel: cl.level, ..cl.c };
            if s.best.is_none_or(|(_, b)| f.beats(&b, &self.tuning)) {
                s.best = Some((c, f));
                self.choice = Some(c);
            }
        }
        (cl.k, cl.started) = (cl.k + 1, false);
    }

    /// The next of `s.neighbours` timed against the best so far, the best
    /// (and the choice) moved to it when it wins; false when none is left.
    fn try_neighbour(&mut self, s: &mut Search, chunk: &[u8]) -> bool {
        let (Some((_, f)), Some(alt)) = (s.best, s.neighbours.get(s.k).copied().flatten()) else {
            return false;
        };
        s.k += 1;
        self.challenge(s, chunk, alt, f.score(&self.tuning));
        true
    }

    /// `alt` timed against the best so far (its score `beat`): the best,
    /// and the choice, moved to it when it wins.
    fn challenge(&mut self, s: &mut Search, chunk: &[u8], alt: Candidate, beat: f64) {
        if let Some(g) = self.measure_full(chunk, &alt, Some(beat)) {
            if g.score(&self.tuning) < beat {
                s.best = Some((alt, g));
                self.choice = Some(alt);
            }
        }
    }
}
