//! ZFP (plugin codecs 33, 34, 35): lossy compression of `float32` and
//! `float64` blocks with the zfp library (1.0.1, the version c-blosc2 3.3.5
//! ships, built into the crate from `vendor/zfp`), in fixed-accuracy,
//! fixed-precision or fixed-rate mode.
//!
//! A block is handed to zfp as a 1- to 4-dimensional field of the block shape
//! of the super-chunk's `b2nd` metalayer (the last dimension varies fastest),
//! and stored as zfp's bare stream (no zfp header): decoding takes the mode
//! and the field from the same metalayer and codec meta. The codec meta:
//! - accuracy: a signed byte `e`, the absolute error tolerance `10^e`;
//! - precision: bit planes kept, less 5, 7, 9 or 11 for 1 to 4 dimensions
//!   (at most 64 planes);
//! - rate: the compressed size as a percentage of the input.
//!
//! Streams that would not be smaller than the block, blocks that are not a
//! whole block of the shape (split streams, a chunk's short last block) are
//! left to be stored as they are (size 0), as c-blosc2 does. The errors are
//! c-blosc2's: no `b2nd` metalayer, more than 4 dimensions, a block side
//! shorter than zfp's 4-item cells, items that are not 4 or 8 bytes.
//!
//! Items are floats in the machine's byte order, and zfp's stream is made of
//! 64-bit words in that order too (as in c-blosc2): a zfp chunk written on a
//! little-endian machine does not decode on a big-endian one, nor the other
//! way round (docs/PORTING.md).

mod ffi;

use crate::error::{Error, Result};
use crate::ndmeta::Meta;
use std::cell::RefCell;

/// The zfp mode a codec id stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Mode {
    Accuracy,
    Precision,
    Rate,
}

/// The most dimensions zfp handles.
const MAX_DIM: usize = 4;

/// A mode with its parameter, as set on a zfp stream.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Setting {
    Tolerance(f64),
    Planes(u32),
    Bits(f64),
}

fn setting(mode: Mode, meta: u8, ndim: usize, typesize: i32) -> Setting {
    match mode {
        Mode::Accuracy => Setting::Tolerance(10f64.powf(f64::from(meta as i8))),
        Mode::Precision => Setting::Planes((u32::from(meta) + 3 + 2 * ndim as u32).min(ffi::ZFP_MAX_PREC)),
        // output bits per value, from the percentage of the input
        Mode::Rate => Setting::Bits(f64::from(meta) / 100.0 * f64::from(typesize) * 8.0),
    }
}

/// The block shape of the `b2nd` metalayer (1 to 4 dimensions).
fn block_shape(b2nd: Option<&[u8]>) -> Result<Vec<i32>> {
    let Some(bytes) = b2nd else {
        crate::trace!("zfp: the super-chunk has no b2nd metalayer");
        return Err(Error::Failure);
    };
    match Meta::deserialize_parts(bytes) {
        Ok((m, _, _)) if (1..=MAX_DIM).contains(&m.blockshape.len()) => Ok(m.blockshape),
        _ => {
            crate::trace!("zfp: a b2nd metalayer of 1 to {MAX_DIM} dimensions is needed");
            Err(Error::Failure)
        }
    }
}

fn zfp_type(typesize: i32) -> Result<ffi::ZfpType> {
    match typesize {
        4 => Ok(ffi::ZFP_TYPE_FLOAT),
        8 => Ok(ffi::ZFP_TYPE_DOUBLE),
        _ => {
            crate::trace!("zfp: items of {typesize} bytes (float32 and float64 only)");
            Err(Error::Failure)
        }
    }
}

/// Compress one block; the compressed size (0: store the block as it is).
pub fn encode(
    mode: Mode,
    meta: u8,
    typesize: i32,
    b2nd: Option<&[u8]>,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let block = block_shape(b2nd)?;
    if block.iter().any(|&b| b < 4) {
        crate::trace!("zfp: block sides shorter than zfp's cells of 4 items");
        return Err(Error::Failure);
    }
    let bytes = block.iter().fold(i128::from(typesize), |a, &b| a * i128::from(b));
    if bytes != src.len() as i128 {
        return Ok(0);
    }
    let ty = zfp_type(typesize)?;
    let shape: Vec<usize> = block.iter().map(|&b| b as usize).collect();
    let n = Session::new(setting(mode, meta, shape.len(), typesize), ty, &shape)?.compress(src, dst);
    Ok(if n >= src.len() { 0 } else { n })
}

