//! Memory mappings of files, for `crate::io::MmapFile` (which keeps their
//! addresses and sizes and holds the only other unsafe code of mappings).
//!
//! A shared mapping writes through to its file; a private one
//! (copy-on-write) never changes the file, and is `len` bytes however long
//! the file is (the pages past its end are zeros). What differs per system:
//! - growing a shared mapping: Linux resizes it in place or moves it
//!   whole (`mremap`); elsewhere it is mapped anew (it may move);
//! - a private mapping: on unix the file's pages, copied only when written,
//!   and growing it moves its pages (Linux) or copies them; on Windows
//!   private memory that the file is read into when mapped;
//! - on Windows a shared mapping longer than its file extends the file, and
//!   a mapped file cannot be cut ([`CUT_NEEDS_UNMAP`]).

use super::sys;
use std::fs::File;
use std::io;

/// Whether a file must be unmapped before it is cut shorter (Windows).
pub const CUT_NEEDS_UNMAP: bool = sys::CUT_NEEDS_UNMAP;
/// Whether a shared view longer than its file lengthens the file (Windows).
pub const SHARED_EXTENDS_FILE: bool = sys::CUT_NEEDS_UNMAP;

/// The system's page size.
pub fn page_size() -> usize {
    sys::page_size()
}

/// Map `len` bytes of `f`, shared, for reading (and writing, if
/// `writable`: `f` must then be open for writing).
pub fn map_shared(f: &File, len: usize, writable: bool) -> io::Result<*mut u8> {
    sys::map_shared(f, len, writable)
}

/// Map `len` bytes of private memory holding the first `file_len` bytes of
/// `f` (`file_len <= len`), then zeros.
pub fn map_private(f: &File, len: usize, file_len: usize) -> io::Result<*mut u8> {
    sys::map_private(f, len, file_len)
}

/// Grow the shared mapping of `f` at `addr` from `old_len` to `new_len`
/// bytes; returns its address (it may move). On failure the old mapping is
/// left as it was.
///
/// # Safety
/// `addr` and `old_len` must be a live shared mapping of `f` from
/// [`map_shared`] (with `writable`), not used past this call but through the
/// address returned.
pub unsafe fn grow_shared(f: &File, addr: *mut u8, old_len: usize, new_len: usize) -> io::Result<*mut u8> {
    // SAFETY: caller contract.
    unsafe { sys::grow_shared(f, addr, old_len, new_len) }
}

/// Grow the private mapping at `addr` from `old_len` to `new_len` bytes,
/// keeping what it holds (its first `file_len` bytes are the file's part,
/// the length of the file when it was mapped); returns its address.
///
/// # Safety
/// As for [`grow_shared`], for a mapping of [`map_private`].
pub unsafe fn grow_private(
    addr: *mut u8,
    old_len: usize,
    file_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    // SAFETY: caller contract.
    unsafe { sys::grow_private(addr, old_len, file_len, new_len) }
}

/// Write the first `len` bytes of the shared mapping at `addr` to its file
/// (not the file's metadata: sync the file for that).
///
/// # Safety
/// `addr` must be a live shared mapping of at least `len` bytes.
pub unsafe fn flush(addr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: caller contract.
    unsafe { sys::flush(addr, len) }
}

/// Tell the system that the `len` bytes at `pos` of the shared writable
/// mapping of `f` at `addr` were written. Where mappings are emulated (WASI:
/// memory the file was read into) they are written to the file now, so that
/// the file holds what the mapping does, as a mapping's would; elsewhere
/// there is nothing to do.
///
/// # Safety
/// `addr` must be a live shared mapping of `f` of at least `pos + len` bytes.
#[inline]
pub unsafe fn written(f: &File, addr: *const u8, pos: usize, len: usize) -> io::Result<()> {
    // SAFETY: caller contract.
    unsafe { sys::written(f, addr, pos, len) }
}

/// The file of the shared writable mapping at `addr` (`mapping_len` bytes)
/// was cut to `file_len` bytes. A mapping's bytes past the end of its file
/// read as zeros if the file grows again; where mappings are emulated (WASI)
/// they are zeroed now, elsewhere the system does it.
///
/// # Safety
/// `addr` must be a live shared mapping of `mapping_len` bytes.
#[inline]
pub unsafe fn cut(addr: *mut u8, mapping_len: usize, file_len: usize) {
    // SAFETY: caller contract.
    unsafe { sys::cut(addr, mapping_len, file_len) }
}

/// Unmap the mapping at `addr` of `len` bytes (`private`: one of
/// [`map_private`]).
///
/// # Safety
/// `addr` and `len` must be a live mapping, never used again.
pub unsafe fn unmap(addr: *mut u8, len: usize, private: bool) -> io::Result<()> {
    // SAFETY: caller contract.
    unsafe { sys::unmap(addr, len, private) }
}

/// `n` rounded up to a multiple of `page`.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) fn round_up(n: usize, page: usize) -> Option<usize> {
    n.checked_add(page - 1).map(|x| x / page * page)
}
