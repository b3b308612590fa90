//! Files reached through a memory mapping: c-blosc2's memory-mapped backend
//! (`BLOSC2_IO_FILESYSTEM_MMAP`). Rust callers get it as a [`Backend`] from
//! [`mmap`]; the C API's `blosc2_stdio_mmap_*` functions drive the same
//! [`MmapFile`], keeping its parts in the caller's `blosc2_stdio_mmap`
//! between calls.
//!
//! The mapping doubles as a write buffer: in the writable modes it starts at
//! the initial mapping size (never less than the file), and a write that goes
//! past it grows it to twice the new file size. A shared mapping ("r+", "w+")
//! keeps the file on disk as long as what was written (it is extended before a
//! write past its end, and cut by [`MmapFile::set_len`]), and closing flushes
//! it to disk. A copy-on-write mapping ("c") never changes the file: what is
//! written, growth included, stays in memory.
//!
//! As with any mapping, another process that cuts the file under a shared
//! mapping makes reads of the lost pages fault (`SIGBUS`). The system calls
//! are in `crate::os::map`; the rest of the unsafe code of the mapping is in
//! this file.

use super::{Backend, Mode, Stream};
use crate::error::{Error, Result};
use crate::os::{self, map, RawFile};
use std::fs::{File, OpenOptions};
use std::path::Path;
use std::ptr;
use std::str::FromStr;
use std::sync::{Arc, Mutex, RwLock};

/// c-blosc2's initial mapping size (`BLOSC2_STDIO_MMAP_DEFAULTS`): 1 GiB.
pub const DEFAULT_INITIAL_MAPPING_SIZE: usize = 1 << 30;

/// How a file is mapped: c-blosc2's `blosc2_stdio_mmap.mode`, whose strings
/// (`"r"`, `"r+"`, `"w+"`, `"c"`) [`MmapMode::from_str`] reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MmapMode {
    /// `"r"`: read only; the file must exist. The mapping is the file's size.
    Read,
    /// `"r+"`: read and write; the file must exist.
    Update,
    /// `"w+"`: read and write; the file is created, or emptied if it exists.
    Create,
    /// `"c"`: copy-on-write; the file must exist and is never changed.
    CopyOnWrite,
}

impl MmapMode {
    /// c-blosc2's mode string.
    pub fn as_str(self) -> &'static str {
        match self {
            MmapMode::Read => "r",
            MmapMode::Update => "r+",
            MmapMode::Create => "w+",
            MmapMode::CopyOnWrite => "c",
        }
    }

    /// Whether writes are allowed.
    pub fn writable(self) -> bool {
        self != MmapMode::Read
    }

    /// Whether what is written goes to the file on disk.
    fn shared_writes(self) -> bool {
        matches!(self, MmapMode::Update | MmapMode::Create)
    }
}

impl FromStr for MmapMode {
    type Err = Error;

    /// c-blosc2's mode strings: `"r"`, `"r+"`, `"w+"` or `"c"` (`InvalidParam` otherwise).
    fn from_str(s: &str) -> Result<MmapMode> {
        match s {
            "r" => Ok(MmapMode::Read),
            "r+" => Ok(MmapMode::Update),
            "w+" => Ok(MmapMode::Create),
            "c" => Ok(MmapMode::CopyOnWrite),
            _ => Err(Error::InvalidParam),
        }
    }
}

/// The memory-mapped backend: like c-blosc2's, it maps one file, on its
/// first [`open`](Backend::open), with the mode it was made with (the mode
/// that `open` asks for is not used). Opening that path again shares the
/// mapping; another path is refused (`FileOpen`). The mapping lives until
/// the backend and all its streams are gone, and is then flushed and unmapped.
pub struct Mmap {
    mode: MmapMode,
    initial_mapping_size: usize,
    /// The file, once mapped, and its path.
    mapped: Mutex<Option<(String, Arc<RwLock<MmapFile>>)>>,
}

impl Mmap {
    /// A backend that maps its file in `mode`, `initial_mapping_size` bytes
    /// at first in the writable modes.
    pub fn new(mode: MmapMode, initial_mapping_size: usize) -> Mmap {
        Mmap { mode, initial_mapping_size, mapped: Mutex::new(None) }
    }
}

