//! Compression and decompression parameters of the safe core (the Rust side
//! of `blosc2_cparams` / `blosc2_dparams`), and the filter ids they name.
//! Below the chunk layer and the plugins: what a plugin codec or filter is
//! told about a chunk is defined here, where both can use it.

use crate::codecs::Codec;
use std::sync::Arc;

/// Number of filter slots of the pipeline.
pub const MAX_FILTERS: usize = 6;

/// Filter ids of the pipeline.
pub mod filter {
    pub const NOFILTER: u8 = 0;
    pub const SHUFFLE: u8 = 1;
    pub const BITSHUFFLE: u8 = 2;
    pub const DELTA: u8 = 3;
    pub const TRUNC_PREC: u8 = 4;
    // The plugin filters c-blosc2 registers at start (`blosc2/filters-registry.h`).
    pub const NDCELL: u8 = 32;
    pub const NDMEAN: u8 = 33;
    pub const BYTEDELTA_BUGGY: u8 = 34;
    pub const BYTEDELTA: u8 = 35;
    pub const INT_TRUNC: u8 = 36;
}

/// The super-chunk a chunk is compressed for or decompressed from, as the
/// plugins that depend on it see it (c-blosc2 hands them `cparams->schunk`):
/// bytedelta with a meta of 0 takes the super-chunk's typesize, the
/// n-dimensional filters and codecs take their geometry from its `b2nd`
/// metalayer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchunkView {
    pub typesize: i32,
    /// The content of the super-chunk's `b2nd` metalayer, if it has one.
    pub b2nd: Option<Arc<[u8]>>,
}

/// How blocks are split into one stream per byte of the type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SplitMode {
    Always = 1,
    Never = 2,
    Auto = 3,
    ForwardCompat = 4,
}

impl SplitMode {
    /// The mode for c-blosc2's `BLOSC_*_SPLIT` value (unknown values act as ForwardCompat).
    pub fn from_code(code: i32) -> SplitMode {
        match code {
            1 => SplitMode::Always,
            2 => SplitMode::Never,
            3 => SplitMode::Auto,
            _ => SplitMode::ForwardCompat,
        }
    }
}

/// Parameters for compressing chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CParams {
    /// Codec compcode: one of [`Codec`], or a registered codec id (>= 32).
    pub compcode: u8,
    pub compcode_meta: u8,
    /// 0 (plain copy) to 9.
    pub clevel: u8,
    pub use_dict: bool,
    /// Size of the items; more than 255 is treated as a byte stream.
    pub typesize: i32,
    pub nthreads: i16,
    /// 0 for automatic.
    pub blocksize: i32,
    pub splitmode: SplitMode,
    pub filters: [u8; MAX_FILTERS],
    pub filters_meta: [u8; MAX_FILTERS],
    /// Who compresses (0: nobody in particular), handed to user codecs and
    /// filters as is: the C API puts its `blosc2_schunk*` here, as c-blosc2
    /// hands `cparams->schunk` to their callbacks. Not part of the format.
    pub owner: usize,
    /// The super-chunk compressed for, if any (see [`SchunkView`]).
    pub schunk: Option<SchunkView>,
    /// Let the tuner choose each chunk's codec, filters, level, split mode
    /// and (when `blocksize` is 0) block size for these goals, in place of
    /// the fields above (`tuner_id = BLOSC_BTUNE` in c-blosc2's API; see
    /// [`crate::chunk::tune`]). `None`: compress with the fields as they are.
    pub tuner: Option<Tuning>,
}

impl Default for CParams {
    /// c-blosc2's defaults: BloscLZ, clevel 5, typesize 8, shuffle, 1 thread.
    fn default() -> Self {
        CParams {
            compcode: Codec::BloscLz as u8,
            compcode_meta: 0,
            clevel: 5,
            use_dict: false,
            typesize: 8,
            nthreads: 1,
            blocksize: 0,
            splitmode: SplitMode::ForwardCompat,
            filters: [0, 0, 0, 0, 0, filter::SHUFFLE],
            filters_meta: [0; MAX_FILTERS],
            owner: 0,
            schunk: None,
            tuner: None,
        }
    }
}

