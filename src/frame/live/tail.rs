//! Committing a layout: the offsets index, the trailer and the header written
//! after the chunks section (the chunks are already in place), and where a
//! new chunk's bytes are stored.

use super::super::writer::{header, index_chunk, trailer, Info};
use super::special::run_length_index;
use super::{Frame, Layout};
use crate::error::{Error, Result};

impl Frame {
    // ------------------------------------------------------------------ writing

    /// Write the index, the trailer and the header for `layout` and `info`
    /// (the chunks section is already in place), then cut the frame there.
    pub(super) fn write_tail(&mut self, info: &Info, layout: &mut Layout) -> Result<()> {
        let sparse = self.dir.is_some();
        let mut hdr = header(info, layout.cbytes, sparse)?;
        let hl = hdr.len();
        let index = if info.nbytes == 0 {
            Vec::new()
        } else if layout.run_length {
            run_length_index(layout.offsets.get(0).unwrap_or(0), layout.offsets.len())?
        } else {
            index_chunk(&layout.offsets, layout.index_capacity)?
        };
        let tail_at = if sparse || info.nbytes == 0 { hl as u64 } else { hl as u64 + layout.cbytes as u64 };
        self.need(tail_at, Some((0, hl as u64)))?;
        let mut tail = index;
        tail.extend_from_slice(&trailer(&info.vlmetalayers)?);
        let flen = tail_at + tail.len() as u64;
        hdr[16..24].copy_from_slice(&flen.to_be_bytes());
        self.bytes.write(tail_at, &tail)?;
        self.bytes.write(0, &hdr)?;
        self.bytes.truncate(flen)?;
        layout.header_len = hl;
        layout.frame_len = flen;
        Ok(())
    }

    /// Start adding chunks in bulk to a frame nobody reads yet (a copy being
    /// made): each addition only places its chunk; the index, trailer and
    /// header are written once by [`Frame::end_batch`] (else the index would be
    /// rewritten at every chunk). Not journaled: the frame is new.
    pub fn begin_batch(&mut self) {
        self.batch = true;
    }

    /// Write the index, trailer and header for what was added since [`Frame::begin_batch`].
    pub fn end_batch(&mut self, info: &Info) -> Result<()> {
        self.batch = false;
        let mut layout = self.layout.clone();
        layout.run_length = false;
        self.write_tail(info, &mut layout)?;
        self.layout = layout;
        Ok(())
    }

    /// Write `layout` as the new state; on failure put the old one back.
    pub(super) fn commit(&mut self, info: &Info, old_info: &Info, mut layout: Layout) -> Result<()> {
        layout.run_length = false;
        if self.batch {
            self.layout = layout;
            return Ok(());
        }
        self.tidy(&mut layout)?;
        self.install(info, old_info, layout)
    }

    /// Write `layout` as it is (the index form included); on failure put the old one back.
    pub(super) fn install(&mut self, info: &Info, old_info: &Info, mut layout: Layout) -> Result<()> {
        match self.write_tail(info, &mut layout) {
            Ok(()) => {
                self.layout = layout;
                if self.txn.is_none() {
                    // not journaled: the change is complete now
                    self.commit_space();
                }
                Ok(())
            }
            Err(e) => {
                let mut old = self.layout.clone();
                let _ = self.write_tail(old_info, &mut old);
                Err(e)
            }
        }
    }

    /// Write the whole frame for the current layout (a new frame, or after a
    /// metalayer was added: the header changes length).
    pub(super) fn rewrite_whole(&mut self, info: &Info) -> Result<()> {
        let mut layout = self.layout.clone();
        self.write_tail(info, &mut layout)?;
        self.layout = layout;
        Ok(())
    }

    /// Store a chunk's bytes at the end of the chunks section (a frame being
    /// filled, see [`Frame::begin_batch`]) or as a new chunk file; returns its
    /// offset (or id) and the new cbytes.
    pub(super) fn store(&mut self, chunk: &[u8]) -> Result<(i64, i64)> {
        let cb = self.layout.cbytes;
        if let Some(d) = &self.dir {
            let id = self.next_chunk_id();
            d.write_chunk(id, chunk)?;
            if let Some(t) = self.txn.as_mut() {
                t.added.push(id);
            }
            return Ok((id, cb + chunk.len() as i64));
        }
        let at = self.layout.header_len as u64 + cb as u64;
        self.need(at, None)?;
        self.bytes.write(at, chunk)?;
        Ok((cb, cb + chunk.len() as i64))
    }

    /// A chunk file id (sparse frames) in use nowhere: not in the index, nor
    /// one the change wrote already or will remove, nor one the last
    /// checkpoint may still need.
    pub(super) fn next_chunk_id(&self) -> i64 {
        let id = self.layout.offsets.values().filter(|&o| o >= 0).max().map_or(0, |m| m + 1);
        let others =
            self.txn.iter().flat_map(|t| t.added.iter().chain(&t.dropped)).chain(&self.pending_drops);
        id.max(others.copied().max().map_or(0, |m| m + 1))
    }

    /// Rewrite header and trailer after a change of the (vl)metalayers.
    pub fn sync_meta(&mut self, info: &Info, old_info: &Info) -> Result<()> {
        let hl = header(info, self.layout.cbytes, self.dir.is_some())?.len();
        if hl != self.layout.header_len {
            // The header grows: only possible while no chunk bytes are stored.
            if self.layout.cbytes != 0 {
                return Err(Error::InvalidParam);
            }
            let layout = self.layout.clone();
            return self.install(info, old_info, layout);
        }
        let layout = self.layout.clone();
        self.commit(info, old_info, layout)
    }
}
