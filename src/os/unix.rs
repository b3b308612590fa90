//! The unix side of [`crate::os`]: Linux, and macOS where marked (what
//! differs on other unix systems is marked too).

use super::Lock;
use std::fs::File;
use std::io;
use std::os::unix::fs::{FileExt, MetadataExt};
use std::os::unix::io::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicU8, Ordering};

/// Paths separate with `/` only.
pub(super) const BACKSLASH_SEPARATES: bool = false;

pub(super) fn read_at(f: &File, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
    f.read_at(buf, pos)
}

pub(super) fn write_at(f: &File, pos: u64, data: &[u8]) -> io::Result<usize> {
    f.write_at(data, pos)
}

pub(super) fn identity(f: &File) -> Option<(u64, u64)> {
    f.metadata().ok().map(|m| (m.dev(), m.ino()))
}

pub(super) fn path_identity(path: &str) -> Option<(u64, u64)> {
    std::fs::metadata(path).ok().map(|m| (m.dev(), m.ino()))
}

/// A file opened so that it can be synced: read-only is enough.
pub(super) fn open_for_sync(path: &std::path::Path) -> io::Result<File> {
    File::open(path)
}

/// `fsync` of the directory.
#[cfg(not(target_vendor = "apple"))]
pub(super) fn sync_dir(dir: &str) -> io::Result<()> {
    File::open(dir)?.sync_all()
}