impl CParams {
    /// Whether chunks compressed with these parameters may stand for chunks
    /// compressed with `other`'s, as c-blosc2 decides when it copies a
    /// super-chunk: same typesize, level, codec, dictionary use and filters,
    /// and no tuner here to choose them chunk by chunk.
    pub fn encodes_like(&self, other: &CParams) -> bool {
        self.tuner.is_none()
            && self.typesize == other.typesize
            && self.clevel == other.clevel
            && self.compcode == other.compcode
            && self.use_dict == other.use_dict
            && self.filters == other.filters
            && self.filters_meta == other.filters_meta
    }

    /// Parameters for a codec, level, typesize and the classic shuffle choice
    /// (0 none, 1 byte shuffle, 2 bit shuffle), as `blosc2_compress` builds them.
    pub fn classic(codec: Codec, clevel: u8, shuffle: i32, typesize: i32, delta: bool) -> CParams {
        let mut filters = [0u8; MAX_FILTERS];
        if shuffle == 1 && typesize > 1 {
            filters[MAX_FILTERS - 1] = filter::SHUFFLE;
        }
        if shuffle == 2 {
            filters[MAX_FILTERS - 1] = filter::BITSHUFFLE;
        }
        if delta {
            filters[MAX_FILTERS - 2] = filter::DELTA;
        }
        CParams { compcode: codec as u8, clevel, typesize, filters, ..CParams::default() }
    }
}

/// Parameters for decompressing chunks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DParams {
    pub nthreads: i16,
    pub typesize: i32,
    /// Who decompresses (0: nobody in particular), handed to user codecs and
    /// filters (see [`CParams::owner`]).
    pub owner: usize,
    /// The super-chunk decompressed from, if any (see [`SchunkView`]).
    pub schunk: Option<SchunkView>,
}

impl Default for DParams {
    fn default() -> Self {
        DParams { nthreads: 1, typesize: 8, owner: 0, schunk: None }
    }
}

/// The time the tuner weighs against size (Btune's `BTUNE_PERF_MODE`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfMode {
    /// Compression time and the time to move the compressed bytes.
    Comp,
    /// Decompression time and the time to move the compressed bytes.
    Decomp,
    /// Both times and the time to move the compressed bytes.
    Balanced,
}

impl PerfMode {
    /// The mode named as `BTUNE_PERF_MODE` names it (`COMP`, `DECOMP`, `BALANCED`).
    pub fn from_name(name: &str) -> Option<PerfMode> {
        match name {
            "COMP" => Some(PerfMode::Comp),
            "DECOMP" => Some(PerfMode::Decomp),
            "BALANCED" => Some(PerfMode::Balanced),
            _ => None,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            PerfMode::Comp => "COMP",
            PerfMode::Decomp => "DECOMP",
            PerfMode::Balanced => "BALANCED",
        }
    }
}

/// What the tuner does once its scheduled hard readapts are done (Btune's
/// `btune_repeat_mode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    /// No more scheduled readapts (a change in the data still starts one).
    Stop,
    /// Soft readapts only.
    Soft,
    /// Soft and hard readapts, as in the beginning.
    All,
}

/// When the tuner explores again (Btune's `btune_behaviour`): after the
/// first chunk's hard readapt, `waits` chunks compressed with the choice,
/// then a soft readapt (level and block size around the choice); after
/// `softs_before_hard` soft ones a hard one (codec, filters, level, split,
/// block size); after `hards_before_stop` hard ones, `repeat` says what next.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Schedule {
    pub waits: u32,
    pub softs_before_hard: u32,
    pub hards_before_stop: u32,
    pub repeat: Repeat,
}

impl Default for Schedule {
    fn default() -> Self {
        Schedule { waits: 4, softs_before_hard: 4, hards_before_stop: 4, repeat: Repeat::Soft }
    }
}

/// The tuner's goals and habits (Btune's `btune_config` and environment
/// variables; docs/PLUGINS.md, "The tuner").
#[derive(Debug, Clone, Copy)]
pub struct Tuning {
    /// 0 for speed, 1 for ratio, in between a weighted mix (`BTUNE_TRADEOFF`).
    pub tradeoff: f32,
    pub perf_mode: PerfMode,
    /// The bandwidth the compressed bytes travel at, in bytes per second
    /// (a disk, a network; Btune's default is 20 GiB/s, memory).
    pub bandwidth: u64,
    pub schedule: Schedule,
    /// Start from the parameters given (Btune's `cparams_hint`) instead of a
    /// hard readapt on the first chunk.
    pub hint: bool,
    /// One line per chunk on stderr: the choice, its figures, the readapt
    /// (`BTUNE_TRACE`).
    pub trace: bool,
    /// And one line per trial (`BTUNE_TRACE=2`).
    pub trace_trials: bool,
}