/// The memory-mapped backend, shared: see [`Mmap`].
///
/// ```
/// use b2nd::chunk::{CParams, DParams};
/// use b2nd::io::{self, MmapMode};
/// use b2nd::schunk::{Storage, SuperChunk};
///
/// let path = b2nd::os::temp_dir().join(format!("b2nd-mmap-doc-{}.b2frame", b2nd::os::process_id()));
/// let path = path.to_str().unwrap().to_string();
/// # let _ = std::fs::remove_file(&path);
/// // A new frame file, written through a mapping of 1 MiB (it grows as needed).
/// let backend = io::mmap(MmapMode::Create, 1 << 20);
/// let storage = Storage { contiguous: true, urlpath: Some(path.clone()), backend, ..Storage::default() };
/// let mut sc = SuperChunk::new(CParams { typesize: 4, ..CParams::default() }, DParams::default(), storage)?;
/// sc.append_buffer(&[7u8; 40_000])?;
/// drop(sc); // flushes the mapping to the file and unmaps it
///
/// // Read it back through a read-only mapping.
/// let sc = SuperChunk::open(&path, io::mmap(MmapMode::Read, 0), false)?;
/// let mut out = vec![0u8; 40_000];
/// sc.decompress_chunk(0, &mut out)?;
/// assert_eq!(out, [7u8; 40_000]);
/// # std::fs::remove_file(&path).unwrap();
/// # Ok::<(), b2nd::Error>(())
/// ```
pub fn mmap(mode: MmapMode, initial_mapping_size: usize) -> Arc<dyn Backend> {
    Arc::new(Mmap::new(mode, initial_mapping_size))
}

impl Backend for Mmap {
    fn open(&self, path: &str, _mode: Mode) -> Result<Box<dyn Stream>> {
        let mut mapped = self.mapped.lock().unwrap_or_else(|e| e.into_inner());
        let file = match &*mapped {
            Some((p, file)) if p == path => Arc::clone(file),
            Some(_) => return Err(Error::FileOpen),
            None => {
                let file = Arc::new(RwLock::new(MmapFile::open(path, self.mode, self.initial_mapping_size)?));
                *mapped = Some((path.to_string(), Arc::clone(&file)));
                file
            }
        };
        Ok(Box::new(MmapStream(file)))
    }

    fn sidecar(&self) -> Option<Arc<dyn Backend>> {
        // the mapped file is a file: its journal is one too
        Some(super::filesystem())
    }

    fn id(&self) -> u8 {
        1
    }
}

/// A stream of the backend: a share of its one mapped file. Reads copy out
/// of the mapping, several at once; writes copy into it, one at a time.
struct MmapStream(Arc<RwLock<MmapFile>>);

impl Stream for MmapStream {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let file = self.0.read().unwrap_or_else(|e| e.into_inner());
        Ok(usize::try_from(pos).map_or(0, |pos| file.read_at(pos, buf)))
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> Result<()> {
        let pos = usize::try_from(pos).map_err(|_| Error::FileWrite)?;
        self.0.write().unwrap_or_else(|e| e.into_inner()).write_at(pos, data)
    }

    fn size(&self) -> Result<u64> {
        Ok(self.0.read().unwrap_or_else(|e| e.into_inner()).len() as u64)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        let len = usize::try_from(len).map_err(|_| Error::FileTruncate)?;
        self.0.write().unwrap_or_else(|e| e.into_inner()).set_len(len)
    }

    fn sync(&self) -> Result<()> {
        self.0.read().unwrap_or_else(|e| e.into_inner()).sync()
    }
}

/// An open file and its mapping: `mapping_size` bytes at `addr`, of which
/// the first `file_size` are the file's. Unmapped (and flushed, for a shared
/// writable mapping) when dropped.
pub struct MmapFile {
    /// The mapped file (`None` for parts given without a descriptor, through
    /// the C API: then the mapping can be written but not extended).
    file: Option<File>,
    mode: MmapMode,
    addr: *mut u8,
    mapping_size: usize,
    /// The file's size; for a copy-on-write mapping, the size it would have.
    file_size: usize,
}

