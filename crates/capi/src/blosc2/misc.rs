//! Variable-length-block exports, raw shuffle functions, timing helpers and
//! index utilities of `blosc2.h`.

use super::types::*;
use crate::ffi::{guard, guard_code, reference_mut, slice, slice_mut};
use crate::os::{c_int, c_void};
use b2nd::error::Error;
use b2nd::filters::{bitshuffle, shuffle};

/// Compress `nblocks` buffers as the blocks of one VL-block chunk.
///
/// # Safety
/// `srcs`/`srcsizes` must hold `nblocks` entries describing readable buffers;
/// `dest` must have room for `destsize` bytes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlcompress_ctx(
    context: *mut blosc2_context,
    srcs: *const *const c_void,
    srcsizes: *const i32,
    nblocks: i32,
    dest: *mut c_void,
    destsize: i32,
) -> c_int {
    guard_code(|| {
        if nblocks <= 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        if srcs.is_null() || srcsizes.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract: `nblocks` entries in each array (pointers of this
        // machine's width, whatever it is).
        let (ptrs, sizes) = unsafe {
            (
                std::slice::from_raw_parts(srcs, nblocks as usize),
                std::slice::from_raw_parts(srcsizes, nblocks as usize),
            )
        };
        let mut blocks = Vec::with_capacity(nblocks as usize);
        for (&p, &n) in ptrs.iter().zip(sizes) {
            if n <= 0 {
                return Err(Error::InvalidParam);
            }
            // SAFETY: caller contract: each entry describes a readable buffer.
            blocks.push(unsafe { slice(p.cast(), i64::from(n))? });
        }
        // SAFETY: caller contract: `dest` has room for `destsize` bytes.
        let dst = unsafe { slice_mut(dest.cast(), i64::from(destsize))? };
        let n = ctx.compressor()?.vlcompress(&blocks, dst)?;
        i32::try_from(n).map_err(|_| Error::MaxBufsizeExceeded)
    })
}

/// Decompress every block of a VL-block chunk into newly malloc'ed buffers.
/// Returns the number of blocks.
///
/// # Safety
/// `src` must hold `srcsize` bytes; `dests`/`destsizes` must have `maxblocks` entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    dests: *mut *mut c_void,
    destsizes: *mut i32,
    maxblocks: i32,
) -> c_int {
    guard_code(|| {
        if dests.is_null() || destsizes.is_null() || maxblocks <= 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        // SAFETY: caller contract: `src` holds `srcsize` bytes.
        let src = unsafe { slice(src.cast(), i64::from(srcsize))? };
        let d = ctx.decompressor()?;
        let sizes = d.vl_block_sizes(src)?;
        if sizes.len() > maxblocks as usize {
            return Err(Error::InvalidParam);
        }
        let mut outs: Vec<*mut c_void> = Vec::with_capacity(sizes.len());
        let result = (|| {
            for (j, &n) in sizes.iter().enumerate() {
                // SAFETY: plain allocation; freed below on failure, else the caller's.
                let p = unsafe { crate::os::malloc(n.max(1)) };
                if p.is_null() {
                    return Err(Error::MemoryAlloc);
                }
                outs.push(p);
                // SAFETY: p has n writable bytes.
                let out = unsafe { slice_mut(p.cast(), n as i64)? };
                d.vl_decompress_block(src, j, out)?;
            }
            Ok(())
        })();
        if let Err(e) = result {
            for p in outs {
                // SAFETY: allocated above with malloc.
                unsafe { crate::os::free(p) };
            }
            return Err(e);
        }
        for (j, (p, n)) in outs.into_iter().zip(&sizes).enumerate() {
            // SAFETY: caller contract: `maxblocks` writable entries.
            unsafe {
                *dests.add(j) = p;
                *destsizes.add(j) = *n as i32;
            }
        }
        Ok(sizes.len() as i32)
    })
}

/// Decompress block `nblock` of a VL-block chunk into a newly malloc'ed buffer.
///
/// # Safety
/// `src` must hold `srcsize` bytes; `dest` and `destsize` must be writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vldecompress_block_ctx(
    context: *mut blosc2_context,
    src: *const c_void,
    srcsize: i32,
    nblock: i32,
    dest: *mut *mut u8,
    destsize: *mut i32,
) -> c_int {
    guard_code(|| {
        if dest.is_null() || destsize.is_null() || nblock < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract.
        let ctx = unsafe { reference_mut(context)? };
        // SAFETY: caller contract: `src` holds `srcsize` bytes.
        let src = unsafe { slice(src.cast(), i64::from(srcsize))? };
        let d = ctx.decompressor()?;
        let sizes = d.vl_block_sizes(src)?;
        let n = *sizes.get(nblock as usize).ok_or(Error::InvalidParam)?;
        // SAFETY: plain allocation, handed to the caller on success.
        let p = unsafe { crate::os::malloc(n.max(1)) }.cast::<u8>();
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: p has n writable bytes.
        let out = unsafe { slice_mut(p, n as i64)? };
        if let Err(e) = d.vl_decompress_block(src, nblock as usize, out) {
            // SAFETY: allocated above.
            unsafe { crate::os::free(p.cast()) };
            return Err(e);
        }
        // SAFETY: caller contract.
        unsafe {
            *dest = p;
            *destsize = n as i32;
        }
        Ok(n as i32)
    })
}

