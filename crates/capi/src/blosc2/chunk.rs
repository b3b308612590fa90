//! The chunk-level exports of `blosc2.h`: compress, decompress, getitem,
//! header queries and special-value chunks.

use super::context::{context_schunk, context_tuner};
use super::global::{compression_call, global_compress, global_decompress, with_global_dctx};
use super::handle::with_lazy_source;
use super::params::core_cparams;
use super::types::*;
use crate::ffi::{guard, guard_code, reference_mut, slice, slice_mut, write_opt};
use crate::os::{c_char, c_int, c_void, size_t};
use b2nd::chunk::header::MIN_HEADER_LENGTH;
use b2nd::chunk::{special, CParams, Header, Special};
use b2nd::codecs::Library;
use b2nd::error::Error;

fn len32(n: usize) -> Result<i32, Error> {
    i32::try_from(n).map_err(|_| Error::MaxBufsizeExceeded)
}

/// The first 16 bytes of a chunk, from a pointer the caller vouches for.
///
/// # Safety
/// `src` must be NULL or point to at least 16 readable bytes.
unsafe fn min_header<'a>(src: *const c_void) -> Result<&'a [u8], Error> {
    // SAFETY: caller contract.
    unsafe { slice(src.cast(), MIN_HEADER_LENGTH as i64) }
}

/// The source and destination buffers of a call.
///
/// # Safety
/// `src` must hold `srcsize` readable bytes and `dest` `destsize` writable ones (or be NULL).
unsafe fn buffers<'a>(
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> Result<(&'a [u8], &'a mut [u8]), Error> {
    // SAFETY: caller contract.
    unsafe { Ok((slice(src.cast(), i64::from(srcsize))?, slice_mut(dest.cast(), i64::from(destsize))?)) }
}

/// A whole chunk from its pointer alone, sized by the `cbytes` of its header.
///
/// # Safety
/// `src` must be NULL or point to a chunk whose header tells its true length.
unsafe fn whole_chunk<'a>(src: *const c_void) -> Result<&'a [u8], Error> {
    // SAFETY: caller contract.
    let h = Header::parse_min(unsafe { min_header(src)? })?;
    // SAFETY: caller contract (the header's cbytes is the buffer's length).
    unsafe { slice(src.cast(), i64::from(h.cbytes)) }
}

/// Compress with the global parameters (see `blosc1_set_compressor` etc.).
///
/// # Safety
/// `src` must hold `srcsize` bytes and `dest` have room for `destsize`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: i32,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        let call = compression_call(clevel, doshuffle, typesize)?;
        len32(global_compress(call, src, dst)?)
    })
}

/// Blosc1 form of `blosc2_compress`.
///
/// # Safety
/// As `blosc2_compress`.
#[no_mangle]
pub unsafe extern "C" fn blosc1_compress(
    clevel: c_int,
    doshuffle: c_int,
    typesize: size_t,
    nbytes: size_t,
    src: *const c_void,
    dest: *mut c_void,
    destsize: size_t,
) -> c_int {
    if nbytes > i32::MAX as usize {
        return Error::MaxBufsizeExceeded.code();
    }
    let typesize = typesize.min(i32::MAX as usize) as i32;
    let destsize = destsize.min(i32::MAX as usize) as i32;
    // SAFETY: forwarded caller contract.
    unsafe { blosc2_compress(clevel, doshuffle, typesize, src, nbytes as i32, dest, destsize) }
}

/// Decompress a chunk with the global context.
///
/// # Safety
/// `src` must hold `srcsize` bytes and `dest` have room for `destsize`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress(
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        len32(global_decompress(src, dst)?)
    })
}

/// Blosc1 form of `blosc2_decompress` (the chunk length comes from its header).
///
/// # Safety
/// `src` must be a whole chunk and `dest` have room for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc1_decompress(src: *const c_void, dest: *mut c_void, destsize: size_t) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { whole_chunk(src)? };
        // SAFETY: caller contract: `dest` has room for `destsize` bytes.
        let dst = unsafe { slice_mut(dest.cast(), destsize.min(i32::MAX as usize) as i64)? };
        len32(global_decompress(src, dst)?)
    })
}

/// Compress with a compression context.
///
/// # Safety
/// `context` must be a live context; buffers as for `blosc2_compress`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        // SAFETY: caller contract: `src` holds `srcsize` bytes, `dest` has room for `destsize`.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        let Some(tuner) = context_tuner(ctx) else {
            return len32(ctx.compressor()?.compress(src, dst)?);
        };
        // A registered tuner: as in c-blosc2, `next_blocksize` runs before every
        // compression. (Its `next_cparams`, `update` and `free` run only once the
        // tuner has set the context's private tuner state, which a tuner can only
        // do from inside c-blosc2; through the public API that never happens.)
        if let Some(hook) = tuner.next_blocksize {
            // SAFETY: the registered tuner's hook, given the live context.
            if unsafe { hook(context) } < 0 {
                return Err(Error::Tuner);
            }
        }
        // SAFETY: `context` is live (caller contract; `reference_mut` checked it non-NULL)
        // and `ctx` is not used past the hook: this is the only reference to it now.
        len32(unsafe { &mut *context }.compressor()?.compress(src, dst)?)
    })
}

