//! The memory-mapped I/O backend of `blosc2/blosc2-stdio.h`
//! (`blosc2_stdio_mmap_*`), whose state is the caller's `blosc2_stdio_mmap`.

use super::byte_count;
use super::types::*;
use crate::capi::ffi::guard;
use libc::{c_char, c_int, c_void, off_t};
use std::ffi::CStr;
use std::ptr;

/// One past the last byte of a transfer of `n` bytes at `position`.
fn end_of(position: i64, n: usize) -> Option<usize> {
    if position < 0 {
        return None;
    }
    let end = position.checked_add(i64::try_from(n).ok()?)?;
    usize::try_from(end).ok()
}

/// The state of a memory-mapped stream, or `None` for NULL.
///
/// # Safety
/// `stream` must be NULL or point to a `blosc2_stdio_mmap` not otherwise borrowed.
unsafe fn mmap_state<'a>(stream: *mut c_void) -> Option<&'a mut blosc2_stdio_mmap> {
    // SAFETY: caller contract.
    unsafe { stream.cast::<blosc2_stdio_mmap>().as_mut() }
}

fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

fn round_up(n: usize, page: usize) -> Option<usize> {
    n.checked_add(page - 1).map(|x| x / page * page)
}

/// The bytes of the file mapped at the start of a copy-on-write mapping
/// (whole pages), or `None` when the file cannot be inspected.
fn file_pages(fd: c_int) -> Option<usize> {
    // SAFETY: `stat` is plain data, filled in by fstat.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: `st` is a valid out-pointer.
    if unsafe { libc::fstat(fd, &mut st) } < 0 {
        return None;
    }
    round_up(usize::try_from(st.st_size).ok()?, page_size())
}

/// Map `len` bytes of copy-on-write memory over the file `fd`: the file's
/// pages first, then anonymous zero pages, so that writes past the end of
/// the file land in memory instead of faulting (SIGBUS).
///
/// # Safety
/// `fd` must be an open, mappable descriptor.
unsafe fn map_copy_on_write(fd: c_int, len: usize, file_len: usize) -> *mut c_void {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a fresh anonymous mapping.
    let base = unsafe { libc::mmap(ptr::null_mut(), len, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0) };
    if base == libc::MAP_FAILED || file_len == 0 {
        return base;
    }
    // SAFETY: the file pages replace the start of the reservation made above
    // (file_len <= len, so its rounding up stays inside it).
    let at = unsafe { libc::mmap(base, file_len, prot, libc::MAP_PRIVATE | libc::MAP_FIXED, fd, 0) };
    if at == libc::MAP_FAILED {
        // SAFETY: `base` was mapped above with `len` bytes.
        unsafe { libc::munmap(base, len) };
    }
    at
}

/// Move the pages of a copy-on-write mapping (file part, then anonymous
/// part) to a new, larger anonymous reservation; the written pages move
/// along without copying.
///
/// # Safety
/// `m` must describe a live copy-on-write mapping made by `map_copy_on_write`.
unsafe fn grow_copy_on_write(m: &mut blosc2_stdio_mmap, new_len: usize) -> bool {
    let page = page_size();
    let Some(old_len) = round_up(m.mapping_size, page) else { return false };
    let Some(file_len) = file_pages(m.fd) else { return false };
    if file_len > old_len {
        return false;
    }
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
    let old = m.addr.cast::<c_void>();
    // SAFETY: a fresh anonymous reservation; the moves below target it only,
    // and the moved ranges are the old mapping's parts.
    unsafe {
        let new = libc::mmap(ptr::null_mut(), new_len, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0);
        if new == libc::MAP_FAILED {
            return false;
        }
        if file_len > 0 && libc::mremap(old, file_len, file_len, flags, new) == libc::MAP_FAILED {
            libc::munmap(new, new_len);
            return false;
        }
        let tail = old_len - file_len;
        if tail > 0 {
            let from = old.cast::<u8>().add(file_len).cast::<c_void>();
            let to = new.cast::<u8>().add(file_len).cast::<c_void>();
            if libc::mremap(from, tail, tail, flags, to) == libc::MAP_FAILED {
                if file_len > 0 {
                    // Put the file part back where it was.
                    libc::mremap(new, file_len, file_len, flags, old);
                }
                libc::munmap(new, new_len);
                return false;
            }
        }
        m.addr = new.cast();
    }
    m.mapping_size = new_len;
    true
}

