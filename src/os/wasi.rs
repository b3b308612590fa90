//! The WASI side of [`crate::os`] (`wasm32-wasip1`): one process, no
//! threads of its own unless the host gives them, files through the host's
//! preopened directories.
//!
//! What differs from unix, for callers:
//! - locks: WASI has none; a lock is always granted, so a frame is safe
//!   only while one process (one WebAssembly instance) uses it;
//! - no boot id (the journal checkpoints every change) and no fork;
//! - no memory mappings: a mapping is memory the file is read into. A
//!   shared writable one writes through to the file at each write
//!   (`super::map::written`), so the file and other handles of it (this
//!   instance's) see every write at once; what they write is not seen by a
//!   mapping made before, as it would be by a real one.

use super::Lock;
use std::alloc::Layout;
use std::ffi::CString;
use std::fs::File;
use std::io;
use std::os::fd::AsRawFd;

/// Paths separate with `/` only.
pub(super) const BACKSLASH_SEPARATES: bool = false;

pub(super) fn read_at(f: &File, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
    let pos = i64::try_from(pos).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a read into `buf`, at most its length, from an open descriptor.
    let n = unsafe { libc::pread(f.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len(), pos) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

pub(super) fn write_at(f: &File, pos: u64, data: &[u8]) -> io::Result<usize> {
    let pos = i64::try_from(pos).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))?;
    // SAFETY: a write of `data` to an open descriptor.
    let n = unsafe { libc::pwrite(f.as_raw_fd(), data.as_ptr().cast(), data.len(), pos) };
    usize::try_from(n).map_err(|_| io::Error::last_os_error())
}