/// Btune's default bandwidth: 20 GiB/s.
pub const DEFAULT_BANDWIDTH: u64 = 20 << 30;

impl PartialEq for Tuning {
    fn eq(&self, o: &Tuning) -> bool {
        self.tradeoff.to_bits() == o.tradeoff.to_bits()
            && (self.perf_mode, self.bandwidth, self.schedule, self.hint, self.trace, self.trace_trials)
                == (o.perf_mode, o.bandwidth, o.schedule, o.hint, o.trace, o.trace_trials)
    }
}

impl Eq for Tuning {}

impl Default for Tuning {
    /// A balanced tradeoff (0.5) for compression (`COMP`), Btune's bandwidth.
    fn default() -> Self {
        Tuning {
            tradeoff: 0.5,
            perf_mode: PerfMode::Comp,
            bandwidth: DEFAULT_BANDWIDTH,
            schedule: Schedule::default(),
            hint: false,
            trace: false,
            trace_trials: false,
        }
    }
}

impl Tuning {
    /// The defaults with this tradeoff (clamped to [0, 1]; NaN is 0.5).
    pub fn with_tradeoff(tradeoff: f32) -> Tuning {
        let tradeoff = if tradeoff.is_nan() { 0.5 } else { tradeoff.clamp(0.0, 1.0) };
        Tuning { tradeoff, ..Tuning::default() }
    }

    /// These settings with Btune's environment variables applied over them:
    /// `BTUNE_TRADEOFF` (a number in [0, 1], or Btune's three-number form
    /// `(ratio, speed, quality)`, see [`parse_tradeoff`]), `BTUNE_PERF_MODE`
    /// (`COMP`, `DECOMP`, `BALANCED`; anything else is `COMP`, as in Btune)
    /// and `BTUNE_TRACE` (set and not `0`; `2` for the trials too). A
    /// tradeoff that is not a number in [0, 1] is an error.
    pub fn with_env(mut self) -> crate::Result<Tuning> {
        if let Some(v) = std::env::var_os("BTUNE_TRADEOFF") {
            self.tradeoff = parse_tradeoff(&v.to_string_lossy()).ok_or_else(|| {
                crate::trace!("BTUNE_TRADEOFF must be a number from 0 to 1, not {:?}", v);
                crate::Error::Tuner
            })?;
        }
        if let Some(v) = std::env::var_os("BTUNE_PERF_MODE") {
            let v = v.to_string_lossy();
            self.perf_mode = PerfMode::from_name(v.trim()).unwrap_or_else(|| {
                crate::trace!("BTUNE_PERF_MODE {v:?} is not COMP, DECOMP or BALANCED: COMP");
                PerfMode::Comp
            });
        }
        if let Some(v) = std::env::var_os("BTUNE_TRACE") {
            self.trace = !v.is_empty() && v != "0";
            self.trace_trials = v == "2";
        }
        Ok(self)
    }
}

/// A tradeoff as `BTUNE_TRADEOFF` writes it: one number in [0, 1], or three
/// (Btune's ratio / speed / quality weights, summing to 1, quality under 1)
/// of which the first and half the third make the one-number tradeoff, as
/// Btune folds them (nothing lossy is tuned, so quality has no other use).
pub fn parse_tradeoff(s: &str) -> Option<f32> {
    let s = s.trim();
    let inner = s.strip_prefix('(').and_then(|s| s.strip_suffix(')')).unwrap_or(s);
    let nums: Vec<f32> = inner.split(',').map(|t| t.trim().parse::<f32>()).collect::<Result<_, _>>().ok()?;
    let t = match nums[..] {
        [t] => t,
        [a, b, c] if ((a + b + c) - 1.0).abs() < 1e-3 && c < 1.0 => a + c / 2.0,
        _ => return None,
    };
    (t.is_finite() && (0.0..=1.0).contains(&t)).then_some(t)
}