/// Grow the mapping of `m` to `new_len` bytes (the address may change).
///
/// # Safety
/// `m` must describe a live mapping made by `blosc2_stdio_mmap_open`.
unsafe fn grow_mapping(m: &mut blosc2_stdio_mmap, new_len: usize) -> bool {
    if m.is_memory_only {
        // SAFETY: caller contract.
        return unsafe { grow_copy_on_write(m, new_len) };
    }
    // SAFETY: `addr`/`mapping_size` describe a live shared mapping.
    let new = unsafe { libc::mremap(m.addr.cast(), m.mapping_size, new_len, libc::MREMAP_MAYMOVE) };
    if new == libc::MAP_FAILED {
        return false;
    }
    m.addr = new.cast();
    m.mapping_size = new_len;
    true
}

/// Open (memory-map) `urlpath` with the mode and initial mapping size held
/// in `params`, a `blosc2_stdio_mmap` (the `mode` argument is not used).
/// Opening again with the same `params` returns the same stream when the path
/// is the same and NULL otherwise. Returns `params`, or NULL on failure.
///
/// # Safety
/// `urlpath` must be NULL or a NUL-terminated string; `params` must be NULL
/// or point to a `blosc2_stdio_mmap` (initialized from
/// `BLOSC2_STDIO_MMAP_DEFAULTS`) that outlives the stream.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_open(urlpath: *const c_char, mode: *const c_char, params: *mut c_void) -> *mut c_void {
    let _ = mode;
    guard(ptr::null_mut(), || {
        if urlpath.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: caller contract.
        let Some(m) = (unsafe { mmap_state(params) }) else { return ptr::null_mut() };
        // SAFETY: NUL-terminated (caller contract).
        let path = unsafe { CStr::from_ptr(urlpath) };
        if !m.addr.is_null() {
            // Mapped already: only the same path may reopen it.
            // SAFETY: a non-NULL urlpath was copied by a previous open.
            if m.urlpath.is_null() || unsafe { CStr::from_ptr(m.urlpath) } != path {
                return ptr::null_mut();
            }
            return params;
        }
        if m.mode.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: the mode is a NUL-terminated string (caller contract).
        let wanted = unsafe { CStr::from_ptr(m.mode) }.to_bytes();
        let rw = libc::PROT_READ | libc::PROT_WRITE;
        let (access, map_flags, memory_only, open_mode, use_initial) = match wanted {
            b"r" => (libc::PROT_READ, libc::MAP_SHARED, false, c"rb", false),
            b"r+" => (rw, libc::MAP_SHARED, false, c"rb+", true),
            b"w+" => (rw, libc::MAP_SHARED, false, c"wb+", true),
            b"c" => (rw, libc::MAP_PRIVATE, true, c"rb", true),
            _ => return ptr::null_mut(),
        };

        // Keep a copy of the path: later opens must name the same file.
        let bytes = path.to_bytes_with_nul();
        // SAFETY: plain allocation, released by `blosc2_stdio_mmap_destroy`.
        let copy = unsafe { libc::malloc(bytes.len()) }.cast::<c_char>();
        if copy.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: `copy` has room for the path and its NUL.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), copy, bytes.len()) };
        m.urlpath = copy;
        m.access_flags = i64::from(access);
        m.map_flags = i64::from(map_flags);
        m.is_memory_only = memory_only;

        // Undo the open on failure.
        let fail = |m: &mut blosc2_stdio_mmap| -> *mut c_void {
            // SAFETY: `file` (when set) was opened and `urlpath` malloc'd by this call.
            unsafe {
                if !m.file.is_null() {
                    libc::fclose(m.file);
                }
                libc::free(m.urlpath.cast());
            }
            m.file = ptr::null_mut();
            m.urlpath = ptr::null_mut();
            m.addr = ptr::null_mut();
            ptr::null_mut()
        };

        // SAFETY: both strings are NUL-terminated.
        m.file = unsafe { libc::fopen(urlpath, open_mode.as_ptr()) };
        if m.file.is_null() {
            return fail(m);
        }
        // SAFETY: `m.file` is open.
        let file_size = unsafe {
            if libc::fseeko(m.file, 0, libc::SEEK_END) != 0 {
                return fail(m);
            }
            let end = libc::ftello(m.file);
            if end < 0 || libc::fseeko(m.file, 0, libc::SEEK_SET) != 0 {
                return fail(m);
            }
            end
        };
        let Ok(file_size) = usize::try_from(file_size) else { return fail(m) };
        m.file_size = file_size;

        // The mapping doubles as a write buffer in the writable modes; it is never empty.
        m.mapping_size = if use_initial { m.initial_mapping_size } else { file_size };
        m.mapping_size = m.mapping_size.max(file_size).max(1);

        // SAFETY: `m.file` is open.
        m.fd = unsafe { libc::fileno(m.file) };
        // SAFETY: `fd` is open with an access compatible with the protection.
        let addr = unsafe {
            if memory_only {
                map_copy_on_write(m.fd, m.mapping_size, file_size)
            } else {
                libc::mmap(ptr::null_mut(), m.mapping_size, access, map_flags, m.fd, 0)
            }
        };
        if addr == libc::MAP_FAILED {
            return fail(m);
        }
        m.addr = addr.cast();
        // The mode string belongs to the caller and may not outlive this call.
        m.mode = ptr::null();
        params
    })
}

