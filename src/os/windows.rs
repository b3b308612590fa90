//! The Windows side of [`crate::os`] (Win32 through `windows-sys`).

use super::Lock;
use std::fs::File;
use std::io;
use std::os::windows::fs::FileExt;
use std::os::windows::io::AsRawHandle;
use windows_sys::Win32::Foundation::{CloseHandle, ERROR_LOCK_VIOLATION, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, LockFileEx, UnlockFileEx, BY_HANDLE_FILE_INFORMATION,
    LOCKFILE_EXCLUSIVE_LOCK, LOCKFILE_FAIL_IMMEDIATELY,
};
use windows_sys::Win32::System::Memory::{
    CreateFileMappingW, FlushViewOfFile, MapViewOfFile, UnmapViewOfFile, VirtualAlloc, VirtualFree,
    FILE_MAP_READ, FILE_MAP_WRITE, MEMORY_MAPPED_VIEW_ADDRESS, MEM_COMMIT, MEM_RELEASE, MEM_RESERVE,
    PAGE_READONLY, PAGE_READWRITE,
};
use windows_sys::Win32::System::Registry::{RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD};
use windows_sys::Win32::System::SystemInformation::{
    CacheData, CacheUnified, GetLogicalProcessorInformationEx, GetSystemInfo, RelationCache, SYSTEM_INFO,
};
use windows_sys::Win32::System::IO::OVERLAPPED;

/// Paths separate with `\` as well as `/`, and may start with a drive.
pub(super) const BACKSLASH_SEPARATES: bool = true;

fn handle(f: &File) -> HANDLE {
    f.as_raw_handle() as HANDLE
}

/// (`seek_read` moves the handle's file pointer, which nothing here uses.)
pub(super) fn read_at(f: &File, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
    match f.seek_read(buf, pos) {
        // Reading at or past the end is an error (ERROR_HANDLE_EOF) there.
        Err(e) if e.raw_os_error() == Some(38) => Ok(0),
        r => r,
    }
}

pub(super) fn write_at(f: &File, pos: u64, data: &[u8]) -> io::Result<usize> {
    f.seek_write(data, pos)
}

pub(super) fn identity(f: &File) -> Option<(u64, u64)> {
    // SAFETY: BY_HANDLE_FILE_INFORMATION is plain data; zero is a valid value.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    // SAFETY: `f`'s handle is open (borrowed for the call); `info` is a live struct to fill.
    if unsafe { GetFileInformationByHandle(handle(f), &mut info) } == 0 {
        return None;
    }
    Some((
        u64::from(info.dwVolumeSerialNumber),
        u64::from(info.nFileIndexHigh) << 32 | u64::from(info.nFileIndexLow),
    ))
}

/// (A file pending deletion cannot be opened: it has no identity, as a
/// removed file on unix.)
pub(super) fn path_identity(path: &str) -> Option<(u64, u64)> {
    identity(&File::open(path).ok()?)
}

/// A file opened so that it can be synced: `FlushFileBuffers` needs a
/// handle with write access.
pub(super) fn open_for_sync(path: &std::path::Path) -> io::Result<File> {
    File::options().read(true).write(true).open(path)
}

/// Nothing: NTFS journals its directory changes itself, and a directory
/// opens for a flush only with backup semantics (docs/PORTING.md).
pub(super) fn sync_dir(_dir: &str) -> io::Result<()> {
    Ok(())
}

fn overlapped_at(at: u64) -> OVERLAPPED {
    // SAFETY: OVERLAPPED is plain data; zero is its empty value.
    let mut o: OVERLAPPED = unsafe { std::mem::zeroed() };
    o.Anonymous.Anonymous.Offset = at as u32;
    o.Anonymous.Anonymous.OffsetHigh = (at >> 32) as u32;
    o
}

/// `LockFileEx` of the byte `[at, at + 1)`, as c-blosc2 locks `[0, 1)` of
/// its lock files on Windows (so both libraries share them).
pub(super) fn lock(f: &File, at: u64, kind: Lock, wait: bool) -> io::Result<bool> {
    let mut flags = if wait { 0 } else { LOCKFILE_FAIL_IMMEDIATELY };
    if kind == Lock::Exclusive {
        flags |= LOCKFILE_EXCLUSIVE_LOCK;
    }
    let mut o = overlapped_at(at);
    // SAFETY: an open, synchronous handle; `o` outlives the call.
    if unsafe { LockFileEx(handle(f), flags, 0, 1, 0, &mut o) } != 0 {
        return Ok(true);
    }
    let e = io::Error::last_os_error();
    if !wait && e.raw_os_error() == Some(ERROR_LOCK_VIOLATION as i32) {
        return Ok(false);
    }
    Err(e)
}

