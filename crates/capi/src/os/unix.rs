//! The unix side of [`crate::os`], and WASI's (`wasm32-wasip1`, whose
//! wasi-libc has the same stdio calls), where marked: no `dup`, no dynamic
//! libraries, no memory mappings.

use super::{c_char, c_int, c_void};
use std::io;
use std::path::PathBuf;

pub use libc::{size_t, FILE};
#[cfg(not(target_os = "wasi"))]
pub use libc::{MAP_PRIVATE, MAP_SHARED, PROT_READ, PROT_WRITE};
// WASI has no mappings: the mmap backend's flags keep the values they have
// on Linux (and in wasi-libc's emulation).
#[cfg(target_os = "wasi")]
pub const PROT_READ: c_int = 1;
#[cfg(target_os = "wasi")]
pub const PROT_WRITE: c_int = 2;
#[cfg(target_os = "wasi")]
pub const MAP_SHARED: c_int = 1;
#[cfg(target_os = "wasi")]
pub const MAP_PRIVATE: c_int = 2;

/// The system timestamp of `blosc_timestamp_t`: `struct timespec`.
pub type Timestamp = libc::timespec;

/// A plugin `NAME` is `libblosc2_NAME.so` (c-blosc2 looks for `.so` on
/// macOS too).
pub const PLUGIN_PREFIX: &str = "libblosc2_";
pub const PLUGIN_SUFFIX: &str = ".so";

/// # Safety
/// As C's `malloc`.
pub unsafe fn malloc(n: usize) -> *mut c_void {
    // SAFETY: caller contract.
    unsafe { libc::malloc(n) }
}

/// # Safety
/// As C's `free`.
pub unsafe fn free(p: *mut c_void) {
    // SAFETY: caller contract.
    unsafe { libc::free(p) }
}

/// # Safety
/// As C's `strdup`.
pub unsafe fn strdup(s: *const c_char) -> *mut c_char {
    // SAFETY: caller contract.
    unsafe { libc::strdup(s) }
}

/// Store the monotonic clock's time (`CLOCK_MONOTONIC`) in `t`.
pub fn set_timestamp(t: &mut Timestamp) {
    // SAFETY: a writable timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, t) };
}

pub fn elapsed_nsecs(start: &Timestamp, end: &Timestamp) -> f64 {
    (end.tv_sec - start.tv_sec) as f64 * 1e9 + (end.tv_nsec - start.tv_nsec) as f64
}

/// `fopen` (`fopen64` on Linux: files past 2 GiB on 32-bit too).
///
/// # Safety
/// `path` and `mode` must be NUL-terminated strings.
pub unsafe fn fopen(path: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: caller contract.
    unsafe {
        #[cfg(any(target_os = "linux", target_os = "android"))]
        return libc::fopen64(path, mode);
        #[cfg(not(any(target_os = "linux", target_os = "android")))]
        return libc::fopen(path, mode);
    }
}

/// # Safety
/// `file` must be an open stream, not used afterwards.
pub unsafe fn fclose(file: *mut FILE) -> c_int {
    // SAFETY: caller contract.
    unsafe { libc::fclose(file) }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
use libc::{fseeko, ftello, ftruncate, off_t, pread, pwrite};
#[cfg(any(target_os = "linux", target_os = "android"))]
use libc::{
    fseeko64 as fseeko, ftello64 as ftello, ftruncate64 as ftruncate, off64_t as off_t, pread64 as pread,
    pwrite64 as pwrite,
};

/// The length of the file of `file`, its position kept; -1 on failure.
///
/// # Safety
/// `file` must be an open stream.
pub unsafe fn stream_size(file: *mut FILE) -> i64 {
    // SAFETY: caller contract; the position is restored afterwards.
    unsafe {
        let current = ftello(file);
        if current < 0 {
            return -1;
        }
        if fseeko(file, 0, libc::SEEK_END) != 0 {
            fseeko(file, current, libc::SEEK_SET);
            return -1;
        }
        let size = ftello(file);
        if fseeko(file, current, libc::SEEK_SET) != 0 || size < 0 {
            return -1;
        }
        size as i64
    }
}

/// One `pread`/`pwrite` on the descriptor of `file`.
///
/// # Safety
/// `file` must be an open stream and `buf` valid for `n` bytes.
pub(super) unsafe fn positioned(
    file: *mut FILE,
    buf: *mut u8,
    n: usize,
    at: i64,
    write: bool,
) -> io::Result<usize> {
    let offset = off_t::try_from(at).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: caller contract.
    let got = unsafe {
        let fd = libc::fileno(file);
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        if write {
            pwrite(fd, buf.cast(), n, offset)
        } else {
            pread(fd, buf.cast(), n, offset)
        }
    };
    if got < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(got as usize)
    }
}

