//! The chunks of a super-chunk (`blosc2_schunk_*`): appending, inserting,
//! updating, deleting and reordering chunks, getting them as stored or
//! decompressed, slices of items, and the super-chunk's parameters.

use super::fields::{before_unlocked_append, change, reader, resync, set_current};
use super::handle::{handle, read};
use super::schunk::{index, malloc_copy};
use super::types::*;
use crate::ffi::{guard, guard_code, guard_code64, slice, slice_mut, write_opt};
use crate::os::{c_int, c_void};
use b2nd::chunk::Special;
use b2nd::error::{Error, Result};
use std::borrow::Cow;

/// A chunk handed in by the caller, sized by its own header.
///
/// # Safety
/// `chunk` NULL or a chunk whose header states its true length.
unsafe fn incoming<'a>(chunk: *const u8) -> Result<&'a [u8]> {
    // SAFETY: caller contract: at least the 16-byte header is readable.
    let head = unsafe { slice(chunk, 16)? };
    let (_, cbytes, _) = b2nd::chunk::Header::sizes(head)?;
    if cbytes < 16 {
        return Err(Error::ReadBuffer);
    }
    // SAFETY: caller contract: cbytes bytes are readable.
    unsafe { slice(chunk, i64::from(cbytes)) }
}

/// After a successful `copy == false` call the chunk is ours: free it.
unsafe fn consume(chunk: *mut u8, copy: bool, r: Result<usize>) -> i64 {
    match r {
        Ok(n) => {
            if !copy {
                // SAFETY: caller contract: with copy false the chunk was malloc'd and handed over.
                unsafe { crate::os::free(chunk.cast()) };
            }
            n as i64
        }
        Err(e) => i64::from(e.code()),
    }
}

/// Append a chunk; returns the new number of chunks. With `copy` false the
/// (malloc'd) chunk is taken over and freed.
///
/// # Safety
/// `schunk` NULL or live; `chunk` NULL or a complete chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_chunk(
    schunk: *mut blosc2_schunk,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard(i64::from(Error::Failure.code()), || {
        // SAFETY: caller contract.
        let r = unsafe { incoming(chunk) }.and_then(|c| unsafe {
            change(schunk, |sc| {
                set_current(schunk, sc.nchunks() as i64);
                sc.append_chunk(c)
            })
        });
        // SAFETY: caller contract: with `copy` false, `chunk` was malloc'd and is handed over.
        unsafe { consume(chunk, copy, r) }
    })
}

/// Insert a chunk at position `nchunk`; returns the new number of chunks.
///
/// # Safety
/// As for `blosc2_schunk_append_chunk`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_insert_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard(i64::from(Error::Failure.code()), || {
        let r = index(nchunk).and_then(|i| {
            // SAFETY: caller contract.
            let c = unsafe { incoming(chunk)? };
            // SAFETY: caller contract: `schunk` NULL or live.
            unsafe { change(schunk, |sc| sc.insert_chunk(i, c)) }
        });
        // SAFETY: caller contract.
        unsafe { consume(chunk, copy, r) }
    })
}

/// Replace chunk `nchunk`; returns the number of chunks.
///
/// # Safety
/// As for `blosc2_schunk_append_chunk`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_update_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut u8,
    copy: bool,
) -> i64 {
    guard(i64::from(Error::Failure.code()), || {
        let r = index(nchunk).and_then(|i| {
            // SAFETY: caller contract.
            let c = unsafe { incoming(chunk)? };
            // SAFETY: caller contract: `schunk` NULL or live.
            unsafe { change(schunk, |sc| sc.update_chunk(i, c)) }
        });
        // SAFETY: caller contract.
        unsafe { consume(chunk, copy, r) }
    })
}

/// Remove chunk `nchunk`; returns the new number of chunks.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_delete_chunk(schunk: *mut blosc2_schunk, nchunk: i64) -> i64 {
    guard_code64(|| {
        let i = index(nchunk)?;
        // SAFETY: caller contract.
        Ok(unsafe { change(schunk, |sc| sc.delete_chunk(i)) }? as i64)
    })
}