// SAFETY: the mapping belongs to this value alone; methods that take `&self`
// only read it, those that change or move it take `&mut self`.
unsafe impl Send for MmapFile {}
// SAFETY: `&self` methods only read the mapping, flush it, or hand out a raw
// pointer into it (a write through which is its user's own `unsafe`); writing,
// remapping or unmapping it takes `&mut self`.
unsafe impl Sync for MmapFile {}

/// Whether the mapping of a file in `mode` is kept exactly as long as the
/// file: where a shared view longer than its file lengthens the file
/// (Windows), so that the file on disk is never longer than what was
/// written. Elsewhere the mapping is a write buffer, longer than the file.
fn exact_length(mode: MmapMode) -> bool {
    map::SHARED_EXTENDS_FILE && mode != MmapMode::CopyOnWrite
}

/// The parts of an open [`MmapFile`], for a caller that keeps them in a
/// struct of its own between calls (the C API's `blosc2_stdio_mmap`).
pub struct RawMmap {
    /// The file ([`os::NO_RAW_FILE`] for none).
    pub fd: RawFile,
    pub addr: *mut u8,
    pub mapping_size: usize,
    pub file_size: usize,
    /// `Update` and `Create` work alike once the file is open.
    pub mode: MmapMode,
}

impl MmapFile {
    /// Open `path` and map it. The mapping is `initial_mapping_size` bytes in
    /// the writable modes and the file's size in mode `Read`, but never less
    /// than the file, nor empty. Fails with `FileOpen`.
    pub fn open(path: impl AsRef<Path>, mode: MmapMode, initial_mapping_size: usize) -> Result<MmapFile> {
        let mut o = OpenOptions::new();
        match mode {
            MmapMode::Read | MmapMode::CopyOnWrite => o.read(true),
            MmapMode::Update => o.read(true).write(true),
            MmapMode::Create => o.read(true).write(true).create(true).truncate(true),
        };
        let file = o.open(path.as_ref()).map_err(|_| Error::FileOpen)?;
        let file_size =
            file.metadata().ok().and_then(|m| usize::try_from(m.len()).ok()).ok_or(Error::FileOpen)?;
        let wanted = if mode == MmapMode::Read { file_size } else { initial_mapping_size };
        let mapping_size = if exact_length(mode) { file_size } else { wanted.max(file_size).max(1) };
        let addr = if mapping_size == 0 {
            // An empty file where shared views are its length: mapped when it
            // grows. (Not null: null is an unmapped, closed file.)
            Ok(ptr::NonNull::dangling().as_ptr())
        } else if mode == MmapMode::CopyOnWrite {
            map::map_private(&file, mapping_size, file_size)
        } else {
            map::map_shared(&file, mapping_size, mode.writable())
        };
        let addr = addr.map_err(|_| Error::FileOpen)?;
        crate::info!(
            "Opened memory-mapped file {} in mode {} with an mapping size of {mapping_size} bytes.",
            path.as_ref().display(),
            mode.as_str()
        );
        Ok(MmapFile { file: Some(file), mode, addr, mapping_size, file_size })
    }

    /// The file's size.
    pub fn len(&self) -> usize {
        self.file_size
    }

    /// Whether the file is empty.
    pub fn is_empty(&self) -> bool {
        self.file_size == 0
    }

    /// Copy the bytes at `pos` into `buf`; how many were copied (fewer than
    /// `buf.len()` only at the end of the file).
    pub fn read_at(&self, pos: usize, buf: &mut [u8]) -> usize {
        let n = self.file_size.saturating_sub(pos).min(buf.len());
        if n > 0 {
            // SAFETY: `pos + n <= file_size <= mapping_size`: inside the live
            // mapping; `buf` is borrowed mutably, so it is not part of it.
            unsafe { ptr::copy_nonoverlapping(self.addr.add(pos), buf.as_mut_ptr(), n) };
        }
        n
    }

    /// Where the `len` bytes at `pos` lie in the mapping, when they lie within
    /// the file. The pointer is good until the mapping grows (it may move) or goes.
    pub fn ptr_at(&self, pos: usize, len: usize) -> Option<*mut u8> {
        let end = pos.checked_add(len)?;
        (end <= self.file_size && end <= self.mapping_size).then(|| self.addr.wrapping_add(pos))
    }

