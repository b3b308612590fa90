//! The Windows side of [`crate::os`] (Win32 through `windows-sys`).

use super::Lock;
use std::fs::File;
use std::io;
use std::os::windows::fs::FileExt;
use std::os::windows::io::AsRawHandle;
use windows_sys::Win32::Foundation::{ERROR_LOCK_VIOLATION, HANDLE};
use windows_sys::Win32::Storage::FileSystem::{
    GetFileInformationByHandle, LockFileEx, UnlockFileEx, BY_HANDLE_FILE_INFORMATION, LOCKFILE_EXCLUSIVE_LOCK,
    LOCKFILE_FAIL_IMMEDIATELY,
};
use windows_sys::Win32::System::Registry::{RegGetValueW, HKEY_LOCAL_MACHINE, RRF_RT_REG_DWORD};
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
    // SAFETY: an open handle and a structure to fill.
    let mut info: BY_HANDLE_FILE_INFORMATION = unsafe { std::mem::zeroed() };
    if unsafe { GetFileInformationByHandle(handle(f), &mut info) } == 0 {
        return None;
    }
    Some((u64::from(info.dwVolumeSerialNumber), u64::from(info.nFileIndexHigh) << 32 | u64::from(info.nFileIndexLow)))
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
        RegGetValueW(HKEY_LOCAL_MACHINE, key.as_ptr(), name.as_ptr(), RRF_RT_REG_DWORD, std::ptr::null_mut(), (&mut value as *mut u32).cast(), &mut size)
    };
    if r != 0 {
        return None;
    }
    let mut id = *b"win-boot-id\0\0\0\0\0";
    id[12..].copy_from_slice(&value.to_le_bytes());
    Some(id)
}

/// Windows has no `fork`: a process's state is its own.
pub(super) fn watch_forks() {}
