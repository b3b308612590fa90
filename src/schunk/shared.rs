//! A super-chunk shared by several handles and threads: reads run at once
//! (each holds the read side of a lock, and the shared frame lock when the
//! frame is locked), changes one at a time. Before a read, changes that
//! another handle or process made to the frame on disk are picked up.

use super::{ReadLock, SuperChunk};
use crate::error::Result;
use std::sync::{Arc, RwLock, RwLockReadGuard, RwLockWriteGuard};

/// A cheaply cloned handle on a [`SuperChunk`]; clones share it.
///
/// ```
/// use b2nd::schunk::{SChunk, Storage, SuperChunk};
/// use b2nd::chunk::{CParams, DParams};
///
/// let sc = SChunk::new(SuperChunk::new(CParams::default(), DParams::default(), Storage::default()).unwrap());
/// let other = sc.clone();
/// sc.write().append_buffer(&[7u8; 1000]).unwrap();
/// assert_eq!(other.read().unwrap().nchunks(), 1);
/// ```
#[derive(Clone)]
pub struct SChunk {
    inner: Arc<RwLock<SuperChunk>>,
}

/// Read access to a shared super-chunk (see [`SChunk::read`]).
pub struct Reading<'a> {
    _lock: ReadLock,
    guard: RwLockReadGuard<'a, SuperChunk>,
}

impl std::ops::Deref for Reading<'_> {
    type Target = SuperChunk;
    fn deref(&self) -> &SuperChunk {
        &self.guard
    }
}

impl SChunk {
    pub fn new(sc: SuperChunk) -> SChunk {
        SChunk { inner: Arc::new(RwLock::new(sc)) }
    }

    /// Pick up what another handle changed on disk; returns whether anything changed.
    pub fn refresh_if_stale(&self) -> Result<bool> {
        let stale = self.guard_read().needs_refresh();
        if !stale {
            return Ok(false);
        }
        self.write().refresh()
    }

    /// Read access, current with the frame on disk.
    pub fn read(&self) -> Result<Reading<'_>> {
        self.refresh_if_stale()?;
        let guard = self.guard_read();
        let lock = guard.read_lock()?;
        Ok(Reading { _lock: lock, guard })
    }

    /// Read access without looking at the frame on disk first.
    pub fn read_cached(&self) -> RwLockReadGuard<'_, SuperChunk> {
        self.guard_read()
    }

    /// Exclusive access (the super-chunk's own changes take the frame lock).
    pub fn write(&self) -> RwLockWriteGuard<'_, SuperChunk> {
        self.inner.write().unwrap_or_else(|e| e.into_inner())
    }

    fn guard_read(&self) -> RwLockReadGuard<'_, SuperChunk> {
        self.inner.read().unwrap_or_else(|e| e.into_inner())
    }

    /// Compress `src` with the super-chunk's parameters and append it; returns
    /// the new number of chunks. The compression runs without holding the
    /// super-chunk's lock, so that user codecs, filters and prefilters may read
    /// the super-chunk (its metalayers, say) through another handle meanwhile.
    pub fn append_buffer(&self, src: &[u8]) -> Result<usize> {
        let mut comp = self.write().take_compressor()?;
        let nchunk = self.read_cached().nchunks();
        comp.set_nchunk(Some(nchunk as i64));
        let chunk = comp.compress_to_vec(src);
        let mut w = self.write();
        w.give_compressor(comp);
        w.append_compressed(chunk?)
    }

    /// Whether `other` is a handle on the same super-chunk.
    pub fn same(&self, other: &SChunk) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }
}
