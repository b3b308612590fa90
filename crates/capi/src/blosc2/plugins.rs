//! `blosc2_register_codec` and `blosc2_register_filter`: C callbacks wrapped
//! as the core's user codecs and filters.

use super::dynload;
use super::params::{c_cparams, default_dparams};
use super::types::*;
use crate::ffi::{c_str, guard_code, reference};
use crate::os::{c_int, c_void};
use b2nd::error::{Error, Result};
use b2nd::plugins::{self, DecodeInfo, EncodeInfo, UserCodec, UserFilter};
use std::sync::{Arc, OnceLock};

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

/// The two callbacks of a codec or filter: given at registration, or, for a
/// plugin registered by name alone, loaded from its library at first use
/// (see [`dynload`]; a failed load is tried again at the next use, as in
/// c-blosc2).
struct Callbacks<A, B> {
    given: Option<(A, B)>,
    loaded: OnceLock<(A, B)>,
}

impl<A: Copy, B: Copy> Callbacks<A, B> {
    fn new(a: Option<A>, b: Option<B>) -> Self {
        Callbacks { given: a.zip(b), loaded: OnceLock::new() }
    }

    /// The callbacks; `load` turns the plugin's two function addresses into them.
    fn get(
        &self,
        kind: &str,
        name: &str,
        e: Error,
        load: impl FnOnce([*mut c_void; 2]) -> (A, B),
    ) -> Result<(A, B)> {
        if let Some(g) = self.given {
            return Ok(g);
        }
        if let Some(&l) = self.loaded.get() {
            return Ok(l);
        }
        let f = dynload::functions::<2>(name).map_err(|_| {
            b2nd::trace!("could not load the {kind} plugin `{name}`");
            e
        })?;
        Ok(*self.loaded.get_or_init(|| load(f)))
    }
}

type Encoder =
    unsafe extern "C" fn(*const u8, i32, *mut u8, i32, u8, *mut blosc2_cparams, *const c_void) -> c_int;
type Decoder =
    unsafe extern "C" fn(*const u8, i32, *mut u8, i32, u8, *mut blosc2_dparams, *const c_void) -> c_int;
type Forward = unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_cparams, u8) -> c_int;
type Backward = unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_dparams, u8) -> c_int;

struct CCodec {
    name: String,
    fns: Callbacks<Encoder, Decoder>,
}

impl CCodec {
    fn fns(&self) -> Result<(Encoder, Decoder)> {
        self.fns.get("codec", &self.name, Error::CodecSupport, |[e, d]| {
            // SAFETY: the plugin interface: `info` names an encoder and a decoder
            // with c-blosc2's codec signatures; both addresses are non-NULL.
            unsafe {
                (
                    std::mem::transmute::<*mut c_void, Encoder>(e),
                    std::mem::transmute::<*mut c_void, Decoder>(d),
                )
            }
        })
    }
}