/// Decompress with a decompression context.
///
/// # Safety
/// `context` must be a live context; buffers as for `blosc2_decompress`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_decompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        // SAFETY: caller contract: `src` holds `srcsize` bytes, `dest` has room for `destsize`.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        let sp = context_schunk(ctx);
        let d = ctx.decompressor()?;
        // SAFETY: c-blosc2's contract on dparams.schunk.
        len32(unsafe { with_lazy_source(sp, |lazy| d.decompress_lazy(src, dst, lazy)) }?)
    })
}

/// Get `nitems` items starting at item `start`.
///
/// # Safety
/// `src` must hold `srcsize` bytes and `dest` have room for `destsize`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem(
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        len32(with_global_dctx(|d| d.getitem(src, i64::from(start), i64::from(nitems), dst))?)
    })
}

/// Blosc1 form of `blosc2_getitem` (`dest` must hold `nitems` items).
///
/// # Safety
/// `src` must be a whole chunk and `dest` have room for the items.
#[no_mangle]
pub unsafe extern "C" fn blosc1_getitem(
    src: *const c_void,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { whole_chunk(src)? };
        let h = Header::parse_min(src)?;
        let want = i64::from(nitems.max(0)) * i64::from(h.typesize);
        // SAFETY: caller contract: `dest` has room for the `nitems` items (`want` bytes at
        // the chunk's typesize).
        let dst = unsafe { slice_mut(dest.cast(), want)? };
        len32(with_global_dctx(|d| d.getitem(src, i64::from(start), i64::from(nitems), dst))?)
    })
}

/// `blosc2_getitem` with a decompression context.
///
/// # Safety
/// `context` must be a live context; buffers as for `blosc2_getitem`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: c_int,
    nitems: c_int,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        // SAFETY: caller contract: `src` holds `srcsize` bytes, `dest` has room for `destsize`.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        let sp = context_schunk(ctx);
        let ts = i64::from(Header::parse_min(src)?.typesize);
        let (start, nbytes) =
            (i64::from(start) * ts, i64::from(nitems).checked_mul(ts).ok_or(Error::WriteBuffer)?);
        let d = ctx.decompressor()?;
        // SAFETY: c-blosc2's contract on dparams.schunk.
        len32(unsafe { with_lazy_source(sp, |lazy| d.getitem_bytes_lazy(src, start, nbytes, dst, lazy)) }?)
    })
}

/// Get `nbytes` bytes starting at byte `start`.
///
/// # Safety
/// As `blosc2_getitem_ctx`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_getitem_bytes_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    start: i32,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        // SAFETY: caller contract: `src` holds `srcsize` bytes, `dest` has room for `destsize`.
        let (src, dst) = unsafe { buffers(src, srcsize, dest, destsize)? };
        let sp = context_schunk(ctx);
        let d = ctx.decompressor()?;
        // SAFETY: c-blosc2's contract on dparams.schunk.
        len32(unsafe {
            with_lazy_source(sp, |lazy| {
                d.getitem_bytes_lazy(src, i64::from(start), i64::from(nbytes), dst, lazy)
            })
        }?)
    })
}

/// The sizes in a chunk header (zeros and a negative code when it is invalid).
///
/// # Safety
/// `cbuffer` must point to at least 16 bytes; the out pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut i32,
    cbytes: *mut i32,
    blocksize: *mut i32,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let parsed = unsafe { min_header(cbuffer) }.and_then(Header::parse_min);
        let h = parsed.unwrap_or_default();
        // SAFETY: caller contract.
        unsafe {
            write_opt(nbytes, h.nbytes);
            write_opt(cbytes, h.cbytes);
            write_opt(blocksize, h.blocksize);
        }
        parsed.map(|_| 0)
    })
}

/// Blosc1 form of `blosc2_cbuffer_sizes`.
///
/// # Safety
/// As `blosc2_cbuffer_sizes`.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_sizes(
    cbuffer: *const c_void,
    nbytes: *mut size_t,
    cbytes: *mut size_t,
    blocksize: *mut size_t,
) {
    guard((), || {
        // SAFETY: caller contract.
        let h = unsafe { min_header(cbuffer) }.and_then(Header::parse_min).unwrap_or_default();
        // SAFETY: caller contract.
        unsafe {
            write_opt(nbytes, h.nbytes.max(0) as size_t);
            write_opt(cbytes, h.cbytes.max(0) as size_t);
            write_opt(blocksize, h.blocksize.max(0) as size_t);
        }
    })
}