pub(super) fn unlock(f: &File, at: u64) -> io::Result<()> {
    let mut o = overlapped_at(at);
    // SAFETY: as in `lock`.
    if unsafe { UnlockFileEx(handle(f), 0, 1, 0, &mut o) } != 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// The boot counter Windows keeps in the registry (`BootId`, one more at
/// every boot), or none where it is missing (the journal then checkpoints
/// every change).
pub(super) fn boot_id() -> Option<[u8; 16]> {
    let wide = |s: &str| s.encode_utf16().chain([0]).collect::<Vec<u16>>();
    let key = wide(r"SYSTEM\CurrentControlSet\Control\Session Manager\Memory Management\PrefetchParameters");
    let name = wide("BootId");
    let mut value: u32 = 0;
    let mut size = 4u32;
    // SAFETY: NUL-terminated names, a DWORD to fill and its size.
    let r = unsafe {
        RegGetValueW(
            HKEY_LOCAL_MACHINE,
            key.as_ptr(),
            name.as_ptr(),
            RRF_RT_REG_DWORD,
            std::ptr::null_mut(),
            (&mut value as *mut u32).cast(),
            &mut size,
        )
    };
    if r != 0 {
        return None;
    }
    let mut id = *b"win-boot-id\0\0\0\0\0";
    id[12..].copy_from_slice(&value.to_le_bytes());
    Some(id)
}

/// The data caches as python-blosc2 reads them on Windows
/// (`GetLogicalProcessorInformationEx`): the first level-1 data cache, and
/// the first unified level-2 and level-3 caches listed.
pub(super) fn cache_sizes() -> [Option<u64>; 3] {
    let mut len = 0u32;
    // SAFETY: no buffer: asks for the length needed.
    unsafe { GetLogicalProcessorInformationEx(RelationCache, std::ptr::null_mut(), &mut len) };
    if len == 0 || len > 1 << 20 {
        return [None; 3];
    }
    // Whole u64s, for the records' alignment.
    let mut buf = vec![0u64; (len as usize).div_ceil(8)];
    // SAFETY: a buffer of at least `len` bytes.
    if unsafe { GetLogicalProcessorInformationEx(RelationCache, buf.as_mut_ptr().cast(), &mut len) } == 0 {
        return [None; 3];
    }
    let bytes: &[u8] = bytemuck::cast_slice(&buf);
    let bytes = &bytes[..(len as usize).min(bytes.len())];
    let u32_at = |at: usize| bytes.get(at..at + 4).map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]));
    let mut sizes = [None; 3];
    // Records: Relationship (i32), Size (u32), then the cache's Level (u8),
    // Associativity (u8), LineSize (u16), CacheSize (u32), Type (u32).
    let mut at = 0;
    while let (Some(relation), Some(size)) = (u32_at(at), u32_at(at + 4)) {
        if relation == RelationCache as u32 {
            if let (Some(&level), Some(cache), Some(kind)) =
                (bytes.get(at + 8), u32_at(at + 12), u32_at(at + 16))
            {
                let wanted = match level {
                    1 => kind == CacheData as u32,
                    2 | 3 => kind == CacheUnified as u32,
                    _ => false,
                };
                if wanted && level >= 1 && sizes[usize::from(level) - 1].is_none() {
                    sizes[usize::from(level) - 1] = Some(u64::from(cache));
                }
            }
        }
        if size == 0 {
            break;
        }
        at += size as usize;
    }
    sizes
}

/// Windows has no `fork`: a process's state is its own.
pub(super) fn watch_forks() {}

/// An open file as a plain value (its handle), for C structs.
pub type RawFile = std::os::windows::io::RawHandle;
/// No file.
pub const NO_RAW_FILE: RawFile = std::ptr::null_mut();

/// Give `f` up as its handle (not closed).
pub fn file_into_raw(f: File) -> RawFile {
    std::os::windows::io::IntoRawHandle::into_raw_handle(f)
}

/// The handle of `f`, borrowed.
pub fn raw_file_of(f: &File) -> RawFile {
    f.as_raw_handle()
}

/// Take a handle back as a file (`None` for [`NO_RAW_FILE`]).
///
/// # Safety
/// `raw` must be an open handle that nothing else owns, or [`NO_RAW_FILE`].
pub unsafe fn file_from_raw(raw: RawFile) -> Option<File> {
    // SAFETY: caller contract.
    (!raw.is_null()).then(|| unsafe { std::os::windows::io::FromRawHandle::from_raw_handle(raw) })
}

