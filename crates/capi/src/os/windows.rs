//! The Windows side of [`crate::os`]: the C runtime (MinGW's and MSVC's
//! share these names) and Win32.

use super::{c_char, c_int, c_void};
use std::io;
use std::os::windows::io::RawHandle;
use std::path::PathBuf;
use windows_sys::Win32::Foundation::{DuplicateHandle, GetLastError, DUPLICATE_SAME_ACCESS, HANDLE, HMODULE};
use windows_sys::Win32::Storage::FileSystem::{ReadFile, WriteFile};
use windows_sys::Win32::System::LibraryLoader::{GetProcAddress, LoadLibraryW};
use windows_sys::Win32::System::Performance::{QueryPerformanceCounter, QueryPerformanceFrequency};
use windows_sys::Win32::System::Threading::GetCurrentProcess;
use windows_sys::Win32::System::IO::OVERLAPPED;

pub use libc::{size_t, FILE};

/// c-blosc2's `PROT_*`/`MAP_*` values of `blosc2_stdio_mmap` (it defines
/// the POSIX numbers on Windows too).
pub const PROT_READ: c_int = 1;
pub const PROT_WRITE: c_int = 2;
pub const MAP_SHARED: c_int = 1;
pub const MAP_PRIVATE: c_int = 2;

/// The system timestamp of `blosc_timestamp_t`: `LARGE_INTEGER`, counts of
/// `QueryPerformanceCounter`.
pub type Timestamp = i64;

/// A plugin `NAME` is `blosc2_NAME.dll`, as c-blosc2 loads it on Windows.
pub const PLUGIN_PREFIX: &str = "blosc2_";
pub const PLUGIN_SUFFIX: &str = ".dll";

extern "C" {
    fn _fileno(file: *mut FILE) -> c_int;
    fn _get_osfhandle(fd: c_int) -> isize;
    fn _open_osfhandle(handle: isize, flags: c_int) -> c_int;
    fn _fdopen(fd: c_int, mode: *const c_char) -> *mut FILE;
    fn _close(fd: c_int) -> c_int;
    fn _chsize_s(fd: c_int, size: i64) -> c_int;
    fn _fseeki64(file: *mut FILE, offset: i64, origin: c_int) -> c_int;
    fn _ftelli64(file: *mut FILE) -> i64;
    fn _strdup(s: *const c_char) -> *mut c_char;
}

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
    unsafe { _strdup(s) }
}

pub fn set_timestamp(t: &mut Timestamp) {
    // SAFETY: an i64 to fill (LARGE_INTEGER).
    unsafe { QueryPerformanceCounter(t) };
}

pub fn elapsed_nsecs(start: &Timestamp, end: &Timestamp) -> f64 {
    let mut freq = 0i64;
    // SAFETY: an i64 to fill.
    unsafe { QueryPerformanceFrequency(&mut freq) };
    (end - start) as f64 * 1e9 / freq.max(1) as f64
}

/// # Safety
/// `path` and `mode` must be NUL-terminated strings.
pub unsafe fn fopen(path: *const c_char, mode: *const c_char) -> *mut FILE {
    // SAFETY: caller contract.
    unsafe { libc::fopen(path, mode) }
}

/// # Safety
/// `file` must be an open stream, not used afterwards.
pub unsafe fn fclose(file: *mut FILE) -> c_int {
    // SAFETY: caller contract.
    unsafe { libc::fclose(file) }
}

/// # Safety
/// `file` must be an open stream.
pub unsafe fn stream_size(file: *mut FILE) -> i64 {
    const SEEK_SET: c_int = 0;
    const SEEK_END: c_int = 2;
    // SAFETY: caller contract; the position is restored afterwards.
    unsafe {
        let current = _ftelli64(file);
        if current < 0 {
            return -1;
        }
        if _fseeki64(file, 0, SEEK_END) != 0 {
            _fseeki64(file, current, SEEK_SET);
            return -1;
        }
        let size = _ftelli64(file);
        if _fseeki64(file, current, SEEK_SET) != 0 || size < 0 {
            return -1;
        }
        size
    }
}

