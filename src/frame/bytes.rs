//! Where a frame's bytes live: in memory (owned, or someone else's until the
//! first change), in a stream at an offset, and, for a sparse frame, the
//! directory of its chunk files.

use crate::chunk::header::{Header, EXTENDED_HEADER_LENGTH};
use crate::error::{Error, Result};
use crate::io::{Backend, Mode, Stream};
use std::borrow::Cow;
use std::sync::Arc;

/// The first bytes of a stored chunk (its header, up to the extended
/// header's length), kept inline: reading a chunk's sizes allocates nothing.
#[derive(Clone, Copy)]
pub(super) struct ChunkHead {
    bytes: [u8; EXTENDED_HEADER_LENGTH],
    len: usize,
}

impl ChunkHead {
    /// The first `len` (at most [`EXTENDED_HEADER_LENGTH`]) bytes, filled by `read`.
    pub(super) fn read(len: usize, read: impl FnOnce(&mut [u8]) -> Result<()>) -> Result<ChunkHead> {
        let mut head = ChunkHead { bytes: [0; EXTENDED_HEADER_LENGTH], len: len.min(EXTENDED_HEADER_LENGTH) };
        read(&mut head.bytes[..head.len])?;
        Ok(head)
    }
}

impl std::ops::Deref for ChunkHead {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

/// Where the bytes of a contiguous frame (or of a sparse frame's index) live.
pub(super) enum Bytes {
    /// An in-memory frame owned here.
    Memory(Vec<u8>),
    /// An in-memory frame owned by someone else; copied on the first change.
    Foreign(Arc<dyn AsRef<[u8]> + Send + Sync>),
    /// A stream (file), the frame starting at `base`.
    Stream { stream: Box<dyn Stream>, base: u64, writable: bool },
}

impl Bytes {
    pub(super) fn slice(&self) -> Option<&[u8]> {
        match self {
            Bytes::Memory(v) => Some(v),
            Bytes::Foreign(f) => Some((**f).as_ref()),
            Bytes::Stream { .. } => None,
        }
    }

    /// `len` bytes at `pos` of the frame.
    pub(super) fn read(&self, pos: u64, len: usize) -> Result<Cow<'_, [u8]>> {
        match self {
            Bytes::Stream { stream, base, .. } => {
                let mut buf = vec![0u8; len];
                let at = base.checked_add(pos).ok_or(Error::FileRead)?;
                stream.read_exact_at(at, &mut buf)?;
                Ok(Cow::Owned(buf))
            }
            _ => {
                let s = self.slice().unwrap_or(&[]);
                let start = usize::try_from(pos).map_err(|_| Error::ReadBuffer)?;
                let end = start.checked_add(len).ok_or(Error::ReadBuffer)?;
                s.get(start..end).map(Cow::Borrowed).ok_or(Error::ReadBuffer)
            }
        }
    }

    pub(super) fn read_into(&self, pos: u64, buf: &mut [u8]) -> Result<()> {
        match self {
            Bytes::Stream { stream, base, .. } => {
                stream.read_exact_at(base.checked_add(pos).ok_or(Error::FileRead)?, buf)
            }
            _ => {
                let src = self.read(pos, buf.len())?;
                buf.copy_from_slice(&src);
                Ok(())
            }
        }
    }

    pub(super) fn owned(&mut self) -> &mut Vec<u8> {
        if let Bytes::Foreign(f) = self {
            *self = Bytes::Memory((**f).as_ref().to_vec());
        }
        match self {
            Bytes::Memory(v) => v,
            _ => unreachable!("owned() is only called on in-memory frames"),
        }
    }

    pub(super) fn write(&mut self, pos: u64, data: &[u8]) -> Result<()> {
        match self {
            Bytes::Stream { stream, base, writable } => {
                if !*writable {
                    return Err(Error::FileWrite);
                }
                stream.write_at(base.checked_add(pos).ok_or(Error::FileWrite)?, data)
            }
            _ => {
                let v = self.owned();
                let pos = usize::try_from(pos).map_err(|_| Error::WriteBuffer)?;
                let end = pos.checked_add(data.len()).ok_or(Error::WriteBuffer)?;
                if v.len() < end {
                    v.resize(end, 0);
                }
                v[pos..end].copy_from_slice(data);
                Ok(())
            }
        }
    }

