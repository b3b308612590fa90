//! The tuner's score: one number from the compression time, the
//! decompression time and the size, for the tradeoff and the mode
//! (docs/PLUGINS.md, "The score").
//!
//! Per byte of input, with `r` the compressed size over the input size:
//! - time `t`: compression time (`COMP`), decompression time (`DECOMP`,
//!   plus a thousandth of the compression time: candidates that decompress
//!   alike, copies of bytes that do not compress say, are told apart by
//!   what they cost to make, not by noise) or both (`BALANCED`), plus
//!   `r / bandwidth`, the time to move the result;
//! - score `t^(1 - tradeoff) * r^tradeoff`, lower is better.
//!
//! At tradeoff 0 the score is the time alone, at 1 the size alone; in
//! between, a geometric mix: at 0.5 halving the time is worth as much as
//! halving the size. The score has no unit to choose (seconds or bytes
//! scale every candidate alike). At tradeoff 0 the fastest candidate wins
//! even if it hardly compresses (the bandwidth term is all that weighs the
//! size): a tradeoff above 0, or a lower bandwidth, makes size count.

use crate::params::{PerfMode, Tuning};

/// Below this ratio a candidate does not count as compressing (in reports:
/// the benchmark's "fastest that compresses").
pub const MIN_RATIO: f64 = 1.1;

/// What the compression time weighs in `DECOMP` mode, beside the
/// decompression time: enough to break ties (LZ4HC at level 5, 80 MB/s,
/// adds a fifth to a copy's decompression time), too little to keep a
/// codec that decompresses faster from winning (LZ4HC at level 7, 150
/// MB/s, adds 3% to its 5000 MB/s).
pub const DECOMP_COMP_WEIGHT: f64 = 1e-3;

/// What one candidate did to some bytes.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Figures {
    pub nbytes: u64,
    pub cbytes: u64,
    /// Seconds to compress them.
    pub ctime: f64,
    /// Seconds to decompress them (0 when not measured).
    pub dtime: f64,
}

impl Figures {
    pub fn ratio(&self) -> f64 {
        self.nbytes as f64 / self.cbytes.max(1) as f64
    }

    /// Compression speed in bytes per second.
    pub fn cspeed(&self) -> f64 {
        self.nbytes as f64 / self.ctime.max(1e-9)
    }

    /// Decompression speed in bytes per second.
    pub fn dspeed(&self) -> f64 {
        self.nbytes as f64 / self.dtime.max(1e-9)
    }

    /// The sum of two measurements (of different bytes, or the same twice).
    pub fn add(&self, o: &Figures) -> Figures {
        Figures {
            nbytes: self.nbytes + o.nbytes,
            cbytes: self.cbytes + o.cbytes,
            ctime: self.ctime + o.ctime,
            dtime: self.dtime + o.dtime,
        }
    }

    /// The score for `tuning` (lower is better; see the module's text).
    pub fn score(&self, tuning: &Tuning) -> f64 {
        let n = self.nbytes.max(1) as f64;
        let r = self.cbytes.max(1) as f64 / n;
        let (c, d) = (self.ctime.max(1e-12) / n, self.dtime.max(1e-12) / n);
        let work = match tuning.perf_mode {
            PerfMode::Comp => c,
            PerfMode::Decomp => d + DECOMP_COMP_WEIGHT * c,
            PerfMode::Balanced => c + d,
        };
        let t = work + r / tuning.bandwidth.max(1) as f64;
        let a = f64::from(tuning.tradeoff.clamp(0.0, 1.0));
        t.powf(1.0 - a) * r.powf(a)
    }

    /// Whether these figures beat `other`'s for `tuning`: a lower score.
    pub fn beats(&self, other: &Figures, tuning: &Tuning) -> bool {
        self.score(tuning) < other.score(tuning)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fig(cbytes: u64, ctime: f64, dtime: f64) -> Figures {
        Figures { nbytes: 1000, cbytes, ctime, dtime }
    }

    fn tuning(tradeoff: f32, perf_mode: PerfMode) -> Tuning {
        Tuning { tradeoff, perf_mode, ..Tuning::default() }
    }

    #[test]
    fn the_ends_of_the_tradeoff_are_time_alone_and_size_alone() {
        let fast = fig(500, 1e-6, 1e-6);
        let small = fig(100, 1e-4, 1e-6);
        assert!(fast.beats(&small, &tuning(0.0, PerfMode::Comp)));
        assert!(small.beats(&fast, &tuning(1.0, PerfMode::Comp)));
        // at 0.5: 100x the time for 5x the size loses
        assert!(fast.beats(&small, &tuning(0.5, PerfMode::Comp)));
        // at 1 the times do not count at all
        let t1 = tuning(1.0, PerfMode::Balanced);
        assert_eq!(fig(100, 1.0, 1.0).score(&t1), fig(100, 1e-9, 1e-9).score(&t1));
    }

    #[test]
    fn the_mode_picks_the_time_that_counts() {
        let slow_c = fig(200, 1e-3, 1e-6);
        let slow_d = fig(200, 1e-6, 1e-3);
        let t = |m| tuning(0.0, m);
        assert!(slow_d.beats(&slow_c, &t(PerfMode::Comp)));
        assert!(slow_c.beats(&slow_d, &t(PerfMode::Decomp)));
        // in DECOMP, what it costs to compress tells apart the same decompression
        let (copy, hard) = (fig(1000, 1e-5, 1e-6), fig(1000, 1e-2, 1e-6));
        assert!(copy.beats(&hard, &t(PerfMode::Decomp)));
        // (and a hundred times the compression time for twice the decompression speed wins)
        assert!(fig(1000, 1e-4, 1e-6).beats(&fig(1000, 1e-6, 2e-6), &t(PerfMode::Decomp)));
        let b = t(PerfMode::Balanced);
        assert!((slow_c.score(&b) - slow_d.score(&b)).abs() < 1e-12 * slow_c.score(&b).max(1.0));
    }

    #[test]
    fn a_slow_bandwidth_makes_size_count_at_tradeoff_zero() {
        let fast = fig(800, 1e-6, 0.0);
        let small = fig(200, 4e-6, 0.0);
        let memory = tuning(0.0, PerfMode::Comp);
        let disk = Tuning { bandwidth: 100 << 20, ..memory };
        assert!(fast.beats(&small, &memory));
        assert!(small.beats(&fast, &disk));
    }

    #[test]
    fn at_tradeoff_zero_a_copy_wins_unless_the_bandwidth_is_low() {
        let copy = fig(1000, 1e-7, 1e-7);
        let slow = fig(500, 1e-5, 1e-5);
        assert!(copy.beats(&slow, &tuning(0.0, PerfMode::Comp)));
        let net = Tuning { bandwidth: 10_000_000, ..tuning(0.0, PerfMode::Comp) };
        assert!(slow.beats(&copy, &net));
    }
}