impl UserCodec for CCodec {
    fn name(&self) -> &str {
        &self.name
    }
    fn encode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<usize> {
        let f = self.fns()?.0;
        let mut cp = c_cparams(info.params);
        cp.schunk = info.params.owner as *mut c_void;
        // SAFETY: the callback gets live buffers of the stated lengths and a valid cparams.
        let rc = unsafe {
            f(
                src.as_ptr(),
                len32(src.len())?,
                dst.as_mut_ptr(),
                len32(dst.len())?,
                meta,
                &mut cp,
                info.source.as_ptr().cast(),
            )
        };
        checked(rc).map(|n| n.min(dst.len() + 1))
    }
    fn decode(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<usize> {
        let f = self.fns()?.1;
        let mut dp = c_dparams(info.typesize);
        dp.schunk = info.owner as *mut c_void;
        // SAFETY: as for `encode`.
        let rc = unsafe {
            f(
                src.as_ptr(),
                len32(src.len())?,
                dst.as_mut_ptr(),
                len32(dst.len())?,
                meta,
                &mut dp,
                info.chunk.as_ptr().cast(),
            )
        };
        checked(rc)
    }
}

struct CFilter {
    id: u8,
    name: String,
    fns: Callbacks<Forward, Backward>,
}

impl CFilter {
    fn fns(&self) -> Result<(Forward, Backward)> {
        self.fns.get("filter", &self.name, Error::FilterPipeline, |[f, b]| {
            // SAFETY: the plugin interface: `info` names a forward and a backward
            // function with c-blosc2's filter signatures; both non-NULL.
            unsafe {
                (
                    std::mem::transmute::<*mut c_void, Forward>(f),
                    std::mem::transmute::<*mut c_void, Backward>(b),
                )
            }
        })
    }
}

impl UserFilter for CFilter {
    fn name(&self) -> &str {
        &self.name
    }
    fn forward(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &EncodeInfo) -> Result<()> {
        let f = self.fns()?.0;
        let mut cp = c_cparams(info.params);
        cp.schunk = info.params.owner as *mut c_void;
        // SAFETY: the callback gets two live buffers of `src.len()` bytes.
        let rc = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), len32(src.len())?, meta, &mut cp, self.id) };
        checked(rc).map(|_| ())
    }
    fn backward(&self, src: &[u8], dst: &mut [u8], meta: u8, info: &DecodeInfo) -> Result<()> {
        let f = self.fns()?.1;
        let mut dp = c_dparams(info.typesize);
        dp.schunk = info.owner as *mut c_void;
        // SAFETY: as for `forward`.
        let rc = unsafe { f(src.as_ptr(), dst.as_mut_ptr(), len32(src.len())?, meta, &mut dp, self.id) };
        checked(rc).map(|_| ())
    }
}

/// Register the codecs c-blosc2 3.3 registers at start as run-time plugins
/// (by name, loaded at first use): openhtj2k (36), grok (37), openzl (38),
/// j2k (39), htj2k (40). Called by `blosc2_init`; the first call registers.
pub(crate) fn register_runtime_plugins() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for (id, name) in [(36u8, "openhtj2k"), (37, "grok"), (38, "openzl"), (39, "j2k"), (40, "htj2k")] {
            let codec = CCodec { name: name.to_string(), fns: Callbacks::new(None, None) };
            if plugins::register_global_codec(id, Arc::new(codec)).is_err() {
                b2nd::trace!("could not register the run-time codec `{name}`");
            }
        }
    });
}

/// Register a codec under its `compcode` (160-255). Registering the same
/// name again is accepted; another name on a taken id is an error. A codec
/// registered by name without callbacks names a plugin library, loaded at
/// first use (see `dynload`); when it cannot be found, compressing or
/// decompressing with it fails with `BLOSC2_ERROR_CODEC_SUPPORT`, as in
/// c-blosc2.
///
/// # Safety
/// `codec` must be NULL or point to a valid `blosc2_codec` whose name is a C string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_codec(codec: *mut blosc2_codec) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let c = unsafe { reference(codec)? };
        // SAFETY: caller contract: the codec's `compname` is NULL or a C string.
        let name = unsafe { c_str(c.compname) }.ok_or(Error::InvalidParam)?.to_string();
        plugins::register_codec(
            c.compcode,
            Arc::new(CCodec { name, fns: Callbacks::new(c.encoder, c.decoder) }),
        )?;
        Ok(0)
    })
}

/// Register a filter under its `id` (160-255). A filter given both callbacks
/// needs no name, and its `name` is not read (python-blosc2 leaves it unset);
/// one without callbacks names a plugin library, loaded at first use (see
/// `dynload`); when it cannot be found, chunks using it fail with
/// `BLOSC2_ERROR_FILTER_PIPELINE`, as in c-blosc2.
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
            // SAFETY: caller contract: without both callbacks, the filter's `name` is a C string.
            let name = unsafe { c_str(f.name) }.ok_or(Error::InvalidParam)?.to_string();
            name
        };
        let wrapped = CFilter { id: f.id, name, fns: Callbacks::new(f.forward, f.backward) };
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