    /// Write `data` at `pos`. Past the end of the file, the file grows (on
    /// disk too, unless copy-on-write), and the mapping grows to twice the new
    /// size when it is too small. Fails with `FileWrite` in mode `Read`.
    pub fn write_at(&mut self, pos: usize, data: &[u8]) -> Result<()> {
        // SAFETY: `data` is readable for its length, and not part of the
        // mapping (no safe borrow of the mapping exists).
        unsafe { self.write_raw(pos, data.as_ptr(), data.len()) }
    }

    /// [`write_at`](Self::write_at) from `len` bytes at `src`, which may lie
    /// in the mapping itself (the copy is a `memmove`).
    ///
    /// # Safety
    /// `src` must be readable for `len` bytes after the mapping has grown as
    /// this write needs (a pointer into a mapping that moves dangles: the C
    /// API's contract, as in c-blosc2).
    pub unsafe fn write_raw(&mut self, pos: usize, src: *const u8, len: usize) -> Result<()> {
        if len == 0 {
            return Ok(());
        }
        if !self.mode.writable() {
            return Err(Error::FileWrite);
        }
        let end = pos.checked_add(len).ok_or(Error::FileWrite)?;
        let old_size = self.file_size;
        let new_size = end.max(old_size);
        let extend_file = new_size > old_size && self.mode.shared_writes();
        if extend_file {
            self.file
                .as_ref()
                .ok_or(Error::FileWrite)?
                .set_len(new_size as u64)
                .map_err(|_| Error::FileWrite)?;
        }
        if self.mapping_size < new_size {
            // Twice the new size, as a write buffer; exactly it where a view
            // longer than the file would lengthen the file (Windows).
            let target =
                if exact_length(self.mode) { new_size } else { new_size.checked_mul(2).unwrap_or(new_size) };
            if let Err(e) = self.grow(target) {
                if let (true, Some(f)) = (extend_file, self.file.as_ref()) {
                    let _ = f.set_len(old_size as u64);
                }
                return Err(e);
            }
        }
        self.file_size = new_size;
        // SAFETY: `pos + len <= file_size <= mapping_size`: inside the live,
        // writable mapping; `src` is readable for `len` bytes (caller contract).
        unsafe { ptr::copy(src, self.addr.add(pos), len) };
        match &self.file {
            Some(f) if self.mode.shared_writes() => {
                // SAFETY: as above: the bytes written lie inside the live mapping of `f`.
                unsafe { map::written(f, self.addr, pos, len) }.map_err(|_| Error::FileWrite)
            }
            _ => Ok(()),
        }
    }

    /// Set the file's size to `len` bytes (on disk too, unless copy-on-write),
    /// growing the mapping to `len` when it is smaller, so that the whole file
    /// stays readable. Fails with `FileTruncate` in mode `Read`.
    pub fn set_len(&mut self, len: usize) -> Result<()> {
        if self.file_size == len {
            return Ok(());
        }
        match self.mode {
            MmapMode::Read => return Err(Error::FileTruncate),
            MmapMode::Update | MmapMode::Create if map::CUT_NEEDS_UNMAP && len < self.file_size => {
                return self.cut_unmapped(len)
            }
            MmapMode::Update | MmapMode::Create => {
                self.file
                    .as_ref()
                    .ok_or(Error::FileTruncate)?
                    .set_len(len as u64)
                    .map_err(|_| Error::FileTruncate)?;
                if len < self.file_size {
                    // SAFETY: `addr`/`mapping_size` describe the live shared mapping.
                    unsafe { map::cut(self.addr, self.mapping_size, len) };
                }
            }
            MmapMode::CopyOnWrite => {}
        }
        if len > self.mapping_size {
            if let Err(e) = self.grow(len) {
                if let (true, Some(f)) = (self.mode.shared_writes(), self.file.as_ref()) {
                    let _ = f.set_len(self.file_size as u64);
                }
                return Err(e);
            }
        }
        self.file_size = len;
        Ok(())
    }