// ---- memory mappings (see `super::map`)

/// A mapped file cannot be cut (`ERROR_USER_MAPPED_FILE`).
pub(super) const CUT_NEEDS_UNMAP: bool = true;

pub(super) fn page_size() -> usize {
    // SAFETY: SYSTEM_INFO is plain data; zero is a valid value.
    let mut info: SYSTEM_INFO = unsafe { std::mem::zeroed() };
    // SAFETY: `info` is a live struct for GetSystemInfo to fill; it has no other precondition.
    unsafe { GetSystemInfo(&mut info) };
    (info.dwPageSize as usize).max(4096)
}

/// A view of a new mapping object of `f`, `len` bytes long (which extends
/// the file to `len` when writable); the object is closed at once (the view
/// keeps it alive).
pub(super) fn map_shared(f: &File, len: usize, writable: bool) -> io::Result<*mut u8> {
    let (protect, access) =
        if writable { (PAGE_READWRITE, FILE_MAP_WRITE) } else { (PAGE_READONLY, FILE_MAP_READ) };
    let size = len as u64;
    // SAFETY: an open handle; the mapping object is closed below, whatever happens.
    unsafe {
        let object = CreateFileMappingW(
            handle(f),
            std::ptr::null(),
            protect,
            (size >> 32) as u32,
            size as u32,
            std::ptr::null(),
        );
        if object.is_null() {
            return Err(io::Error::last_os_error());
        }
        let view = MapViewOfFile(object, access, 0, 0, len);
        let e = io::Error::last_os_error();
        CloseHandle(object);
        if view.Value.is_null() {
            return Err(e);
        }
        Ok(view.Value.cast())
    }
}

/// Private memory, committed, the file's first `file_len` bytes read into it
/// (Windows cannot put a file's pages and zero pages in one private view).
pub(super) fn map_private(f: &File, len: usize, file_len: usize) -> io::Result<*mut u8> {
    let mem = alloc(len)?;
    // SAFETY: `mem` is `len >= file_len` bytes of fresh memory.
    let buf = unsafe { std::slice::from_raw_parts_mut(mem, file_len) };
    match super::read_at(f, 0, buf) {
        Ok(n) if n == file_len => Ok(mem),
        r => {
            // SAFETY: freeing what `alloc` gave.
            unsafe { VirtualFree(mem.cast(), 0, MEM_RELEASE) };
            Err(r.err().unwrap_or_else(|| io::ErrorKind::UnexpectedEof.into()))
        }
    }
}

fn alloc(len: usize) -> io::Result<*mut u8> {
    // SAFETY: a fresh allocation of committed, zeroed pages.
    let mem = unsafe { VirtualAlloc(std::ptr::null(), len, MEM_RESERVE | MEM_COMMIT, PAGE_READWRITE) };
    if mem.is_null() {
        Err(io::Error::last_os_error())
    } else {
        Ok(mem.cast())
    }
}

/// A new, longer view (extending the file), then the old one flushed and
/// unmapped.
pub(super) unsafe fn grow_shared(
    f: &File,
    addr: *mut u8,
    old_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    let new = map_shared(f, new_len, true)?;
    // SAFETY: caller contract: the old view is live and not used again.
    unsafe {
        flush(addr, old_len)?;
        unmap(addr, old_len, false)?;
    }
    Ok(new)
}

/// New private memory, the old bytes copied in.
pub(super) unsafe fn grow_private(
    addr: *mut u8,
    old_len: usize,
    _file_len: usize,
    new_len: usize,
) -> io::Result<*mut u8> {
    let new = alloc(new_len)?;
    // SAFETY: caller contract: `addr` holds `old_len < new_len` live bytes, freed after the copy.
    unsafe {
        std::ptr::copy_nonoverlapping(addr, new, old_len.min(new_len));
        VirtualFree(addr.cast(), 0, MEM_RELEASE);
    }
    Ok(new)
}

