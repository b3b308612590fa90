//! Variable-length-block chunks (README_CHUNK_FORMAT.rst, `blosc2_flags2`
//! bit 0): the header's blocksize field counts the blocks, each block is one
//! stream preceded by its uncompressed size, and its compressed size follows
//! from the next block start.

use super::header::{flags, Header, EXTENDED_HEADER_LENGTH, VERSION_FORMAT_VL_BLOCKS, VL_BLOCKS};
use super::pipeline;
use super::pool::Scratch;
use super::view::ChunkView;
use crate::codecs::{self, Codec, CodecState};
use crate::error::{Error, Result};
use crate::params::CParams;
use crate::plugins::{DecodeInfo, EncodeInfo};

/// Where each block of a VL chunk is, once validated.
pub struct VlLayout {
    /// (start of the block's stream in the chunk, its compressed size, its decoded size)
    pub blocks: Vec<(usize, usize, usize)>,
}

/// Check the bstarts of a VL chunk and collect the blocks.
pub fn layout(view: &ChunkView) -> Result<VlLayout> {
    let h = &view.header;
    let n = h.nblocks();
    let cbytes = view.data.len();
    let mut blocks = Vec::with_capacity(n.min(cbytes / 4));
    let mut total = 0usize;
    let mut prev = 0usize;
    for j in 0..n {
        let start = view.bstart(j);
        let next = if j + 1 < n { view.bstart(j + 1) } else { h.cbytes };
        if start < 0 || next < 0 {
            return Err(Error::InvalidHeader);
        }
        let (start, next) = (start as usize, next as usize);
        if start < view.bstarts_end || start <= prev || next <= start + 4 || next > cbytes {
            return Err(Error::InvalidHeader);
        }
        let size = i32::from_le_bytes(view.data[start..start + 4].try_into().map_err(|_| Error::ReadBuffer)?);
        if size <= 0 {
            return Err(Error::InvalidHeader);
        }
        total += size as usize;
        if total > h.nbytes as usize {
            return Err(Error::InvalidHeader);
        }
        blocks.push((start + 4, next - start - 4, size as usize));
        prev = start;
    }
    if total != h.nbytes as usize {
        return Err(Error::InvalidHeader);
    }
    Ok(VlLayout { blocks })
}

/// Decode VL block `(pos, csize, size)` into `out` (exactly `size` bytes).
pub fn decode_block(
    view: &ChunkView,
    block: (usize, usize, usize),
    out: &mut [u8],
    s: &mut Scratch,
) -> Result<()> {
    let h = &view.header;
    let (pos, csize, size) = block;
    let stream = view.data.get(pos..pos + csize).ok_or(Error::ReadBuffer)?;
    let steps = pipeline::out_of_place_steps(&h.filters);
    pipeline::check(&h.filters)?;
    s.reserve(size);
    let Scratch { tmp1, tmp2, codec, .. } = s;
    let dest: &mut [u8] = if steps == 0 { &mut *out } else { &mut tmp1[..size] };
    if csize == size {
        dest.copy_from_slice(stream);
    } else {
        let ddict;
        let dict = match view.dict {
            None => None,
            Some(d) if h.compformat() == 4 => {
                ddict = codecs::ZstdDDict::new(d).ok_or(Error::CodecDict)?;
                Some(codecs::DDict::Zstd(&ddict))
            }
            Some(d) => Some(codecs::DDict::Lz4(d)),
        };
        codecs::decompress(h.compformat(), stream, dest, dict.as_ref(), codec)?;
    }
    let ts = usize::from(h.typesize);
    let info = DecodeInfo { typesize: i32::from(h.typesize), owner: 0, chunk: view.data, schunk: None };
    pipeline::backward(&h.filters, &h.filters_meta, ts, h.version, true, &[], out, tmp1, tmp2, Some(&info))
}

/// Decode every block, one after the other, into `dst`.
pub fn decompress_all(view: &ChunkView, dst: &mut [u8], s: &mut Scratch) -> Result<usize> {
    let l = layout(view)?;
    let mut at = 0;
    for &b in &l.blocks {
        decode_block(view, b, &mut dst[at..at + b.2], s)?;
        at += b.2;
    }
    Ok(at)
}

