//! The memory-mapped I/O backend of `blosc2/blosc2-stdio.h`
//! (`blosc2_stdio_mmap_*`): conversions to the core's [`MmapFile`], whose
//! parts live in the caller's `blosc2_stdio_mmap` between calls, as
//! c-blosc2 keeps its state there. The mapping's logic (modes, initial size,
//! growth, flushing) is the core's; here are c-blosc2's conventions: the
//! mode string in the parameters, a malloc'd copy of the path, a `FILE*` in
//! `file`, `needs_free`, and pointers into the mapping for reads.

use super::byte_count;
use super::types::*;
use crate::ffi::guard;
use crate::os::{c_char, c_int, c_void};
use crate::os::{MAP_PRIVATE, MAP_SHARED, PROT_READ, PROT_WRITE};
use b2nd::io::{MmapFile, MmapMode, RawMmap};
use std::ffi::CStr;
use std::mem::ManuallyDrop;
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

/// The parts of the open file that `m` describes (`m.addr` is not NULL).
fn raw_parts(m: &blosc2_stdio_mmap) -> RawMmap {
    let mode = if m.is_memory_only {
        MmapMode::CopyOnWrite
    } else if m.access_flags & i64::from(PROT_WRITE) != 0 {
        MmapMode::Update
    } else {
        MmapMode::Read
    };
    RawMmap {
        fd: crate::os::raw_of_c_fd(m.fd),
        addr: m.addr.cast(),
        mapping_size: m.mapping_size,
        file_size: m.file_size,
        mode,
    }
}

/// Keep the parts of an open file in `m`.
fn store(m: &mut blosc2_stdio_mmap, raw: RawMmap) {
    m.fd = crate::os::c_fd_of(raw.fd);
    m.addr = raw.addr.cast();
    m.mapping_size = raw.mapping_size;
    m.file_size = raw.file_size;
}

/// Run `op` on the file `m` has open, then keep its new state in `m`;
/// `None` when `m` maps nothing.
///
/// # Safety
/// `m` must map nothing (`addr` NULL) or hold the state that
/// `blosc2_stdio_mmap_open` and the calls since left there.
unsafe fn with_open<R>(m: &mut blosc2_stdio_mmap, op: impl FnOnce(&mut MmapFile) -> R) -> Option<R> {
    if m.addr.is_null() {
        return None;
    }
    // SAFETY: caller contract: the parts of an open file, taken back for this
    // call only (ManuallyDrop: the file stays open if `op` panics).
    let mut file = ManuallyDrop::new(unsafe { MmapFile::from_raw(raw_parts(m)) });
    let r = op(&mut file);
    store(m, ManuallyDrop::into_inner(file).into_raw());
    Some(r)
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
pub unsafe extern "C" fn blosc2_stdio_mmap_open(
    urlpath: *const c_char,
    mode: *const c_char,
    params: *mut c_void,
) -> *mut c_void {
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
        let wanted = unsafe { CStr::from_ptr(m.mode) }.to_str().ok().and_then(|s| s.parse::<MmapMode>().ok());
        let Some(wanted) = wanted else { return ptr::null_mut() };

        // Keep a copy of the path: later opens must name the same file.
        let bytes = path.to_bytes_with_nul();
        // SAFETY: plain allocation, released by `blosc2_stdio_mmap_destroy`.
        let copy = unsafe { crate::os::malloc(bytes.len()) }.cast::<c_char>();
        if copy.is_null() {
            return ptr::null_mut();
        }
        // SAFETY: `copy` has room for the path and its NUL.
        unsafe { ptr::copy_nonoverlapping(bytes.as_ptr().cast::<c_char>(), copy, bytes.len()) };
        m.urlpath = copy;
        m.access_flags = i64::from(if wanted.writable() { PROT_READ | PROT_WRITE } else { PROT_READ });
        m.map_flags = i64::from(if wanted == MmapMode::CopyOnWrite { MAP_PRIVATE } else { MAP_SHARED });
        m.is_memory_only = wanted == MmapMode::CopyOnWrite;

        // Undo the open on failure.
        let fail = |m: &mut blosc2_stdio_mmap| -> *mut c_void {
            // SAFETY: `urlpath` was malloc'd by this call.
            unsafe { crate::os::free(m.urlpath.cast()) };
            m.file = ptr::null_mut();
            m.urlpath = ptr::null_mut();
            m.addr = ptr::null_mut();
            ptr::null_mut()
        };
        let Some(os_path) = crate::os::path_from_c(path.to_bytes()) else { return fail(m) };
        let Ok(opened) = MmapFile::open(os_path, wanted, m.initial_mapping_size) else {
            return fail(m);
        };
        let file = crate::os::stream_on(
            opened.raw_file(),
            path,
            matches!(wanted, MmapMode::Update | MmapMode::Create),
        );
        if file.is_null() {
            return fail(m); // `opened` is unmapped and closed
        }
        m.file = file;
        store(m, opened.into_raw());
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
        if end_of(position, n).is_none() || n == 0 {
            return 0;
        }
        // SAFETY: `m` is the stream's state; `ptr` holds `n` readable bytes (caller contract).
        match unsafe { with_open(m, |f| f.write_raw(position as usize, ptr.cast(), n)) } {
            Some(Ok(())) => nitems,
            _ => 0,
        }
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
        let n = byte_count(size, nitems).filter(|&n| end_of(position, n).is_some());
        // SAFETY: caller contract.
        let target = match (unsafe { mmap_state(stream) }, n) {
            // SAFETY: `m` is the stream's state.
            (Some(m), Some(n)) => unsafe { with_open(m, |f| f.ptr_at(position as usize, n)) }.flatten(),
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
        // SAFETY: `m` is the stream's state.
        match unsafe { with_open(m, |f| f.set_len(target)) } {
            Some(Ok(())) => 0,
            Some(Err(_)) => -1,
            // Nothing mapped: only the size it has already is right.
            None if m.file_size == target => 0,
            None => -1,
        }
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
            // SAFETY: the parts of the file `blosc2_stdio_mmap_open` opened, taken back once.
            let file = unsafe { MmapFile::from_raw(raw_parts(m)) };
            if file.close().is_err() {
                err = -1;
            }
        }
        // SAFETY: `file` was fdopen'ed and `urlpath` malloc'd by open; both are released once.
        unsafe {
            if !m.file.is_null() && crate::os::fclose(m.file) < 0 {
                err = -1;
            }
            crate::os::free(m.urlpath.cast());
        }
        m.file = ptr::null_mut();
        m.addr = ptr::null_mut();
        m.urlpath = ptr::null_mut();
        if m.needs_free {
            // SAFETY: the caller allocated `params` with malloc (needs_free).
            unsafe { crate::os::free(params) };
        }
        err
    })
}