/// Decompress one block; the decompressed size (`dst`'s length).
pub fn decode(
    mode: Mode,
    meta: u8,
    typesize: i32,
    b2nd: Option<&[u8]>,
    src: &[u8],
    dst: &mut [u8],
) -> Result<usize> {
    let block = block_shape(b2nd)?;
    if typesize <= 0 {
        crate::trace!("zfp: invalid typesize {typesize}");
        return Err(Error::Failure);
    }
    let mut bytes = i64::from(typesize);
    for &b in &block {
        if b <= 0 || bytes > dst.len() as i64 / i64::from(b) {
            crate::trace!("zfp: a block of shape {block:?} does not fit in {} bytes", dst.len());
            return Err(Error::Failure);
        }
        bytes *= i64::from(b);
    }
    let ty = zfp_type(typesize)?;
    let shape: Vec<usize> = block.iter().map(|&b| b as usize).collect();
    let (field, rest) = dst.split_at_mut(bytes as usize);
    let n = Session::new(setting(mode, meta, shape.len(), typesize), ty, &shape)?.decompress(src, field);
    if n == 0 {
        crate::trace!("zfp: the stream does not decode");
        return Ok(0);
    }
    rest.fill(0);
    Ok(dst.len())
}

thread_local! {
    /// A stream buffer reused from block to block (see [`Session`]).
    static SCRATCH: RefCell<Vec<u8>> = const { RefCell::new(Vec::new()) };
}

/// A zfp stream set to a mode, with the field of one block's shape.
struct Session {
    zfp: *mut ffi::ZfpStream,
    ty: ffi::ZfpType,
    /// The block shape, C order (zfp's x is the last dimension).
    shape: [usize; MAX_DIM],
    ndim: usize,
}

impl Drop for Session {
    fn drop(&mut self) {
        // SAFETY: `zfp` came from zfp_stream_open and is closed once.
        unsafe { ffi::zfp_stream_close(self.zfp) }
    }
}

/// A zfp field over `data`, freed on drop.
struct Field(*mut ffi::ZfpField);

impl Drop for Field {
    fn drop(&mut self) {
        // SAFETY: from zfp_field_*d, freed once.
        unsafe { ffi::zfp_field_free(self.0) }
    }
}

/// A bit stream over a buffer, closed on drop.
struct Bits(*mut ffi::BitStream);

impl Drop for Bits {
    fn drop(&mut self) {
        // SAFETY: from stream_open, closed once.
        unsafe { ffi::stream_close(self.0) }
    }
}

impl Session {
    fn new(setting: Setting, ty: ffi::ZfpType, block: &[usize]) -> Result<Session> {
        // SAFETY: a stream without a bit stream; the setters take any values.
        let zfp = unsafe { ffi::zfp_stream_open(std::ptr::null_mut()) };
        if zfp.is_null() {
            return Err(Error::MemoryAlloc);
        }
        let mut s = Session { zfp, ty, shape: [1; MAX_DIM], ndim: block.len() };
        s.shape[..block.len()].copy_from_slice(block);
        // SAFETY: `zfp` is a live stream.
        unsafe {
            match setting {
                Setting::Tolerance(t) => {
                    ffi::zfp_stream_set_accuracy(zfp, t);
                }
                Setting::Planes(p) => {
                    ffi::zfp_stream_set_precision(zfp, p);
                }
                Setting::Bits(r) => {
                    ffi::zfp_stream_set_rate(zfp, r, ty, s.ndim as u32, 0);
                }
            }
        }
        Ok(s)
    }

    /// A field of the block's shape over `data` (at least the block's bytes).
    fn field(&self, data: *mut u8) -> Field {
        let d = self.shape;
        let p = data.cast();
        // SAFETY: zfp only records the pointer and the lengths here.
        Field(unsafe {
            match self.ndim {
                1 => ffi::zfp_field_1d(p, self.ty, d[0]),
                2 => ffi::zfp_field_2d(p, self.ty, d[1], d[0]),
                3 => ffi::zfp_field_3d(p, self.ty, d[2], d[1], d[0]),
                _ => ffi::zfp_field_4d(p, self.ty, d[3], d[2], d[1], d[0]),
            }
        })
    }