    /// The open file, borrowed as a plain value ([`os::NO_RAW_FILE`] for none).
    pub fn raw_file(&self) -> RawFile {
        self.file.as_ref().map_or(os::NO_RAW_FILE, os::raw_file_of)
    }

    /// Cut the file to `len` bytes where a mapped file cannot be cut
    /// (Windows): unmap, cut, map the same size again.
    fn cut_unmapped(&mut self, len: usize) -> Result<()> {
        if self.file.is_none() {
            return Err(Error::FileTruncate);
        }
        self.unmap().map_err(|_| Error::FileTruncate)?;
        let file = self.file.as_ref().ok_or(Error::FileTruncate)?;
        let cut = file.set_len(len as u64);
        // Mapped again whatever the cut gave: the handle stays usable.
        let size = if cut.is_ok() && exact_length(self.mode) { len } else { self.mapping_size };
        if size == 0 {
            (self.addr, self.mapping_size, self.file_size) = (ptr::NonNull::dangling().as_ptr(), 0, 0);
            return cut.map_err(|_| Error::FileTruncate);
        }
        match map::map_shared(file, size, true) {
            Ok(addr) => (self.addr, self.mapping_size) = (addr, size),
            Err(_) => {
                // Nothing mapped: the file reads as empty from now on.
                (self.mapping_size, self.file_size) = (0, 0);
                return Err(Error::FileTruncate);
            }
        }
        cut.map_err(|_| Error::FileTruncate)?;
        self.file_size = len;
        Ok(())
    }

    /// Flush a shared writable mapping to disk, unmap it and close the file.
    pub fn close(mut self) -> Result<()> {
        self.unmap()
    }

    /// Give the file and its mapping up as parts, neither unmapped nor closed,
    /// to be taken back by [`from_raw`](Self::from_raw).
    pub fn into_raw(self) -> RawMmap {
        let this = std::mem::ManuallyDrop::new(self);
        // SAFETY: the file is moved out of a value that is never dropped.
        let file = unsafe { ptr::read(&this.file) };
        RawMmap {
            fd: file.map_or(os::NO_RAW_FILE, os::file_into_raw),
            addr: this.addr,
            mapping_size: this.mapping_size,
            file_size: this.file_size,
            mode: this.mode,
        }
    }

    /// Take back the parts of [`into_raw`](Self::into_raw).
    ///
    /// # Safety
    /// `raw` must hold the parts that `into_raw` gave, unchanged, and be taken
    /// back once (the result owns the descriptor and the mapping).
    pub unsafe fn from_raw(raw: RawMmap) -> MmapFile {
        // SAFETY: caller contract: an open file (or none), owned by these parts.
        let file = unsafe { os::file_from_raw(raw.fd) };
        MmapFile {
            file,
            mode: raw.mode,
            addr: raw.addr,
            mapping_size: raw.mapping_size,
            file_size: raw.file_size,
        }
    }

    /// Grow the mapping to `new_len` bytes; it may move.
    fn grow(&mut self, new_len: usize) -> Result<()> {
        let new = if self.mode == MmapMode::CopyOnWrite {
            // The file's part: the file as mapped (this mode never changes it).
            let file_len = self
                .file
                .as_ref()
                .and_then(|f| f.metadata().ok())
                .and_then(|m| usize::try_from(m.len()).ok());
            let file_len = file_len.filter(|&n| n <= self.mapping_size).ok_or(Error::MemoryAlloc)?;
            // SAFETY: `addr`/`mapping_size` describe the live private mapping,
            // replaced by the one returned.
            unsafe { map::grow_private(self.addr, self.mapping_size, file_len, new_len) }
        } else {
            let file = self.file.as_ref().ok_or(Error::MemoryAlloc)?;
            if self.mapping_size == 0 {
                // Nothing mapped yet (an empty file, see `exact_length`).
                map::map_shared(file, new_len, true)
            } else {
                // SAFETY: `addr`/`mapping_size` describe the live shared mapping
                // of `file`, replaced by the one returned.
                unsafe { map::grow_shared(file, self.addr, self.mapping_size, new_len) }
            }
        };
        self.addr = new.map_err(|_| Error::MemoryAlloc)?;
        self.mapping_size = new_len;
        Ok(())
    }