/// Close a memory-mapped stream: a no-op, the mapping lives until
/// `blosc2_stdio_mmap_destroy`. Returns 0.
///
/// # Safety
/// None: `stream` is not dereferenced.
#[no_mangle]
pub extern "C" fn blosc2_stdio_mmap_close(stream: *mut c_void) -> c_int {
    let _ = stream;
    guard(0, || 0)
}

/// The logical size of a memory-mapped file, or -1 for a NULL stream.
///
/// # Safety
/// `stream` must be NULL or a stream of `blosc2_stdio_mmap_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_size(stream: *mut c_void) -> i64 {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(m) = (unsafe { mmap_state(stream) }) else { return -1 };
        i64::try_from(m.file_size).unwrap_or(i64::MAX)
    })
}

/// Write `nitems` items of `size` bytes from `ptr` at byte `position` of a
/// memory-mapped file, growing the file (except in mode "c") and the mapping
/// as needed. Returns `nitems`, or 0 on failure or for an empty write.
///
/// # Safety
/// `ptr` must hold `size * nitems` readable bytes; `stream` must be NULL or a
/// stream of `blosc2_stdio_mmap_open`. Pointers returned by earlier reads may
/// dangle once the mapping grows.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_write(
    ptr: *const c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        if ptr.is_null() {
            return 0;
        }
        // SAFETY: caller contract.
        let Some(m) = (unsafe { mmap_state(stream) }) else { return 0 };
        let Some(n) = byte_count(size, nitems) else { return 0 };
        let Some(end) = end_of(position, n) else { return 0 };
        if n == 0 {
            return 0;
        }
        if m.addr.is_null() || m.access_flags & i64::from(libc::PROT_WRITE) == 0 {
            return 0;
        }
        let old_size = m.file_size;
        let new_size = end.max(old_size);
        let extend_file = new_size > old_size && !m.is_memory_only;
        if extend_file {
            let Ok(length) = off_t::try_from(new_size) else { return 0 };
            // SAFETY: `fd` is the open descriptor of the mapping.
            if unsafe { libc::ftruncate(m.fd, length) } < 0 {
                return 0;
            }
        }
        if m.mapping_size < new_size {
            let new_len = new_size.checked_mul(2).unwrap_or(new_size);
            // SAFETY: `m` describes a live mapping.
            if !unsafe { grow_mapping(m, new_len) } {
                if extend_file {
                    // SAFETY: as above; restores the previous length.
                    unsafe { libc::ftruncate(m.fd, old_size as off_t) };
                }
                return 0;
            }
        }
        m.file_size = new_size;
        // SAFETY: `position + n <= file_size <= mapping_size`; `ptr` holds `n` bytes.
        unsafe { ptr::copy(ptr.cast::<u8>(), m.addr.cast::<u8>().add(position as usize), n) };
        nitems
    })
}