/// macOS: `fsync` of the directory, then `F_FULLFSYNC` (which also flushes
/// the drive's cache, as std's `sync_data` does for files) where the file
/// system takes it on a directory; where it does not, the `fsync` stands, as
/// SQLite syncs its directories there.
#[cfg(target_vendor = "apple")]
pub(super) fn sync_dir(dir: &str) -> io::Result<()> {
    let d = File::open(dir)?;
    // SAFETY: fsync and fcntl on an open descriptor.
    if unsafe { libc::fsync(d.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: as above.
    if unsafe { libc::fcntl(d.as_raw_fd(), libc::F_FULLFSYNC) } == -1 {
        let e = io::Error::last_os_error();
        if !matches!(e.raw_os_error(), Some(libc::ENOTSUP | libc::EINVAL | libc::ENOTTY)) {
            return Err(e);
        }
    }
    Ok(())
}

/// `flock` of the whole file (`at` is for Windows, whose locks are of byte
/// ranges): the lock c-blosc2 takes, shared with it.
pub(super) fn lock(f: &File, _at: u64, kind: Lock, wait: bool) -> io::Result<bool> {
    let op = match kind {
        Lock::Shared => libc::LOCK_SH,
        Lock::Exclusive => libc::LOCK_EX,
    } | if wait { 0 } else { libc::LOCK_NB };
    // SAFETY: flock on an open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), op) } == 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if !wait && e.kind() == io::ErrorKind::WouldBlock {
        return Ok(false);
    }
    Err(e)
}

pub(super) fn unlock(f: &File, _at: u64) -> io::Result<()> {
    // SAFETY: flock on an open descriptor.
    if unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_UN) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Linux: `/proc/sys/kernel/random/boot_id`; macOS: `kern.bootsessionuuid`
/// (other systems: none, so the journal checkpoints every change). Cached
/// without a lock (a forked child never waits for a thread it does not have).
pub(super) fn boot_id() -> Option<[u8; 16]> {
    static STATE: AtomicU8 = AtomicU8::new(0); // 0: not read yet, 1: none, 2: ID
    static ID: [AtomicU64; 2] = [AtomicU64::new(0), AtomicU64::new(0)];
    match STATE.load(Ordering::Acquire) {
        1 => return None,
        2 => {
            let [a, b] = ID.each_ref().map(|w| w.load(Ordering::Relaxed).to_be_bytes());
            let mut id = [0u8; 16];
            id[..8].copy_from_slice(&a);
            id[8..].copy_from_slice(&b);
            return Some(id);
        }
        _ => {}
    }
    let id = boot_id_text().and_then(|t| uuid_bytes(&t));
    if let Some(id) = id {
        for (w, half) in ID.iter().zip(id.chunks_exact(8)) {
            w.store(u64::from_be_bytes(half.try_into().unwrap_or_default()), Ordering::Relaxed);
        }
    }
    STATE.store(if id.is_some() { 2 } else { 1 }, Ordering::Release);
    id
}

#[cfg(any(target_os = "linux", target_os = "android"))]
fn boot_id_text() -> Option<String> {
    std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()
}

/// A UUID that changes at each boot (the kernel makes it at startup).
#[cfg(target_vendor = "apple")]
fn boot_id_text() -> Option<String> {
    let mut buf = [0u8; 64];
    let n = sysctl(c"kern.bootsessionuuid", &mut buf)?;
    let text = buf[..n].split(|&b| b == 0).next()?;
    String::from_utf8(text.to_vec()).ok()
}

#[cfg(not(any(target_os = "linux", target_os = "android", target_vendor = "apple")))]
fn boot_id_text() -> Option<String> {
    None
}

/// The 16 bytes of a UUID written as 32 hex digits (dashes and spaces between them ignored).
fn uuid_bytes(text: &str) -> Option<[u8; 16]> {
    let mut id = [0u8; 16];
    let mut digits = text.bytes().filter(|b| !matches!(b, b'-' | b' ' | b'\n'));
    for byte in &mut id {
        let hi = (digits.next()? as char).to_digit(16)?;
        let lo = (digits.next()? as char).to_digit(16)?;
        *byte = (hi * 16 + lo) as u8;
    }
    digits.next().is_none().then_some(id)
}

/// `sysctlbyname(name)` into `buf`: the length of the value, `None` when the
/// name is unknown or the value longer than `buf`.
#[cfg(target_vendor = "apple")]
fn sysctl(name: &std::ffi::CStr, buf: &mut [u8]) -> Option<usize> {
    let mut len = buf.len();
    // SAFETY: a NUL-terminated name, an output buffer of `len` bytes, no new value.
    let r = unsafe {
        libc::sysctlbyname(name.as_ptr(), buf.as_mut_ptr().cast(), &mut len, std::ptr::null_mut(), 0)
    };
    (r == 0 && len <= buf.len()).then_some(len)
}

/// The data caches as python-blosc2 reads them on Linux: the `size` of
/// cpu0's cache indexes 0, 2 and 3 in sysfs (`48K`).
#[cfg(not(target_vendor = "apple"))]
pub(super) fn cache_sizes() -> [Option<u64>; 3] {
    [0, 2, 3].map(|index| {
        let text =
            std::fs::read_to_string(format!("/sys/devices/system/cpu/cpu0/cache/index{index}/size")).ok()?;
        let t = text.strip_suffix('\n')?;
        let (num, unit) = t.split_at(t.len().checked_sub(1)?);
        let mult: u64 = match unit {
            "K" => 1 << 10,
            "M" => 1 << 20,
            "G" => 1 << 30,
            _ => return None,
        };
        num.parse::<u64>().ok()?.checked_mul(mult)
    })
}

/// The data caches as python-blosc2 reads them on macOS: those of the
/// performance cores (`hw.perflevel0.*`; unknown on Intel Macs, whose
/// sizes then stay python-blosc2's defaults).
#[cfg(target_vendor = "apple")]
pub(super) fn cache_sizes() -> [Option<u64>; 3] {
    [c"hw.perflevel0.l1dcachesize", c"hw.perflevel0.l2cachesize", c"hw.perflevel0.l3cachesize"].map(|name| {
        let mut buf = [0u8; 8];
        let size = match sysctl(name, &mut buf)? {
            4 => u64::from(u32::from_ne_bytes(buf[..4].try_into().ok()?)),
            8 => u64::from_ne_bytes(buf),
            _ => return None,
        };
        (size > 0).then_some(size)
    })
}

/// Register the fork handler, once (see [`super::process`]). No lock and no
/// `Once`: a fork while another thread registers must not leave the child
/// waiting for a thread it does not have.
pub(super) fn watch_forks() {
    static WATCHING: AtomicBool = AtomicBool::new(false);
    if !WATCHING.load(Ordering::Acquire)
        && WATCHING.compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire).is_ok()
    {
        // SAFETY: registers a handler that only bumps an atomic.
        // (Emscripten has no fork, and no pthread_atfork.)
        #[cfg(not(target_os = "emscripten"))]
        unsafe {
            libc::pthread_atfork(None, None, Some(super::process::forked_child))
        };
    }
}