/// Compress `nbytes` of `src` into a new chunk and append it.
///
/// # Safety
/// `schunk` NULL or live; `src` NULL or `nbytes` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_buffer(
    schunk: *mut blosc2_schunk,
    src: *const c_void,
    nbytes: i32,
) -> i64 {
    guard_code64(|| {
        // SAFETY: caller contract.
        let data = unsafe { slice(src.cast(), i64::from(nbytes))? };
        // SAFETY: caller contract.
        let h = unsafe { before_unlocked_append(schunk)? };
        // Compressed without the handle's lock held: user codecs and filters
        // may call back into the library with `cparams->schunk`.
        let r = h.inner.append_buffer(data);
        // SAFETY: caller contract: `schunk` live (`before_unlocked_append` checked it
        // non-NULL); no guard on it is held here.
        unsafe { resync(schunk)? };
        Ok(r? as i64)
    })
}

/// Decompress chunk `nchunk` into `dest` (`nbytes` of room); returns its size.
///
/// # Safety
/// `schunk` NULL or live; `dest` NULL or `nbytes` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_decompress_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    dest: *mut c_void,
    nbytes: i32,
) -> c_int {
    guard_code(|| {
        let i = index(nchunk)?;
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        // SAFETY: caller contract: `dest` NULL or `nbytes` writable bytes.
        let dst = unsafe { slice_mut(dest.cast(), i64::from(nbytes))? };
        // SAFETY: `schunk` is live (caller contract; `reader` checked it non-NULL); the
        // public field is written atomically (other readers may write it too).
        unsafe { set_current(schunk, nchunk) };
        i32::try_from(sc.decompress_chunk(i, dst)?).map_err(|_| Error::Failure)
    })
}

/// Hand out a chunk: internal memory (`*needs_free` false) or a malloc'd copy.
fn hand_out(c: Cow<'_, [u8]>, chunk: *mut *mut u8, needs_free: *mut bool) -> Result<i32> {
    let n = i32::try_from(c.len()).map_err(|_| Error::Failure)?;
    let (p, free) = match c {
        Cow::Borrowed(b) => (b.as_ptr().cast_mut(), false),
        Cow::Owned(v) => (malloc_copy(&v)?, true),
    };
    // SAFETY: callers checked the pointers.
    unsafe {
        *chunk = p;
        write_opt(needs_free, free);
    }
    Ok(n)
}

/// Chunk `nchunk` as stored; returns its size.
///
/// # Safety
/// `schunk` NULL or live; `chunk` and `needs_free` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_chunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    guard_code(|| {
        if chunk.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        let i = index(nchunk)?;
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        hand_out(sc.chunk(i)?, chunk, needs_free)
    })
}

/// Chunk `nchunk` as a lazy chunk (blocks left on disk) for on-disk frames.
///
/// # Safety
/// As for `blosc2_schunk_get_chunk`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_lazychunk(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    chunk: *mut *mut u8,
    needs_free: *mut bool,
) -> c_int {
    guard_code(|| {
        if chunk.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        let i = index(nchunk)?;
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        hand_out(sc.lazy_chunk(i)?, chunk, needs_free)
    })
}

/// Decompress block `nblock` of VL-block chunk `nchunk` into a malloc'd buffer.
///
/// # Safety
/// `schunk` NULL or live; `dest` and `destsize` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_vlblock(
    schunk: *mut blosc2_schunk,
    nchunk: i64,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard_code(|| {
        if dest.is_null() || destsize.is_null() {
            return Err(Error::NullPointer);
        }
        let i = index(nchunk)?;
        let b = usize::try_from(nblock).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        let block = sc.vl_block(i, b)?;
        let n = i32::try_from(block.len()).map_err(|_| Error::Failure)?;
        let p = malloc_copy(&block)?;
        // SAFETY: checked non-NULL.
        unsafe {
            *dest = p;
            *destsize = n;
        }
        Ok(n)
    })
}

