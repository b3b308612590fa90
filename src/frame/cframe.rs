//! A contiguous frame held as its parts, mutated the way c-blosc2 3.3 mutates
//! a cframe (docs/FRAME_BEHAVIOUR.md §5-§6), so that its bytes after any
//! sequence of operations are those c-blosc2 would have.

use super::writer::{write_cframe, FrameParts};
use super::{FrameView, Metalayer};
use crate::chunk::header::{Special, VL_BLOCKS};
use crate::chunk::view::ChunkView;
use crate::chunk::CParams;
use crate::error::{Error, Result};

/// Offset value of a chunk stored as a special value (`kind` in the top byte).
fn special_offset(kind: Special) -> i64 {
    (((0x80 | kind as u8) as u64) << 56) as i64
}

/// Whether a chunk is stored as an offset rather than as bytes.
fn offset_encoded(kind: Special) -> bool {
    matches!(kind, Special::Zero | Special::Nan | Special::Uninit)
}

/// The parts of a contiguous frame, and the operations that change them.
#[derive(Debug, Clone)]
pub struct CFrame {
    pub cparams: CParams,
    pub tcomp: i16,
    pub tdecomp: i16,
    nbytes: i64,
    chunksize: i32,
    vl_blocks: bool,
    pub metalayers: Vec<Metalayer>,
    pub vlmetalayers: Vec<Metalayer>,
    chunks: Vec<u8>,
    offsets: Vec<i64>,
    /// Uncompressed size of each chunk.
    sizes: Vec<i32>,
    index_capacity: usize,
}

impl CFrame {
    /// An empty frame.
    pub fn new(cparams: CParams, tcomp: i16, tdecomp: i16) -> CFrame {
        CFrame {
            cparams,
            tcomp,
            tdecomp,
            nbytes: 0,
            chunksize: -1,
            vl_blocks: false,
            metalayers: Vec::new(),
            vlmetalayers: Vec::new(),
            chunks: Vec::new(),
            offsets: Vec::new(),
            sizes: Vec::new(),
            index_capacity: 0,
        }
    }

    /// The parts of an existing frame.
    pub fn from_view(f: &FrameView, cparams: CParams) -> Result<CFrame> {
        let h = &f.header;
        let mut sizes = Vec::with_capacity(f.nchunks());
        for i in 0..f.nchunks() {
            let c = f.chunk_bytes(i)?;
            sizes.push(crate::chunk::Header::parse(&c)?.nbytes);
        }
        Ok(CFrame {
            cparams,
            tcomp: h.tcomp,
            tdecomp: h.tdecomp,
            nbytes: h.nbytes,
            chunksize: h.chunksize,
            vl_blocks: h.vl_blocks(),
            metalayers: h.metalayers.clone(),
            vlmetalayers: f.trailer.vlmetalayers.clone(),
            chunks: f.chunks_section().to_vec(),
            offsets: f.offsets().to_vec(),
            sizes,
            index_capacity: f.nchunks(),
        })
    }

    pub fn nchunks(&self) -> usize {
        self.offsets.len()
    }
    pub fn nbytes(&self) -> i64 {
        self.nbytes
    }
    /// Bytes of the chunks section (deleted chunks' bytes included, as in c-blosc2).
    pub fn cbytes(&self) -> i64 {
        self.chunks.len() as i64
    }
    pub fn chunksize(&self) -> i32 {
        self.chunksize
    }