pub(super) fn identity(f: &File) -> Option<(u64, u64)> {
    // SAFETY: a zeroed `stat` is a valid value to be filled.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat of an open descriptor into `st`.
    (unsafe { libc::fstat(f.as_raw_fd(), &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

pub(super) fn path_identity(path: &str) -> Option<(u64, u64)> {
    let c = CString::new(path).ok()?;
    // SAFETY: a zeroed `stat` is a valid value to be filled.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: a NUL-terminated path; `st` to fill.
    (unsafe { libc::stat(c.as_ptr(), &mut st) } == 0).then_some((st.st_dev, st.st_ino))
}

pub(super) fn open_for_sync(path: &std::path::Path) -> io::Result<File> {
    File::open(path)
}

/// `fd_sync` of the directory, where the host allows it (a host may refuse
/// syncs of directories; the entries are then as durable as it makes them).
pub(super) fn sync_dir(dir: &str) -> io::Result<()> {
    match File::open(dir)?.sync_all() {
        Err(e)
            if matches!(
                e.raw_os_error(),
                Some(libc::EBADF | libc::EINVAL | libc::ENOTSUP | libc::EISDIR)
            ) =>
        {
            Ok(())
        }
        r => r,
    }
}

/// WASI has no file locks: granted at once (one process at a time).
pub(super) fn lock(_f: &File, _at: u64, _kind: Lock, _wait: bool) -> io::Result<bool> {
    Ok(true)
}

pub(super) fn unlock(_f: &File, _at: u64) -> io::Result<()> {
    Ok(())
}

/// No boot id in WASI.
pub(super) fn boot_id() -> Option<[u8; 16]> {
    None
}

/// No processes to fork.
pub(super) fn watch_forks() {}

/// No CPU caches to read.
pub(super) fn cache_sizes() -> [Option<u64>; 3] {
    [None; 3]
}

// ---- memory "mappings" (see `super::map`): memory the file is read into

pub(super) const CUT_NEEDS_UNMAP: bool = false;

/// WebAssembly's page.
pub(super) fn page_size() -> usize {
    65536
}

fn layout(len: usize) -> io::Result<Layout> {
    if len == 0 {
        return Err(io::ErrorKind::InvalidInput.into());
    }
    Layout::from_size_align(len, 16).map_err(|_| io::ErrorKind::OutOfMemory.into())
}

/// `len` zeroed bytes with the first `file_len` bytes of `f` read in.
fn read_in(f: &File, len: usize, file_len: usize) -> io::Result<*mut u8> {
    let l = layout(len)?;
    // SAFETY: a layout of non-zero size.
    let p = unsafe { std::alloc::alloc_zeroed(l) };
    if p.is_null() {
        return Err(io::ErrorKind::OutOfMemory.into());
    }
    // SAFETY: `p` holds `len` >= `file_len` bytes, owned here.
    let dst = unsafe { std::slice::from_raw_parts_mut(p, file_len.min(len)) };
    match super::read_at(f, 0, dst) {
        Ok(_) => Ok(p),
        Err(e) => {
            // SAFETY: allocated above with `l`.
            unsafe { std::alloc::dealloc(p, l) };
            Err(e)
        }
    }
}

/// A shared mapping is the file read into memory; a writable one writes
/// through ([`written`]).
pub(super) fn map_shared(f: &File, len: usize, _writable: bool) -> io::Result<*mut u8> {
    let file_len = usize::try_from(super::file_len(f)?).unwrap_or(usize::MAX);
    read_in(f, len, file_len)
}

/// The written bytes go to the file now (write-through).
pub(super) unsafe fn written(f: &File, addr: *const u8, pos: usize, len: usize) -> io::Result<()> {
    // SAFETY: caller contract: `pos + len` bytes at `addr` are the live mapping's.
    let data = unsafe { std::slice::from_raw_parts(addr.add(pos), len) };
    super::write_all_at(f, pos as u64, data)
}

/// What the file lost reads as zeros if it grows again, as a mapping's pages do.
pub(super) unsafe fn cut(addr: *mut u8, mapping_len: usize, file_len: usize) {
    if file_len < mapping_len {
        // SAFETY: caller contract: `mapping_len` bytes at `addr` are the live mapping's.
        unsafe { addr.add(file_len).write_bytes(0, mapping_len - file_len) };
    }
}

pub(super) fn map_private(f: &File, len: usize, file_len: usize) -> io::Result<*mut u8> {
    read_in(f, len, file_len)
}

/// The memory grows; the file holds every write already.
pub(super) unsafe fn grow_shared(
    _f: &File,
    addr: *mut u8,
    old_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    // SAFETY: caller contract, as for `grow_private`.
    unsafe { grow_private(addr, old_len, 0, new_len) }
}

pub(super) unsafe fn grow_private(
    addr: *mut u8,
    old_len: usize,
    _file_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    let old = layout(old_len)?;
    layout(new_len)?;
    // SAFETY: caller contract: `addr` was allocated here with `old_len` bytes;
    // the bytes past `old_len` are zeroed as a mapping's are.
    unsafe {
        let p = std::alloc::realloc(addr, old, new_len);
        if p.is_null() {
            return Err(io::ErrorKind::OutOfMemory.into());
        }
        if new_len > old_len {
            p.add(old_len).write_bytes(0, new_len - old_len);
        }
        Ok(p)
    }
}

/// Nothing to write: a writable mapping's writes went to the file as made.
pub(super) unsafe fn flush(_addr: *mut u8, _len: usize) -> io::Result<()> {
    Ok(())
}

pub(super) unsafe fn unmap(addr: *mut u8, len: usize, _private: bool) -> io::Result<()> {
    // SAFETY: caller contract: allocated here with `len` bytes.
    unsafe { std::alloc::dealloc(addr, layout(len)?) };
    Ok(())
}

pub(super) fn file_len(f: &File) -> io::Result<u64> {
    f.metadata().map(|m| m.len())
}

pub(super) fn remove_file(path: &std::path::Path) -> io::Result<()> {
    std::fs::remove_file(path)
}

/// wasmtime refuses to remove a directory named with a trailing `/` (EINVAL)
/// where POSIX removes it: the name without them.
pub(super) fn remove_dir_all(path: &str) -> io::Result<()> {
    let trimmed = path.trim_end_matches('/');
    std::fs::remove_dir_all(if trimmed.is_empty() { path } else { trimmed })
}

/// WASI has no process ids: a number drawn once per instance (from the
/// host's random source), so that scratch names of two instances differ.
pub(super) fn process_id() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    use std::sync::atomic::{AtomicU32, Ordering};
    static ID: AtomicU32 = AtomicU32::new(0);
    let id = ID.load(Ordering::Relaxed);
    if id != 0 {
        return id;
    }
    let drawn = (std::collections::hash_map::RandomState::new().build_hasher().finish() as u32).max(1);
    match ID.compare_exchange(0, drawn, Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => drawn,
        Err(first) => first,
    }
}

/// `TMPDIR`, else `/tmp` (std's `temp_dir` has no answer on WASI).
pub(super) fn temp_dir() -> std::path::PathBuf {
    std::env::var_os("TMPDIR").map_or_else(|| "/tmp".into(), Into::into)
}

pub(super) const HANDLES_PIN_NAMES: bool = false;

pub(super) struct SysPath(String);

impl SysPath {
    pub(super) fn new(path: &str) -> io::Result<SysPath> {
        Ok(SysPath(path.to_string()))
    }

    pub(super) fn open(&self, write: bool) -> io::Result<File> {
        File::options().read(true).write(write).open(&self.0)
    }
}

/// lz4-sys 1.11 compiles LZ4 for WASI against its "wasm shim" headers
/// (LZ4's `malloc`, `calloc`, `free` and `mem*` renamed
/// `rust_lz4_wasm_shim_*`) but defines the shim's functions only for the
/// other WebAssembly targets (its `lib.rs` leaves WASI out). They are here,
/// over wasi-libc's own.
mod lz4_shim {
    use libc::{c_int, c_void, size_t};

    #[no_mangle]
    extern "C" fn rust_lz4_wasm_shim_malloc(size: size_t) -> *mut c_void {
        // SAFETY: C's malloc.
        unsafe { libc::malloc(size) }
    }

    #[no_mangle]
    extern "C" fn rust_lz4_wasm_shim_calloc(nmemb: size_t, size: size_t) -> *mut c_void {
        // SAFETY: C's calloc.
        unsafe { libc::calloc(nmemb, size) }
    }

    #[no_mangle]
    unsafe extern "C" fn rust_lz4_wasm_shim_free(ptr: *mut c_void) {
        // SAFETY: LZ4 frees what the two above gave it.
        unsafe { libc::free(ptr) }
    }

    #[no_mangle]
    unsafe extern "C" fn rust_lz4_wasm_shim_memcmp(a: *const c_void, b: *const c_void, n: size_t) -> c_int {
        // SAFETY: LZ4 passes `n` readable bytes at each.
        unsafe { libc::memcmp(a, b, n) }
    }

    #[no_mangle]
    unsafe extern "C" fn rust_lz4_wasm_shim_memcpy(
        dest: *mut c_void,
        src: *const c_void,
        n: size_t,
    ) -> *mut c_void {
        // SAFETY: LZ4 passes `n` bytes at each, not overlapping.
        unsafe { libc::memcpy(dest, src, n) }
    }

    #[no_mangle]
    unsafe extern "C" fn rust_lz4_wasm_shim_memmove(
        dest: *mut c_void,
        src: *const c_void,
        n: size_t,
    ) -> *mut c_void {
        // SAFETY: LZ4 passes `n` bytes at each.
        unsafe { libc::memmove(dest, src, n) }
    }

    #[no_mangle]
    unsafe extern "C" fn rust_lz4_wasm_shim_memset(dest: *mut c_void, c: c_int, n: size_t) -> *mut c_void {
        // SAFETY: LZ4 passes `n` writable bytes.
        unsafe { libc::memset(dest, c, n) }
    }
}