/// Items `[start, stop)` into `buffer`.
///
/// # Safety
/// `schunk` NULL or live; `buffer` room for `(stop - start) * typesize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        let ts = i64::from(sc.typesize().max(1));
        let n = stop.checked_sub(start).filter(|&n| n >= 0).ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `buffer` has room for `(stop - start) * typesize` bytes.
        let dst = unsafe { slice_mut(buffer.cast(), n.checked_mul(ts).ok_or(Error::InvalidParam)?)? };
        sc.get_slice(start, stop, dst)?;
        Ok(0)
    })
}

/// Overwrite items `[start, stop)` with `buffer`.
///
/// # Safety
/// `schunk` NULL or live; `buffer` `(stop - start) * typesize` readable bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_set_slice_buffer(
    schunk: *mut blosc2_schunk,
    start: i64,
    stop: i64,
    buffer: *mut c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let ts = i64::from(unsafe { handle(schunk)? }.public.typesize.max(1));
        let n = stop.checked_sub(start).filter(|&n| n >= 0).ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `buffer` has `(stop - start) * typesize` readable bytes.
        let src =
            unsafe { slice(buffer.cast_const().cast(), n.checked_mul(ts).ok_or(Error::InvalidParam)?)? };
        // SAFETY: caller contract: `schunk` live (`handle` checked it non-NULL).
        unsafe { change(schunk, |sc| sc.set_slice(start, stop, src)) }?;
        Ok(0)
    })
}

/// Items at `ncoords` coordinates into `buffer`, in order.
///
/// # Safety
/// `schunk` NULL or live; `coords` `ncoords` items; `buffer` room for `ncoords * typesize`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_sparse_buffer(
    schunk: *mut blosc2_schunk,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        let n = usize::try_from(ncoords).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `coords` has `ncoords` items of 8 bytes.
        let bytes = unsafe { slice(coords.cast(), (n as i64).checked_mul(8).ok_or(Error::InvalidParam)?)? };
        let coords: Vec<i64> =
            bytes.chunks_exact(8).map(|b| i64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))).collect();
        let ts = sc.typesize().max(1) as i64;
        // SAFETY: caller contract: `buffer` has room for `ncoords * typesize` bytes.
        let dst =
            unsafe { slice_mut(buffer.cast(), (n as i64).checked_mul(ts).ok_or(Error::InvalidParam)?)? };
        sc.get_sparse(&coords, dst)?;
        Ok(0)
    })
}

/// Reorder the chunks: chunk `offsets_order[i]` goes to position `i`.
///
/// # Safety
/// `schunk` NULL or live; `offsets_order` `nchunks` items.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_reorder_offsets(
    schunk: *mut blosc2_schunk,
    offsets_order: *mut i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let n = unsafe { handle(schunk)? }.public.nchunks;
        // SAFETY: caller contract: `offsets_order` has `nchunks` items of 8 bytes (`n`).
        let bytes = unsafe {
            slice(offsets_order.cast_const().cast(), n.checked_mul(8).ok_or(Error::InvalidParam)?)?
        };
        let order: Vec<i64> =
            bytes.chunks_exact(8).map(|b| i64::from_ne_bytes(b.try_into().unwrap_or([0; 8]))).collect();
        // SAFETY: caller contract: `schunk` live (`handle` checked it non-NULL).
        unsafe { change(schunk, |sc| sc.reorder(&order)) }?;
        Ok(0)
    })
}

/// Fill an empty super-chunk with `nitems` special values in chunks of `chunksize` bytes.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_fill_special(
    schunk: *mut blosc2_schunk,
    nitems: i64,
    special_value: c_int,
    chunksize: i32,
) -> i64 {
    guard_code64(|| {
        let kind = match special_value {
            BLOSC2_SPECIAL_ZERO => Special::Zero,
            BLOSC2_SPECIAL_NAN => Special::Nan,
            BLOSC2_SPECIAL_UNINIT => Special::Uninit,
            _ => return Err(Error::SchunkSpecial),
        };
        // SAFETY: caller contract.
        Ok(unsafe { change(schunk, |sc| sc.fill_special(nitems, kind, chunksize)) }? as i64)
    })
}