    /// Make the file durable: the mapping's pages (shared writable mappings)
    /// and the file's data and length.
    fn sync(&self) -> Result<()> {
        if self.addr.is_null() {
            return Ok(());
        }
        if self.mode.shared_writes()
            && self.file_size > 0
            // SAFETY: `addr` is the live shared mapping (shared writes) of
            // `mapping_size >= file_size` bytes.
            && unsafe { map::flush(self.addr, self.file_size) }.is_err()
        {
            return Err(Error::FileWrite);
        }
        match &self.file {
            Some(f) if self.mode.shared_writes() => f.sync_data().map_err(|_| Error::FileWrite),
            _ => Ok(()),
        }
    }

    /// Flush (shared writable mappings) and unmap, once.
    fn unmap(&mut self) -> Result<()> {
        if self.addr.is_null() {
            return Ok(());
        }
        if self.mapping_size == 0 {
            self.addr = ptr::null_mut(); // nothing was mapped (see `exact_length`)
            return Ok(());
        }
        let mut r = Ok(());
        // SAFETY: `addr`/`mapping_size` describe the live mapping, released
        // here once (`addr` is cleared below); `file_size <= mapping_size`.
        unsafe {
            if self.mode.shared_writes()
                && self.file_size > 0
                && map::flush(self.addr, self.file_size).is_err()
            {
                r = Err(Error::FileWrite);
            }
            if map::unmap(self.addr, self.mapping_size, self.mode == MmapMode::CopyOnWrite).is_err() {
                r = Err(Error::FileWrite);
            }
        }
        self.addr = ptr::null_mut();
        r
    }
}