// ---- memory mappings (see `super::map`)

pub(super) const CUT_NEEDS_UNMAP: bool = false;

pub(super) fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    usize::try_from(page).ok().filter(|&p| p > 0).unwrap_or(4096)
}

fn mapped(addr: *mut libc::c_void) -> io::Result<*mut u8> {
    if addr == libc::MAP_FAILED {
        Err(io::Error::last_os_error())
    } else {
        Ok(addr.cast())
    }
}

pub(super) fn map_shared(f: &File, len: usize, writable: bool) -> io::Result<*mut u8> {
    let prot = if writable { libc::PROT_READ | libc::PROT_WRITE } else { libc::PROT_READ };
    // SAFETY: a new shared mapping of an open descriptor, whose access allows `prot`.
    mapped(unsafe { libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_SHARED, f.as_raw_fd(), 0) })
}

/// Anonymous zero pages, then the file's pages mapped over the start of
/// them: writes past the end of the file land in memory instead of faulting
/// (`SIGBUS`).
pub(super) fn map_private(f: &File, len: usize, file_len: usize) -> io::Result<*mut u8> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a fresh anonymous mapping.
    let base = mapped(unsafe {
        libc::mmap(std::ptr::null_mut(), len, prot, libc::MAP_PRIVATE | libc::MAP_ANONYMOUS, -1, 0)
    })?;
    if file_len == 0 {
        return Ok(base);
    }
    // SAFETY: the file pages replace the start of the reservation made above
    // (file_len <= len, so its rounding up stays inside it).
    let at = mapped(unsafe {
        libc::mmap(base.cast(), file_len, prot, libc::MAP_PRIVATE | libc::MAP_FIXED, f.as_raw_fd(), 0)
    });
    if at.is_err() {
        // SAFETY: `base` was mapped above with `len` bytes.
        unsafe { libc::munmap(base.cast(), len) };
    }
    at
}

/// Linux: `mremap`, in place or moved whole.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) unsafe fn grow_shared(
    _f: &File,
    addr: *mut u8,
    old_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    // SAFETY: caller contract: a live shared mapping.
    mapped(unsafe { libc::mremap(addr.cast(), old_len, new_len, libc::MREMAP_MAYMOVE) })
}

/// Elsewhere (macOS): mapped anew.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) unsafe fn grow_shared(
    f: &File,
    addr: *mut u8,
    old_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    // SAFETY: caller contract.
    unsafe { grow_shared_anew(f, addr, old_len, new_len) }
}

/// Without `mremap`: a new mapping, then the old one unmapped (the file
/// holds what was written through it). Compiled on Linux too, for its test.
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
unsafe fn grow_shared_anew(f: &File, addr: *mut u8, old_len: usize, new_len: usize) -> io::Result<*mut u8> {
    let new = map_shared(f, new_len, true)?;
    // SAFETY: caller contract: the old mapping is not used again.
    unsafe { libc::munmap(addr.cast(), old_len) };
    Ok(new)
}

/// Linux: move the pages of the private mapping (the file's part, then the
/// anonymous part) into a new, larger anonymous reservation, without a copy.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub(super) unsafe fn grow_private(
    addr: *mut u8,
    old_len: usize,
    file_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    let page = page_size();
    let too_big = || io::Error::from(io::ErrorKind::OutOfMemory);
    let old_len = super::map::round_up(old_len, page).ok_or_else(too_big)?;
    let file_len = super::map::round_up(file_len, page).ok_or_else(too_big)?;
    if file_len > old_len {
        return Err(too_big());
    }
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    let flags = libc::MREMAP_MAYMOVE | libc::MREMAP_FIXED;
    let old = addr.cast::<libc::c_void>();
    // SAFETY: a fresh anonymous reservation; the moves below target it
    // only, and the ranges moved are the old mapping's two parts (its file
    // pages, `file_len`, and the anonymous rest, up to `old_len`).
    unsafe {
        let new = mapped(libc::mmap(
            std::ptr::null_mut(),
            new_len,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        ))?
        .cast::<libc::c_void>();
        if file_len > 0 && libc::mremap(old, file_len, file_len, flags, new) == libc::MAP_FAILED {
            let e = io::Error::last_os_error();
            libc::munmap(new, new_len);
            return Err(e);
        }
        let tail = old_len - file_len;
        if tail > 0 {
            let from = old.cast::<u8>().add(file_len).cast::<libc::c_void>();
            let to = new.cast::<u8>().add(file_len).cast::<libc::c_void>();
            if libc::mremap(from, tail, tail, flags, to) == libc::MAP_FAILED {
                let e = io::Error::last_os_error();
                if file_len > 0 {
                    // Put the file part back where it was.
                    libc::mremap(new, file_len, file_len, flags, old);
                }
                libc::munmap(new, new_len);
                return Err(e);
            }
        }
        Ok(new.cast())
    }
}

