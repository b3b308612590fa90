//! Special-value chunks (README_CHUNK_FORMAT.rst, `blosc2_flags` bits 4-6):
//! a header alone stands for a run of zeros, NaNs, uninitialized bytes, or a
//! value that follows the header.

use super::blocksize;
use super::header::{
    flags, flags_from_filters, Header, Special, EXTENDED_HEADER_LENGTH, VERSION_FORMAT_STABLE,
};
use super::view::ChunkView;
use crate::error::{Error, Result};
use crate::params::CParams;

/// Build the header-only chunk for `nbytes` of `kind` into `dst` (for
/// `Special::Value`, `value` is the item, `typesize` bytes long).
pub fn make(
    params: &CParams,
    kind: Special,
    nbytes: i32,
    value: Option<&[u8]>,
    dst: &mut [u8],
) -> Result<usize> {
    let typesize = params.typesize;
    if typesize <= 0 || nbytes < 0 {
        return Err(Error::InvalidParam);
    }
    let extra = if kind == Special::Value { typesize as usize } else { 0 };
    if dst.len() < EXTENDED_HEADER_LENGTH + extra {
        return Err(Error::Data);
    }
    if nbytes % typesize != 0 && (kind == Special::Value || nbytes > 0) {
        return Err(Error::Data);
    }
    if params.clevel > 9 {
        return Err(Error::CodecParam);
    }
    let ff = flags_from_filters(&params.filters);
    let bs = blocksize::compute(
        params.compcode,
        params.clevel,
        typesize,
        nbytes,
        params.blocksize,
        params.splitmode,
        ff,
    );
    let header = Header {
        version: VERSION_FORMAT_STABLE,
        versionlz: 1,
        flags: flags::DOSHUFFLE | flags::DOBITSHUFFLE,
        typesize: if typesize > 255 { 1 } else { typesize as u8 },
        nbytes,
        blocksize: bs,
        cbytes: (EXTENDED_HEADER_LENGTH + extra) as i32,
        blosc2_flags: (kind as u8) << 4,
        ..Header::default()
    };
    header.write(dst);
    if kind == Special::Value {
        let v = value.filter(|v| v.len() >= extra).ok_or(Error::InvalidParam)?;
        dst[EXTENDED_HEADER_LENGTH..EXTENDED_HEADER_LENGTH + extra].copy_from_slice(&v[..extra]);
    }
    Ok(EXTENDED_HEADER_LENGTH + extra)
}

/// Fill `dst` (the whole decoded chunk) with the chunk's special value.
pub fn fill(view: &ChunkView, dst: &mut [u8]) -> Result<()> {
    fill_range(view, 0, dst)
}

/// Fill `dst` with the decoded bytes of a special chunk starting at byte `start`.
pub fn fill_range(view: &ChunkView, start: usize, dst: &mut [u8]) -> Result<()> {
    let h = &view.header;
    match h.special() {
        Special::None => Err(Error::SchunkSpecial),
        Special::Zero => {
            dst.fill(0);
            Ok(())
        }
        Special::Uninit => Ok(()),
        Special::Nan => {
            let pattern: &[u8] = match h.typesize {
                4 => &NAN32,
                8 => &NAN64,
                _ => return Err(Error::Data),
            };
            repeat(pattern, start, dst)
        }
        Special::Value => {
            let ts = (h.cbytes as usize).saturating_sub(EXTENDED_HEADER_LENGTH);
            let v = view
                .data
                .get(EXTENDED_HEADER_LENGTH..EXTENDED_HEADER_LENGTH + ts)
                .ok_or(Error::ReadBuffer)?;
            repeat(v, start, dst)
        }
    }
}

/// The quiet NaNs of a NaN chunk, in the machine's byte order: the items are
/// the program's floats, as c-blosc2 fills them (a big-endian machine reads
/// NaN from them, not the bytes of a little-endian NaN).
const NAN32: [u8; 4] = 0x7FC0_0000u32.to_ne_bytes();
const NAN64: [u8; 8] = 0x7FF8_0000_0000_0000u64.to_ne_bytes();

/// Tile `item` over `dst` as if the tiling started `start` bytes earlier.
fn repeat(item: &[u8], start: usize, dst: &mut [u8]) -> Result<()> {
    if item.is_empty() {
        return Err(Error::Data);
    }
    let n = item.len();
    for (i, b) in dst.iter_mut().enumerate() {
        *b = item[(start + i) % n];
    }
    Ok(())
}
