//! An open frame: contiguous in memory, contiguous in a file (possibly at an
//! offset inside a larger file) or sparse (a directory of chunk files with an
//! index frame). It keeps the offsets index in memory and reads chunks on
//! demand; every mutation writes what c-blosc2 3.3 writes
//! (docs/FRAME_BEHAVIOUR.md §5, §7) so that the bytes come out the same.
//!
//! The header fields that belong to the super-chunk (nbytes, chunksize,
//! metalayers, ...) are passed in as an [`Info`] by the caller.
//!
//! By concern: `open.rs` makes, opens and re-reads frames; `read.rs` reads
//! chunks and the index; `chunks.rs` inserts, updates, deletes and rearranges
//! chunks; `space.rs` keeps the holes of a contiguous frame's chunks section,
//! where changed chunks go; `special.rs` makes special-value chunks; `tail.rs` writes the index,
//! trailer and header that commit a layout; `txn.rs` journals a change and
//! undoes it when it fails.

mod chunks;
mod open;
mod read;
mod space;
mod special;
mod tail;
mod txn;

pub use special::special_chunk;

use super::bytes::{Bytes, Directory};
use super::header::FIXED_LEN;
use super::journal::{Journal, Undo};
use super::offsets::Offsets;
use super::trailer::MIN_LEN;
use super::writer::Info;
use crate::chunk::header::{Special, EXTENDED_HEADER_LENGTH, VL_BLOCKS};
use crate::error::{Error, Result};

/// Name of the index frame inside a sparse frame's directory.
pub const SPARSE_INDEX: &str = "chunks.b2frame";
/// Bit 63: an offset that encodes a special chunk.
const SPECIAL_BIT: i64 = i64::MIN;
/// Shortest possible frame: fixed header and empty trailer.
pub const MIN_FRAME_LEN: u64 = (FIXED_LEN + MIN_LEN) as u64;

/// The offset value that encodes special chunk `kind`.
pub fn special_offset(kind: Special) -> i64 {
    (((0x80 | kind as u8) as u64) << 56) as i64
}

/// Whether a chunk of this kind is stored as an offset rather than as bytes.
pub fn offset_encoded(kind: Special) -> bool {
    matches!(kind, Special::Zero | Special::Nan | Special::Uninit)
}

/// The special kind an offset encodes (`None` for a stored chunk), or an error
/// for a negative offset that is not a valid special value.
fn decode_special(off: i64) -> Result<Option<Special>> {
    if off >= 0 {
        return Ok(None);
    }
    if off & !(0xffi64 << 56) != 0 || off & SPECIAL_BIT == 0 {
        return Err(Error::FrameSpecial);
    }
    match ((off as u64) >> 56) as u8 & 0x7f {
        1 => Ok(Some(Special::Zero)),
        2 => Ok(Some(Special::Nan)),
        4 => Ok(Some(Special::Uninit)),
        _ => Err(Error::FrameSpecial),
    }
}

/// The layout state that every mutation replaces as a whole.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    header_len: usize,
    frame_len: u64,
    /// Header cbytes: length of the chunks section (contiguous) or Σ chunk file sizes (sparse).
    cbytes: i64,
    /// Offsets into the chunks section, chunk ids (sparse), or special values.
    offsets: Offsets,
    /// How many entries the offsets buffer is compressed for (see writer::index_chunk).
    index_capacity: usize,
    /// The index is one run-length chunk (what c-blosc2's fill_special writes).
    run_length: bool,
    /// The holes of a contiguous frame's chunks section, once a change needed them.
    space: Option<space::Space>,
}

/// One chunk as the frame stores it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Entry {
    /// Stored bytes at this offset of the chunks section (contiguous) or with this id (sparse).
    Stored(i64),
    /// A run of special values, stored as an offset.
    Special(Special),
}

/// An open frame.
pub struct Frame {
    bytes: Bytes,
    dir: Option<Directory>,
    layout: Layout,
    /// The undo journal of a frame file (see [`super::journal`]).
    journal: Option<Box<Journal>>,
    /// The change in progress, when journaled.
    txn: Option<Box<Txn>>,
    /// Chunks are being added in bulk (a new frame being filled): the index,
    /// trailer and header are written once, at [`Frame::end_batch`].
    batch: bool,
    /// A failed change could not be undone in place (its journal waits for
    /// the next open): no more changes through this handle.
    broken: bool,
    /// Nothing was written since the frame file was last synced.
    clean: bool,
    /// Chunk files (sparse frames) the changes since the last checkpoint no
    /// longer need, removed at the next one (a power loss goes back to it).
    pending_drops: Vec<i64>,
}

impl Drop for Frame {
    fn drop(&mut self) {
        self.close();
    }
}

/// A journaled change in progress: what undoes it, and the layout before it.
struct Txn {
    depth: u32,
    undo: Undo,
    layout: Layout,
    /// Chunk files (sparse frames) the change wrote, removed if it is undone.
    added: Vec<i64>,
    /// Chunk files the change no longer needs, removed once it is committed.
    dropped: Vec<i64>,
    /// The regions saved so far (their old bytes are in the journal, and in
    /// `undo` until they pass [`UNDO_IN_MEMORY`]: then `spilled`, and a failed
    /// change is put back from the journal).
    saved: Vec<(u64, u64)>,
    spilled: bool,
    /// The change is the first since the last checkpoint.
    fresh: bool,
}

/// The old bytes a change keeps in memory to put itself back when it fails;
/// past this, it reads them back from its journal records.
const UNDO_IN_MEMORY: usize = 32 << 20;

/// What opening a frame produces: the frame and the super-chunk state its header holds.
pub struct Opened {
    pub frame: Frame,
    pub info: Info,
}

/// Where a frame read from a stream comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamOrigin {
    /// The identity of its file (device, inode), when the stream has one.
    pub identity: Option<(u64, u64)>,
    /// Where the frame starts in the file.
    pub base: u64,
    pub writable: bool,
}

/// One chunk of a new chunk list (see [`Frame::arrange`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Pick {
    /// The chunk now at this position.
    Chunk(usize),
    /// A new chunk of special values of this many bytes.
    Special(Special, i32),
}

/// The VL-blocks flag of a chunk's header bytes.
pub fn has_vl_blocks(chunk: &[u8]) -> bool {
    chunk.len() >= EXTENDED_HEADER_LENGTH && chunk[30] & VL_BLOCKS != 0
}
