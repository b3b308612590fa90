//! Storage for on-disk frames: a [`Backend`] opens [`Stream`]s by path, and a
//! stream reads and writes at explicit positions, so that several threads can
//! read one open frame at once without sharing a file position.
//!
//! [`FileSystem`] is the default backend (c-blosc2's `BLOSC2_IO_FILESYSTEM`),
//! [`Mmap`] reaches a file through a memory mapping (c-blosc2's
//! `BLOSC2_IO_FILESYSTEM_MMAP`); the C API adds backends that call user
//! callbacks.

mod mmap;

pub use mmap::{mmap, Mmap, MmapMode, DEFAULT_INITIAL_MAPPING_SIZE};
pub use mmap::{MmapFile, RawMmap};

use crate::error::{Error, Result};
use std::fs::{File, OpenOptions};
use std::io;
use std::sync::{Arc, RwLock};

/// How a stream is opened (c-blosc2's `"rb"`, `"r+b"`, `"w+b"` modes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    /// Read only; the file must exist.
    Read,
    /// Read and write; the file must exist.
    Update,
    /// Read and write; the file is created, or emptied if it exists.
    Create,
    /// Read and write; the file is created if needed and kept as is.
    Append,
}

impl Mode {
    /// The C `fopen` mode string c-blosc2 passes to its I/O callbacks.
    pub fn as_c_mode(self) -> &'static str {
        match self {
            Mode::Read => "rb",
            Mode::Update => "rb+",
            Mode::Create => "wb+",
            Mode::Append => "ab",
        }
    }

    pub fn writable(self) -> bool {
        self != Mode::Read
    }
}

/// What the changes of a frame file survive (docs/RELIABILITY.md).
///
/// Every change of a frame file survives a process that dies: the undo
/// journal beside the frame puts back a change left half done. Surviving a
/// power loss (or a kernel panic, or a virtual machine reset) takes syncs,
/// whose cost this chooses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Durability {
    /// Nothing is synced: changes survive a process that dies, not
    /// necessarily a machine that dies (c-blosc2 syncs nothing either).
    Off,
    /// After a power loss every frame reopens as it was after one of its
    /// changes, each change there whole or not at all. The changes of about
    /// the last second before the loss (and those since the last close, when
    /// fewer) may be missing. A close makes the frame durable.
    #[default]
    Consistent,
    /// As `Consistent`, and each change is durable when its call returns
    /// (three syncs per change).
    Durable,
}

impl Durability {
    /// The environment variable the C API reads a frame's durability from
    /// (`off`, `consistent` or `durable`), when it opens or makes one.
    pub const ENV: &'static str = "B2ND_DURABILITY";

    /// The durability a name gives (`off`, `consistent`, `durable`; any case).
    pub fn parse(name: &str) -> Option<Durability> {
        match name.trim().to_ascii_lowercase().as_str() {
            "off" => Some(Durability::Off),
            "consistent" => Some(Durability::Consistent),
            "durable" => Some(Durability::Durable),
            _ => None,
        }
    }

    /// The durability [`Durability::ENV`] asks for, if set to a known name.
    pub fn from_env() -> Option<Durability> {
        std::env::var(Self::ENV).ok().and_then(|v| Durability::parse(&v))
    }

    /// Whether changes are synced at all.
    pub fn syncs(self) -> bool {
        self != Durability::Off
    }
}

/// One open file (or file-like object).
pub trait Stream: Send + Sync {
    /// Read up to `buf.len()` bytes at `pos`; returns how many were read (fewer only at the end).
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize>;
    /// Write all of `data` at `pos`, extending the stream as needed.
    fn write_at(&self, pos: u64, data: &[u8]) -> Result<()>;
    /// Current length of the stream.
    fn size(&self) -> Result<u64>;
    /// Cut (or extend with zeros) the stream to `len` bytes.
    fn truncate(&self, len: u64) -> Result<()>;
    /// The identity of the underlying file (device, inode), when there is one:
    /// used to notice that a path now names another file.
    fn identity(&self) -> Option<(u64, u64)> {
        None
    }
    /// Make what was written so far durable, data and length, so that it
    /// survives a power loss (`fdatasync` for a file). Streams that cannot
    /// (those of user callbacks, which have no such callback) do nothing.
    fn sync(&self) -> Result<()> {
        Ok(())
    }
    /// Keep the underlying file open until the [`Hold`] is dropped, for the
    /// streams that otherwise open it for each call (see
    /// [`crate::os::HANDLES_PIN_NAMES`]); `None` for the others.
    fn hold(&self) -> Option<Hold> {
        None
    }
    /// Whether the path this stream was opened by now names another file,
    /// for the streams that open it by path for their calls (`None`: the
    /// caller asks the filesystem itself). A path that names no file is not
    /// replaced.
    fn path_replaced(&self) -> Option<bool> {
        None
    }

