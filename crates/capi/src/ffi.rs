//! FFI plumbing: the panic boundary every export runs inside, and the
//! pointer helpers that turn raw pointers into references or slices.

use b2nd::error::Error;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Run `f`, turning a panic into `on_panic` so that no unwind crosses the C boundary.
pub fn guard<T>(on_panic: T, f: impl FnOnce() -> T) -> T {
    catch_unwind(AssertUnwindSafe(f)).unwrap_or(on_panic)
}

/// Run `f` and map its result to c-blosc2's int convention (negative codes on
/// error). Under `BLOSC_TRACE` an error is reported with the exported
/// function's location.
#[track_caller]
pub fn guard_code(f: impl FnOnce() -> Result<i32, Error>) -> i32 {
    let at = std::panic::Location::caller();
    guard(Error::Failure.code(), || f().unwrap_or_else(|e| failed(e, at)))
}

/// The same for functions returning `int64_t`.
#[track_caller]
pub fn guard_code64(f: impl FnOnce() -> Result<i64, Error>) -> i64 {
    let at = std::panic::Location::caller();
    guard(i64::from(Error::Failure.code()), || f().unwrap_or_else(|e| i64::from(failed(e, at))))
}

/// The code of `e`, traced under `BLOSC_TRACE` as coming from `at`.
fn failed(e: Error, at: &std::panic::Location<'_>) -> i32 {
    if b2nd::trace::enabled("BLOSC_TRACE") {
        b2nd::trace::emit_trace(format_args!("{e}"), at.file(), at.line());
    }
    e.code()
}

/// A shared slice from a C pointer and length; NULL or negative lengths are errors.
///
/// # Safety
/// When non-NULL, `ptr` must point to `len` readable bytes that stay valid and
/// unmodified for `'a`.
pub unsafe fn slice<'a>(ptr: *const u8, len: i64) -> Result<&'a [u8], Error> {
    if len < 0 {
        return Err(Error::InvalidParam);
    }
    if len == 0 {
        return Ok(&[]);
    }
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: guaranteed by the caller.
    Ok(unsafe { std::slice::from_raw_parts(ptr, len as usize) })
}

/// A mutable slice from a C pointer and length; NULL or negative lengths are errors.
///
/// # Safety
/// When non-NULL, `ptr` must point to `len` writable bytes, valid and not
/// aliased for `'a`.
pub unsafe fn slice_mut<'a>(ptr: *mut u8, len: i64) -> Result<&'a mut [u8], Error> {
    if len < 0 {
        return Err(Error::InvalidParam);
    }
    if len == 0 {
        return Ok(&mut []);
    }
    if ptr.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: guaranteed by the caller.
    Ok(unsafe { std::slice::from_raw_parts_mut(ptr, len as usize) })
}

/// A reference from a C pointer, or `NullPointer`.
///
/// # Safety
/// When non-NULL, `ptr` must point to a valid `T` for `'a`.
pub unsafe fn reference<'a, T>(ptr: *const T) -> Result<&'a T, Error> {
    // SAFETY: guaranteed by the caller.
    unsafe { ptr.as_ref() }.ok_or(Error::NullPointer)
}

/// A mutable reference from a C pointer, or `NullPointer`.
///
/// # Safety
/// When non-NULL, `ptr` must point to a valid, unaliased `T` for `'a`.
pub unsafe fn reference_mut<'a, T>(ptr: *mut T) -> Result<&'a mut T, Error> {
    // SAFETY: guaranteed by the caller.
    unsafe { ptr.as_mut() }.ok_or(Error::NullPointer)
}

/// A `&str` from a NUL-terminated C string (`None` for NULL or non-UTF-8).
///
/// # Safety
/// When non-NULL, `ptr` must point to a NUL-terminated string valid for `'a`.
pub unsafe fn c_str<'a>(ptr: *const crate::os::c_char) -> Option<&'a str> {
    if ptr.is_null() {
        return None;
    }
    // SAFETY: guaranteed by the caller.
    unsafe { std::ffi::CStr::from_ptr(ptr) }.to_str().ok()
}

/// Write `value` through `ptr` when it is not NULL.
///
/// # Safety
/// When non-NULL, `ptr` must be valid for a write of `T`.
pub unsafe fn write_opt<T>(ptr: *mut T, value: T) {
    if !ptr.is_null() {
        // SAFETY: guaranteed by the caller.
        unsafe { ptr.write(value) }
    }
}
