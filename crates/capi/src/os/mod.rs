//! The one place the C skin calls the operating system or the C runtime
//! (the core's calls are in `b2nd::os`). Each system has its side in a file
//! of its own with the same functions: `unix.rs` (WASI's too), `windows.rs`.
//!
//! - the C types of the API ([`c_char`], [`c_int`], [`c_void`], [`size_t`],
//!   [`FILE`]) and the system timestamp ([`Timestamp`]);
//! - the C heap that C callers free: [`malloc`], [`free`], [`strdup`];
//! - the stdio backend's `FILE*` calls: [`fopen`], [`fclose`],
//!   [`stream_size`], [`stream_io`], [`stream_truncate`], [`stream_on`];
//! - run-time plugins: [`Library`];
//! - paths given by C: [`path_from_c`];
//! - the mmap backend's flags ([`PROT_READ`], [`PROT_WRITE`],
//!   [`MAP_SHARED`], [`MAP_PRIVATE`]) and its file as a C `int`.

pub use std::ffi::{c_char, c_int, c_void};

#[cfg(any(unix, target_os = "wasi"))]
#[path = "unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "windows.rs"]
mod sys;

pub use sys::{
    c_fd_of, elapsed_nsecs, fclose, fopen, free, malloc, raw_of_c_fd, set_timestamp, size_t, strdup,
    stream_on, stream_size, stream_truncate, Timestamp, FILE, MAP_PRIVATE, MAP_SHARED, PLUGIN_PREFIX,
    PLUGIN_SUFFIX, PROT_READ, PROT_WRITE,
};

use std::path::PathBuf;

/// Largest transfer handed to one system call (short transfers loop).
const MAX_TRANSFER: usize = 1 << 30;

/// Transfer `n` bytes between `buf` and the file of `file` at `position`,
/// without touching the stream's position or buffer. Returns the bytes
/// transferred; fewer than `n` means end of file or an error.
///
/// # Safety
/// `file` must be an open stream and `buf` valid for `n` bytes (readable for
/// a write, writable for a read).
pub unsafe fn stream_io(file: *mut FILE, buf: *mut u8, n: usize, position: i64, write: bool) -> usize {
    let mut done = 0usize;
    while done < n {
        let Some(at) = i64::try_from(done).ok().and_then(|d| position.checked_add(d)) else { break };
        let todo = (n - done).min(MAX_TRANSFER);
        // SAFETY: `buf + done .. buf + done + todo` lies within the caller's buffer.
        let got = unsafe { sys::positioned(file, buf.add(done), todo, at, write) };
        match got {
            Ok(0) => break,
            Ok(k) => done += k,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => break,
        }
    }
    done
}

/// The path a C caller named (bytes of the system's encoding: UTF-8 where
/// it is not Unicode by construction).
pub fn path_from_c(bytes: &[u8]) -> Option<PathBuf> {
    sys::path_from_c(bytes)
}

/// A shared library loaded for the life of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Library(usize);

impl Library {
    /// Load the library at `path` (a file name alone: the system's search).
    pub fn open(path: &str) -> Result<Library, String> {
        sys::dl_open(path).map(Library)
    }

    /// The address of `name` in the library, or NULL.
    pub fn symbol(self, name: &std::ffi::CStr) -> *mut c_void {
        sys::dl_symbol(self.0, name)
    }

    /// Why the last lookup of this thread failed.
    pub fn last_error() -> String {
        sys::dl_error()
    }
}
