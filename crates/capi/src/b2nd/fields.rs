//! The public fields of an array handle, kept in line with the core array:
//! every export reaches its array through one entry, [`current`] for reads
//! (which first picks up what the caller wrote into its super-chunk's
//! fields, and shape changes made elsewhere) or [`changing`] for changes
//! (which publishes the array's and its super-chunk's fields after).
//!
//! A `b2nd_array_t*` handed to C is the first field of an [`ArrayHandle`],
//! which holds the core array.

use super::types::*;
use crate::blosc2::fields::{adopt_written, resync};
use b2nd::array::Array;
use b2nd::error::{Error, Result};
use std::ffi::CString;

/// An array as C sees it, and the core array behind it.
#[repr(C)]
pub(super) struct ArrayHandle {
    pub(super) public: b2nd_array_t,
    pub(super) array: Array,
    /// Whether `public.sc` is this array's own super-chunk handle (freed with
    /// it); a view's is the viewed array's.
    pub(super) owns_sc: bool,
    pub(super) dtype: CString,
}

fn c_strides(shape: &[i64]) -> [i64; B2ND_MAX_DIM] {
    let mut s = [0i64; B2ND_MAX_DIM];
    let mut acc = 1i64;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc = acc.saturating_mul(shape[i]);
    }
    s
}

/// Fill the public fields of an array from the core array.
pub(super) fn fill_public(h: &mut ArrayHandle) {
    let g = h.array.geometry().clone();
    let nd = g.ndim();
    let sc = h.public.sc;
    // SAFETY: plain data; all-zero is a valid (empty) value.
    let mut p: b2nd_array_t = unsafe { std::mem::zeroed() };
    p.sc = sc;
    p.ndim = nd as i8;
    let extshape = g.extshape();
    let blocks = g.chunk_blocks();
    p.shape[..nd].copy_from_slice(&g.shape);
    p.extshape[..nd].copy_from_slice(&extshape);
    p.extchunkshape[..nd].copy_from_slice(&g.extchunkshape);
    for (dst, &c) in p.chunkshape.iter_mut().zip(&g.chunkshape) {
        *dst = c as i32;
    }
    for (dst, &b) in p.blockshape.iter_mut().zip(&g.blockshape) {
        *dst = b as i32;
    }
    p.nitems = g.nitems();
    // both fit: Geometry::new checked them
    p.chunknitems = g.chunkshape.iter().fold(1i64, |a, &c| a.saturating_mul(c)) as i32;
    p.extnitems = extshape.iter().fold(1i64, |a, &c| a.saturating_mul(c));
    p.blocknitems = g.block_items as i32;
    p.extchunknitems = g.chunk_items;
    p.chunk_cache = chunk_cache_s { data: std::ptr::null_mut(), nchunk: -1 };
    p.item_array_strides = c_strides(&g.shape);
    p.item_chunk_strides = c_strides(&g.chunkshape);
    p.item_extchunk_strides = c_strides(&g.extchunkshape);
    p.item_block_strides = c_strides(&g.blockshape);
    p.block_chunk_strides = c_strides(&blocks);
    p.chunk_array_strides = c_strides(&g.chunks);
    p.dtype = h.dtype.as_ptr().cast_mut();
    p.dtype_format = h.array.meta().dtype_format as i8;
    p.last_tick = h.array.change_tick();
    h.public = p;
}

/// The handle behind an array pointer.
///
/// # Safety
/// `array` NULL or an array of this library.
pub(super) unsafe fn array_handle<'a>(array: *const b2nd_array_t) -> Result<&'a ArrayHandle> {
    // SAFETY: caller contract.
    unsafe { array.cast::<ArrayHandle>().as_ref() }.ok_or(Error::NullPointer)
}

/// The handle behind an array pointer, current with what other handles and
/// processes changed in the stored array (its shape read again, and the
/// public fields with it, as c-blosc2 does even through `const` pointers).
///
/// # Safety
/// `array` NULL or an array of this library; when the stored array changed,
/// no other thread uses the handle during the call.
pub(super) unsafe fn current<'a>(array: *const b2nd_array_t) -> Result<&'a ArrayHandle> {
    // SAFETY: caller contract.
    let h = unsafe { array_handle(array)? };
    // What the caller wrote into its super-chunk's public fields (contexts, ...).
    // SAFETY: the handle's `sc` is live while the array is.
    unsafe { adopt_written(h.public.sc)? };
    if h.array.is_stale() {
        // SAFETY: caller contract (no other thread uses a stale handle).
        let h = unsafe { array_mut(array.cast_mut())? };
        let r = h.array.refresh();
        fill_public(h);
        // SAFETY: the handle's `sc` is live while the array is.
        unsafe { resync(h.public.sc)? };
        r?;
    }
    // SAFETY: caller contract.
    unsafe { array_handle(array) }
}

/// The handle behind an array pointer, for a change.
///
/// # Safety
/// `array` NULL or an array of this library, not used elsewhere during the call.
unsafe fn array_mut<'a>(array: *mut b2nd_array_t) -> Result<&'a mut ArrayHandle> {
    // SAFETY: caller contract.
    unsafe { array.cast::<ArrayHandle>().as_mut() }.ok_or(Error::NullPointer)
}

/// Run a change of the core array, then refresh what C sees of the array
/// and of its super-chunk.
///
/// # Safety
/// As for [`array_mut`].
pub(super) unsafe fn changing<T>(
    array: *mut b2nd_array_t,
    f: impl FnOnce(&mut Array) -> Result<T>,
) -> Result<T> {
    // SAFETY: caller contract.
    let h = unsafe { array_mut(array)? };
    // SAFETY: the handle's `sc` is live while the array is.
    unsafe { adopt_written(h.public.sc)? };
    let r = f(&mut h.array);
    fill_public(h);
    // SAFETY: the handle's `sc` is live while the array is.
    unsafe { resync(h.public.sc)? };
    r
}