    /// Read exactly `buf.len()` bytes at `pos`.
    fn read_exact_at(&self, pos: u64, buf: &mut [u8]) -> Result<()> {
        if self.read_at(pos, buf)? == buf.len() {
            Ok(())
        } else {
            Err(Error::FileRead)
        }
    }
}

/// A way to reach files by path.
pub trait Backend: Send + Sync {
    fn open(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>>;
    /// Open a stream that its owner keeps from one operation to the next (a
    /// frame's file). By default as [`Backend::open`]; the filesystem's, where
    /// a handle held open pins its file's name (Windows), holds none between
    /// operations: see [`Stream::hold`].
    fn open_kept(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>> {
        self.open(path, mode)
    }
    /// Whether paths are real filesystem paths (lock files and directories can be used).
    fn is_filesystem(&self) -> bool {
        false
    }
    /// c-blosc2's id of this backend (`BLOSC2_IO_*`, or a user id).
    fn id(&self) -> u8;
    /// The backend for the files a frame keeps beside its own (its undo
    /// journal, see `frame::journal`): `None` for backends whose paths are not
    /// files, whose frames then change without a journal.
    fn sidecar(&self) -> Option<Arc<dyn Backend>> {
        None
    }
    /// Remove the file at `path`. By default on the filesystem, as c-blosc2
    /// removes a sparse frame's chunk files whatever its backend.
    fn remove(&self, path: &str) -> Result<()> {
        crate::os::remove_file(path).map_err(|_| Error::FileRemove)
    }
    /// Make the entries of directory `dir` (files made, removed or renamed in
    /// it) durable: `fsync` of the directory. By default on the filesystem,
    /// where a sparse frame's directory always is.
    fn sync_dir(&self, dir: &str) -> Result<()> {
        sync_dir(dir)
    }
}

/// Make the entries of directory `dir` durable (`""` is the current one):
/// `fsync` of the directory (see `crate::os::sync_dir` for other systems).
pub fn sync_dir(dir: &str) -> Result<()> {
    crate::os::sync_dir(dir).map_err(|_| Error::FileWrite)
}

/// The directory that holds `path` (`""` for a bare name).
pub fn parent_dir(path: &str) -> &str {
    crate::os::parent_dir(path)
}

/// Files through the operating system, read and written with `pread`/`pwrite`.
#[derive(Debug, Clone, Copy, Default)]
pub struct FileSystem;

/// The default backend, shared.
pub fn filesystem() -> Arc<dyn Backend> {
    Arc::new(FileSystem)
}

struct OsFile(File);

impl Stream for OsFile {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        crate::os::read_at(&self.0, pos, buf).map_err(|_| Error::FileRead)
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> Result<()> {
        crate::os::write_all_at(&self.0, pos, data).map_err(|_| Error::FileWrite)
    }

    fn size(&self) -> Result<u64> {
        crate::os::file_len(&self.0).map_err(|_| Error::FileRead)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.0.set_len(len).map_err(|_| Error::FileTruncate)
    }

    fn identity(&self) -> Option<(u64, u64)> {
        crate::os::identity(&self.0)
    }

    fn sync(&self) -> Result<()> {
        self.0.sync_data().map_err(|_| Error::FileWrite)
    }
}

/// A file of the filesystem that holds no handle between operations, where
/// a held handle would pin its name ([`crate::os::HANDLES_PIN_NAMES`]:
/// Windows, where c-blosc2 holds none either). A call opens it by its path,
/// and refuses another file found there (the owner of the stream then reopens
/// the frame by its path); the handle stays open while a [`Hold`] on the
/// stream lasts (one operation of a super-chunk, say), and closes with the last.
struct PathFile(Arc<PathShared>);

struct PathShared {
    path: crate::os::SysPath,
    write: bool,
    identity: (u64, u64),
    state: RwLock<Held>,
}

/// How many [`Hold`]s there are, and the handle they keep open.
struct Held {
    holds: usize,
    file: Option<File>,
}

/// Keeps a stream's file open until dropped (see [`Stream::hold`]); holds nest.
pub struct Hold(Arc<PathShared>);

impl Drop for Hold {
    fn drop(&mut self) {
        let closed = {
            let mut held = self.0.state.write().unwrap_or_else(|e| e.into_inner());
            held.holds -= 1;
            if held.holds == 0 {
                held.file.take()
            } else {
                None
            }
        };
        drop(closed);
    }
}

impl PathFile {
    fn open(path: &str, mode: Mode) -> Result<PathFile> {
        // An existing file is opened through the path kept, as each call will.
        let path_kept = crate::os::SysPath::new(path).map_err(|_| Error::FileOpen)?;
        let write = mode.writable();
        let f = match mode {
            Mode::Read | Mode::Update => path_kept.open(write).map_err(|_| Error::FileOpen)?,
            Mode::Create | Mode::Append => open_file(path, mode)?,
        };
        let identity = crate::os::identity(&f).ok_or(Error::FileOpen)?;
        let state = RwLock::new(Held { holds: 0, file: None });
        Ok(PathFile(Arc::new(PathShared { path: path_kept, write, identity, state })))
    }

    #[cfg(test)]
    fn is_open(&self) -> bool {
        self.0.state.read().unwrap().file.is_some()
    }
}

impl PathShared {
    fn open(&self) -> io::Result<File> {
        let f = self.path.open(self.write)?;
        if crate::os::identity(&f) != Some(self.identity) {
            return Err(io::ErrorKind::NotFound.into());
        }
        Ok(f)
    }

    /// Run `op` on the file: the handle held, or one opened for this call.
    fn with<T>(&self, error: Error, op: impl FnOnce(&File) -> io::Result<T>) -> Result<T> {
        loop {
            {
                let held = self.state.read().unwrap_or_else(|e| e.into_inner());
                if let Some(f) = &held.file {
                    return op(f).map_err(|_| error);
                }
            }
            let mut held = self.state.write().unwrap_or_else(|e| e.into_inner());
            if held.file.is_some() {
                continue;
            }
            let f = self.open().map_err(|_| error)?;
            if held.holds == 0 {
                drop(held);
                return op(&f).map_err(|_| error);
            }
            held.file = Some(f);
        }
    }
}

impl Stream for PathFile {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        self.0.with(Error::FileRead, |f| crate::os::read_at(f, pos, buf))
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> Result<()> {
        self.0.with(Error::FileWrite, |f| crate::os::write_all_at(f, pos, data))
    }

    fn size(&self) -> Result<u64> {
        self.0.with(Error::FileRead, crate::os::file_len)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        self.0.with(Error::FileTruncate, |f| f.set_len(len))
    }

    fn identity(&self) -> Option<(u64, u64)> {
        Some(self.0.identity)
    }

    fn sync(&self) -> Result<()> {
        self.0.with(Error::FileWrite, File::sync_data)
    }

    fn hold(&self) -> Option<Hold> {
        self.0.state.write().unwrap_or_else(|e| e.into_inner()).holds += 1;
        Some(Hold(self.0.clone()))
    }

    fn path_replaced(&self) -> Option<bool> {
        // (the handle held is the file the path named when this hold opened it)
        let mut held = self.0.state.write().unwrap_or_else(|e| e.into_inner());
        if held.file.is_some() {
            return Some(false);
        }
        let Ok(f) = self.0.path.open(self.0.write) else { return Some(false) };
        if crate::os::identity(&f) != Some(self.0.identity) {
            return Some(true);
        }
        if held.holds > 0 {
            held.file = Some(f);
        }
        Some(false)
    }
}

fn open_file(path: &str, mode: Mode) -> Result<File> {
    let mut o = OpenOptions::new();
    match mode {
        Mode::Read => o.read(true),
        Mode::Update => o.read(true).write(true),
        Mode::Create => o.read(true).write(true).create(true).truncate(true),
        Mode::Append => o.read(true).write(true).create(true),
    };
    o.open(path).map_err(|_| Error::FileOpen)
}

impl Backend for FileSystem {
    fn open(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>> {
        Ok(Box::new(OsFile(open_file(path, mode)?)))
    }

    fn open_kept(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>> {
        if crate::os::HANDLES_PIN_NAMES {
            Ok(Box::new(PathFile::open(path, mode)?))
        } else {
            self.open(path, mode)
        }
    }

    fn is_filesystem(&self) -> bool {
        true
    }

    fn id(&self) -> u8 {
        0
    }

    fn sidecar(&self) -> Option<Arc<dyn Backend>> {
        Some(filesystem())
    }
}

/// The identity (device, inode) of the file at `path`, if any.
pub fn path_identity(path: &str) -> Option<(u64, u64)> {
    crate::os::path_identity(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    fn file_streams_read_write_truncate() {
        let dir = crate::os::temp_dir().join(format!("b2nd-io-{}", crate::os::process_id()));
        let path = dir.to_str().unwrap().to_string() + ".bin";
        let fs = FileSystem;
        assert_eq!(fs.open(&path, Mode::Read).err(), Some(Error::FileOpen));
        let s = fs.open(&path, Mode::Create).unwrap();
        s.write_at(4, b"abcd").unwrap();
        assert_eq!(s.size().unwrap(), 8);
        let mut b = [9u8; 10];
        assert_eq!(s.read_at(0, &mut b).unwrap(), 8);
        assert_eq!(&b[..8], b"\0\0\0\0abcd");
        assert_eq!(s.read_exact_at(6, &mut b[..4]), Err(Error::FileRead));
        s.truncate(5).unwrap();
        assert_eq!(s.size().unwrap(), 5);
        assert!(s.identity().is_some());
        drop(s);
        let r = fs.open(&path, Mode::Read).unwrap();
        assert!(r.write_at(0, b"x").is_err());
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files (isolation)")]
    fn path_files_hold_a_handle_only_while_held() {
        let base = crate::os::temp_dir().join(format!("b2nd-io-path-{}", crate::os::process_id()));
        let path = base.to_str().unwrap().to_string() + ".bin";
        let other = base.to_str().unwrap().to_string() + ".other";
        let s = PathFile::open(&path, Mode::Create).unwrap();
        assert!(!s.is_open());
        s.write_at(0, b"abcdef").unwrap();
        assert!(!s.is_open(), "a call without a hold closes what it opened");
        let mut b = [0u8; 3];
        {
            let outer = s.hold().unwrap();
            let inner = s.hold().unwrap();
            assert!(!s.is_open(), "a hold opens nothing by itself");
            assert_eq!(s.read_at(2, &mut b).unwrap(), 3);
            assert!(s.is_open());
            drop(inner);
            assert!(s.is_open(), "holds nest");
            assert_eq!(s.size().unwrap(), 6);
            assert_eq!(s.path_replaced(), Some(false));
            drop(outer);
            assert!(!s.is_open());
        }
        assert_eq!(&b, b"cde");
        // Another file renamed over the path is refused, held or not.
        std::fs::write(&other, b"another").unwrap();
        std::fs::rename(&other, &path).unwrap();
        assert_eq!(s.path_replaced(), Some(true));
        assert_eq!(s.read_at(0, &mut b), Err(Error::FileRead));
        let h = s.hold();
        assert_eq!(s.write_at(0, b"x"), Err(Error::FileWrite));
        assert!(!s.is_open());
        drop(h);
        assert_eq!(std::fs::read(&path).unwrap(), b"another");
        // And a removed file is gone for it.
        std::fs::remove_file(&path).unwrap();
        assert_eq!(s.size(), Err(Error::FileRead));
        assert_eq!(s.path_replaced(), Some(false));
    }
}