pub(super) unsafe fn flush(addr: *mut u8, len: usize) -> io::Result<()> {
    // SAFETY: caller contract.
    if unsafe { FlushViewOfFile(addr.cast(), len) } == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

pub(super) unsafe fn unmap(addr: *mut u8, _len: usize, private: bool) -> io::Result<()> {
    // SAFETY: caller contract.
    let ok = unsafe {
        if private {
            VirtualFree(addr.cast(), 0, MEM_RELEASE)
        } else {
            UnmapViewOfFile(MEMORY_MAPPED_VIEW_ADDRESS { Value: addr.cast() })
        }
    };
    if ok == 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// `GetFileSizeEx` (std's `metadata` asks for much more, slowly under wine).
pub(super) fn file_len(f: &File) -> io::Result<u64> {
    let mut len = 0i64;
    // SAFETY: an open handle and an integer to fill.
    if unsafe { windows_sys::Win32::Storage::FileSystem::GetFileSizeEx(handle(f), &mut len) } == 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(len as u64)
}

/// Remove a file so that its name goes at once, even while handles are open
/// (POSIX delete semantics: NTFS since Windows 10 1607), else as `DeleteFileW`
/// does (the name then stays "delete pending" until the last handle closes:
/// older systems, other file systems, wine).
pub(super) fn remove_file(path: &std::path::Path) -> io::Result<()> {
    use std::os::windows::fs::OpenOptionsExt;
    use windows_sys::Win32::Storage::FileSystem::{
        FileDispositionInfoEx, SetFileInformationByHandle, DELETE, FILE_DISPOSITION_FLAG_DELETE,
        FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE, FILE_DISPOSITION_FLAG_POSIX_SEMANTICS,
        FILE_DISPOSITION_INFO_EX, FILE_FLAG_OPEN_REPARSE_POINT, FILE_SHARE_DELETE, FILE_SHARE_READ,
        FILE_SHARE_WRITE,
    };
    let opened = std::fs::OpenOptions::new()
        .access_mode(DELETE)
        .share_mode(FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE)
        .custom_flags(FILE_FLAG_OPEN_REPARSE_POINT)
        .open(path);
    // (whatever refused the open, `DeleteFileW` says it in its own words)
    let Ok(f) = opened else { return std::fs::remove_file(path) };
    let posix = FILE_DISPOSITION_FLAG_DELETE | FILE_DISPOSITION_FLAG_POSIX_SEMANTICS;
    // (the flag for read-only files came with Windows 10 1809)
    for flags in [posix | FILE_DISPOSITION_FLAG_IGNORE_READONLY_ATTRIBUTE, posix] {
        let info = FILE_DISPOSITION_INFO_EX { Flags: flags };
        // SAFETY: an open handle with DELETE access, and the structure the class names.
        let done = unsafe {
            SetFileInformationByHandle(
                handle(&f),
                FileDispositionInfoEx,
                (&info as *const FILE_DISPOSITION_INFO_EX).cast(),
                std::mem::size_of::<FILE_DISPOSITION_INFO_EX>() as u32,
            )
        };
        if done != 0 {
            return Ok(());
        }
    }
    drop(f);
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

pub(super) const HANDLES_PIN_NAMES: bool = true;

/// The path in UTF-16, NUL-terminated.
pub(super) struct SysPath(Vec<u16>);

impl SysPath {
    pub(super) fn new(path: &str) -> io::Result<SysPath> {
        use std::os::windows::ffi::OsStrExt;
        // (one allocation: UTF-16 takes no more units than UTF-8 bytes)
        let mut wide = Vec::with_capacity(path.len() + 1);
        wide.extend(std::ffi::OsStr::new(path).encode_wide());
        if wide.contains(&0) {
            return Err(io::Error::from(io::ErrorKind::InvalidInput));
        }
        wide.push(0);
        Ok(SysPath(wide))
    }

    pub(super) fn open(&self, write: bool) -> io::Result<File> {
        use std::os::windows::io::FromRawHandle;
        use windows_sys::Win32::Foundation::{GENERIC_READ, GENERIC_WRITE, INVALID_HANDLE_VALUE};
        use windows_sys::Win32::Storage::FileSystem::{
            CreateFileW, FILE_ATTRIBUTE_NORMAL, FILE_SHARE_DELETE, FILE_SHARE_READ, FILE_SHARE_WRITE,
            OPEN_EXISTING,
        };
        let access = if write { GENERIC_READ | GENERIC_WRITE } else { GENERIC_READ };
        let share = FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE;
        // SAFETY: a NUL-terminated wide path; no security attributes, no template.
        let h = unsafe {
            CreateFileW(
                self.0.as_ptr(),
                access,
                share,
                std::ptr::null(),
                OPEN_EXISTING,
                FILE_ATTRIBUTE_NORMAL,
                std::ptr::null_mut(),
            )
        };
        if h == INVALID_HANDLE_VALUE {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a handle just opened, owned by nothing else.
        Ok(unsafe { File::from_raw_handle(h) })
    }
}