/// Flush `file` and set its file's length; 0 or -1.
///
/// # Safety
/// `file` must be an open stream.
pub unsafe fn stream_truncate(file: *mut FILE, len: i64) -> c_int {
    let Some(len) = off_t::try_from(len).ok() else { return -1 };
    // SAFETY: caller contract.
    unsafe {
        libc::fflush(file);
        ftruncate(libc::fileno(file), len)
    }
}

/// A `FILE*` of its own on a duplicate of `raw` (the open file at `_path`),
/// opened for reading (and writing, with `write`), or NULL.
#[cfg(not(target_os = "wasi"))]
pub fn stream_on(raw: b2nd::os::RawFile, _path: &std::ffi::CStr, write: bool) -> *mut FILE {
    let mode = if write { c"rb+" } else { c"rb" };
    // SAFETY: `raw` is open; the duplicate belongs to the FILE (its fclose
    // closes it), or is closed here when fdopen fails.
    unsafe {
        let dup = libc::dup(raw);
        if dup < 0 {
            return std::ptr::null_mut();
        }
        let file = libc::fdopen(dup, mode.as_ptr());
        if file.is_null() {
            libc::close(dup);
        }
        file
    }
}

/// WASI cannot duplicate a descriptor: a `FILE*` on the file's path, opened
/// again (the file exists: `raw` is open on it).
#[cfg(target_os = "wasi")]
pub fn stream_on(_raw: b2nd::os::RawFile, path: &std::ffi::CStr, write: bool) -> *mut FILE {
    let mode = if write { c"rb+" } else { c"rb" };
    // SAFETY: both NUL-terminated strings.
    unsafe { libc::fopen(path.as_ptr(), mode.as_ptr()) }
}

/// The file as the C struct's `int fd` (a descriptor already).
pub fn c_fd_of(raw: b2nd::os::RawFile) -> c_int {
    raw
}

/// The file of the C struct's `int fd`.
pub fn raw_of_c_fd(fd: c_int) -> b2nd::os::RawFile {
    fd
}

#[cfg(not(target_os = "wasi"))]
pub(super) fn path_from_c(bytes: &[u8]) -> Option<PathBuf> {
    use std::os::unix::ffi::OsStrExt;
    Some(PathBuf::from(std::ffi::OsStr::from_bytes(bytes)))
}

/// WASI's paths are UTF-8.
#[cfg(target_os = "wasi")]
pub(super) fn path_from_c(bytes: &[u8]) -> Option<PathBuf> {
    std::str::from_utf8(bytes).ok().map(PathBuf::from)
}

/// WASI has no dynamic libraries: plugins are registered by the program.
#[cfg(target_os = "wasi")]
pub(super) fn dl_open(_path: &str) -> Result<usize, String> {
    Err("WebAssembly (WASI) loads no dynamic libraries".to_string())
}

#[cfg(target_os = "wasi")]
pub(super) fn dl_symbol(_handle: usize, _name: &std::ffi::CStr) -> *mut c_void {
    std::ptr::null_mut()
}

#[cfg(target_os = "wasi")]
pub(super) fn dl_error() -> String {
    String::new()
}

#[cfg(not(target_os = "wasi"))]
pub(super) fn dl_open(path: &str) -> Result<usize, String> {
    let c = std::ffi::CString::new(path).map_err(|e| e.to_string())?;
    // SAFETY: a NUL-terminated path; RTLD_LAZY as c-blosc2 opens plugins.
    let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_LAZY) };
    if h.is_null() {
        Err(dl_error())
    } else {
        Ok(h as usize)
    }
}

#[cfg(not(target_os = "wasi"))]
pub(super) fn dl_symbol(handle: usize, name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: a handle from dlopen, never closed; a NUL-terminated name.
    unsafe { libc::dlsym(handle as *mut c_void, name.as_ptr()) }
}

#[cfg(not(target_os = "wasi"))]
pub(super) fn dl_error() -> String {
    // SAFETY: dlerror returns NULL or a C string valid until the next dl call on this thread.
    let e = unsafe { libc::dlerror() };
    if e.is_null() {
        String::new()
    } else {
        // SAFETY: non-NULL, NUL-terminated.
        unsafe { std::ffi::CStr::from_ptr(e) }.to_string_lossy().into_owned()
    }
}
