//! A change of a frame file as one journaled transaction: what it will
//! overwrite is saved in the undo journal first, and a failed change is put
//! back (see `frame::journal`).

use super::{Frame, Txn, SHIFT_LIMIT};
use super::super::bytes::Bytes;
use super::super::journal::{Journal, Undo};
use crate::error::{Error, Result};

impl Frame {
    // ------------------------------------------------------------ crash safety

    /// Whether changes of this frame are journaled (and so undone on failure).
    pub fn is_journaled(&self) -> bool {
        self.journal.is_some() && !self.is_memory()
    }

    /// Make the changes of this frame file crash-safe with `journal`.
    pub fn set_journal(&mut self, journal: Journal) {
        self.journal = Some(Box::new(journal));
    }

    /// Start a change: until [`Frame::end_change`], what the change overwrites
    /// in the frame file is first saved in the journal (the header and the
    /// offsets index and trailer at once, more as the change needs it).
    /// Nested starts only count. A no-op for frames without a journal.
    pub fn begin_change(&mut self) -> Result<()> {
        if self.batch {
            return Ok(());
        }
        if self.broken {
            crate::trace!("a failed change of this frame could not be undone; reopen it to recover");
            return Err(Error::FileWrite);
        }
        if let Some(t) = self.txn.as_mut() {
            t.depth += 1;
            return Ok(());
        }
        if self.journal.is_none() {
            return Ok(());
        }
        let Bytes::Stream { stream, .. } = &self.bytes else { return Ok(()) };
        let identity = stream.identity().unwrap_or((0, 0));
        let undo = Undo { identity, old_len: self.layout.frame_len, regions: Vec::new() };
        self.txn = Some(Box::new(Txn { depth: 1, undo, layout: self.layout.clone(), added: Vec::new(), dropped: Vec::new() }));
        let from = if self.dir.is_some() { 0 } else { self.layout.header_len as u64 + self.layout.cbytes.max(0) as u64 };
        let hl = self.layout.header_len as u64;
        if let Err(e) = self.need(from, Some((0, hl))) {
            self.txn = None;
            return Err(e);
        }
        Ok(())
    }

    /// End the change begun last: on success, the commit point (the journal
    /// is emptied); on failure the old bytes and layout are put back.
    pub fn end_change<T>(&mut self, r: Result<T>) -> Result<T> {
        let Some(t) = self.txn.as_mut() else { return r };
        t.depth -= 1;
        if t.depth > 0 {
            return r;
        }
        let Some(t) = self.txn.take() else { return r };
        let journal = self.journal.as_mut().ok_or(Error::Failure)?;
        let committed = match r {
            Ok(v) if t.undo.regions.is_empty() => Ok(v),
            Ok(v) => journal.commit().map(|()| v),
            Err(e) => Err(e),
        };
        let e = match committed {
            Ok(v) => {
                // the old chunk files go once nothing can bring them back
                self.remove_files(&t.dropped);
                return Ok(v);
            }
            Err(e) => e,
        };
        self.remove_files(&t.added);
        // Undo: the old bytes, the old length, the old layout.
        self.layout = t.layout;
        let mut put_back = Ok(());
        for (pos, bytes) in &t.undo.regions {
            put_back = put_back.and_then(|()| self.bytes.write(*pos, bytes));
        }
        put_back = put_back.and_then(|()| self.bytes.truncate(t.undo.old_len));
        if put_back.is_ok() {
            if let Some(j) = self.journal.as_mut() {
                let _ = j.commit();
            }
        } else {
            // the journal stays for the next open, which puts the frame back
            self.broken = true;
        }
        Err(e)
    }

    pub(super) fn remove_files(&self, ids: &[i64]) {
        if let Some(d) = &self.dir {
            for &id in ids {
                // a failure only leaves a stray file
                let _ = d.remove_chunk(id);
            }
        }
    }

    /// Remove chunk file `id` once the change is committed (at once outside a change).
    pub(super) fn drop_file(&mut self, id: i64) {
        match self.txn.as_mut() {
            Some(t) => t.dropped.push(id),
            None => self.remove_files(&[id]),
        }
    }

    /// Save in the journal, if not yet, the bytes of the old frame from
    /// `from` to its end and those of `extra` (position, length), before the
    /// change writes there. Old chunk bytes nobody references need not be
    /// saved: a long stretch of the chunks section is saved chunk by chunk.
    pub(super) fn need(&mut self, from: u64, extra: Option<(u64, u64)>) -> Result<()> {
        let Some(t) = self.txn.as_ref() else { return Ok(()) };
        let old_len = t.undo.old_len;
        let old = &t.layout;
        let mut want: Vec<(u64, u64)> = Vec::new();
        let section_end = if self.dir.is_some() { 0 } else { old.header_len as u64 + old.cbytes.max(0) as u64 };
        if from < section_end && section_end - from > SHIFT_LIMIT {
            // only the chunks stored there
            for off in old.offsets.values() {
                if off >= 0 {
                    let at = old.header_len as u64 + off as u64;
                    if at >= from && at < section_end {
                        let cb = self.stored_head(off).map_or(0, |h| h.2.max(0) as u64);
                        want.push((at, at + cb));
                    }
                }
            }
            want.push((section_end, old_len));
        } else {
            want.push((from, old_len));
        }
        if let Some((p, n)) = extra {
            want.push((p, p.saturating_add(n)));
        }
        let mut add = Vec::new();
        for (a, b) in want {
            let b = b.min(old_len);
            let mut pieces = vec![(a, b)];
            for (p, bytes) in &t.undo.regions {
                let (c, d) = (*p, p + bytes.len() as u64);
                pieces = pieces
                    .into_iter()
                    .flat_map(|(x, y)| {
                        let mut out = Vec::new();
                        if x < c.min(y) {
                            out.push((x, c.min(y)));
                        }
                        if d.max(x) < y {
                            out.push((d.max(x), y));
                        }
                        out
                    })
                    .collect();
            }
            for (x, y) in pieces {
                if x < y && !add.iter().any(|&(p, q): &(u64, u64)| p <= x && y <= q) {
                    add.push((x, y));
                }
            }
        }
        if add.is_empty() {
            return Ok(());
        }
        let mut regions = Vec::new();
        for (x, y) in add {
            let len = usize::try_from(y - x).map_err(|_| Error::MemoryAlloc)?;
            regions.push((x, self.bytes.read(x, len)?.into_owned()));
        }
        let t = self.txn.as_mut().ok_or(Error::Failure)?;
        t.undo.regions.extend(regions);
        let undo = t.undo.clone();
        self.journal.as_mut().ok_or(Error::Failure)?.begin(&undo)
    }
}
