//! c-blosc2's parameter structs beside the core's: c-blosc2's defaults, and
//! the conversions between `blosc2_cparams` and [`CParams`].

use super::types::*;
use crate::os::c_int;
use b2nd::chunk::{CParams, SplitMode};
use b2nd::error::Error;

/// The core's parameters for a C `blosc2_cparams`.
pub(crate) fn core_cparams(c: &blosc2_cparams) -> Result<CParams, Error> {
    if c.clevel > 9 {
        return Err(Error::CodecParam);
    }
    Ok(CParams {
        compcode: c.compcode,
        compcode_meta: c.compcode_meta,
        clevel: c.clevel,
        use_dict: c.use_dict != 0,
        typesize: c.typesize,
        nthreads: c.nthreads.max(1),
        blocksize: c.blocksize.max(0),
        splitmode: SplitMode::from_code(c.splitmode),
        filters: c.filters,
        filters_meta: c.filters_meta,
        owner: c.schunk as usize,
        // SAFETY: c-blosc2's contract: `schunk` is NULL or a live super-chunk.
        schunk: unsafe { super::handle::plugin_view(c.schunk as *mut blosc2_schunk) },
        tuner: match c.tuner_id {
            crate::registry::tuners::BLOSC_BTUNE => {
                // SAFETY: c-blosc2's contract: `tuner_params` is the tuner's own
                // configuration (Btune's `btune_config`) or NULL.
                let tuning = unsafe { crate::registry::tuners::btune_tuning(c.tuner_params) };
                Some(tuning?)
            }
            _ => None,
        },
    })
}

/// The C view of the core's compression parameters (pointer fields NULL).
pub(crate) fn c_cparams(p: &CParams) -> blosc2_cparams {
    blosc2_cparams {
        compcode: p.compcode,
        compcode_meta: p.compcode_meta,
        clevel: p.clevel,
        use_dict: c_int::from(p.use_dict),
        typesize: p.typesize,
        nthreads: p.nthreads,
        blocksize: p.blocksize,
        splitmode: p.splitmode as i32,
        filters: p.filters,
        filters_meta: p.filters_meta,
        tuner_id: if p.tuner.is_some() { crate::registry::tuners::BLOSC_BTUNE } else { 0 },
        ..default_cparams()
    }
}

/// c-blosc2's default compression parameters.
pub(crate) fn default_cparams() -> blosc2_cparams {
    blosc2_cparams {
        compcode: BLOSC_BLOSCLZ as u8,
        compcode_meta: 0,
        clevel: 5,
        use_dict: 0,
        typesize: 8,
        nthreads: 1,
        blocksize: 0,
        splitmode: BLOSC_FORWARD_COMPAT_SPLIT,
        schunk: std::ptr::null_mut(),
        filters: [0, 0, 0, 0, 0, BLOSC_SHUFFLE as u8],
        filters_meta: [0; BLOSC2_MAX_FILTERS],
        prefilter: None,
        preparams: std::ptr::null_mut(),
        tuner_params: std::ptr::null_mut(),
        tuner_id: 0,
        instr_codec: false,
        codec_params: std::ptr::null_mut(),
        filter_params: [std::ptr::null_mut(); BLOSC2_MAX_FILTERS],
    }
}

/// c-blosc2's default decompression parameters.
pub(crate) fn default_dparams() -> blosc2_dparams {
    blosc2_dparams {
        nthreads: 1,
        schunk: std::ptr::null_mut(),
        postfilter: None,
        postparams: std::ptr::null_mut(),
        typesize: 8,
    }
}