impl Drop for MmapFile {
    fn drop(&mut self) {
        let _ = self.unmap();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> String {
        let p = crate::os::temp_dir().join(format!("b2nd-mmap-{}-{name}", crate::os::process_id()));
        p.to_str().unwrap().to_string()
    }

    #[test]
    fn mode_strings() {
        let modes = ["r", "r+", "w+", "c"].map(|s| s.parse::<MmapMode>());
        assert_eq!(
            modes,
            [Ok(MmapMode::Read), Ok(MmapMode::Update), Ok(MmapMode::Create), Ok(MmapMode::CopyOnWrite)]
        );
        assert_eq!("rb".parse::<MmapMode>(), Err(Error::InvalidParam));
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files and mmap")]
    fn write_read_back_reopen() {
        let path = scratch("rw.bin");
        let _ = std::fs::remove_file(&path);
        let data: Vec<u8> = (1..=100).collect();
        let mut buf = [0u8; 100];
        {
            let backend = mmap(MmapMode::Create, 4096);
            let s = backend.open(&path, Mode::Create).unwrap();
            assert_eq!(s.size().unwrap(), 0);
            s.write_at(0, &data).unwrap();
            s.write_at(5000, &data).unwrap(); // past the 4 KiB mapping: it grows
            assert_eq!(s.size().unwrap(), 5100);
            assert_eq!(s.read_at(5000, &mut buf).unwrap(), 100);
            assert_eq!(buf[..], data[..]);
            assert_eq!(s.read_at(5060, &mut buf).unwrap(), 40); // short at the end
            assert_eq!(s.read_at(9000, &mut buf).unwrap(), 0);
            // The file holds what was written while the mapping is open (on WASI,
            // where the mapping is memory, because it writes through).
            let now = std::fs::read(&path).unwrap();
            assert_eq!((now.len(), &now[..100], &now[5000..]), (5100, &data[..], &data[..]));
            // The same path shares the mapping; another one is refused.
            let again = backend.open(&path, Mode::Read).unwrap();
            again.read_exact_at(0, &mut buf).unwrap();
            assert_eq!(buf[..], data[..]);
            assert_eq!(backend.open(&scratch("other.bin"), Mode::Create).err(), Some(Error::FileOpen));
            s.truncate(150).unwrap();
            assert_eq!(again.size().unwrap(), 150);
            assert_eq!(std::fs::metadata(&path).unwrap().len(), 150); // the file follows
        }
        // Gone: flushed to the file.
        let on_disk = std::fs::read(&path).unwrap();
        assert_eq!(on_disk.len(), 150);
        assert_eq!(on_disk[..100], data[..]);
        assert!(on_disk[100..].iter().all(|&b| b == 0));

        // Read only.
        let r = mmap(MmapMode::Read, DEFAULT_INITIAL_MAPPING_SIZE).open(&path, Mode::Update).unwrap();
        assert_eq!(r.size().unwrap(), 150);
        r.read_exact_at(0, &mut buf).unwrap();
        assert_eq!(buf[..], data[..]);
        assert_eq!(r.write_at(0, b"x"), Err(Error::FileWrite));
        assert_eq!(r.truncate(10), Err(Error::FileTruncate));
        drop(r);

        // Update: the file grows on disk.
        let u = mmap(MmapMode::Update, 0).open(&path, Mode::Update).unwrap();
        u.write_at(150, b"tail").unwrap();
        drop(u);
        let grown = std::fs::read(&path).unwrap();
        assert_eq!(grown[..150], on_disk[..]);
        assert_eq!(&grown[150..], b"tail");

        // Copy-on-write: what is written, growth included, stays in memory.
        let c = mmap(MmapMode::CopyOnWrite, 0).open(&path, Mode::Update).unwrap();
        c.write_at(0, &[0xff; 10]).unwrap();
        c.write_at(100_000, b"far").unwrap();
        assert_eq!(c.size().unwrap(), 100_003);
        c.read_exact_at(0, &mut buf[..10]).unwrap();
        assert_eq!(buf[..10], [0xff; 10]);
        c.read_exact_at(100_000, &mut buf[..3]).unwrap();
        assert_eq!(&buf[..3], b"far");
        c.truncate(20).unwrap();
        assert_eq!(c.size().unwrap(), 20);
        drop(c);
        assert_eq!(std::fs::read(&path).unwrap(), grown);

        assert_eq!(
            mmap(MmapMode::Read, 0).open(&scratch("missing.bin"), Mode::Read).err(),
            Some(Error::FileOpen)
        );
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files and mmap")]
    fn cut_then_grown_reads_zeros() {
        let path = scratch("cut.bin");
        let s = mmap(MmapMode::Create, 4096).open(&path, Mode::Create).unwrap();
        s.write_at(0, &[7; 100]).unwrap();
        s.truncate(40).unwrap();
        s.write_at(90, b"end").unwrap();
        let mut buf = [1u8; 93];
        s.read_exact_at(0, &mut buf).unwrap();
        assert!(buf[..40].iter().all(|&b| b == 7) && buf[40..90].iter().all(|&b| b == 0), "{buf:?}");
        assert_eq!(&buf[90..], b"end");
        assert_eq!(std::fs::read(&path).unwrap(), buf);
        drop(s);
        std::fs::remove_file(&path).unwrap();
    }

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files and mmap")]
    fn raw_parts_round_trip() {
        let path = scratch("raw.bin");
        let mut f = MmapFile::open(&path, MmapMode::Create, 64).unwrap();
        f.write_at(0, b"mapped").unwrap();
        let raw = f.into_raw();
        // (exactly the file where a longer view would lengthen it: Windows)
        let mapped = if map::SHARED_EXTENDS_FILE { 6 } else { 64 };
        assert_eq!((raw.file_size, raw.mapping_size), (6, mapped));
        // SAFETY: the parts just given, taken back once.
        let mut f = unsafe { MmapFile::from_raw(raw) };
        let p = f.ptr_at(0, 6).unwrap();
        // SAFETY: `ptr_at` vouches for 6 bytes, and the mapping has not moved.
        assert_eq!(unsafe { std::slice::from_raw_parts(p, 6) }, b"mapped");
        assert_eq!(f.ptr_at(1, 6), None);
        f.write_at(60, b"past the mapping").unwrap();
        assert_eq!(f.len(), 76);
        f.close().unwrap();
        assert_eq!(std::fs::read(&path).unwrap().len(), 76);
        std::fs::remove_file(&path).unwrap();
    }
}
