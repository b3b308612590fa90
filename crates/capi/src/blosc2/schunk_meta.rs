//! The metalayers (`blosc2_meta_*`) and variable-length metalayers
//! (`blosc2_vlmeta_*`) of a super-chunk.

use super::fields::{change, reader};
use super::params::core_cparams;
use super::schunk::malloc_copy;
use super::types::*;
use crate::ffi::{c_str, guard_code, slice};
use crate::os::{c_char, c_int};
use b2nd::error::{Error, Result};

/// Add a metalayer (before any data); returns its index.
///
/// # Safety
/// `schunk` NULL or live; `name` NUL-terminated; `content` `content_len` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `content` has `content_len` readable bytes.
        let content = unsafe { slice(content, i64::from(content_len)) }.map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let i = unsafe { change(schunk, |sc| sc.meta_add(name, content)) }?;
        Ok(i as i32)
    })
}

/// Overwrite a metalayer's content (not longer than it was); returns its index.
///
/// # Safety
/// As for `blosc2_meta_add`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_meta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `content` has `content_len` readable bytes.
        let content = unsafe { slice(content, i64::from(content_len)) }.map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let i = unsafe { change(schunk, |sc| sc.meta_update(name, content)) }?;
        Ok(i as i32)
    })
}

/// Index of variable-length metalayer `name`, or a negative code.
///
/// # Safety
/// `schunk` NULL or live; `name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_exists(schunk: *mut blosc2_schunk, name: *const c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let (_, sc) = unsafe { reader(schunk)? };
        sc.vlmeta_exists(name).map(|i| i as i32).ok_or(Error::NotFound)
    })
}

/// The core parameters for an optional C `blosc2_cparams*`.
unsafe fn optional_cparams(cparams: *mut blosc2_cparams) -> Result<Option<b2nd::chunk::CParams>> {
    // SAFETY: caller contract.
    unsafe { cparams.as_ref() }.map(core_cparams).transpose()
}

/// Add a variable-length metalayer; returns its index.
///
/// # Safety
/// `schunk` NULL or live; `name` NUL-terminated; `content` `content_len` bytes; `cparams` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_add(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    cparams: *mut blosc2_cparams,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `content` has `content_len` readable bytes.
        let content = unsafe { slice(content, i64::from(content_len)) }.map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `cparams` NULL or valid.
        let cp = unsafe { optional_cparams(cparams)? };
        // SAFETY: caller contract: `schunk` NULL or live.
        let i = unsafe { change(schunk, |sc| sc.vlmeta_add(name, content, cp.as_ref())) }?;
        Ok(i as i32)
    })
}

/// Replace a variable-length metalayer's content; returns its index.
///
/// # Safety
/// As for `blosc2_vlmeta_add`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_update(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut u8,
    content_len: i32,
    cparams: *mut blosc2_cparams,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `content` has `content_len` readable bytes.
        let content = unsafe { slice(content, i64::from(content_len)) }.map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `cparams` NULL or valid.
        let cp = unsafe { optional_cparams(cparams)? };
        // SAFETY: caller contract: `schunk` NULL or live.
        let i = unsafe { change(schunk, |sc| sc.vlmeta_update(name, content, cp.as_ref())) }?;
        Ok(i as i32)
    })
}

/// A variable-length metalayer's content, decompressed into a malloc'd buffer;
/// returns its index.
///
/// # Safety
/// `schunk` NULL or live; `name` NUL-terminated; `content`, `content_len` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_get(
    schunk: *mut blosc2_schunk,
    name: *const c_char,
    content: *mut *mut u8,
    content_len: *mut i32,
) -> c_int {
    guard_code(|| {
        if content.is_null() || content_len.is_null() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let (_, sc) = unsafe { reader(schunk)? };
        let i = sc.vlmeta_exists(name).ok_or(Error::NotFound)?;
        let v = sc.vlmeta_get(name)?;
        let n = i32::try_from(v.len()).map_err(|_| Error::Data)?;
        let p = malloc_copy(&v)?;
        // SAFETY: `content` and `content_len` checked non-NULL above; valid for writes
        // (caller contract).
        unsafe {
            *content = p;
            *content_len = n;
        }
        Ok(i as i32)
    })
}

/// Remove a variable-length metalayer; returns how many remain.
///
/// # Safety
/// `schunk` NULL or live; `name` NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_delete(schunk: *mut blosc2_schunk, name: *const c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let name = unsafe { c_str(name) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let n = unsafe { change(schunk, |sc| sc.vlmeta_delete(name)) }?;
        Ok(n as i32)
    })
}

/// Fill `names` with the (internal) names of the variable-length metalayers; returns their number.
///
/// # Safety
/// `schunk` NULL or live; `names` room for `nvlmetalayers` pointers.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlmeta_get_names(
    schunk: *mut blosc2_schunk,
    names: *mut *mut c_char,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let (h, sc) = unsafe { reader(schunk)? };
        let n = sc.vlmetalayers().len();
        if n > 0 && names.is_null() {
            return Err(Error::NullPointer);
        }
        for (i, m) in h.vlmetas.iter().enumerate().take(n) {
            // SAFETY: caller contract: `names` has room for `nvlmetalayers` (`n`) pointers, and
            // `i < n`; non-NULL (checked above, as `n > 0`).
            unsafe { *names.add(i) = m.name.as_ptr().cast_mut() };
        }
        Ok(n as i32)
    })
}