/// One `ReadFile`/`WriteFile` at an offset (`OVERLAPPED`) on the handle of
/// `file`, as c-blosc2 does on Windows.
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
    // SAFETY: caller contract: an open stream.
    let handle = unsafe { _get_osfhandle(_fileno(file)) };
    if handle == -1 {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    // SAFETY: OVERLAPPED is plain data; zero is its empty value.
    let mut o: OVERLAPPED = unsafe { std::mem::zeroed() };
    o.Anonymous.Anonymous.Offset = at as u32;
    o.Anonymous.Anonymous.OffsetHigh = (at >> 32) as u32;
    let n = n.min(u32::MAX as usize) as u32;
    let mut done = 0u32;
    // SAFETY: an open handle; `buf` holds `n` bytes (caller contract).
    let ok = unsafe {
        if write {
            WriteFile(handle as HANDLE, buf, n, &mut done, &mut o)
        } else {
            ReadFile(handle as HANDLE, buf, n, &mut done, &mut o)
        }
    };
    if ok != 0 {
        return Ok(done as usize);
    }
    // SAFETY: no arguments.
    match unsafe { GetLastError() } {
        38 => Ok(0), // ERROR_HANDLE_EOF: at or past the end
        e => Err(io::Error::from_raw_os_error(e as i32)),
    }
}

/// # Safety
/// `file` must be an open stream.
pub unsafe fn stream_truncate(file: *mut FILE, len: i64) -> c_int {
    // SAFETY: caller contract.
    unsafe {
        libc::fflush(file);
        if _chsize_s(_fileno(file), len) == 0 {
            0
        } else {
            -1
        }
    }
}

/// A `FILE*` of its own on a duplicate of the handle `raw`, or NULL.
pub fn stream_on(raw: b2nd::os::RawFile, _path: &std::ffi::CStr, write: bool) -> *mut FILE {
    let mode = if write { c"rb+" } else { c"rb" };
    // SAFETY: `raw` is an open handle; the duplicate belongs to the CRT
    // descriptor and then the FILE (whose fclose closes it), or is closed here.
    unsafe {
        let me = GetCurrentProcess();
        let mut dup: HANDLE = std::ptr::null_mut();
        if DuplicateHandle(me, raw as HANDLE, me, &mut dup, 0, 0, DUPLICATE_SAME_ACCESS) == 0 {
            return std::ptr::null_mut();
        }
        const O_BINARY: c_int = 0x8000;
        let fd = _open_osfhandle(dup as isize, O_BINARY);
        if fd < 0 {
            windows_sys::Win32::Foundation::CloseHandle(dup);
            return std::ptr::null_mut();
        }
        let file = _fdopen(fd, mode.as_ptr());
        if file.is_null() {
            _close(fd);
        }
        file
    }
}

/// The handle as the C struct's `int fd`: Windows keeps handles to 32
/// significant bits (they cross to 32-bit processes), so it fits.
pub fn c_fd_of(raw: b2nd::os::RawFile) -> c_int {
    raw as isize as c_int
}

/// The handle of the C struct's `int fd` (sign-extended, as Windows does).
pub fn raw_of_c_fd(fd: c_int) -> b2nd::os::RawFile {
    if fd == -1 {
        return b2nd::os::NO_RAW_FILE;
    }
    fd as isize as RawHandle
}

/// C paths are UTF-8 here (Rust opens them as UTF-16; c-blosc2's `fopen`
/// reads them in the ANSI code page, the same for ASCII).
pub(super) fn path_from_c(bytes: &[u8]) -> Option<PathBuf> {
    std::str::from_utf8(bytes).ok().map(PathBuf::from)
}

pub(super) fn dl_open(path: &str) -> Result<usize, String> {
    let wide: Vec<u16> = path.encode_utf16().chain([0]).collect();
    // SAFETY: a NUL-terminated UTF-16 name.
    let h: HMODULE = unsafe { LoadLibraryW(wide.as_ptr()) };
    if h.is_null() {
        Err(dl_error())
    } else {
        Ok(h as usize)
    }
}

pub(super) fn dl_symbol(handle: usize, name: &std::ffi::CStr) -> *mut c_void {
    // SAFETY: a module from LoadLibraryW, never freed; a NUL-terminated name.
    unsafe { GetProcAddress(handle as HMODULE, name.as_ptr().cast()) }
        .map_or(std::ptr::null_mut(), |f| f as *mut c_void)
}

pub(super) fn dl_error() -> String {
    // SAFETY: no arguments.
    let e = unsafe { GetLastError() };
    io::Error::from_raw_os_error(e as i32).to_string()
}
