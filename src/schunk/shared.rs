//! A super-chunk shared by several handles and threads: reads run at once
//! (each holds the read side of a lock, and the shared frame lock when the
//! frame is locked), changes one at a time. Before a read, changes that
//! another handle or process made to the frame on disk are picked up.

use super::{ReadLock, SuperChunk};
use crate::error::Result;
use crate::io::Hold;
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
    // dropped first: the frame lock is released before the guard
    _lock: ReadLock,
    guard: Guard<'a>,
    _file: Option<Hold>,
}

/// Exclusive access to a shared super-chunk (see [`SChunk::write`]).
pub struct Writing<'a> {
    guard: RwLockWriteGuard<'a, SuperChunk>,
    _file: Option<Hold>,
}

/// Read access without looking at the frame on disk (see [`SChunk::read_cached`]).
pub struct Cached<'a> {
    guard: RwLockReadGuard<'a, SuperChunk>,
    _file: Option<Hold>,
}

impl std::ops::Deref for Writing<'_> {
    type Target = SuperChunk;
    fn deref(&self) -> &SuperChunk {
        &self.guard
    }
}

impl std::ops::DerefMut for Writing<'_> {
    fn deref_mut(&mut self) -> &mut SuperChunk {
        &mut self.guard
    }
}

impl std::ops::Deref for Cached<'_> {
    type Target = SuperChunk;
    fn deref(&self) -> &SuperChunk {
        &self.guard
    }
}

/// Usually a read guard; a write guard when the read had to reload the frame
/// first (kept for that read, as the frame lock is held across both).
///
/// Each guard also holds the frame's file open while it lasts (see
/// [`SuperChunk::hold_file`]), so that an operation opens it at most once.
enum Guard<'a> {
    Shared(RwLockReadGuard<'a, SuperChunk>),
    Reloaded(RwLockWriteGuard<'a, SuperChunk>),
}

impl Reading<'_> {
    /// Whether this read reloaded the frame (another handle had changed it).
    pub fn reloaded(&self) -> bool {
        matches!(self.guard, Guard::Reloaded(_))
    }
}

impl std::ops::Deref for Reading<'_> {
    type Target = SuperChunk;
    fn deref(&self) -> &SuperChunk {
        match &self.guard {
            Guard::Shared(g) => g,
            Guard::Reloaded(g) => g,
        }
    }
}

impl<'a> Cached<'a> {
    fn new(guard: RwLockReadGuard<'a, SuperChunk>) -> Cached<'a> {
        let file = guard.hold_file();
        Cached { guard, _file: file }
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

    /// Read access, current with the frame on disk: the shared frame lock is
    /// held (when locking) from the check that the frame is current until the
    /// read ends, so that another process's change is either all seen or not at all.
    pub fn read(&self) -> Result<Reading<'_>> {
        {
            let guard = self.guard_read();
            let file = guard.hold_file();
            if !guard.needs_refresh() {
                let (lock, changed) = guard.read_lock_checked()?;
                if !changed {
                    return Ok(Reading { _lock: lock, guard: Guard::Shared(guard), _file: file });
                }
            }
        }
        // Changed elsewhere: reload with the frame lock held, and read under it.
        let mut w = self.guard_write();
        let (lock, changed) = w.read_lock_checked()?;
        w.reload_locked(changed)?;
        let file = w.hold_file();
        Ok(Reading { _lock: lock, guard: Guard::Reloaded(w), _file: file })
    }

    /// Read access without looking at the frame on disk first.
    pub fn read_cached(&self) -> Cached<'_> {
        Cached::new(self.guard_read())
    }

    /// Read access without waiting: `None` while someone changes the super-chunk.
    pub fn try_read_cached(&self) -> Option<Cached<'_>> {
        match self.inner.try_read() {
            Ok(g) => Some(Cached::new(g)),
            Err(std::sync::TryLockError::Poisoned(e)) => Some(Cached::new(e.into_inner())),
            Err(std::sync::TryLockError::WouldBlock) => None,
        }
    }

    /// Exclusive access (the super-chunk's own changes take the frame lock).
    pub fn write(&self) -> Writing<'_> {
        let guard = self.guard_write();
        let file = guard.hold_file();
        Writing { guard, _file: file }
    }

    fn guard_write(&self) -> RwLockWriteGuard<'_, SuperChunk> {
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