    /// The frame's bytes.
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        write_cframe(&FrameParts {
            cparams: &self.cparams,
            tcomp: self.tcomp,
            tdecomp: self.tdecomp,
            nbytes: self.nbytes,
            chunksize: self.chunksize,
            vl_blocks: self.vl_blocks,
            metalayers: &self.metalayers,
            chunks: &self.chunks,
            offsets: &self.offsets,
            index_capacity: self.index_capacity,
            vlmetalayers: &self.vlmetalayers,
        })
    }

    /// Check a chunk and return (its nbytes, its special kind, whether it has VL blocks).
    fn inspect(chunk: &[u8]) -> Result<(i32, Special, bool)> {
        let view = ChunkView::open(chunk)?;
        if view.lazy.is_some() {
            return Err(Error::InvalidParam);
        }
        let h = view.header;
        if chunk.len() < h.cbytes as usize {
            return Err(Error::ReadBuffer);
        }
        Ok((h.nbytes, h.special(), h.blosc2_flags2 & VL_BLOCKS != 0))
    }

    fn place(&mut self, chunk: &[u8], kind: Special) -> i64 {
        if offset_encoded(kind) {
            special_offset(kind)
        } else {
            let (_, cbytes, _) = crate::chunk::Header::sizes(chunk).unwrap_or((0, chunk.len() as i32, 0));
            let at = self.chunks.len() as i64;
            self.chunks.extend_from_slice(&chunk[..cbytes as usize]);
            at
        }
    }

    /// Append a chunk; returns the new number of chunks.
    pub fn append(&mut self, chunk: &[u8]) -> Result<usize> {
        let n = self.nchunks();
        self.insert(n, chunk)
    }

    /// Insert a chunk at position `pos` (its bytes go at the end of the chunks section).
    pub fn insert(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        if pos > self.nchunks() {
            return Err(Error::InvalidIndex);
        }
        let (n, kind, vl) = Self::inspect(chunk)?;
        if self.nchunks() == 0 {
            self.vl_blocks = vl;
        } else if vl != self.vl_blocks {
            return Err(Error::ChunkInsert);
        }
        let c = self.chunksize;
        let at_end = pos == self.nchunks();
        self.chunksize = match c {
            -1 => n,
            0 => 0,
            c if at_end && (self.sizes.last().is_some_and(|&l| l < c) || n > c) => 0,
            c if !at_end && n != c => 0,
            c => c,
        };
        let off = self.place(chunk, kind);
        self.offsets.insert(pos, off);
        self.sizes.insert(pos, n);
        self.nbytes += i64::from(n);
        self.index_capacity = self.nchunks();
        Ok(self.nchunks())
    }

    /// Replace chunk `pos`. A stored chunk replaced by another takes its place
    /// (what follows moves); a special chunk replaced by a stored one goes at the end.
    pub fn update(&mut self, pos: usize, chunk: &[u8]) -> Result<usize> {
        if pos >= self.nchunks() {
            return Err(Error::InvalidIndex);
        }
        let (n, kind, vl) = Self::inspect(chunk)?;
        if vl != self.vl_blocks {
            return Err(Error::ChunkUpdate);
        }
        let last = pos + 1 == self.nchunks();
        if self.chunksize > 0 && (n > self.chunksize || (!last && n != self.chunksize)) {
            self.chunksize = 0;
        }
        let old = self.offsets[pos];
        let new_stored = !offset_encoded(kind);
        if old >= 0 {
            let start = old as usize;
            let (_, ocb, _) = crate::chunk::Header::sizes(self.chunks.get(start..).ok_or(Error::InvalidHeader)?)?;
            if ocb < 0 {
                return Err(Error::InvalidHeader);
            }
            // c-blosc2 takes a stored chunk of exactly 32 bytes as empty.
            let ocb = if ocb == 32 { 0 } else { ocb as usize };
            let end = start.saturating_add(ocb).min(self.chunks.len());
            let new_bytes: &[u8] = if new_stored {
                let (_, cb, _) = crate::chunk::Header::sizes(chunk)?;
                &chunk[..cb as usize]
            } else {
                &[]
            };
            let delta = new_bytes.len() as i64 - (end - start) as i64;
            self.chunks.splice(start..end, new_bytes.iter().copied());
            for o in self.offsets.iter_mut() {
                if *o > old {
                    *o += delta;
                }
            }
            self.offsets[pos] = if new_stored { old } else { special_offset(kind) };
        } else {
            self.offsets[pos] = self.place(chunk, kind);
        }
        self.nbytes += i64::from(n) - i64::from(self.sizes[pos]);
        self.sizes[pos] = n;
        self.index_capacity = self.nchunks();
        Ok(self.nchunks())
    }

    /// Remove chunk `pos` from the index (its bytes stay, as in c-blosc2).
    pub fn delete(&mut self, pos: usize) -> Result<usize> {
        if pos >= self.nchunks() {
            return Err(Error::InvalidIndex);
        }
        self.index_capacity = self.nchunks();
        self.offsets.remove(pos);
        self.nbytes -= i64::from(self.sizes.remove(pos));
        Ok(self.nchunks())
    }

    /// Put chunk `order[i]` at position `i`.
    pub fn reorder(&mut self, order: &[i64]) -> Result<()> {
        let n = self.nchunks();
        let mut seen = vec![false; n];
        if order.len() != n {
            return Err(Error::InvalidParam);
        }
        for &o in order {
            let o = usize::try_from(o).map_err(|_| Error::InvalidIndex)?;
            if o >= n || std::mem::replace(&mut seen[o], true) {
                return Err(Error::InvalidIndex);
            }
        }
        self.offsets = order.iter().map(|&o| self.offsets[o as usize]).collect();
        self.sizes = order.iter().map(|&o| self.sizes[o as usize]).collect();
        self.index_capacity = n;
        Ok(())
    }
}