/// The number of blocks of a VL-block chunk.
///
/// # Safety
/// `src` must hold `srcsize` bytes; `nblocks` must be writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_vlchunk_get_nblocks(
    src: *const c_void,
    srcsize: i32,
    nblocks: *mut i32,
) -> c_int {
    guard_code(|| {
        if src.is_null() || nblocks.is_null() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract.
        let src = unsafe { slice(src.cast(), i64::from(srcsize))? };
        let h = b2nd::chunk::Header::parse(src)?;
        if !h.vlblocks() {
            return Err(Error::InvalidParam);
        }
        // SAFETY: checked non-NULL; caller contract.
        unsafe { *nblocks = h.blocksize };
        Ok(0)
    })
}

type Transform = fn(usize, &[u8], &mut [u8]);

fn raw_filter(typesize: i32, blocksize: i32, src: *const c_void, dest: *mut c_void, f: Transform) -> i32 {
    guard_code(|| {
        if !(1..=256).contains(&typesize) || blocksize < 0 {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract of the exported functions below.
        let (s, d) = unsafe {
            (slice(src.cast(), i64::from(blocksize))?, slice_mut(dest.cast(), i64::from(blocksize))?)
        };
        f(typesize as usize, s, d);
        Ok(blocksize)
    })
}

/// Byte-shuffle `blocksize` bytes of `typesize`-byte items.
///
/// # Safety
/// `src` and `dest` must each hold `blocksize` bytes and not overlap.
#[no_mangle]
pub unsafe extern "C" fn blosc2_shuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    raw_filter(typesize, blocksize, src, dest, shuffle::shuffle)
}

/// Undo `blosc2_shuffle`.
///
/// # Safety
/// As `blosc2_shuffle`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_unshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    raw_filter(typesize, blocksize, src, dest, shuffle::unshuffle)
}

/// Bit-shuffle `blocksize` bytes of `typesize`-byte items.
///
/// # Safety
/// As `blosc2_shuffle`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_bitshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    raw_filter(typesize, blocksize, src, dest, bitshuffle::bitshuffle)
}

fn bitunshuffle_current(typesize: usize, src: &[u8], dst: &mut [u8]) {
    bitshuffle::bitunshuffle(typesize, src, dst, b2nd::chunk::header::VERSION_FORMAT_VL_BLOCKS)
}

/// Undo `blosc2_bitshuffle`.
///
/// # Safety
/// As `blosc2_shuffle`.
#[no_mangle]
pub unsafe extern "C" fn blosc2_bitunshuffle(
    typesize: i32,
    blocksize: i32,
    src: *const c_void,
    dest: *mut c_void,
) -> i32 {
    raw_filter(typesize, blocksize, src, dest, bitunshuffle_current)
}

/// Store the current time (unix: `CLOCK_MONOTONIC`; Windows:
/// `QueryPerformanceCounter`) in `timestamp`.
///
/// # Safety
/// `timestamp` must be NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc_set_timestamp(timestamp: *mut blosc_timestamp_t) {
    if !timestamp.is_null() {
        // SAFETY: a writable timestamp, per the caller.
        crate::os::set_timestamp(unsafe { &mut *timestamp });
    }
}

fn nsecs(start: &blosc_timestamp_t, end: &blosc_timestamp_t) -> f64 {
    crate::os::elapsed_nsecs(start, end)
}

/// Nanoseconds between two timestamps.
#[no_mangle]
pub extern "C" fn blosc_elapsed_nsecs(start_time: blosc_timestamp_t, end_time: blosc_timestamp_t) -> f64 {
    nsecs(&start_time, &end_time)
}

/// Seconds between two timestamps.
#[no_mangle]
pub extern "C" fn blosc_elapsed_secs(start_time: blosc_timestamp_t, end_time: blosc_timestamp_t) -> f64 {
    nsecs(&start_time, &end_time) / 1e9
}

/// Convert a linear index into an index per dimension (C order).
///
/// # Safety
/// `shape` and `index` must hold `ndim` entries.
#[no_mangle]
pub unsafe extern "C" fn blosc2_unidim_to_multidim(ndim: u8, shape: *mut i64, i: i64, index: *mut i64) {
    guard((), || {
        let n = usize::from(ndim);
        if n == 0 || shape.is_null() || index.is_null() {
            return;
        }
        // SAFETY: caller contract: `ndim` entries each.
        let (shape, index) =
            unsafe { (std::slice::from_raw_parts(shape, n), std::slice::from_raw_parts_mut(index, n)) };
        let mut rest = i;
        for d in (0..n).rev() {
            let s = shape[d].max(1);
            index[d] = rest % s;
            rest /= s;
        }
    })
}

/// Convert an index per dimension into a linear index with `strides`.
///
/// # Safety
/// `index` and `strides` must hold `ndim` entries; `i` must be writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_multidim_to_unidim(
    index: *const i64,
    ndim: i8,
    strides: *const i64,
    i: *mut i64,
) {
    guard((), || {
        if ndim < 0 || index.is_null() || strides.is_null() || i.is_null() {
            return;
        }
        let n = ndim as usize;
        // SAFETY: caller contract.
        let (index, strides) =
            unsafe { (std::slice::from_raw_parts(index, n), std::slice::from_raw_parts(strides, n)) };
        let v = index.iter().zip(strides).fold(0i64, |acc, (a, b)| acc.wrapping_add(a.wrapping_mul(*b)));
        // SAFETY: caller contract.
        unsafe { *i = v };
    })
}