/// Elsewhere (macOS): copied.
#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub(super) unsafe fn grow_private(
    addr: *mut u8,
    old_len: usize,
    _file_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    // SAFETY: caller contract.
    unsafe { grow_private_by_copy(addr, old_len, new_len) }
}

/// Without `mremap`: a new private mapping, the old one's bytes copied in.
/// Compiled on Linux too, for its test.
#[cfg_attr(any(target_os = "linux", target_os = "android"), allow(dead_code))]
unsafe fn grow_private_by_copy(addr: *mut u8, old_len: usize, new_len: usize) -> io::Result<*mut u8> {
    let prot = libc::PROT_READ | libc::PROT_WRITE;
    // SAFETY: a fresh anonymous mapping, then a copy of the live old one
    // (old_len < new_len), which is unmapped.
    unsafe {
        let new = mapped(libc::mmap(
            std::ptr::null_mut(),
            new_len,
            prot,
            libc::MAP_PRIVATE | libc::MAP_ANONYMOUS,
            -1,
            0,
        ))?;
        std::ptr::copy_nonoverlapping(addr, new, old_len);
        libc::munmap(addr.cast(), old_len);
        Ok(new)
    }
}

pub(super) unsafe fn flush(addr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: caller contract.
    if unsafe { libc::msync(addr.cast(), len, libc::MS_SYNC) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(super) unsafe fn unmap(addr: *mut u8, len: usize, _private: bool) -> io::Result<()> {
    // SAFETY: caller contract.
    if unsafe { libc::munmap(addr.cast(), len) } < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(super) fn file_len(f: &File) -> io::Result<u64> {
    f.metadata().map(|m| m.len())
}

pub(super) fn remove_file(path: &std::path::Path) -> io::Result<()> {
    std::fs::remove_file(path)
}

/// A mapping's writes are the file's (see `super::map::written`).
#[inline]
pub(super) unsafe fn written(_f: &File, _addr: *const u8, _pos: usize, _len: usize) -> io::Result<()> {
    Ok(())
}

/// The system zeroes what a cut takes from a mapping (see `super::map::cut`).
#[inline]
pub(super) unsafe fn cut(_addr: *mut u8, _mapping_len: usize, _file_len: usize) {}

pub(super) fn remove_dir_all(path: &str) -> io::Result<()> {
    std::fs::remove_dir_all(path)
}

pub(super) fn process_id() -> u32 {
    std::process::id()
}

pub(super) fn temp_dir() -> std::path::PathBuf {
    std::env::temp_dir()
}

pub(super) const HANDLES_PIN_NAMES: bool = false;

pub(super) struct SysPath(std::ffi::CString);

impl SysPath {
    pub(super) fn new(path: &str) -> io::Result<SysPath> {
        std::ffi::CString::new(path).map(SysPath).map_err(|_| io::Error::from(io::ErrorKind::InvalidInput))
    }

    pub(super) fn open(&self, write: bool) -> io::Result<File> {
        use std::os::unix::io::FromRawFd;
        let flags = if write { libc::O_RDWR } else { libc::O_RDONLY } | libc::O_CLOEXEC;
        // SAFETY: a NUL-terminated path.
        let fd = unsafe { libc::open(self.0.as_ptr(), flags) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a descriptor just opened, owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boot_ids_read_as_linux_and_macos_write_them() {
        let want =
            [0x2b, 0x1e, 0x5f, 0x0d, 0x7c, 0x44, 0x4a, 0x1f, 0x9e, 0x6d, 0x01, 0x23, 0x45, 0x67, 0x89, 0xab];
        assert_eq!(uuid_bytes("2b1e5f0d-7c44-4a1f-9e6d-0123456789ab\n"), Some(want));
        assert_eq!(uuid_bytes("2B1E5F0D-7C44-4A1F-9E6D-0123456789AB"), Some(want));
        assert_eq!(uuid_bytes("2b1e5f0d-7c44-4a1f-9e6d-0123456789a"), None, "a digit short");
        assert_eq!(uuid_bytes("2b1e5f0d-7c44-4a1f-9e6d-0123456789abc"), None, "a digit more");
        assert_eq!(uuid_bytes("2b1e5f0d-7c44-4a1f-9e6d-0123456789ag"), None, "not hex");
        if cfg!(miri) {
            return; // (the boot id is read from a file: Miri's isolation refuses it)
        }
        #[cfg(target_os = "linux")]
        assert!(boot_id().is_some(), "Linux gives a boot id");
        assert_eq!(boot_id(), boot_id(), "read once, then kept");
    }

    /// The growth of mappings where there is no `mremap` (macOS), run here:
    /// what was written stays, the new part is the file's (shared) or
    /// zeros (private), and the file holds what went through a shared one.
    #[test]
    #[cfg_attr(miri, ignore = "Miri: files and mmap")]
    fn mappings_grow_without_mremap() {
        let page = page_size();
        let path = std::env::temp_dir().join(format!("b2nd-grow-anew-{}.bin", std::process::id()));
        let f = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        f.set_len(2 * page as u64).unwrap();
        f.write_at(b"tail", 2 * page as u64 - 4).unwrap();
        // SAFETY: a mapping of the file's 2 pages, then of its 4, each used only
        // within its length and unmapped once.
        unsafe {
            let a = map_shared(&f, 2 * page, true).unwrap();
            a.write(7);
            f.set_len(4 * page as u64).unwrap();
            f.write_at(b"past", 3 * page as u64).unwrap();
            let b = grow_shared_anew(&f, a, 2 * page, 4 * page).unwrap();
            assert_eq!(b.read(), 7);
            assert_eq!(std::slice::from_raw_parts(b.add(2 * page - 4), 4), b"tail");
            assert_eq!(std::slice::from_raw_parts(b.add(3 * page), 4), b"past");
            b.add(3 * page + 4).write(9);
            flush(b, 4 * page).unwrap();
            unmap(b, 4 * page, false).unwrap();
        }
        let mut back = [0u8; 5];
        f.read_at(&mut back, 3 * page as u64).unwrap();
        assert_eq!(&back, b"past\x09");
        // SAFETY: a private mapping of 3 pages (the file's first 2), grown to 5.
        unsafe {
            let a = map_private(&f, 3 * page, 2 * page).unwrap();
            a.add(1).write(5);
            a.add(3 * page - 1).write(6);
            let b = grow_private_by_copy(a, 3 * page, 5 * page).unwrap();
            assert_eq!((b.read(), b.add(1).read(), b.add(3 * page - 1).read()), (7, 5, 6));
            assert_eq!(std::slice::from_raw_parts(b.add(2 * page - 4), 4), b"tail");
            assert!(std::slice::from_raw_parts(b.add(3 * page), 2 * page).iter().all(|&x| x == 0));
            unmap(b, 5 * page, true).unwrap();
        }
        let mut first = [0u8; 2];
        f.read_at(&mut first, 0).unwrap();
        assert_eq!(first, [7, 0], "a private mapping never writes the file");
        drop(f);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files (isolation): sysfs")]
    fn cache_sizes_are_whole_kibs_where_the_system_gives_them() {
        let sizes = cache_sizes();
        for s in sizes.into_iter().flatten() {
            assert!(s >= 1024 && s % 1024 == 0, "{s}");
        }
        #[cfg(target_os = "linux")]
        if std::path::Path::new("/sys/devices/system/cpu/cpu0/cache/index0/size").exists() {
            assert!(sizes[0].is_some(), "sysfs has cpu0's L1 data cache");
        }
    }
}
