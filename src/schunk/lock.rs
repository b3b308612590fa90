//! Inter-process locking of an on-disk frame, compatible with c-blosc2 3.3:
//! a lock (`flock` on unix; `LockFileEx` of byte 0 on Windows, see
//! `crate::os::lock`) on a sidecar file (`<file>.b2lock`, or `<dir>/.b2lock` for sparse
//! frames), shared for reads and exclusive for writes, and a generation
//! counter (u64 at byte 8 of the sidecar) that every writer bumps, so that
//! readers notice changes even when the frame length stays the same.

use crate::error::{Error, Result};
use crate::os::Lock;
use std::fs::{File, OpenOptions};

/// Where the generation counter is: past the byte Windows locks.
const SEQ_OFFSET: u64 = 8;
/// The byte locked where locks are of byte ranges (c-blosc2's `[0, 1)`).
const LOCK_OFFSET: u64 = 0;

/// The lock of one handle on one frame (re-entrant on that handle).
pub struct FrameLock {
    file: File,
    depth: u32,
    /// The generation of the frame this handle has loaded.
    seen: u64,
    /// The generation while the lock is held (read when it was taken; a
    /// writer's own bump included).
    held: u64,
}

/// The sidecar path for the frame at `urlpath`.
pub fn lock_path(urlpath: &str, sparse: bool) -> String {
    if sparse {
        format!("{urlpath}/.b2lock")
    } else {
        format!("{urlpath}.b2lock")
    }
}

/// Whether the `BLOSC_LOCKING` environment variable asks for locking.
pub fn env_requests_locking() -> bool {
    std::env::var("BLOSC_LOCKING").is_ok_and(|v| !v.is_empty() && v != "0")
}

impl FrameLock {
    pub fn open(urlpath: &str, sparse: bool) -> Result<FrameLock> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .create(true)
            .truncate(false)
            .open(lock_path(urlpath, sparse))
            .map_err(|_| Error::Lock)?;
        Ok(FrameLock { file, depth: 0, seen: 0, held: 0 })
    }

    fn read_seq(&self) -> Result<u64> {
        let mut b = [0u8; 8];
        match crate::os::read_at(&self.file, SEQ_OFFSET, &mut b) {
            Ok(8) => Ok(u64::from_ne_bytes(b)),
            Ok(_) => Ok(0),
            Err(_) => Err(Error::Lock),
        }
    }

    /// Whether another handle wrote since this one last held the lock (a peek, without locking).
    pub fn changed_elsewhere(&self) -> bool {
        self.read_seq().is_ok_and(|s| s != self.seen)
    }

    /// Take the lock (exclusive for writers). Returns whether the frame
    /// changed since this handle loaded it: then a reader reloads it and calls
    /// [`FrameLock::mark_loaded`]. A writer's own change is taken as loaded.
    /// Taken again while held (by this handle, from any thread), it only
    /// counts, and answers as the first taking did until the handle reloads.
    pub fn acquire(&mut self, exclusive: bool) -> Result<bool> {
        if self.depth > 0 {
            self.depth += 1;
            return Ok(self.held != self.seen);
        }
        let kind = if exclusive { Lock::Exclusive } else { Lock::Shared };
        crate::os::lock(&self.file, LOCK_OFFSET, kind, true).map_err(|_| Error::Lock)?;
        let seq = match self.read_seq() {
            Ok(s) => s,
            Err(e) => {
                let _ = crate::os::unlock(&self.file, LOCK_OFFSET);
                return Err(e);
            }
        };
        if exclusive && crate::os::write_all_at(&self.file, SEQ_OFFSET, &(seq + 1).to_ne_bytes()).is_err() {
            let _ = crate::os::unlock(&self.file, LOCK_OFFSET);
            return Err(Error::Lock);
        }
        let changed = seq != self.seen;
        self.held = seq;
        if exclusive {
            // the writer reloads when `changed`, then adds its own change
            self.held = seq + 1;
            self.seen = seq + 1;
        }
        self.depth = 1;
        Ok(changed)
    }

    /// Record that the handle loaded the frame as it is while the lock is held.
    pub fn mark_loaded(&mut self) {
        if self.depth > 0 {
            self.seen = self.held;
        }
    }

    pub fn release(&mut self) -> Result<()> {
        match self.depth {
            0 => Ok(()),
            1 => {
                self.depth = 0;
                crate::os::unlock(&self.file, LOCK_OFFSET).map_err(|_| Error::Lock)
            }
            _ => {
                self.depth -= 1;
                Ok(())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri: files and file locks (isolation)")]
    fn a_change_elsewhere_stays_unseen_until_the_handle_reloads() {
        let dir = crate::os::temp_dir().join(format!("b2nd-lock-{}", crate::os::process_id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("frame.b2frame");
        let path = path.to_str().unwrap();
        let mut reader = FrameLock::open(path, false).unwrap();
        let mut writer = FrameLock::open(path, false).unwrap();
        assert!(!reader.acquire(false).unwrap());
        reader.release().unwrap();
        writer.acquire(true).unwrap();
        writer.release().unwrap();
        // seen when taken, and taken again, until the reader marks it loaded
        assert!(reader.changed_elsewhere());
        assert!(reader.acquire(false).unwrap());
        assert!(reader.acquire(false).unwrap(), "nested takings answer as the first");
        reader.release().unwrap();
        reader.release().unwrap();
        assert!(reader.acquire(false).unwrap(), "not loaded yet");
        reader.mark_loaded();
        assert!(!reader.acquire(false).unwrap(), "nested, after the reload");
        reader.release().unwrap();
        reader.release().unwrap();
        assert!(!reader.acquire(false).unwrap());
        reader.release().unwrap();
        assert!(!reader.changed_elsewhere());
        // a writer's own change is not a change for it
        assert!(!writer.acquire(true).unwrap());
        writer.release().unwrap();
        assert!(reader.changed_elsewhere());
        // (Closed first: Windows removes no directory with files open in it.)
        drop((reader, writer));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