/// A malloc'd copy of the super-chunk's compression parameters.
///
/// # Safety
/// `schunk` NULL or live; `cparams` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_cparams(
    schunk: *mut blosc2_schunk,
    cparams: *mut *mut blosc2_cparams,
) -> c_int {
    guard_code(|| {
        if cparams.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        let h = unsafe { handle(schunk)? };
        let _g = read(h);
        let c: blosc2_cparams = *h.cparams;
        // SAFETY: plain-data struct copied into a malloc'd block of its size.
        let bytes = unsafe {
            std::slice::from_raw_parts((&raw const c).cast::<u8>(), std::mem::size_of::<blosc2_cparams>())
        };
        // SAFETY: `cparams` checked non-NULL above; valid for a write (caller contract).
        unsafe { *cparams = malloc_copy(bytes)?.cast() };
        Ok(0)
    })
}

/// A malloc'd copy of the super-chunk's decompression parameters.
///
/// # Safety
/// `schunk` NULL or live; `dparams` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_get_dparams(
    schunk: *mut blosc2_schunk,
    dparams: *mut *mut blosc2_dparams,
) -> c_int {
    guard_code(|| {
        if dparams.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        let h = unsafe { handle(schunk)? };
        let d: blosc2_dparams = *h.dparams;
        // SAFETY: plain-data struct copied into a malloc'd block of its size.
        let bytes = unsafe {
            std::slice::from_raw_parts((&raw const d).cast::<u8>(), std::mem::size_of::<blosc2_dparams>())
        };
        // SAFETY: `dparams` checked non-NULL above; valid for a write (caller contract).
        unsafe { *dparams = malloc_copy(bytes)?.cast() };
        Ok(0)
    })
}

/// The chunks holding items `[*start, *stop)`: their number, and their indices
/// in a malloc'd array.
///
/// # Safety
/// `schunk` NULL or live; `start`/`stop` one item each; `chunks_idx` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn blosc2_get_slice_nchunks(
    schunk: *mut blosc2_schunk,
    start: *mut i64,
    stop: *mut i64,
    chunks_idx: *mut *mut i64,
) -> i64 {
    guard_code64(|| {
        if start.is_null() || stop.is_null() || chunks_idx.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        let nd_meta =
            sc.meta_get("b2nd").or_else(|_| sc.meta_get("caterva")).ok().map(b2nd::array::Meta::deserialize);
        let chunks: Vec<i64> = match nd_meta {
            // n-dimensional: `start` and `stop` have one item per dimension.
            Some(meta) => {
                let g = b2nd::array::Geometry::new(&meta?)?;
                let nd = g.ndim();
                // SAFETY: `start` and `stop` checked non-NULL above; for an n-dimensional
                // super-chunk they hold ndim items each (c-blosc2's contract: the `# Safety`
                // above promises only one item each).
                let (s0, s1) =
                    unsafe { (std::slice::from_raw_parts(start, nd), std::slice::from_raw_parts(stop, nd)) };
                g.slice_chunks(s0, s1)?
            }
            None => {
                // SAFETY: `start` and `stop` checked non-NULL above; one item each (caller contract).
                let (a, b) = sc.slice_chunks(unsafe { *start }, unsafe { *stop })?;
                (a as i64..b as i64).collect()
            }
        };
        let idx: Vec<u8> = chunks.iter().flat_map(|i| i.to_ne_bytes()).collect();
        // SAFETY: `chunks_idx` checked non-NULL above; valid for a write (caller contract).
        unsafe { *chunks_idx = malloc_copy(&idx)?.cast() };
        Ok(chunks.len() as i64)
    })
}
