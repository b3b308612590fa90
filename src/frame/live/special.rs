//! Special-value chunks: the 32-byte chunks and index entries that stand for
//! runs of zeros, NaNs or uninitialized items, and frames filled with them.

use super::super::offsets::Offsets;
use super::super::writer::Info;
use super::{offset_encoded, special_offset, Entry, Frame};
use crate::chunk::header::{Header, Special, EXTENDED_HEADER_LENGTH};
use crate::chunk::SplitMode;
use crate::error::{Error, Result};

/// A 32-byte chunk of `nbytes` special values.
pub fn special_chunk(kind: Special, nbytes: i32, typesize: i32, blocksize: i32) -> Vec<u8> {
    let mut b = vec![0u8; EXTENDED_HEADER_LENGTH];
    special_header(kind, nbytes, typesize, blocksize).write(&mut b);
    b
}

/// The header of [`special_chunk`] (which is all of it).
pub(super) fn special_header(kind: Special, nbytes: i32, typesize: i32, blocksize: i32) -> Header {
    Header {
        version: crate::chunk::header::VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: 0x05,
        typesize: typesize.clamp(1, 255) as u8,
        nbytes,
        blocksize: if blocksize > 0 {
            blocksize
        } else {
            crate::chunk::blocksize::compute(0, 5, typesize, nbytes, 0, SplitMode::ForwardCompat, 0x1)
        },
        cbytes: EXTENDED_HEADER_LENGTH as i32,
        blosc2_flags: (kind as u8) << 4,
        ..Header::default()
    }
}

/// An index whose entries are all equal, as a 40-byte run-length chunk.
pub(super) fn run_length_index(value: i64, n: usize) -> Result<Vec<u8>> {
    let nbytes = n.checked_mul(8).and_then(|b| i32::try_from(b).ok()).ok_or(Error::TwoGbLimit)?;
    let h = Header {
        version: crate::chunk::header::VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: 0x05,
        typesize: 8,
        nbytes,
        blocksize: nbytes.min(16 * 1024),
        cbytes: 40,
        blosc2_flags: (Special::Value as u8) << 4,
        ..Header::default()
    };
    let mut b = vec![0u8; 40];
    h.write(&mut b);
    b[32..].copy_from_slice(&value.to_le_bytes());
    Ok(b)
}

impl Frame {
    /// Fill an empty frame with `n` chunks of special values (`info` holds the
    /// new nbytes and chunksize); the index is written as one run-length chunk.
    pub fn fill_special(&mut self, info: &Info, old_info: &Info, n: usize, kind: Special) -> Result<()> {
        if self.nchunks() != 0 || !offset_encoded(kind) {
            return Err(Error::FrameSpecial);
        }
        let mut layout = self.layout.clone();
        layout.cbytes = if self.dir.is_some() { 0 } else { layout.cbytes };
        layout.offsets = Offsets::repeat(special_offset(kind), n);
        layout.index_capacity = n;
        layout.run_length = true;
        self.install(info, old_info, layout)
    }

    /// Turn the offset-encoded special chunks into stored chunks (needed before
    /// a frame's chunks become variable-sized: the offsets cannot say their size).
    pub fn materialize_specials(&mut self, info: &Info) -> Result<()> {
        for i in 0..self.nchunks() {
            if let Entry::Special(kind) = self.entry(i)? {
                let n = self.special_nbytes(info, i)?;
                let c = special_chunk(kind, n, info.cparams.typesize, info.cparams.blocksize);
                if self.dir.is_some() || self.batch {
                    let (off, cb) = self.store(&c)?;
                    self.layout.offsets.set(i, off);
                    self.layout.cbytes = cb;
                } else {
                    self.ensure_space()?;
                    let mut layout = self.layout.clone();
                    let off = self.place(&mut layout, &c)?;
                    layout.offsets.set(i, off);
                    self.layout = layout;
                }
            }
        }
        Ok(())
    }
}
