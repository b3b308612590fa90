//! Changing the chunk list: insert, update, delete, reorder, arrange.

use super::super::offsets::Offsets;
use super::super::writer::Info;
use super::special::special_chunk;
use super::{decode_special, offset_encoded, special_offset, Entry, Frame, Pick};
use crate::chunk::header::Special;
use crate::error::{Error, Result};

impl Frame {
    /// Insert `chunk` (a complete, validated chunk) at position `pos`;
    /// `info` already holds the new nbytes and chunksize.
    pub fn insert(
        &mut self,
        info: &Info,
        old_info: &Info,
        pos: usize,
        chunk: &[u8],
        kind: Special,
    ) -> Result<()> {
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
        self.ensure_space()?;
        let mut layout = self.layout.clone();
        let entry = if offset_encoded(kind) && info.chunksize != 0 {
            special_offset(kind)
        } else if self.dir.is_some() {
            let (off, cb) = self.store(chunk)?;
            layout.cbytes = cb;
            off
        } else {
            self.place(&mut layout, chunk)?
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

    /// Replace chunk `pos`. In a contiguous frame the new chunk goes to a
    /// free hole or the end of the chunks section, and the old one's bytes
    /// become a hole once the change is committed (docs/FRAME_BEHAVIOUR.md
    /// §12a; c-blosc2 writes it over the old one and moves every later chunk);
    /// the chunk stored last is written over, as c-blosc2 does (an array
    /// that grows rewrites its last chunk: the frame stays compact).
    pub fn update(
        &mut self,
        info: &Info,
        old_info: &Info,
        pos: usize,
        chunk: &[u8],
        kind: Special,
    ) -> Result<()> {
        if self.dir.is_some() {
            return self.update_sparse(info, old_info, pos, chunk, kind);
        }
        self.ensure_space()?;
        let new_special = offset_encoded(kind) && info.chunksize != 0;
        let mut layout = self.layout.clone();
        let old = self.entry(pos)?;
        let last = match old {
            Entry::Stored(off) if !new_special => self.last_in_section(&mut layout, off)?,
            _ => false,
        };
        let entry = match old {
            Entry::Stored(off) if last => self.overwrite_last(&mut layout, off, chunk)?,
            _ if new_special => special_offset(kind),
            _ => self.place(&mut layout, chunk)?,
        };
        if let (Entry::Stored(off), false) = (old, last) {
            self.release_stored(&mut layout, off)?;
        }
        layout.offsets.set(pos, entry);
        layout.index_capacity = layout.offsets.len();
        self.commit(info, old_info, layout)
    }

    /// [`Frame::update`] of a sparse frame: the new chunk goes to a new file,
    /// and the old file, which holds the old content until the index says
    /// otherwise, is removed once the change is committed.
    fn update_sparse(
        &mut self,
        info: &Info,
        old_info: &Info,
        pos: usize,
        chunk: &[u8],
        kind: Special,
    ) -> Result<()> {
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

    /// Remove chunk `pos` from the index. In a contiguous frame its bytes
    /// become a hole (c-blosc2 leaves them unused); in a sparse frame its
    /// file is removed.
    pub fn delete(&mut self, info: &Info, old_info: &Info, pos: usize) -> Result<()> {
        let old = self.entry(pos)?;
        self.ensure_space()?;
        let mut layout = self.layout.clone();
        layout.index_capacity = layout.offsets.len();
        layout.offsets.remove(pos);
        let mut remove = None;
        match (&self.dir, &old) {
            (Some(_), Entry::Stored(id)) => {
                layout.cbytes -= i64::from(self.stored_head(*id)?.2);
                remove = Some(*id);
            }
            (None, Entry::Stored(off)) => self.release_stored(&mut layout, *off)?,
            _ => {}
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
        layout.offsets =
            Offsets::from_entries(order.iter().map(|&o| self.layout.offsets.get(o).unwrap_or(-1)));
        layout.index_capacity = layout.offsets.len();
        self.commit(info, info, layout)
    }

    /// Make the chunk list `picks` (kept chunks at distinct positions, and
    /// new special-value chunks); the chunks not kept leave the index (in a
    /// sparse frame their files are removed once the new index is written).
    /// One index write.
    pub fn arrange(&mut self, info: &Info, old_info: &Info, picks: &[Pick]) -> Result<()> {
        self.ensure_space()?;
        let mut layout = self.layout.clone();
        let mut next_id = self.next_chunk_id();
        let mut offsets = Offsets::new();
        // the stored chunks kept, to drop the others after the change
        let mut kept = std::collections::HashSet::new();
        for p in picks {
            offsets.push(match *p {
                Pick::Chunk(k) => {
                    let o = self.layout.offsets.get(k).ok_or(Error::InvalidIndex)?;
                    if o >= 0 {
                        kept.insert(o);
                    }
                    o
                }
                Pick::Special(kind, nbytes)
                    if offset_encoded(kind) && info.chunksize != 0 && nbytes == info.chunksize =>
                {
                    special_offset(kind)
                }
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
                    self.place(&mut layout, &c)?
                }
            });
        }
        layout.offsets = offsets;
        layout.index_capacity = layout.offsets.len();
        let mut dropped = Vec::new();
        for id in self.layout.offsets.values() {
            if decode_special(id)?.is_none() && !kept.contains(&id) {
                if self.dir.is_some() {
                    layout.cbytes -= i64::from(self.stored_head(id)?.2);
                    dropped.push(id);
                } else {
                    self.release_stored(&mut layout, id)?;
                }
            }
        }
        self.commit(info, old_info, layout)?;
        for id in dropped {
            self.drop_file(id);
        }
        Ok(())
    }
}
