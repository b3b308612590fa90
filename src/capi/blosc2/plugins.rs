//! `blosc2_register_codec` and `blosc2_register_filter`: C callbacks wrapped
//! as the core's user codecs and filters.

use super::params::{c_cparams, default_dparams};
use super::types::*;
use crate::capi::ffi::{c_str, guard_code, reference};
use crate::error::{Error, Result};
use crate::plugins::{self, DecodeInfo, EncodeInfo, UserCodec, UserFilter};
use libc::{c_int, c_void};
use std::sync::Arc;

fn len32(n: usize) -> Result<i32> {
    i32::try_from(n).map_err(|_| Error::TwoGbLimit)
}

/// A C callback's return value: negative codes are errors.
fn checked(rc: c_int) -> Result<usize> {
    if rc < 0 {
        Err(Error::from_code(rc).unwrap_or(Error::Failure))
    } else {
        Ok(rc as usize)
    }
}

fn c_dparams(typesize: i32) -> blosc2_dparams {
    blosc2_dparams { typesize, ..default_dparams() }
}

/// The error for a plugin registered by name whose library is not loaded.
fn unloaded(kind: &str, name: &str, e: Error) -> Error {
    crate::trace!("the {kind} plugin `{name}` was registered without callbacks and its library (libblosc2_{name}.so) is not loaded");
    e
}

struct CCodec {
    name: String,
    encoder: blosc2_codec_encoder_cb,
    decoder: blosc2_codec_decoder_cb,
}

impl UserCodec for CCodec {
    fn name(&self) -> &str {
        &self.name
    }
    fn encode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<usize> {
        let f = self.encoder.ok_or_else(|| unloaded("codec", &self.name, Error::CodecSupport))?;
        let mut cp = c_cparams(info.params);
        cp.schunk = info.params.owner as *mut c_void;
        // SAFETY: the callback gets live buffers of the stated lengths and a valid cparams.
        let rc = unsafe {
            f(src.as_ptr(), len32(src.len())?, dst.as_mut_ptr(), len32(dst.len())?, meta, &mut cp, info.source.as_ptr().cast())
        };
        checked(rc).map(|n| n.min(dst.len() + 1))
    }
    fn decode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<usize> {
        let f = self.decoder.ok_or_else(|| unloaded("codec", &self.name, Error::CodecSupport))?;
        let mut dp = c_dparams(info.typesize);
        dp.schunk = info.owner as *mut c_void;
        // SAFETY: as for `encode`.
        let rc = unsafe {
            f(src.as_ptr(), len32(src.len())?, dst.as_mut_ptr(), len32(dst.len())?, meta, &mut dp, info.chunk.as_ptr().cast())
        };
        checked(rc)
    }
}

struct CFilter {
    id: u8,
    name: String,
    forward: blosc2_filter_forward_cb,
    backward: blosc2_filter_backward_cb,
}

impl UserFilter for CFilter {
    fn name(&self) -> &str {
        &self.name
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<()> {
        let f = self.forward.ok_or_else(|| unloaded("filter", &self.name, Error::FilterPipeline))?;
        let mut cp = c_cparams(info.params);
        cp.schunk = info.params.owner as *mut c_void;
        // SAFETY: the callback gets two live buffers of `src.len()` bytes.
        let rc = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), len32(src.len())?, meta, &mut cp, self.id) };
        checked(rc).map(|_| ())
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<()> {
        let f = self.backward.ok_or_else(|| unloaded("filter", &self.name, Error::FilterPipeline))?;
        let mut dp = c_dparams(info.typesize);
        dp.schunk = info.owner as *mut c_void;
        // SAFETY: as for `forward`.
        let rc = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), len32(src.len())?, meta, &mut dp, self.id) };
        checked(rc).map(|_| ())
    }
}

/// Register a codec under its `compcode` (160-255). Registering the same
/// name again is accepted; another name on a taken id is an error. A codec
/// registered by name without callbacks names a plugin library to load at run
/// time; this version does not load plugins, so compressing or decompressing
/// with it fails with `BLOSC2_ERROR_CODEC_SUPPORT` (c-blosc2's code when the
/// plugin is not installed).
///
/// # Safety
/// `codec` must be NULL or point to a valid `blosc2_codec` whose name is a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_codec(codec: *mut blosc2_codec) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let c = unsafe { reference(codec)? };
        let name = unsafe { c_str(c.compname) }.ok_or(Error::InvalidParam)?.to_string();
        if c.encoder.is_none() || c.decoder.is_none() {
            crate::trace!("codec {} (`{name}`) registered without callbacks: a run-time plugin, which this version cannot load", c.compcode);
        }
        plugins::register_codec(c.compcode, Arc::new(CCodec { name, encoder: c.encoder, decoder: c.decoder }))?;
        Ok(0)
    })
}

/// Register a filter under its `id` (160-255). A filter given both callbacks
/// needs no name, and its `name` is not read (python-blosc2 leaves it unset);
/// one without callbacks names a plugin library to load at run time (its name
/// is required), which this version does not load: chunks using it fail with
/// `BLOSC2_ERROR_FILTER_PIPELINE`.
///
/// # Safety
/// `filter` must be NULL or point to a valid `blosc2_filter`; its name a C
/// string unless both callbacks are set.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_filter(filter: *mut blosc2_filter) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let f = unsafe { reference(filter)? };
        let name = if f.forward.is_some() && f.backward.is_some() {
            String::new()
        } else {
            let name = unsafe { c_str(f.name) }.ok_or(Error::InvalidParam)?.to_string();
            crate::trace!("filter {} (`{name}`) registered without callbacks: a run-time plugin, which this version cannot load", f.id);
            name
        };
        let wrapped = CFilter { id: f.id, name, forward: f.forward, backward: f.backward };
        plugins::register_filter(f.id, Arc::new(wrapped))?;
        Ok(0)
    })
}

/// Registered tuners (their callbacks are C functions).
struct Tuners(Vec<blosc2_tuner>);
// SAFETY: the entries are C function pointers and the caller's static name strings.
unsafe impl Send for Tuners {}

static TUNERS: std::sync::Mutex<Tuners> = std::sync::Mutex::new(Tuners(Vec::new()));

/// The registered tuner with this id.
pub(crate) fn tuner(id: c_int) -> Option<blosc2_tuner> {
    TUNERS.lock().unwrap_or_else(|e| e.into_inner()).0.iter().find(|t| t.id == id).copied()
}

/// Register a user tuner (ids from `BLOSC2_USER_REGISTERED_TUNER_START` on). A
/// compression context whose `cparams.tuner_id` names it calls the tuner's
/// `init` (with `cparams.tuner_params`) when made, and `next_blocksize` before
/// each compression, as c-blosc2 does for tuners that see the context through
/// the public API (`blosc2_ctx_get_cparams`, ...).
///
/// # Safety
/// `tuner` must be NULL or a valid tuner whose callbacks and name stay valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_tuner(tuner: *mut blosc2_tuner) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let t = unsafe { reference(tuner.cast_const()) }.map_err(|_| Error::InvalidParam)?;
        if t.id < BLOSC2_USER_REGISTERED_TUNER_START as c_int {
            return Err(Error::Failure);
        }
        let mut all = TUNERS.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = all.0.iter().find(|o| o.id == t.id) {
            // SAFETY: registered names are NUL-terminated strings (or NULL).
            let same = unsafe { c_str(old.name) == c_str(t.name) };
            return if same { Ok(0) } else { Err(Error::Failure) };
        }
        if all.0.len() >= u8::MAX as usize {
            return Err(Error::CodecSupport);
        }
        all.0.push(*t);
        Ok(0)
    })
}