/// "Read" `nitems` items of `size` bytes at byte `position` of a
/// memory-mapped file: `*ptr` is set to point into the mapping (no copy).
/// Returns `nitems`; reads past the end of the file or with invalid
/// arguments set `*ptr` to NULL and return 0.
///
/// # Safety
/// `ptr` must be NULL or a valid pointer to a pointer; `stream` must be NULL
/// or a stream of `blosc2_stdio_mmap_open`. The pointer stored in `*ptr`
/// stays valid until the mapping grows or is destroyed.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_read(
    ptr: *mut *mut c_void,
    size: i64,
    nitems: i64,
    position: i64,
    stream: *mut c_void,
) -> i64 {
    guard(0, || {
        if ptr.is_null() {
            return 0;
        }
        // SAFETY: caller contract.
        let m = unsafe { mmap_state(stream) };
        let target = match (m, byte_count(size, nitems).and_then(|n| end_of(position, n))) {
            (Some(m), Some(end)) if !m.addr.is_null() && end <= m.file_size && end <= m.mapping_size => {
                // SAFETY: `position <= end <= mapping_size`.
                Some(unsafe { m.addr.add(position as usize) })
            }
            _ => None,
        };
        // SAFETY: `ptr` is valid for a write (caller contract).
        unsafe { *ptr = target.unwrap_or(ptr::null_mut()).cast() };
        if target.is_some() {
            nitems
        } else {
            0
        }
    })
}

/// Set the size of a memory-mapped file to `size` bytes (the file on disk
/// too, except in mode "c"). Returns 0, or -1 on failure.
///
/// # Safety
/// `stream` must be NULL or a stream of `blosc2_stdio_mmap_open`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_truncate(stream: *mut c_void, size: i64) -> c_int {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(m) = (unsafe { mmap_state(stream) }) else { return -1 };
        let Ok(target) = usize::try_from(size) else { return -1 };
        if m.file_size == target {
            return 0;
        }
        if !m.is_memory_only {
            // SAFETY: `fd` is the open descriptor of the mapping.
            let rc = unsafe { libc::ftruncate(m.fd, size as off_t) };
            if rc < 0 {
                return rc;
            }
        }
        // Keep the whole file readable through the mapping.
        // SAFETY: `m` describes a live mapping.
        if target > m.mapping_size && !m.addr.is_null() && !unsafe { grow_mapping(m, target) } {
            if !m.is_memory_only {
                // SAFETY: as above; restores the previous length.
                unsafe { libc::ftruncate(m.fd, m.file_size as off_t) };
            }
            return -1;
        }
        m.file_size = target;
        0
    })
}

/// Unmap and close a memory-mapped file (flushing modified pages to disk
/// except in mode "c"), free its path, and free `params` itself when its
/// `needs_free` is set. Returns 0, or -1 on failure or when nothing was
/// mapped (the state is released all the same).
///
/// # Safety
/// `params` must be NULL or point to a `blosc2_stdio_mmap` (opened or not);
/// when `needs_free` is set it must have been allocated with `malloc`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_stdio_mmap_destroy(params: *mut c_void) -> c_int {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(m) = (unsafe { mmap_state(params) }) else { return -1 };
        let mut err = 0;
        if m.addr.is_null() || m.file.is_null() {
            err = -1;
        }
        if !m.addr.is_null() {
            let dirty = m.access_flags & i64::from(libc::PROT_WRITE) != 0 && !m.is_memory_only;
            // SAFETY: `addr`/`mapping_size` describe the live mapping, released once.
            unsafe {
                if dirty && !m.file.is_null() && libc::msync(m.addr.cast(), m.file_size, libc::MS_SYNC) < 0 {
                    err = -1;
                }
                if libc::munmap(m.addr.cast(), m.mapping_size) < 0 {
                    err = -1;
                }
            }
        }
        // SAFETY: `file` was opened and `urlpath` malloc'd by open; both are released once.
        unsafe {
            if !m.file.is_null() && libc::fclose(m.file) < 0 {
                err = -1;
            }
            libc::free(m.urlpath.cast());
        }
        m.file = ptr::null_mut();
        m.addr = ptr::null_mut();
        m.urlpath = ptr::null_mut();
        if m.needs_free {
            // SAFETY: the caller allocated `params` with malloc (needs_free).
            unsafe { libc::free(params) };
        }
        err
    })
}
