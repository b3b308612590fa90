//! The one place the core calls the operating system. Each system has its
//! side in a file of its own with the same functions (`unix.rs`,
//! `windows.rs`, `wasi.rs`), as std's `sys` does; nothing above this module
//! names an OS.
//!
//! - files: positioned reads and writes ([`read_at`], [`write_all_at`]),
//!   their length ([`file_len`]) and identity ([`identity`],
//!   [`path_identity`]), removing them while open ([`remove_file`]), opening
//!   them again and again by a path encoded once ([`SysPath`]), directory
//!   syncs ([`sync_dir`]), the one-byte advisory locks ([`lock`], [`unlock`]);
//! - [`boot_id`]: which boot of the machine this is;
//! - [`cache_sizes`]: the CPU's data caches;
//! - [`parent_dir`]: the directory part of a path;
//! - [`map`]: memory mappings of files (shared, copy-on-write), grown,
//!   flushed and unmapped;
//! - [`process`]: fork generations and per-process state;
//! - [`RawFile`]: an open file as a plain value, for the C API's structs.
//!
//! What differs between the systems, for callers (docs/PORTING.md):
//! - locks: on unix a [`lock`] is `flock` of the whole file (as c-blosc2's);
//!   on Windows `LockFileEx` of the one byte at its offset, which other
//!   handles (even of the same process) can then not write;
//! - a file removed while open: gone from its directory at once on unix; on
//!   Windows too where [`remove_file`] gets POSIX semantics (NTFS), but a
//!   file removed otherwise (by another program) keeps its name, "delete
//!   pending", until the last handle closes ([`HANDLES_PIN_NAMES`]: the
//!   frames' files are then held open only during an operation, `io`);
//! - [`sync_dir`]: `fsync` of the directory on unix; nothing on Windows,
//!   where NTFS journals its directory changes itself.

use std::fs::File;
use std::io;

#[cfg(unix)]
#[path = "unix.rs"]
mod sys;
#[cfg(windows)]
#[path = "windows.rs"]
mod sys;
#[cfg(target_os = "wasi")]
#[path = "wasi.rs"]
mod sys;

pub mod map;
pub mod process;

pub use process::{fork_generation, PerProcess};
#[cfg(any(unix, target_os = "wasi"))]
mod fd;
#[cfg(any(unix, target_os = "wasi"))]
pub use fd::{file_from_raw, file_into_raw, raw_file_of, RawFile, NO_RAW_FILE};
#[cfg(windows)]
pub use sys::{file_from_raw, file_into_raw, raw_file_of, RawFile, NO_RAW_FILE};

/// Whether a handle held open pins its file's name: on Windows a removed
/// file stays "delete pending" until its last handle closes, and no other
/// file can be renamed to its name meanwhile (on unix the name is free at once).
pub const HANDLES_PIN_NAMES: bool = sys::HANDLES_PIN_NAMES;

/// A path in the system's own encoding, made once, to open the file it names
/// again and again without allocating.
pub struct SysPath(sys::SysPath);

impl SysPath {
    pub fn new(path: &str) -> io::Result<SysPath> {
        sys::SysPath::new(path).map(SysPath)
    }

    /// Open the file for reading, and writing when `write`, shared with every
    /// other handle (on Windows, removing and renaming it included).
    pub fn open(&self, write: bool) -> io::Result<File> {
        self.0.open(write)
    }
}

