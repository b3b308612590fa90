//! The default filesystem I/O backend of `blosc2/blosc2-stdio.h`
//! (`blosc2_stdio_*`): positioned reads and writes on the file behind a
//! `FILE*`, through `crate::os` (on Linux the `*64` calls, so that 32-bit
//! Linux reaches files past 2 GiB too; on Windows `ReadFile`/`WriteFile` at
//! an offset).

use super::byte_count;
use super::types::*;
use crate::ffi::guard;
use crate::os::{c_char, c_int, c_void, FILE};
use std::ptr;

/// The `FILE*` of a stdio stream, or `None` when the stream or its file is NULL.
///
/// # Safety
/// `stream` must be NULL or point to a `blosc2_stdio_file`.
unsafe fn stdio_file(stream: *mut c_void) -> Option<*mut FILE> {
    // SAFETY: caller contract.
    let file = unsafe { stream.cast::<blosc2_stdio_file>().as_ref() }?.file;
    (!file.is_null()).then_some(file)
}

/// Whole items in `bytes` bytes (none for a zero item size, as `fread` does).
fn items_of(bytes: usize, size: i64) -> i64 {
    if size > 0 {
        bytes as i64 / size
    } else {
        0
    }
}

/// Open `urlpath` with the `fopen` `mode` for the default filesystem backend.
/// `params` (a `blosc2_stdio_params`, possibly NULL) is not used here.
/// Returns a heap-allocated `blosc2_stdio_file` for `blosc2_stdio_close`, or NULL.
///
/// # Safety
/// `urlpath` and `mode` must be NULL or NUL-terminated strings.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_open(
    urlpath: *const c_char,
    mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
    let _ = params;
    guard(ptr::null_mut(), || {
        if urlpath.is_null() || mode.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: both are NUL-terminated strings (caller contract).
        let file = unsafe { crate::os::fopen(urlpath, mode) };
        if file.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: plain allocation; C releases it through `blosc2_stdio_close`.
        let wrapper = unsafe { crate::os::malloc(std::mem::size_of::<blosc2_stdio_file>()) }
            .cast::<blosc2_stdio_file>();
        if wrapper.is_null() {
            // SAFETY: `file` was opened above and is closed once.
            unsafe { crate::os::fclose(file) };
            return ptr::null_mut();
        }
        // SAFETY: `wrapper` is a fresh allocation of the right size.
        unsafe { wrapper.write(blosc2_stdio_file { file }) };
        wrapper.cast()
    })
}

/// Close a stream of `blosc2_stdio_open` and free it. Returns `fclose`'s
/// result (0 on success), or -1 for a NULL stream.
///
/// # Safety
/// `stream` must be NULL or a stream returned by `blosc2_stdio_open` and not yet closed.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_close(stream: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(file) = (unsafe { stdio_file(stream) }) else { return -1 };
        // SAFETY: the stream is open and owned by `stream`, which was malloc'd by open.
        unsafe {
            let rc = crate::os::fclose(file);
            crate::os::free(stream);
            rc
        }
    })
}

/// The length of the file behind a stdio stream, or -1.
///
/// # Safety
/// `stream` must be NULL or an open stream of `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_size(stream: *mut c_void) -> i64 {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(file) = (unsafe { stdio_file(stream) }) else { return -1 };
        // SAFETY: `file` is an open stream.
        unsafe { crate::os::stream_size(file) }
    })
}

/// Write `nitems` items of `size` bytes from `ptr` at byte `position` of the
/// file. Returns the number of whole items written (0 on invalid arguments).
///
/// # Safety
/// `ptr` must hold `size * nitems` readable bytes; `stream` must be NULL or
/// an open stream of `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        if ptr.is_null() || position < 0 {
            return 0;
        }
        // SAFETY: caller contract.
        let Some(file) = (unsafe { stdio_file(stream) }) else { return 0 };
        let Some(n) = byte_count(size, nitems) else { return 0 };
        // SAFETY: `ptr` holds `n` readable bytes (caller contract); a write only reads them.
        let written = unsafe { crate::os::stream_io(file, ptr.cast_mut().cast(), n, position, true) };
        items_of(written, size)
    })
}

/// Read `nitems` items of `size` bytes at byte `position` of the file into
/// the buffer `*ptr`. Returns the number of whole items read (fewer at the
/// end of the file, 0 on invalid arguments).
///
/// # Safety
/// `ptr` must be NULL or point to a buffer pointer with room for
/// `size * nitems` bytes; `stream` must be NULL or an open stream of
/// `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        if ptr.is_null() || position < 0 {
            return 0;
        }
        // SAFETY: caller contract.
        let Some(file) = (unsafe { stdio_file(stream) }) else { return 0 };
        let Some(n) = byte_count(size, nitems) else { return 0 };
        // SAFETY: `ptr` is a valid pointer to the buffer pointer (caller contract).
        let buf = unsafe { *ptr };
        if n > 0 && buf.is_null() {
            return 0;
        }
        // SAFETY: `buf` has room for `n` bytes (caller contract).
        let read = unsafe { crate::os::stream_io(file, buf.cast(), n, position, false) };
        items_of(read, size)
    })
}

/// Set the length of the file behind a stdio stream to `size` bytes.
/// Returns 0, or a negative value on failure.
///
/// # Safety
/// `stream` must be NULL or an open stream of `blosc2_stdio_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(-1, || {
        if size < 0 {
            return -1;
        }
        // SAFETY: caller contract.
        let Some(file) = (unsafe { stdio_file(stream) }) else { return -1 };
        // SAFETY: `file` is an open stream.
        unsafe { crate::os::stream_truncate(file, size) }
    })
}

/// Release the parameters of the default filesystem backend: they belong to
/// the caller, so there is nothing to do. Returns 0.
///
/// # Safety
/// None: `params` is not dereferenced.
#[no_mangle]
pub extern "C" fn blosc2_stdio_destroy(params: *mut c_void) -> c_int {
    let _ = params;
    guard(0, || 0)
}
