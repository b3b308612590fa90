//! Writing contiguous frames byte for byte as c-blosc2 3.3 does
//! (docs/FRAME_BEHAVIOUR.md §2-§4 and §12).

use super::header::{FIXED_LEN, MAGIC};
use super::msgpack::Metalayer;
use crate::chunk::header::filter;
use crate::chunk::{CParams, Compressor, SplitMode};
use crate::codecs::Codec;
use crate::error::{Error, Result};

/// What the header of a frame records (the super-chunk's state).
#[derive(Debug, Clone)]
pub struct Info {
    /// Parameters of the super-chunk (typesize, codec, level, filters, ...).
    pub cparams: CParams,
    /// Thread counts recorded in the header (informational).
    pub tcomp: i16,
    pub tdecomp: i16,
    /// Total uncompressed bytes of the chunks.
    pub nbytes: i64,
    /// -1 before the first chunk, 0 for variable-size chunks.
    pub chunksize: i32,
    /// Whether the chunks use variable-length blocks.
    pub vl_blocks: bool,
    pub metalayers: Vec<Metalayer>,
    /// Variable-length metalayers, contents as stored (compressed chunks).
    pub vlmetalayers: Vec<Metalayer>,
}

impl Info {
    pub fn new(cparams: CParams) -> Info {
        let (tcomp, tdecomp) = (cparams.nthreads, 1);
        Info {
            cparams,
            tcomp,
            tdecomp,
            nbytes: 0,
            chunksize: -1,
            vl_blocks: false,
            metalayers: Vec::new(),
            vlmetalayers: Vec::new(),
        }
    }
}

/// Everything a contiguous frame holds, for writing it in one piece.
pub struct FrameParts<'a> {
    pub info: &'a Info,
    /// The chunks section as stored.
    pub chunks: &'a [u8],
    /// One entry per chunk: offset in the chunks section, or a special value.
    pub offsets: &'a super::Offsets,
    /// The offsets capacity the index is compressed for (the number of chunks,
    /// or the number before a delete: c-blosc2 keeps the old buffer size there).
    pub index_capacity: usize,
}

fn put_meta_map(out: &mut Vec<u8>, metas: &[Metalayer]) -> Result<Vec<usize>> {
    out.push(0xde);
    out.extend_from_slice(&u16::try_from(metas.len()).map_err(|_| Error::InvalidParam)?.to_be_bytes());
    let mut slots = Vec::with_capacity(metas.len());
    for m in metas {
        let name = m.name.as_bytes();
        if name.len() > 31 {
            return Err(Error::InvalidParam);
        }
        out.push(0xa0 + name.len() as u8);
        out.extend_from_slice(name);
        out.push(0xd2);
        slots.push(out.len());
        out.extend_from_slice(&[0; 4]);
    }
    Ok(slots)
}

/// Append the array of bin32 contents, patching each map slot with its position minus `base`.
fn put_meta_contents(out: &mut Vec<u8>, metas: &[Metalayer], slots: &[usize], base: usize) -> Result<()> {
    out.push(0xdc);
    out.extend_from_slice(&(metas.len() as u16).to_be_bytes());
    for (m, &slot) in metas.iter().zip(slots) {
        let pos = i32::try_from(out.len() - base).map_err(|_| Error::TwoGbLimit)?;
        out[slot..slot + 4].copy_from_slice(&pos.to_be_bytes());
        out.push(0xc6);
        out.extend_from_slice(&u32::try_from(m.content.len()).map_err(|_| Error::TwoGbLimit)?.to_be_bytes());
        out.extend_from_slice(&m.content);
    }
    Ok(())
}

