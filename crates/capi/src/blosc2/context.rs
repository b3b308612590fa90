//! `blosc2_context`: making, querying and freeing compression and
//! decompression contexts (the type itself is declared in `types.rs`, beside
//! the C structs that point to it). A context brings the C prefilter or
//! postfilter of its parameters (`hooks.rs`) and the registered tuner that
//! they name (`plugins.rs`).

use super::params::{core_cparams, default_cparams, default_dparams};
use super::types::*;
use crate::ffi::{guard, guard_code, reference, reference_mut, slice};
use crate::os::{c_int, c_void};
use b2nd::chunk::{Compressor, DParams, Decompressor};
use b2nd::error::Error;

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
    static SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);
    let serial = SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    Box::into_raw(Box::new(blosc2_context { kind, serial }))
}

/// The serial of the context at `ctx` (0 for NULL).
///
/// # Safety
/// `ctx` is NULL or a live context of this library.
pub(crate) unsafe fn serial(ctx: *const blosc2_context) -> u64 {
    // SAFETY: caller contract.
    unsafe { ctx.as_ref() }.map_or(0, |c| c.serial)
}

/// Create a compression context (NULL on invalid parameters).
///
/// # Safety
/// The pointers in `cparams` (`schunk`, `prefilter`, `preparams`, `udbtune`) NULL or valid
/// for as long as the context lives.
#[no_mangle]
pub unsafe extern "C" fn blosc2_create_cctx(cparams: blosc2_cparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        // A registered tuner (id 0 is the built-in one, whose choices the core makes).
        let Ok(tuner) = registered_tuner(cparams.tuner_id) else {
            return std::ptr::null_mut();
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

/// The registered tuner `id` names (0: the built-in one, whose choices the
/// core makes); an error, with a message, when there is none.
pub(crate) fn registered_tuner(id: c_int) -> Result<Option<blosc2_tuner>, Error> {
    if id == 0 {
        return Ok(None);
    }
    if id == crate::registry::tuners::BLOSC_BTUNE {
        // libb2nd's own tuner (`b2nd::chunk::tune`), made with the core's
        // parameters; the blosc2-btune plugin is never loaded (btune 1.2.1
        // writes into c-blosc2's private context struct, in the layout of
        // c-blosc2 before 3.3, and crashes c-blosc2 3.3.5 itself).
        b2nd::info!("tuner btune ({id}): libb2nd's built-in tuner (the blosc2-btune plugin is not loaded)");
        return Ok(None);
    }
    match super::plugins::tuner(id) {
        Some(t) => Ok(Some(t)),
        None => {
            b2nd::trace!("tuner {id} is not registered");
            Err(Error::Tuner)
        }
    }
}

/// The registered tuner of a compression context, if it has one.
pub(crate) fn context_tuner(ctx: &blosc2_context) -> Option<blosc2_tuner> {
    match &ctx.kind {
        Kind::Compress { c, .. } if c.tuner_id != 0 => super::plugins::tuner(c.tuner_id),
        _ => None,
    }
}

/// The super-chunk a decompression context belongs to (its `dparams.schunk`).
pub(crate) fn context_schunk(ctx: &blosc2_context) -> *mut c_void {
    match &ctx.kind {
        Kind::Decompress { d, .. } => d.schunk,
        Kind::Compress { .. } => std::ptr::null_mut(),
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
///
/// # Safety
/// The pointers in `dparams` (`schunk`, `postfilter`, `postparams`) NULL or valid for as
/// long as the context lives.
#[no_mangle]
pub unsafe extern "C" fn blosc2_create_dctx(dparams: blosc2_dparams) -> *mut blosc2_context {
    guard(std::ptr::null_mut(), || {
        let mut core = Decompressor::new(DParams {
            nthreads: dparams.nthreads.max(1),
            typesize: dparams.typesize,
            owner: dparams.schunk as usize,
            // SAFETY: c-blosc2's contract: `dparams.schunk` is NULL or a live super-chunk of
            // this library (this export is a safe fn: the C caller's contract, unchecked).
            schunk: unsafe { super::handle::plugin_view(dparams.schunk as *mut blosc2_schunk) },
        });
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
pub unsafe extern "C" fn blosc2_ctx_get_cparams(
    ctx: *mut blosc2_context,
    cparams: *mut blosc2_cparams,
) -> c_int {
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
pub unsafe extern "C" fn blosc2_ctx_get_dparams(
    ctx: *mut blosc2_context,
    dparams: *mut blosc2_dparams,
) -> c_int {
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
pub unsafe extern "C" fn blosc2_set_maskout(
    ctx: *mut blosc2_context,
    maskout: *mut bool,
    nblocks: c_int,
) -> c_int {
    guard_code(|| {
        // SAFETY: checked for NULL by the helpers; validity is the caller's contract.
        let ctx = unsafe { reference_mut(ctx)? };
        // SAFETY: caller contract: `maskout` points to `nblocks` bools of one byte each.
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