    /// The most bytes a stream of the block can span, written or read (also
    /// for a damaged stream: a block reads at most its bit budget, or the
    /// exponent, every bit plane and a group test per item and plane).
    fn stream_bound(&self, field: &Field) -> usize {
        let (mut minbits, mut maxbits, mut maxprec, mut minexp) = (0, 0, 0, 0);
        // SAFETY: live stream; the outputs are plain integers.
        let written = unsafe {
            ffi::zfp_stream_params(self.zfp, &mut minbits, &mut maxbits, &mut maxprec, &mut minexp);
            ffi::zfp_stream_maximum_size(self.zfp, field.0)
        };
        let values = 1u64 << (2 * self.ndim);
        let planes = if self.ty == ffi::ZFP_TYPE_FLOAT { 32 } else { 64 };
        let all_planes = 12 + (values + 1) * planes + values;
        let per_block = u64::from(minbits).max(u64::from(maxbits).min(all_planes));
        let blocks: u64 = self.shape[..self.ndim].iter().map(|&n| (n as u64).div_ceil(4)).product();
        let read = (blocks * per_block).div_ceil(64) * 8 + 16;
        (read as usize).max(written + 16)
    }

    /// Compress the block in `src` into `dst`; the stream's size (0 when it
    /// does not fit in `dst` or zfp fails).
    fn compress(&self, src: &[u8], dst: &mut [u8]) -> usize {
        let field = self.field(src.as_ptr().cast_mut());
        if field.0.is_null() {
            return 0;
        }
        let bound = self.stream_bound(&field);
        let run = |out: &mut [u8]| -> usize {
            // SAFETY: `out` holds `bound` bytes, more than zfp writes for this
            // field and mode; `field` reads `src`, a whole block (checked by
            // the caller), which zfp does not write.
            unsafe {
                let bits = Bits(ffi::stream_open(out.as_mut_ptr().cast(), out.len()));
                if bits.0.is_null() {
                    return 0;
                }
                ffi::zfp_stream_set_bit_stream(self.zfp, bits.0);
                ffi::zfp_stream_rewind(self.zfp);
                let n = ffi::zfp_compress(self.zfp, field.0);
                ffi::zfp_stream_set_bit_stream(self.zfp, std::ptr::null_mut());
                n
            }
        };
        if dst.len() >= bound {
            return run(&mut dst[..bound]);
        }
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            s.clear();
            s.resize(bound, 0);
            let n = run(&mut s);
            if n == 0 || n > dst.len() {
                return 0;
            }
            dst[..n].copy_from_slice(&s[..n]);
            n
        })
    }

    /// Decompress `src` into `out` (exactly the block's bytes); 0 when zfp fails.
    fn decompress(&self, src: &[u8], out: &mut [u8]) -> usize {
        let field = self.field(out.as_mut_ptr());
        if field.0.is_null() {
            return 0;
        }
        let bound = self.stream_bound(&field).max(src.len() + 16);
        SCRATCH.with(|s| {
            let mut s = s.borrow_mut();
            // zfp reads whole words and trusts the stream: it reads from a
            // copy padded with zeros to the most any stream of the block can span.
            s.clear();
            s.extend_from_slice(src);
            s.resize(bound, 0);
            // SAFETY: the bit stream covers `bound` bytes, more than the
            // decoder can read for this field and mode; `field` points at
            // `out`, which holds the block's bytes (checked by the caller).
            unsafe {
                let bits = Bits(ffi::stream_open(s.as_mut_ptr().cast(), s.len()));
                if bits.0.is_null() {
                    return 0;
                }
                ffi::zfp_stream_set_bit_stream(self.zfp, bits.0);
                ffi::zfp_stream_rewind(self.zfp);
                let n = ffi::zfp_decompress(self.zfp, field.0);
                ffi::zfp_stream_set_bit_stream(self.zfp, std::ptr::null_mut());
                n
            }
        })
    }
}

#[cfg(test)]
mod tests;