    pub(super) fn truncate(&mut self, len: u64) -> Result<()> {
        match self {
            Bytes::Stream { stream, base, writable } => {
                if !*writable {
                    return Err(Error::FileWrite);
                }
                stream.truncate(base.checked_add(len).ok_or(Error::FileTruncate)?)
            }
            _ => {
                let v = self.owned();
                v.resize(usize::try_from(len).map_err(|_| Error::WriteBuffer)?, 0);
                Ok(())
            }
        }
    }
}

/// A sparse frame's directory: one file per stored chunk.
pub(super) struct Directory {
    pub(super) path: String,
    pub(super) backend: Arc<dyn Backend>,
    /// The chunk files written since the last sync, and whether files were
    /// made or removed since (the directory's entries changed).
    unsynced: std::sync::Mutex<(Vec<i64>, bool)>,
}

impl Directory {
    pub(super) fn new(path: &str, backend: Arc<dyn Backend>) -> Directory {
        Directory { path: path.to_string(), backend, unsynced: Default::default() }
    }

    fn unsynced(&self) -> std::sync::MutexGuard<'_, (Vec<i64>, bool)> {
        self.unsynced.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sync the chunk files written since the last sync, and the directory
    /// when its entries changed.
    pub(super) fn sync_written(&self) -> Result<()> {
        let (ids, entries) = std::mem::take(&mut *self.unsynced());
        for &id in &ids {
            // (For writing: a sync needs it on some systems, e.g. Windows.)
            // (An error: removed since.)
            if let Ok(s) = self.backend.open(&self.chunk_path(id), Mode::Update) {
                s.sync()?;
            }
        }
        if entries || !ids.is_empty() {
            self.backend.sync_dir(&self.path)?;
        }
        Ok(())
    }

    pub(super) fn chunk_path(&self, id: i64) -> String {
        format!("{}/{:08X}.chunk", self.path, id)
    }

    /// The chunk file `id`, whole, into `buf` (resized to its length).
    pub(super) fn read_chunk_into(&self, id: i64, buf: &mut Vec<u8>) -> Result<()> {
        let s = self.backend.open(&self.chunk_path(id), Mode::Read)?;
        let size = s.size()?;
        // A file too short for a chunk header was cut short (c-blosc2: FILE_READ).
        if size < 16 {
            return Err(Error::FileRead);
        }
        if size > i32::MAX as u64 {
            return Err(Error::InvalidHeader);
        }
        buf.resize(size as usize, 0);
        s.read_exact_at(0, buf)
    }

    /// The first bytes of a chunk file (up to 32), and the chunk's sizes.
    pub(super) fn read_head(&self, id: i64) -> Result<(ChunkHead, i32, i32)> {
        let s = self.backend.open(&self.chunk_path(id), Mode::Read)?;
        let size = s.size()?;
        if size < 16 {
            return Err(Error::FileRead);
        }
        if size > i32::MAX as u64 {
            return Err(Error::InvalidHeader);
        }
        let head = ChunkHead::read(size as usize, |buf| s.read_exact_at(0, buf))?;
        let (nb, cb, _) = Header::sizes(&head)?;
        if (cb as u64) > size {
            // The file lost the end of its chunk.
            return Err(Error::FileRead);
        }
        if cb as u64 != size {
            return Err(Error::InvalidHeader);
        }
        Ok((head, nb, cb))
    }

    pub(super) fn write_chunk(&self, id: i64, chunk: &[u8]) -> Result<()> {
        {
            let mut u = self.unsynced();
            u.0.push(id);
            u.1 = true;
        }
        let s = self.backend.open(&self.chunk_path(id), Mode::Create)?;
        s.write_at(0, chunk)
    }

    pub(super) fn remove_chunk(&self, id: i64) -> Result<()> {
        self.unsynced().1 = true;
        self.backend.remove(&self.chunk_path(id))
    }
}
