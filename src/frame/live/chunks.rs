//! Changing the chunk list: insert, update, delete, reorder, arrange.

use super::special::special_chunk;
use super::{decode_special, offset_encoded, special_offset, Entry, Frame, Layout, Pick, SHIFT_LIMIT};
use super::super::offsets::Offsets;
use super::super::writer::Info;
use crate::chunk::header::Special;
use crate::error::{Error, Result};

impl Frame {
    /// Insert `chunk` (a complete, validated chunk) at position `pos`;
    /// `info` already holds the new nbytes and chunksize.
    pub fn insert(&mut self, info: &Info, old_info: &Info, pos: usize, chunk: &[u8], kind: Special) -> Result<()> {
        if pos > self.nchunks() {
            return Err(Error::InvalidIndex);
        }
        // After every chunk was deleted the chunks section keeps its old length
        // (unreferenced bytes), and new chunks go after it, as in c-blosc2.
        if self.batch && pos == self.nchunks() {
            // a new frame being filled: no copy of the layout per chunk
            let entry = if offset_encoded(kind) && info.chunksize != 0 {
                special_offset(kind)
            } else {
                let (off, cb) = self.store(chunk)?;
                self.layout.cbytes = cb;
                off
            };
            self.layout.offsets.push(entry);
            self.layout.index_capacity = self.layout.offsets.len();
            return Ok(());
        }
        let mut layout = self.layout.clone();
        let entry = if offset_encoded(kind) && info.chunksize != 0 {
            special_offset(kind)
        } else {
            let (off, cb) = self.store(chunk)?;
            layout.cbytes = cb;
            off
        };
        layout.offsets.insert(pos, entry);
        layout.index_capacity = layout.offsets.len();
        let r = self.commit(info, old_info, layout);
        if r.is_err() && entry >= 0 {
            if let Some(d) = &self.dir {
                let _ = d.remove_chunk(entry);
            }
        }
        r
    }

    /// Replace chunk `pos` (docs/FRAME_BEHAVIOUR.md §5.3 and §7.3).
    pub fn update(&mut self, info: &Info, old_info: &Info, pos: usize, chunk: &[u8], kind: Special) -> Result<()> {
        if self.dir.is_some() {
            return self.update_sparse(info, old_info, pos, chunk, kind);
        }
        let new_special = offset_encoded(kind) && info.chunksize != 0;
        let mut layout = self.layout.clone();
        match self.entry(pos)? {
            Entry::Stored(off) => self.update_stored(&mut layout, pos, off, chunk, kind, new_special)?,
            Entry::Special(_) => {
                let entry = if new_special {
                    special_offset(kind)
                } else {
                    let (off, cb) = self.store(chunk)?;
                    layout.cbytes = cb;
                    off
                };
                layout.offsets.set(pos, entry);
            }
        }
        layout.index_capacity = layout.offsets.len();
        self.commit(info, old_info, layout)
    }

    /// [`Frame::update`] of a sparse frame: the new chunk goes to a new file,
    /// and the old file, which holds the old content until the index says
    /// otherwise, is removed once the change is committed.
    fn update_sparse(&mut self, info: &Info, old_info: &Info, pos: usize, chunk: &[u8], kind: Special) -> Result<()> {
        let new_special = offset_encoded(kind) && info.chunksize != 0;
        let mut layout = self.layout.clone();
        let mut remove = None;
        match (self.entry(pos)?, new_special) {
            (Entry::Stored(id), false) => {
                let (_, _, ocb) = self.stored_head(id)?;
                let (nid, _) = self.store(chunk)?;
                layout.offsets.set(pos, nid);
                layout.cbytes += chunk.len() as i64 - i64::from(ocb);
                remove = Some(id);
            }
            (Entry::Stored(id), true) => {
                let (_, _, ocb) = self.stored_head(id)?;
                layout.offsets.set(pos, special_offset(kind));
                layout.cbytes -= i64::from(ocb);
                remove = Some(id);
            }
            (Entry::Special(_), false) => {
                let (id, cb) = self.store(chunk)?;
                layout.offsets.set(pos, id);
                layout.cbytes = cb;
            }
            (Entry::Special(_), true) => layout.offsets.set(pos, special_offset(kind)),
        }
        layout.index_capacity = layout.offsets.len();
        let added = layout.offsets.get(pos).unwrap_or(-1);
        let old_entry = self.layout.offsets.get(pos).unwrap_or(-1);
        if let Err(e) = self.commit(info, old_info, layout) {
            if let (Some(d), true) = (&self.dir, added >= 0 && added != old_entry) {
                let _ = d.remove_chunk(added);
            }
            return Err(e);
        }
        if let Some(id) = remove {
            self.drop_file(id);
        }
        Ok(())
    }

