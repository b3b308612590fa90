//! Removing and renaming what a super-chunk's `urlpath` names (a frame file
//! or a sparse frame directory).

use crate::ffi::{c_str, guard_code};
use crate::os::{c_char, c_int};
use b2nd::error::Error;

/// Remove a directory and everything in it.
///
/// # Safety
/// `path` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_remove_dir(path: *const c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let p = unsafe { c_str(path) }.ok_or(Error::InvalidParam)?;
        b2nd::schunk::remove_dir(p)?;
        Ok(0)
    })
}

/// Remove a file or a directory tree (nothing to do when it does not exist).
///
/// # Safety
/// `path` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_remove_urlpath(path: *const c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let Some(p) = (unsafe { c_str(path) }) else { return Ok(0) };
        b2nd::schunk::remove_urlpath(p)?;
        Ok(0)
    })
}

/// Rename a file or directory.
///
/// # Safety
/// Both NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn blosc2_rename_urlpath(old_urlpath: *mut c_char, new_path: *mut c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let a = unsafe { c_str(old_urlpath) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `new_path` NULL or NUL-terminated.
        let b = unsafe { c_str(new_path) }.ok_or(Error::InvalidParam)?;
        b2nd::schunk::rename_urlpath(a, b)?;
        Ok(0)
    })
}