/// Read up to `buf.len()` bytes of `f` at `pos` (fewer only at the end of
/// the file); the file's position, if it has one, is not used.
pub fn read_at(f: &File, pos: u64, buf: &mut [u8]) -> io::Result<usize> {
    let mut done = 0;
    while done < buf.len() {
        match sys::read_at(f, pos + done as u64, &mut buf[done..]) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// Write all of `data` into `f` at `pos`, extending the file as needed.
pub fn write_all_at(f: &File, pos: u64, data: &[u8]) -> io::Result<()> {
    let mut done = 0;
    while done < data.len() {
        match sys::write_at(f, pos + done as u64, &data[done..]) {
            Ok(0) => return Err(io::ErrorKind::WriteZero.into()),
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// Remove the file at `path`. Where the system can (Windows: POSIX delete
/// semantics, on NTFS), its name goes at once even while handles of it are
/// open, as on unix, so that a file can be made or renamed to that name.
pub fn remove_file(path: impl AsRef<std::path::Path>) -> io::Result<()> {
    sys::remove_file(path.as_ref())
}

/// Remove the directory at `path` and everything in it. A name ending in `/`
/// is taken as POSIX takes it (WASI hosts refuse it, so the slashes go there).
pub fn remove_dir_all(path: &str) -> io::Result<()> {
    sys::remove_dir_all(path)
}

/// The length of an open file.
pub fn file_len(f: &File) -> io::Result<u64> {
    sys::file_len(f)
}

/// The identity of an open file: (device or volume, file number). Two
/// handles of the same file have the same.
pub fn identity(f: &File) -> Option<(u64, u64)> {
    sys::identity(f)
}

/// The identity of the file at `path`, if there is one.
pub fn path_identity(path: &str) -> Option<(u64, u64)> {
    sys::path_identity(path)
}

/// Make the data of the file at `path` durable (it is opened as the system
/// needs for that: read-only on unix, for writing on Windows).
pub fn sync_file(path: &std::path::Path) -> io::Result<()> {
    sys::open_for_sync(path)?.sync_data()
}

/// Make the entries of directory `dir` durable (`""`: the current one).
pub fn sync_dir(dir: &str) -> io::Result<()> {
    sys::sync_dir(if dir.is_empty() { "." } else { dir })
}

/// How a lock is shared.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lock {
    Shared,
    Exclusive,
}

/// Take `kind` of lock of `f` at byte `at`, waiting for it (`wait`) or not:
/// `Ok(false)` when another holder keeps it and `wait` is false. See the
/// module documentation for what the lock covers on each system.
pub fn lock(f: &File, at: u64, kind: Lock, wait: bool) -> io::Result<bool> {
    loop {
        match sys::lock(f, at, kind, wait) {
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            r => return r,
        }
    }
}

/// Release the lock [`lock`] took at byte `at`.
pub fn unlock(f: &File, at: u64) -> io::Result<()> {
    sys::unlock(f, at)
}

/// The id of this boot of the machine, or `None` when the system gives none.
pub fn boot_id() -> Option<[u8; 16]> {
    sys::boot_id()
}

/// The CPU's data cache sizes in bytes, level 1 (data), 2 and 3, read as
/// python-blosc2 reads them to size its default chunks (so that the tool
/// makes the arrays it makes): Linux, cpu0's caches in sysfs; macOS, the
/// performance cores' (`sysctl`); Windows, `GetLogicalProcessorInformationEx`.
/// `None` for a size the system does not give.
pub fn cache_sizes() -> [Option<u64>; 3] {
    sys::cache_sizes()
}

/// This process's id (on WASI, which has none, a number drawn once per
/// instance), for names of scratch files and nonces.
pub fn process_id() -> u32 {
    sys::process_id()
}

/// The directory for scratch files: the system's (`TMPDIR` and so on); on
/// WASI, `TMPDIR` or `/tmp`, which the host must give (a preopened directory).
pub fn temp_dir() -> std::path::PathBuf {
    sys::temp_dir()
}

/// The directory that holds `path` (`""` for a bare name), for the
/// separators of this system (`/`; and `\` and drive letters on Windows).
pub fn parent_dir(path: &str) -> &str {
    let is_sep = |c: char| c == '/' || (sys::BACKSLASH_SEPARATES && c == '\\');
    let trimmed = path.trim_end_matches(is_sep);
    // The root of a drive (`C:`, `C:\`) on Windows.
    let drive =
        if sys::BACKSLASH_SEPARATES && trimmed.len() >= 2 && trimmed.as_bytes()[1] == b':' { 2 } else { 0 };
    match trimmed[drive..].rfind(is_sep) {
        Some(0) => &path[..drive + 1],
        Some(i) => &path[..drive + i],
        None if drive > 0 => &path[..drive],
        None => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parent_dirs() {
        assert_eq!(parent_dir("a/b/c.b2frame"), "a/b");
        assert_eq!(parent_dir("/c.b2frame"), "/");
        assert_eq!(parent_dir("c.b2frame"), "");
        assert_eq!(parent_dir("a/dir.b2frame/"), "a");
        if sys::BACKSLASH_SEPARATES {
            assert_eq!(parent_dir(r"C:\data\x.b2frame"), r"C:\data");
            assert_eq!(parent_dir(r"C:\x.b2frame"), r"C:\");
            assert_eq!(parent_dir(r"C:x.b2frame"), "C:");
            assert_eq!(parent_dir(r"d\x.b2frame"), "d");
        } else {
            assert_eq!(parent_dir(r"d\x.b2frame"), "");
        }
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files and file locks (isolation)")]
    fn positioned_io_identity_and_locks() {
        let path = temp_dir().join(format!("b2nd-os-{}.bin", process_id()));
        let f = File::options().read(true).write(true).create(true).truncate(true).open(&path).unwrap();
        write_all_at(&f, 3, b"abc").unwrap();
        let mut b = [9u8; 8];
        assert_eq!(read_at(&f, 0, &mut b).unwrap(), 6);
        assert_eq!(&b[..6], b"\0\0\0abc");
        let g = File::options().read(true).write(true).open(&path).unwrap();
        assert_eq!(identity(&f), identity(&g));
        assert_eq!(identity(&f), path_identity(path.to_str().unwrap()));
        assert!(identity(&f).is_some());
        assert!(lock(&f, 0, Lock::Exclusive, true).unwrap());
        // (WASI has no locks: each is granted at once)
        assert_eq!(
            lock(&g, 0, Lock::Shared, false).unwrap(),
            cfg!(target_os = "wasi"),
            "held by the other handle"
        );
        unlock(&f, 0).unwrap();
        assert!(lock(&g, 0, Lock::Shared, false).unwrap());
        assert!(lock(&f, 0, Lock::Shared, false).unwrap(), "shared locks share");
        unlock(&g, 0).unwrap();
        unlock(&f, 0).unwrap();
        drop((f, g));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(path_identity(path.to_str().unwrap()), None);
        sync_dir(temp_dir().to_str().unwrap()).unwrap();
    }
}
