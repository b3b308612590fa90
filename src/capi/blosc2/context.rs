//! `blosc2_context`: a compression or decompression context, and the
//! conversions between c-blosc2's parameter structs and the core's.

use super::types::*;
use crate::capi::ffi::{guard, guard_code, reference, reference_mut, slice};
use crate::chunk::{CParams, Compressor, DParams, Decompressor, SplitMode};
use crate::error::Error;
use libc::c_int;

/// Opaque context behind `blosc2_context*`.
pub struct blosc2_context {
    pub(crate) kind: Kind,
}

pub(crate) enum Kind {
    Compress { core: Compressor, c: blosc2_cparams },
    Decompress { core: Decompressor, d: blosc2_dparams },
}

// SAFETY: the raw pointers kept in the C parameter structs are user data that
// the context never dereferences itself; the core objects are Send.
unsafe impl Send for blosc2_context {}

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

impl blosc2_context {
    pub(crate) fn compressor(&mut self) -> Result<&mut Compressor, Error> {
        match &mut self.kind {
            Kind::Compress { core, .. } => Ok(core),
            Kind::Decompress { .. } => Err(Error::InvalidParam),
        }
    }
    pub(crate) fn decompressor(&mut self) -> Result<&mut Decompressor, Error> {
        match &mut self.kind {
            Kind::Decompress { core, .. } => Ok(core),
            Kind::Compress { .. } => Err(Error::InvalidParam),
        }
    }
}

fn boxed(kind: Kind) -> *mut blosc2_context {
    Box::into_raw(Box::new(blosc2_context { kind }))
}

/// Create a compression context (NULL on invalid parameters).
#[no_mangle]
pub extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        // A registered tuner (id 0 is the built-in one, whose choices the core makes).
        let tuner = match cparams.tuner_id {
            0 => None,
            id => match super::plugins::tuner(id) {
                Some(t) => Some(t),
                None => return std::ptr::null_mut(),
            },
        };
        let ctx = make_cctx(cparams);
        if let (Some(t), false) = (tuner, ctx.is_null()) {
            if let Some(init) = t.init {
                // SAFETY: the registered tuner's hook, given the new context.
                if unsafe { init(cparams.tuner_params, ctx, std::ptr::null_mut()) } < 0 {
                    // SAFETY: made just above, not handed out.
                    drop(unsafe { Box::from_raw(ctx) });
                    return std::ptr::null_mut();
                }
            }
        }
        ctx
    })
}

/// The registered tuner of a compression context, if it has one.
pub(crate) fn context_tuner(ctx: &blosc2_context) -> Option<blosc2_tuner> {
    match &ctx.kind {
        Kind::Compress { c, .. } if c.tuner_id != 0 => super::plugins::tuner(c.tuner_id),
        _ => None,
    }
}

fn make_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    {
        match core_cparams(&cparams).and_then(Compressor::sticky) {
            Ok(mut core) => {
                let pre = super::hooks::CPrefilter::from_cparams(&cparams);
                if let Some(p) = &pre {
                    core.set_prefilter(Some(p.clone()));
                }
                let ctx = boxed(Kind::Compress { core, c: cparams });
                if let Some(p) = pre {
                    p.set_context(ctx);
                }
                ctx
            }
            Err(_) => std::ptr::null_mut(),
        }
    }
}

/// Create a decompression context (NULL on invalid parameters).
#[no_mangle]
pub extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        let mut core = Decompressor::new(DParams { nthreads: dparams.nthreads.max(1), typesize: dparams.typesize });
        let post = super::hooks::CPostfilter::from_dparams(&dparams);
        if let Some(p) = &post {
            core.set_postfilter(Some(p.clone()));
        }
        let ctx = boxed(Kind::Decompress { core, d: dparams });
        if let Some(p) = post {
            p.set_context(ctx);
        }
        ctx
    })
}

/// Free a context made by `blosc2_create_cctx` or `blosc2_create_dctx` (NULL is ignored).
///
/// # Safety
/// `context` must be NULL or a live context from this library, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn blosc2_free_ctx(context: *mut blosc2_context) {
    guard((), || {
        if !context.is_null() {
            // SAFETY: the pointer came from Box::into_raw in this module.
            drop(unsafe { Box::from_raw(context) });
        }
    })
}

/// Copy the compression parameters of a compression context.
///
/// # Safety
/// `ctx` and `cparams` must be NULL or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_ctx_get_cparams(ctx: *mut blosc2_context, cparams: *mut blosc2_cparams) -> c_int {
    guard_code(|| {
        // SAFETY: checked for NULL by the helpers; validity is the caller's contract.
        let (ctx, out) = unsafe { (reference(ctx)?, reference_mut(cparams)?) };
        match &ctx.kind {
            Kind::Compress { c, core } => {
                let p = core.params();
                *out = *c;
                out.nthreads = p.nthreads;
                Ok(0)
            }
            Kind::Decompress { .. } => Err(Error::InvalidParam),
        }
    })
}

/// Copy the decompression parameters of a decompression context.
///
/// # Safety
/// `ctx` and `dparams` must be NULL or valid pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_ctx_get_dparams(ctx: *mut blosc2_context, dparams: *mut blosc2_dparams) -> c_int {
    guard_code(|| {
        // SAFETY: checked for NULL by the helpers; validity is the caller's contract.
        let (ctx, out) = unsafe { (reference(ctx)?, reference_mut(dparams)?) };
        match &ctx.kind {
            Kind::Decompress { d, core } => {
                *out = *d;
                out.nthreads = core.params().nthreads;
                Ok(0)
            }
            Kind::Compress { .. } => Err(Error::InvalidParam),
        }
    })
}

/// Skip the masked blocks in the next `blosc2_decompress_ctx` call.
///
/// # Safety
/// `ctx` must be NULL or a live context; `maskout` must point to `nblocks` bools.
#[no_mangle]
pub unsafe extern "C" fn blosc2_set_maskout(ctx: *mut blosc2_context, maskout: *mut bool, nblocks: c_int) -> c_int {
    guard_code(|| {
        // SAFETY: checked for NULL by the helpers; validity is the caller's contract.
        let ctx = unsafe { reference_mut(ctx)? };
        let bytes = unsafe { slice(maskout.cast::<u8>(), i64::from(nblocks))? };
        let mask: Vec<bool> = bytes.iter().map(|&b| b != 0).collect();
        ctx.decompressor()?.set_maskout(&mask);
        Ok(0)
    })
}

/// c-blosc2's default compression parameters.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_cparams_defaults() -> blosc2_cparams {
    default_cparams()
}

/// c-blosc2's default decompression parameters.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_dparams_defaults() -> blosc2_dparams {
    default_dparams()
}