/// Check that a chunk header is sound and agrees with `cbytes`.
///
/// # Safety
/// `cbuffer` must hold `cbytes` bytes; `nbytes` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_validate(
    cbuffer: *const c_void,
    cbytes: size_t,
    nbytes: *mut size_t,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        unsafe { write_opt(nbytes, 0) };
        if cbytes < MIN_HEADER_LENGTH {
            return Err(Error::WriteBuffer);
        }
        // SAFETY: caller contract.
        let h = Header::parse_min(unsafe { min_header(cbuffer)? })?;
        if h.cbytes as usize != cbytes {
            return Err(Error::InvalidHeader);
        }
        if h.nbytes < 0 || h.nbytes > BLOSC2_MAX_BUFFERSIZE {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: caller contract.
        unsafe { write_opt(nbytes, h.nbytes as size_t) };
        Ok(0)
    })
}

/// The typesize and flags of a chunk (zeros when the header is invalid).
///
/// # Safety
/// `cbuffer` must point to at least 16 bytes; the out pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc1_cbuffer_metainfo(
    cbuffer: *const c_void,
    typesize: *mut size_t,
    flags: *mut c_int,
) {
    guard((), || {
        // SAFETY: caller contract.
        let h = unsafe { min_header(cbuffer) }.and_then(Header::parse_min).unwrap_or_default();
        // SAFETY: caller contract.
        unsafe {
            write_opt(typesize, size_t::from(h.typesize));
            write_opt(flags, c_int::from(h.flags));
        }
    })
}

/// The format versions of a chunk (zeros when the header is invalid).
///
/// # Safety
/// `cbuffer` must point to at least 16 bytes; the out pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_versions(
    cbuffer: *const c_void,
    version: *mut c_int,
    versionlz: *mut c_int,
) {
    guard((), || {
        // SAFETY: caller contract.
        let h = unsafe { min_header(cbuffer) }.and_then(Header::parse_min).unwrap_or_default();
        // SAFETY: caller contract.
        unsafe {
            write_opt(version, c_int::from(h.version));
            write_opt(versionlz, c_int::from(h.versionlz));
        }
    })
}

/// The name of the library that compressed a chunk (NULL when unknown).
///
/// # Safety
/// `cbuffer` must point to at least 16 bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_cbuffer_complib(cbuffer: *const c_void) -> *const c_char {
    guard(std::ptr::null(), || {
        // SAFETY: caller contract.
        let Ok(h) = unsafe { min_header(cbuffer) }.and_then(Header::parse_min) else {
            return std::ptr::null();
        };
        let name: &'static [u8] = match Library::from_format(h.compformat()) {
            Some(Library::BloscLz) => b"BloscLZ\0",
            Some(Library::Lz4) => b"LZ4\0",
            Some(Library::Zlib) => b"Zlib\0",
            Some(Library::Zstd) => b"Zstd\0",
            None => return std::ptr::null(),
        };
        name.as_ptr().cast()
    })
}

fn special_chunk(
    cparams: &blosc2_cparams,
    kind: Special,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    value: Option<&[u8]>,
) -> Result<i32, Error> {
    let params: CParams = core_cparams(cparams)?;
    // SAFETY: caller contract of the exported functions below.
    let dst = unsafe { slice_mut(dest.cast(), i64::from(destsize))? };
    len32(special::make(&params, kind, nbytes, value, dst)?)
}

/// A chunk of `nbytes` zeros (header only).
///
/// # Safety
/// `dest` must have room for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_zeros(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| special_chunk(&cparams, Special::Zero, nbytes, dest, destsize, None))
}

/// A chunk of `nbytes` NaNs (typesize 4 or 8).
///
/// # Safety
/// `dest` must have room for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_nans(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| special_chunk(&cparams, Special::Nan, nbytes, dest, destsize, None))
}

/// A chunk of `nbytes` uninitialized bytes.
///
/// # Safety
/// `dest` must have room for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_uninit(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| special_chunk(&cparams, Special::Uninit, nbytes, dest, destsize, None))
}

/// A chunk repeating the `typesize`-byte value at `repeatval`.
///
/// # Safety
/// `dest` must have room for `destsize` bytes; `repeatval` must hold `typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_chunk_repeatval(
    cparams: blosc2_cparams,
    nbytes: i32,
    dest: *mut c_void,
    destsize: i32,
    repeatval: *const c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let value = unsafe { slice(repeatval.cast(), i64::from(cparams.typesize.max(0)))? };
        special_chunk(&cparams, Special::Value, nbytes, dest, destsize, Some(value))
    })
}
