//! The `repr(C)` mirrors of `blosc2/blosc2-stdio.h`.
#![allow(non_camel_case_types)] // the C names of blosc2/blosc2-stdio.h, kept for cbindgen

use crate::os::{c_char, c_int, size_t, FILE};

/// A file opened by the default stdio I/O backend.
#[repr(C)]
pub struct blosc2_stdio_file {
    pub file: *mut FILE,
}

/// Parameters of the default stdio I/O backend.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_stdio_params {
    /// Serialize accesses to an on-disk frame through a lock file beside it.
    pub locking: bool,
}

/// State and parameters of the memory-mapped I/O backend.
#[cfg(not(target_os = "windows"))]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_stdio_mmap {
    pub mode: *const c_char,
    pub initial_mapping_size: size_t,
    pub needs_free: bool,
    pub addr: *mut c_char,
    pub urlpath: *mut c_char,
    pub file_size: size_t,
    pub mapping_size: size_t,
    pub is_memory_only: bool,
    pub file: *mut FILE,
    pub fd: c_int,
    pub access_flags: i64,
    pub map_flags: i64,
}

/// State and parameters of the memory-mapped I/O backend (Windows: one
/// field more, as in c-blosc2).
#[cfg(target_os = "windows")]
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_stdio_mmap {
    pub mode: *const c_char,
    pub initial_mapping_size: size_t,
    pub needs_free: bool,
    pub addr: *mut c_char,
    pub urlpath: *mut c_char,
    pub file_size: size_t,
    pub mapping_size: size_t,
    pub is_memory_only: bool,
    pub file: *mut FILE,
    /// The file's handle, kept to its 32 significant bits.
    pub fd: c_int,
    pub access_flags: i64,
    pub map_flags: i64,
    /// The mapping object (c-blosc2's `HANDLE`; libb2nd closes its own once
    /// mapped, so this stays `INVALID_HANDLE_VALUE`).
    pub mmap_handle: *mut crate::os::c_void,
}