    /// The bytes of [`Frame::update`] of the chunk stored at `off` of a
    /// contiguous frame (a special-value `kind` stores none), into `layout`:
    /// the later chunks move by the size difference, as in c-blosc2, unless
    /// more than [`SHIFT_LIMIT`] bytes would move; then the chunk is
    /// overwritten in place when it fits, else stored at the end.
    fn update_stored(&mut self, layout: &mut Layout, pos: usize, off: i64, chunk: &[u8], kind: Special, new_special: bool) -> Result<()> {
        let (_, _, ocb) = self.stored_head(off)?;
        // c-blosc2 takes a stored chunk of exactly 32 bytes as empty.
        let ocb = if ocb == 32 { 0 } else { i64::from(ocb) };
        let ncb = if new_special { 0 } else { chunk.len() as i64 };
        let delta = ncb - ocb;
        let hl = layout.header_len as u64;
        let tail_from = off + ocb;
        let tail_len = (layout.cbytes - tail_from).max(0) as u64;
        if tail_len > SHIFT_LIMIT {
            // Too much to move safely: the old bytes stay where they are.
            if new_special {
                layout.offsets.set(pos, special_offset(kind));
            } else {
                let room = layout.offsets.values().filter(|&o| o > off).min().unwrap_or(layout.cbytes) - off;
                if ncb <= room {
                    self.need(self.layout.frame_len, Some((hl + off as u64, ncb as u64)))?;
                    self.bytes.write(hl + off as u64, chunk)?;
                } else {
                    let (noff, cb) = self.store(chunk)?;
                    layout.offsets.set(pos, noff);
                    layout.cbytes = cb;
                }
            }
            return Ok(());
        }
        self.need(hl + off as u64, None)?;
        self.bytes.shift(hl + tail_from as u64, (hl as i64 + tail_from + delta) as u64, tail_len)?;
        if !new_special {
            self.bytes.write(hl + off as u64, chunk)?;
        }
        layout.offsets.map_values(|o| if o > off { o + delta } else { o });
        layout.offsets.set(pos, if new_special { special_offset(kind) } else { off });
        layout.cbytes += delta;
        Ok(())
    }

    /// Remove chunk `pos` from the index. In a contiguous frame its bytes stay
    /// (as in c-blosc2); in a sparse frame its file is removed.
    pub fn delete(&mut self, info: &Info, old_info: &Info, pos: usize) -> Result<()> {
        let old = self.entry(pos)?;
        let mut layout = self.layout.clone();
        layout.index_capacity = layout.offsets.len();
        layout.offsets.remove(pos);
        let mut remove = None;
        if let (Some(_), Entry::Stored(id)) = (&self.dir, &old) {
            layout.cbytes -= i64::from(self.stored_head(*id)?.2);
            remove = Some(*id);
        }
        self.commit(info, old_info, layout)?;
        if let Some(id) = remove {
            self.drop_file(id);
        }
        Ok(())
    }

    /// Put chunk `order[i]` at position `i`.
    pub fn reorder(&mut self, info: &Info, order: &[usize]) -> Result<()> {
        let mut layout = self.layout.clone();
        layout.offsets = Offsets::from_entries(order.iter().map(|&o| self.layout.offsets.get(o).unwrap_or(-1)));
        layout.index_capacity = layout.offsets.len();
        self.commit(info, info, layout)
    }

    /// Make the chunk list `picks` (kept chunks at distinct positions, and
    /// new special-value chunks); the chunks not kept leave the index (in a
    /// sparse frame their files are removed once the new index is written).
    /// One index write.
    pub fn arrange(&mut self, info: &Info, old_info: &Info, picks: &[Pick]) -> Result<()> {
        let mut layout = self.layout.clone();
        let stored_cbytes = self.layout.cbytes;
        let mut next_id = self.next_chunk_id();
        let mut offsets = Offsets::new();
        // the chunk files kept (sparse frames), to remove the others after the change
        let mut kept = std::collections::HashSet::new();
        for p in picks {
            offsets.push(match *p {
                Pick::Chunk(k) => {
                    let o = self.layout.offsets.get(k).ok_or(Error::InvalidIndex)?;
                    if o >= 0 && self.dir.is_some() {
                        kept.insert(o);
                    }
                    o
                }
                Pick::Special(kind, nbytes) if offset_encoded(kind) && info.chunksize != 0 && nbytes == info.chunksize => special_offset(kind),
                Pick::Special(kind, nbytes) if self.dir.is_some() => {
                    let c = special_chunk(kind, nbytes, info.cparams.typesize, info.cparams.blocksize);
                    let id = next_id;
                    next_id += 1;
                    if let Some(d) = &self.dir {
                        d.write_chunk(id, &c)?;
                    }
                    layout.cbytes += c.len() as i64;
                    id
                }
                Pick::Special(kind, nbytes) => {
                    let c = special_chunk(kind, nbytes, info.cparams.typesize, info.cparams.blocksize);
                    // Stored one after the other (`store` places a chunk at the current end).
                    let stored = self.store(&c);
                    let (off, cb) = stored.inspect_err(|_| self.layout.cbytes = stored_cbytes)?;
                    layout.cbytes = cb;
                    self.layout.cbytes = cb;
                    off
                }
            });
        }
        // The current layout stays what is on disk until the new one is written.
        self.layout.cbytes = stored_cbytes;
        layout.offsets = offsets;
        layout.index_capacity = layout.offsets.len();
        let mut dropped = Vec::new();
        if self.dir.is_some() {
            for id in self.layout.offsets.values() {
                if decode_special(id)?.is_none() && !kept.contains(&id) {
                    layout.cbytes -= i64::from(self.stored_head(id)?.2);
                    dropped.push(id);
                }
            }
        }
        self.commit(info, old_info, layout)?;
        if self.dir.is_some() {
            for id in dropped {
                self.drop_file(id);
            }
        }
        Ok(())
    }
}