/// Copy `dst.len()` decoded bytes starting at `start`.
pub fn getitem(view: &ChunkView, start: usize, dst: &mut [u8], s: &mut Scratch) -> Result<usize> {
    let l = layout(view)?;
    let stop = start + dst.len();
    let mut at = 0;
    let mut tmp = Vec::new();
    for &b in &l.blocks {
        let (b0, b1) = (at, at + b.2);
        at = b1;
        if b1 <= start || b0 >= stop {
            continue;
        }
        tmp.resize(b.2, 0);
        decode_block(view, b, &mut tmp, s)?;
        let (lo, hi) = (start.max(b0), stop.min(b1));
        dst[lo - start..hi - start].copy_from_slice(&tmp[lo - b0..hi - b0]);
    }
    Ok(dst.len())
}

/// Compress `blocks` (each its own block) into one VL chunk in `dst`.
/// Returns the chunk length, or 0 when it does not fit.
pub fn compress(params: &CParams, blocks: &[&[u8]], dst: &mut [u8], state: &mut CodecState) -> Result<usize> {
    let codec = Codec::from_compcode(params.compcode).ok_or(Error::CodecSupport)?;
    if blocks.is_empty() || params.clevel > 9 || params.typesize <= 0 {
        return Err(Error::InvalidParam);
    }
    pipeline::check(&params.filters)?;
    let total: usize = blocks.iter().map(|b| b.len()).sum();
    if total > super::header::MAX_BUFFERSIZE as usize || blocks.iter().any(|b| b.is_empty()) {
        return Err(Error::InvalidParam);
    }
    let typesize = if params.typesize > 255 { 1 } else { params.typesize as usize };
    let hl = EXTENDED_HEADER_LENGTH;
    let bstarts_end = hl + 4 * blocks.len();
    if bstarts_end > dst.len() {
        return Ok(0);
    }
    let maxb = blocks.iter().map(|b| b.len()).max().unwrap_or(0);
    let (mut t1, mut t2) = (vec![0u8; maxb], vec![0u8; maxb]);
    let mut w = bstarts_end;
    for (j, b) in blocks.iter().enumerate() {
        let info = EncodeInfo { params, source: b };
        let at = pipeline::forward(
            &params.filters,
            &params.filters_meta,
            typesize,
            true,
            b,
            b,
            &mut t1,
            &mut t2,
            Some(&info),
        )?;
        let filtered: &[u8] = match at {
            None => b,
            Some(true) => &t1[..b.len()],
            Some(false) => &t2[..b.len()],
        };
        if w + 4 > dst.len() {
            return Ok(0);
        }
        dst[hl + 4 * j..hl + 4 * j + 4].copy_from_slice(&(w as i32).to_le_bytes());
        dst[w..w + 4].copy_from_slice(&(b.len() as i32).to_le_bytes());
        w += 4;
        let room = (dst.len() - w).min(b.len());
        let c = if params.clevel == 0 || room == 0 {
            0
        } else {
            codecs::compress(codec, params.clevel, filtered, &mut dst[w..w + room], None, state)?
        };
        let c = if c == 0 || c >= b.len() {
            if w + b.len() > dst.len() {
                return Ok(0);
            }
            dst[w..w + b.len()].copy_from_slice(filtered);
            b.len()
        } else {
            c
        };
        w += c;
    }
    let ff = super::header::flags_from_filters(&params.filters);
    let header = Header {
        version: VERSION_FORMAT_VL_BLOCKS,
        versionlz: 1,
        flags: flags::DOSHUFFLE | flags::DOBITSHUFFLE | ff | flags::DONT_SPLIT | (codec.format() << 5),
        typesize: typesize as u8,
        nbytes: total as i32,
        blocksize: blocks.len() as i32,
        cbytes: w as i32,
        filters: params.filters,
        udcompcode: params.compcode,
        compcode_meta: params.compcode_meta,
        filters_meta: params.filters_meta,
        blosc2_flags2: VL_BLOCKS,
        blosc2_flags: 0,
    };
    header.write(dst);
    Ok(w)
}
