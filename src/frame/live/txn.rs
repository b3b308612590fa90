//! A change of a frame file as one journaled transaction: what it will
//! overwrite is saved in the undo journal first, and a failed change is put
//! back (see `frame::journal`).

use super::super::bytes::Bytes;
use super::super::journal::{ranges_gaps, ranges_insert, Found, Journal, Plan, Undo};
use super::{Frame, Txn};
use crate::error::{Error, Result};
use crate::io::Durability;

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

    /// Sync changes from now on as `durability` says; the changes since the
    /// last checkpoint get one first.
    pub fn set_durability(&mut self, durability: Durability) -> Result<()> {
        if self.journal.as_ref().is_some_and(|j| j.has_epoch()) {
            self.sync()?;
        }
        if let Some(j) = self.journal.as_mut() {
            j.set_durability(durability);
        }
        Ok(())
    }

    /// Make every change so far durable: a checkpoint (a sync of the frame
    /// file for frames without a journal).
    pub fn sync(&mut self) -> Result<()> {
        if self.txn.is_some() || self.broken || self.is_memory() {
            return Ok(());
        }
        let Some(j) = self.journal.as_mut() else { return self.sync_files() };
        if j.lock_own_epoch()? {
            let r = self.checkpoint(true);
            self.unlock_journal();
            return r;
        }
        // no changes since the last checkpoint (or another handle took them
        // over and synced them): that checkpoint, durable
        self.unlock_journal();
        let drops = std::mem::take(&mut self.pending_drops);
        self.remove_files(&drops);
        self.sync_files()?;
        self.clean = true;
        self.journal.as_mut().ok_or(Error::Failure)?.sync_reset()
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
        let Some(journal) = self.journal.as_mut() else { return Ok(()) };
        let Bytes::Stream { stream, .. } = &self.bytes else { return Ok(()) };
        let identity = stream.identity().unwrap_or((0, 0));
        let found = journal.start_change()?;
        if let Err(e) = self.prepare_epoch(found) {
            self.unlock_journal();
            return Err(e);
        }
        let undo = Undo { identity, old_len: self.layout.frame_len, regions: Vec::new() };
        let fresh = !self.journal.as_ref().is_some_and(|j| j.has_epoch());
        self.txn = Some(Box::new(Txn {
            depth: 1,
            undo,
            layout: self.layout.clone(),
            added: Vec::new(),
            dropped: Vec::new(),
            saved: Vec::new(),
            spilled: false,
            fresh,
        }));
        self.clean = false;
        let from = if self.dir.is_some() {
            0
        } else {
            self.layout.header_len as u64 + self.layout.cbytes.max(0) as u64
        };
        let hl = self.layout.header_len as u64;
        if let Err(e) = self.need(from, Some((0, hl))) {
            self.txn = None;
            self.unlock_journal();
            return Err(e);
        }
        Ok(())
    }

    /// Before the first record of an epoch: take over what another handle
    /// left in the journal, and make the frame as it is the checkpoint (durable).
    fn prepare_epoch(&mut self, found: Found) -> Result<()> {
        let journal = self.journal.as_mut().ok_or(Error::Failure)?;
        let syncs = journal.durability().syncs();
        match found {
            Found::Ours if journal.has_epoch() => return Ok(()),
            Found::Ours => {}
            Found::Foreign(Plan::Nothing) => {
                journal.reset(syncs)?;
                self.settle_space();
            }
            Found::Foreign(Plan::Keep(_)) => {
                // another handle's complete changes: they stand once durable
                self.sync_all()?;
                self.journal.as_mut().ok_or(Error::Failure)?.reset(true)?;
                self.settle_space();
                self.clean = true;
            }
            Found::Foreign(Plan::Undo(r)) => {
                crate::trace!("another handle died in the middle of a change of this frame; it was put back: reopen the frame");
                let bytes = &mut self.bytes;
                journal.restore_regions(&r, |pos, old| bytes.write(pos, old))?;
                self.bytes.truncate(r.old_len)?;
                self.sync_all()?;
                self.journal.as_mut().ok_or(Error::Failure)?.reset(true)?;
                self.broken = true;
                return Err(Error::FileWrite);
            }
        }
        if syncs && !self.clean {
            self.sync_files()?;
            self.clean = true;
        }
        Ok(())
    }

    fn unlock_journal(&mut self) {
        if let Some(j) = self.journal.as_mut() {
            j.unlock();
        }
    }

    /// End the change begun last: on success, its commit (and a checkpoint
    /// when one is due); on failure the old bytes and layout are put back.
    pub fn end_change<T>(&mut self, r: Result<T>) -> Result<T> {
        let Some(t) = self.txn.as_mut() else { return r };
        t.depth -= 1;
        if t.depth > 0 {
            return r;
        }
        let Some(t) = self.txn.take() else { return r };
        let committed = r.and_then(|v| self.journal.as_mut().ok_or(Error::Failure)?.end_change().map(|()| v));
        let e = match committed {
            Ok(v) => {
                self.commit_space();
                // the old chunk files go once nothing can bring them back
                self.pending_drops.extend(t.dropped);
                let c = self.checkpoint_if_due();
                self.unlock_journal();
                return c.map(|()| v);
            }
            Err(e) => e,
        };
        self.remove_files(&t.added);
        // Undo: the old bytes, the old length, the old layout.
        self.layout = t.layout;
        let mut put_back = Ok(());
        if t.spilled {
            let Frame { journal, bytes, .. } = &mut *self;
            put_back = match journal.as_ref() {
                Some(j) => j.change_regions(|pos, old| bytes.write(pos, old)),
                None => Err(Error::Failure),
            };
        }
        for (pos, bytes) in &t.undo.regions {
            put_back = put_back.and_then(|()| self.bytes.write(*pos, bytes));
        }
        put_back = put_back.and_then(|()| self.bytes.truncate(t.undo.old_len));
        if put_back.is_ok() && self.journal.as_mut().is_some_and(|j| j.end_change().is_ok()) {
            let _ = self.checkpoint_if_due();
        } else {
            // the journal stays for the next open, which puts the frame back
            self.broken = true;
        }
        self.unlock_journal();
        Err(e)
    }

    /// A checkpoint after a change that is complete, when one is due. Only
    /// durable mode reports its failure (the change is made, but perhaps not
    /// durable); otherwise the changes wait for the next checkpoint.
    fn checkpoint_if_due(&mut self) -> Result<()> {
        // chunk files a change no longer needs go at once (their ids are
        // reused, as c-blosc2 reuses them), after a checkpoint
        // and holes the last checkpoint keeps wait for the next one: past a
        // share of the frame, it comes now (the file would grow by them)
        if self.pending_drops.is_empty()
            && !self.journal.as_ref().is_some_and(|j| j.checkpoint_due())
            && !self.settling_due()
        {
            return Ok(());
        }
        match self.checkpoint(false) {
            Err(e) if self.journal.as_ref().is_some_and(|j| j.durability() == Durability::Durable) => Err(e),
            Err(e) => {
                crate::trace!("a checkpoint failed ({e:?}); the changes are made, and wait for the next one");
                Ok(())
            }
            Ok(()) => Ok(()),
        }
    }

    /// The checkpoint: the frame (its written chunk files and directory too)
    /// is synced, then the journal emptied; the chunk files the changes no
    /// longer need go. With the journal locked.
    pub(super) fn checkpoint(&mut self, closing: bool) -> Result<()> {
        let Some(d) = self.journal.as_ref().map(|j| j.durability()) else { return Ok(()) };
        if d.syncs() {
            self.sync_files()?;
        }
        let sync = d.syncs() && (d == Durability::Durable || closing || !self.pending_drops.is_empty());
        self.journal.as_mut().ok_or(Error::Failure)?.reset(sync)?;
        self.settle_space();
        self.clean = d.syncs();
        let drops = std::mem::take(&mut self.pending_drops);
        self.remove_files(&drops);
        Ok(())
    }

    /// Sync what was written to the frame file (and, for a sparse frame, the
    /// chunk files written since the last sync and the directory).
    pub(super) fn sync_files(&self) -> Result<()> {
        if let Bytes::Stream { stream, .. } = &self.bytes {
            stream.sync()?;
        }
        if let Some(d) = &self.dir {
            d.sync_written()?;
        }
        Ok(())
    }

    /// Sync the frame file and, for a sparse frame, every chunk file.
    fn sync_all(&self) -> Result<()> {
        if let Bytes::Stream { stream, .. } = &self.bytes {
            stream.sync()?;
        }
        if let Some(d) = &self.dir {
            d.sync_written()?;
            super::super::journal::sync_chunk_files(&d.path)?;
        }
        Ok(())
    }

    /// Make a frame just made durable: its file (or its directory, index
    /// and chunk files) and its entry in the directory that holds it.
    pub fn sync_created(&mut self, urlpath: &str) -> Result<()> {
        self.sync_all()?;
        crate::io::sync_dir(crate::io::parent_dir(urlpath))?;
        self.clean = true;
        Ok(())
    }

    /// At close: a checkpoint of the changes since the last one, if this
    /// handle's; then the chunk files they no longer need go.
    pub(super) fn close(&mut self) {
        if self.broken || self.txn.is_some() {
            return;
        }
        if let Some(j) = self.journal.as_mut() {
            let syncs = j.durability().syncs();
            if matches!(j.lock_own_epoch(), Ok(true)) {
                let _ = self.checkpoint(true);
            } else if syncs {
                // the last checkpoint (which synced the frame), durable; a handle
                // that changed nothing has nothing to sync
                if let Some(j) = self.journal.as_mut() {
                    let _ = j.sync_reset();
                }
            }
            self.unlock_journal();
        }
        let drops = std::mem::take(&mut self.pending_drops);
        self.remove_files(&drops);
    }

    pub(super) fn remove_files(&self, ids: &[i64]) {
        if let Some(d) = &self.dir {
            for &id in ids {
                // a failure only leaves a stray file
                let _ = d.remove_chunk(id);
            }
        }
    }

    /// Remove chunk file `id` once no checkpoint can need it (at once outside a change).
    pub(super) fn drop_file(&mut self, id: i64) {
        match self.txn.as_mut() {
            Some(t) => t.dropped.push(id),
            None if self.journal.as_ref().is_some_and(|j| j.has_epoch()) => self.pending_drops.push(id),
            None => self.remove_files(&[id]),
        }
    }

    /// Save in the journal, if not yet, the bytes of the old frame from
    /// `from` to its end and those of `extra` (position, length), before the
    /// change writes there. Old chunk bytes nobody references need not be
    /// saved: a stretch of the chunks section is saved chunk by chunk.
    pub(super) fn need(&mut self, from: u64, extra: Option<(u64, u64)>) -> Result<()> {
        let Some(t) = self.txn.as_ref() else { return Ok(()) };
        let old_len = t.undo.old_len;
        let old = &t.layout;
        let mut want: Vec<(u64, u64)> = Vec::new();
        let section_end =
            if self.dir.is_some() { 0 } else { old.header_len as u64 + old.cbytes.max(0) as u64 };
        let mut cover = None;
        if from < section_end {
            if !ranges_gaps(&t.saved, from, section_end).is_empty() {
                // only what is there for the frame before the change (its
                // chunks) or at the last checkpoint (settling holes): free
                // holes hold nothing anyone reads
                let hl = old.header_len as u64;
                for off in old.offsets.values() {
                    let at = hl.saturating_add(off as u64);
                    if off >= 0 && at >= from && at < section_end {
                        let cb = self.head_in(old, off).unwrap_or(0);
                        want.push((at, at + cb));
                    }
                }
                if let Some(s) = self.layout.space.as_ref() {
                    for (a, l) in s.settling_in(from.saturating_sub(hl), section_end - hl) {
                        want.push((hl + a, hl + a + l));
                    }
                }
                cover = Some((from, section_end.min(old_len)));
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
            let pieces = if a < b { ranges_gaps(&t.saved, a, b) } else { Vec::new() };
            for (x, y) in pieces {
                if x < y && !add.iter().any(|&(p, q): &(u64, u64)| p <= x && y <= q) {
                    add.push((x, y));
                }
            }
        }
        if add.is_empty() {
            if let (Some((a, b)), Some(t)) = (cover, self.txn.as_mut()) {
                ranges_insert(&mut t.saved, a, b);
            }
            return Ok(());
        }
        let mut regions = Vec::new();
        for (x, y) in add {
            let len = usize::try_from(y - x).map_err(|_| Error::MemoryAlloc)?;
            regions.push((x, self.bytes.read(x, len)?.into_owned()));
        }
        self.journal.as_mut().ok_or(Error::Failure)?.save(old_len, &regions)?;
        let t = self.txn.as_mut().ok_or(Error::Failure)?;
        for (p, b) in &regions {
            ranges_insert(&mut t.saved, *p, p + b.len() as u64);
        }
        if let Some((a, b)) = cover {
            ranges_insert(&mut t.saved, a, b);
        }
        let kept: usize = t.undo.regions.iter().chain(&regions).map(|(_, b)| b.len()).sum();
        if t.spilled || kept > super::UNDO_IN_MEMORY {
            // memory stays bounded: a failure reads them back from the journal
            t.spilled = true;
            t.undo.regions = Vec::new();
        } else {
            t.undo.regions.extend(regions);
        }
        Ok(())
    }
}
