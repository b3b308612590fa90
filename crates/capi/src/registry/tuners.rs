//! Ids of the globally registered tuners (`blosc2/tuners-registry.h`).
#![allow(non_camel_case_types)] // the C names of blosc2/tuners-registry.h, kept for cbindgen
use crate::os::{c_char, c_int};

pub const BLOSC_BTUNE: c_int = 32;

/// Symbol names a dynamically loaded tuner plugin exports.
#[repr(C)]
pub struct tuner_info {
    pub init: *mut c_char,
    pub next_blocksize: *mut c_char,
    pub next_cparams: *mut c_char,
    pub update: *mut c_char,
    pub free: *mut c_char,
}

/// The head of Btune 1.2.1's `btune_config` (its public `btune.h`), which a C
/// program may hand as `cparams.tuner_params` with `tuner_id = BLOSC_BTUNE`.
/// The fields after `use_inference` (the models' directory, whose length is
/// the system's `PATH_MAX`) are never read. Not in the generated header: it
/// is Btune's type, not c-blosc2's.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct btune_config_head {
    /// kB/s (1024 bytes).
    pub bandwidth: u32,
    /// 0 COMP, 1 DECOMP, 2 BALANCED, 3 AUTO (the environment, else COMP).
    pub perf_mode: c_int,
    pub tradeoff: [f32; 3],
    /// 1 or 3 values in `tradeoff`.
    pub tradeoff_nelems: c_int,
    pub nwaits_before_readapt: u32,
    pub nsofts_before_hard: u32,
    pub nhards_before_stop: u32,
    /// 0 stop, 1 repeat soft readapts, 2 repeat all.
    pub repeat_mode: c_int,
    pub cparams_hint: bool,
    /// Btune's model inferences: there are no models here; ignored.
    pub use_inference: c_int,
}

/// The core's tuner settings for `tuner_id = BLOSC_BTUNE` and its
/// `tuner_params` (NULL, or a Btune 1.2.1 `btune_config`), with Btune's
/// environment variables over them; an error, with a trace, for a config
/// whose fields are out of their ranges.
///
/// # Safety
/// `params` NULL or pointing to a `btune_config` (at least its head).
pub(crate) unsafe fn btune_tuning(
    params: *const std::ffi::c_void,
) -> Result<b2nd::chunk::Tuning, b2nd::Error> {
    use b2nd::chunk::{PerfMode, Repeat, Schedule, Tuning};
    let mut t = Tuning::default();
    // SAFETY: caller contract.
    if let Some(c) = unsafe { params.cast::<btune_config_head>().as_ref() }.copied() {
        let bad = |what: &str| {
            b2nd::trace!("tuner_params: a btune_config whose {what} is out of range");
            b2nd::Error::Tuner
        };
        let tradeoff = match c.tradeoff_nelems {
            1 => c.tradeoff[0],
            3 => {
                let [a, b, q] = c.tradeoff;
                if ((a + b + q) - 1.0).abs() > 1e-3 || q >= 1.0 {
                    return Err(bad("tradeoff"));
                }
                a + q / 2.0
            }
            _ => return Err(bad("tradeoff_nelems")),
        };
        if !(0.0..=1.0).contains(&tradeoff) {
            return Err(bad("tradeoff"));
        }
        t.tradeoff = tradeoff;
        t.perf_mode = match c.perf_mode {
            0 | 3 => PerfMode::Comp,
            1 => PerfMode::Decomp,
            2 => PerfMode::Balanced,
            _ => return Err(bad("perf_mode")),
        };
        if c.bandwidth > 0 {
            t.bandwidth = u64::from(c.bandwidth) * 1024;
        }
        t.schedule = Schedule {
            waits: c.nwaits_before_readapt,
            softs_before_hard: c.nsofts_before_hard,
            hards_before_stop: c.nhards_before_stop,
            repeat: match c.repeat_mode {
                0 => Repeat::Stop,
                1 => Repeat::Soft,
                2 => Repeat::All,
                _ => return Err(bad("repeat_mode")),
            },
        };
        t.hint = c.cparams_hint;
    }
    t.with_env()
}