/// The header of a frame (frame_len left 0: patch bytes 16..24), `sparse` for the
/// index frame of a sparse frame.
pub fn header(p: &Info, cbytes: i64, sparse: bool) -> Result<Vec<u8>> {
    let cp = &p.cparams;
    let mut h = Vec::with_capacity(FIXED_LEN + 64);
    h.extend_from_slice(&[0x9e, 0xa8]);
    h.extend_from_slice(MAGIC);
    h.push(0xd2);
    h.extend_from_slice(&[0; 4]); // header_len, patched below
    h.push(0xcf);
    h.extend_from_slice(&[0; 8]); // frame_len, patched by the caller
    let variable = p.chunksize == 0;
    let version = if variable || p.vl_blocks { 3 } else { 2 };
    let general = version | 0x10 | if variable { 0x40 } else { 0 } | if p.vl_blocks { 0x80 } else { 0 };
    let codec = if cp.compcode >= 6 { 6 } else { cp.compcode };
    h.extend_from_slice(&[
        0xa4,
        general,
        u8::from(sparse),
        (cp.clevel << 4) | codec,
        (cp.splitmode as u8 - 1) & 0x3,
    ]);
    h.push(0xd3);
    h.extend_from_slice(&p.nbytes.to_be_bytes());
    h.push(0xd3);
    h.extend_from_slice(&cbytes.to_be_bytes());
    for v in [cp.typesize, cp.blocksize, p.chunksize] {
        h.push(0xd2);
        h.extend_from_slice(&v.to_be_bytes());
    }
    for v in [p.tcomp, p.tdecomp] {
        h.push(0xd1);
        h.extend_from_slice(&v.to_be_bytes());
    }
    h.push(if p.vlmetalayers.is_empty() { 0xc2 } else { 0xc3 });
    h.extend_from_slice(&[0xd8, 6]);
    h.extend_from_slice(&cp.filters);
    h.extend_from_slice(&[cp.compcode, cp.compcode_meta]);
    h.extend_from_slice(&cp.filters_meta);
    h.extend_from_slice(&[u8::from(cp.use_dict), 0]);
    debug_assert_eq!(h.len(), FIXED_LEN);
    // Metalayers: "idx size" counts from the fixarray marker through the map.
    h.extend_from_slice(&[0x93, 0xcd, 0, 0]);
    let slots = put_meta_map(&mut h, &p.metalayers)?;
    let idx = u16::try_from(h.len() - FIXED_LEN).map_err(|_| Error::InvalidParam)?;
    h[FIXED_LEN + 2..FIXED_LEN + 4].copy_from_slice(&idx.to_be_bytes());
    put_meta_contents(&mut h, &p.metalayers, &slots, 0)?;
    let hl = i32::try_from(h.len()).map_err(|_| Error::InvalidParam)?;
    h[11..15].copy_from_slice(&hl.to_be_bytes());
    Ok(h)
}

/// The offsets index, compressed as c-blosc2 does it.
pub fn index_chunk(offsets: &super::Offsets, capacity: usize) -> Result<Vec<u8>> {
    let params = CParams {
        compcode: Codec::BloscLz as u8,
        compcode_meta: 0,
        clevel: 5,
        use_dict: false,
        typesize: 8,
        nthreads: 1,
        blocksize: 16 * 1024,
        splitmode: SplitMode::Never,
        filters: [0, 0, 0, 0, 0, filter::SHUFFLE],
        filters_meta: [0; 6],
        owner: 0,
        schunk: None,
        tuner: None,
    };
    let mut raw = Vec::with_capacity(8 * offsets.len());
    for o in offsets.iter() {
        raw.extend_from_slice(&o.to_le_bytes());
    }
    let mut out = vec![0u8; 8 * capacity.max(offsets.len()) + 32];
    let n = Compressor::new(params)?.compress(&raw, &mut out)?;
    if n == 0 {
        return Err(Error::Failure);
    }
    out.truncate(n);
    Ok(out)
}

/// The trailer: variable-length metalayers, trailer length, fingerprint.
pub fn trailer(vlmetas: &[Metalayer]) -> Result<Vec<u8>> {
    let mut t = vec![0x94, 0x01, 0x93, 0xcd, 0, 0];
    let slots = put_meta_map(&mut t, vlmetas)?;
    // Here "idx size" counts from the uint16 marker through the map.
    let idx = u16::try_from(t.len() - 3).map_err(|_| Error::InvalidParam)?;
    t[4..6].copy_from_slice(&idx.to_be_bytes());
    put_meta_contents(&mut t, vlmetas, &slots, 0)?;
    let len = u32::try_from(t.len() + 23).map_err(|_| Error::TwoGbLimit)?;
    t.push(0xce);
    t.extend_from_slice(&len.to_be_bytes());
    t.extend_from_slice(&[0xd8, 0]);
    t.extend_from_slice(&[0; 16]);
    Ok(t)
}

/// Lay out a whole contiguous frame.
pub fn write_cframe(p: &FrameParts) -> Result<Vec<u8>> {
    let cbytes = p.chunks.len() as i64;
    let mut frame = header(p.info, cbytes, false)?;
    if p.info.nbytes > 0 {
        frame.extend_from_slice(p.chunks);
        frame.extend_from_slice(&index_chunk(p.offsets, p.index_capacity)?);
    }
    frame.extend_from_slice(&trailer(&p.info.vlmetalayers)?);
    let flen = frame.len() as u64;
    frame[16..24].copy_from_slice(&flen.to_be_bytes());
    Ok(frame)
}
