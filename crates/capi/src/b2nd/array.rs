//! The array exports of `b2nd.h` over [`b2nd::array::Array`]: every export
//! converts its arguments, calls one method of the core array, and refreshes
//! the public fields C reads.
//!
//! A `b2nd_array_t*` handed to C is the first field of an `ArrayHandle`
//! (`fields.rs`), which holds the core array. Its `sc` is a super-chunk handle of this
//! library over the same shared super-chunk: owned by the array, or, for a
//! view, the viewed array's.

use super::context::{core_context, items, nonnull, ContextHandle};
use super::fields::{array_handle, changing, current, fill_public, ArrayHandle};
use super::types::*;
use crate::blosc2::fields::shared;
use crate::blosc2::schunk::{adopt, free_handle, from_buffer_handle, malloc_copy, open_handle, CoreStorage};
use crate::blosc2::types::*;
use crate::ffi::{c_str, guard, guard_code, slice, slice_mut};
use crate::os::{c_char, c_int, c_void};
use b2nd::array::{Array, Fill};
use b2nd::error::{Error, Result};
use std::ffi::CString;

/// Hand a core array to C: `sc` is its super-chunk handle (owned or not).
fn publish(array: Array, sc: *mut blosc2_schunk, owns_sc: bool, out: *mut *mut b2nd_array_t) -> Result<i32> {
    if out.is_null() {
        return Err(Error::NullPointer);
    }
    let dtype = CString::new(array.meta().dtype.replace('\0', "")).map_err(|_| Error::InvalidHeader)?;
    let mut h = Box::new(ArrayHandle {
        // SAFETY: plain data; filled below.
        public: unsafe { std::mem::zeroed() },
        array,
        owns_sc,
        dtype,
    });
    h.public.sc = sc;
    fill_public(&mut h);
    // SAFETY: checked non-NULL.
    unsafe { *out = Box::into_raw(h).cast() };
    Ok(0)
}

/// An array over the super-chunk handle `sc`, which it then owns (freed here on failure).
///
/// # Safety
/// `sc` a live handle of this library, or NULL.
unsafe fn adopt_schunk(sc: *mut blosc2_schunk, out: *mut *mut b2nd_array_t) -> Result<i32> {
    if sc.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: caller contract.
    let r = unsafe { shared(sc) }.and_then(Array::from_schunk).and_then(|a| publish(a, sc, true, out));
    if r.is_err() {
        // SAFETY: not handed out.
        unsafe { free_handle(sc) };
    }
    r
}

/// A new core array handed to C with a super-chunk handle made for it.
fn publish_new(array: Array, core: &CoreStorage, out: *mut *mut b2nd_array_t) -> Result<i32> {
    let sc = adopt(array.schunk().clone(), core)?;
    // SAFETY: `sc` was just made.
    let r = publish(array, sc, true, out);
    if r.is_err() {
        // SAFETY: not handed out.
        unsafe { free_handle(sc) };
    }
    r
}

/// Make a new array as `ctx` says, its items set by `fill`.
unsafe fn create(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t, fill: Fill) -> Result<i32> {
    if array.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: caller contract.
    let (ctx, core) = unsafe { core_context(ctx)? };
    publish_new(Array::new(&ctx, fill)?, &core, array)
}

/// A new array whose items are not set.
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_uninit(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { create(ctx, array, Fill::Uninit) })
}

/// A new "empty" array: of zeros, as c-blosc2 3.3 makes them.
///
/// # Safety
/// As for `b2nd_uninit`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_empty(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { create(ctx, array, Fill::Zeros) })
}

/// A new array of zeros.
///
/// # Safety
/// As for `b2nd_uninit`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_zeros(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { create(ctx, array, Fill::Zeros) })
}

/// A new array of NaNs (typesize 4 or 8).
///
/// # Safety
/// As for `b2nd_uninit`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_nans(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { create(ctx, array, Fill::Nans) })
}

/// A new array whose items all are `fill_value` (typesize bytes).
///
/// # Safety
/// As for `b2nd_uninit`; `fill_value` typesize readable bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_full(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    fill_value: *const c_void,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let c = unsafe { ctx.cast::<ContextHandle>().as_ref() }.ok_or(Error::NullPointer)?;
        // SAFETY: caller contract: `fill_value` has typesize (the context's) readable bytes.
        let v = unsafe { slice(fill_value.cast(), i64::from(c.cparams.typesize)) }?;
        // SAFETY: caller contract: `ctx` from b2nd_create_ctx, `array` valid for a write.
        unsafe { create(ctx, array, Fill::Value(v)) }
    })
}

/// Free an array and, unless it is a view, its super-chunk (NULL is ignored).
///
/// # Safety
/// `array` NULL or a live array of this library, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        unsafe { release(array) };
        Ok(0)
    })
}

/// Free an array handle and, unless it is a view, its super-chunk handle (NULL is ignored).
///
/// # Safety
/// As for [`b2nd_free`].
unsafe fn release(array: *mut b2nd_array_t) {
    if array.is_null() {
        return;
    }
    // SAFETY: made by Box::into_raw in `publish`.
    let h = unsafe { Box::from_raw(array.cast::<ArrayHandle>()) };
    let (sc, owns) = (h.public.sc, h.owns_sc);
    drop(h);
    if owns {
        // SAFETY: the array owns its super-chunk handle.
        unsafe { free_handle(sc) };
    }
}

/// An array over an existing super-chunk (which the array then owns).
///
/// # Safety
/// `schunk` NULL or a live super-chunk of this library; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_schunk(
    schunk: *mut blosc2_schunk,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_code(|| {
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        let a = Array::from_schunk(unsafe { shared(schunk)? })?;
        publish(a, schunk, true, array)
    })
}

/// Open the array stored in a frame file (or sparse directory).
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { open_at(urlpath, array, 0) })
}

/// Open the array stored in a frame `offset` bytes into a file.
///
/// # Safety
/// As for `b2nd_open`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open_offset(
    urlpath: *const c_char,
    array: *mut *mut b2nd_array_t,
    offset: i64,
) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { open_at(urlpath, array, offset) })
}

/// Open the array whose frame starts `offset` bytes into `urlpath`.
///
/// # Safety
/// As for [`b2nd_open`].
unsafe fn open_at(urlpath: *const c_char, array: *mut *mut b2nd_array_t, offset: i64) -> Result<i32> {
    if array.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: caller contract.
    let sc = unsafe { open_handle(urlpath, offset, std::ptr::null()) }.map_err(|_| Error::FileOpen)?;
    // SAFETY: `sc` is the live handle open_handle just made.
    unsafe { adopt_schunk(sc, array) }
}

/// An array over the contiguous frame in `cframe` (see `blosc2_schunk_from_buffer`).
///
/// # Safety
/// `cframe` NULL or `cframe_len` readable bytes; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cframe(
    cframe: *mut u8,
    cframe_len: i64,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_code(|| {
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        let sc = unsafe { from_buffer_handle(cframe, cframe_len, copy) }.map_err(|_| Error::Failure)?;
        // SAFETY: `sc` is the live handle from_buffer_handle just made.
        unsafe { adopt_schunk(sc, array) }
    })
}

/// The array as a contiguous frame, in a malloc'd buffer (`*needs_free` is
/// set: free it with `free`). A view gives a frame of its own shape.
///
/// # Safety
/// `array` live; the out pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cframe(
    array: *const b2nd_array_t,
    cframe: *mut *mut u8,
    cframe_len: *mut i64,
    needs_free: *mut bool,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(array)? };
        if cframe.is_null() || cframe_len.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        let frame = h.array.to_cframe()?;
        let p = malloc_copy(&frame)?;
        // SAFETY: the out pointers were checked non-NULL above; valid for writes (caller contract).
        unsafe {
            *cframe = p;
            *cframe_len = frame.len() as i64;
            *needs_free = true;
        }
        Ok(0)
    })
}

/// Save the array at `urlpath`: a frame file, or a sparse frame directory when
/// the array is not stored contiguously (as c-blosc2 does).
///
/// # Safety
/// `array` live; `urlpath` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(array)? };
        // SAFETY: caller contract: `urlpath` NULL or NUL-terminated.
        let path = unsafe { c_str(urlpath) }.ok_or(Error::NullPointer)?;
        h.array.save(path)?;
        Ok(0)
    })
}

/// Append the array as a contiguous frame to a file; returns where it starts.
///
/// # Safety
/// As for `b2nd_save`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save_append(array: *const b2nd_array_t, urlpath: *const c_char) -> i64 {
    guard(i64::from(Error::Failure.code()), || {
        let r = (|| {
            // SAFETY: caller contract.
            let h = unsafe { array_handle(array)? };
            // SAFETY: caller contract: `urlpath` NULL or NUL-terminated.
            let path = unsafe { c_str(urlpath) }.ok_or(Error::NullPointer)?;
            let at = h.array.save_append(path)?;
            i64::try_from(at).map_err(|_| Error::FileWrite)
        })();
        r.unwrap_or_else(|e| i64::from(e.code()))
    })
}

/// A new array holding the C-order items of `buffer`.
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `array` valid for a write; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cbuffer(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        // SAFETY: caller contract: `ctx` from b2nd_create_ctx, `array` valid for a write.
        unsafe { create(ctx, array, Fill::Uninit)? };
        // SAFETY: `create` succeeded: `array` is non-NULL and holds the array it just made.
        let a = unsafe { *array };
        // The items go in through the handle, so that a prefilter sees them.
        // SAFETY: `a` is the array just made, not yet handed to the caller: nothing else uses it.
        let r = unsafe {
            changing(a, |arr| {
                let start = vec![0i64; arr.ndim()];
                let shape = arr.shape().to_vec();
                if (src.len() as i64) < arr.nitems().saturating_mul(arr.typesize() as i64) {
                    return Err(Error::InvalidParam);
                }
                arr.set_slice(&start, &shape, src)
            })
        };
        if let Err(e) = r {
            // SAFETY: `a` was made above and is freed once, before the caller sees it; `array` is
            // non-NULL (`create` checked it) and valid for a write (caller contract).
            unsafe {
                release(a);
                *array = std::ptr::null_mut();
            }
            return Err(e);
        }
        Ok(0)
    })
}

/// All items of the array into `buffer`, in C order.
///
/// # Safety
/// `array` live; `buffer` `buffersize` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cbuffer(
    array: *const b2nd_array_t,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(array)? };
        // SAFETY: caller contract: `buffer` has `buffersize` writable bytes.
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        h.array.to_buffer(dst)?;
        Ok(0)
    })
}

/// Shapes of a slice call, checked.
unsafe fn slice_args<'a>(
    h: &ArrayHandle,
    start: *const i64,
    stop: *const i64,
    buffershape: *const i64,
) -> Result<(&'a [i64], &'a [i64], &'a [i64])> {
    let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
    // SAFETY: caller contract: ndim items each.
    unsafe {
        Ok((
            std::slice::from_raw_parts(nonnull(start, nd)?, nd),
            std::slice::from_raw_parts(nonnull(stop, nd)?, nd),
            std::slice::from_raw_parts(nonnull(buffershape, nd)?, nd),
        ))
    }
}

/// The items of `[start, stop)` into `buffer`, a C-order array of shape `buffershape`.
///
/// # Safety
/// `array` live; `start`, `stop`, `buffershape` ndim items; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice_cbuffer(
    array: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
    buffer: *mut c_void,
    buffershape: *const i64,
    buffersize: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(array)? };
        // SAFETY: caller contract: `start`, `stop` and `buffershape` have ndim items each.
        let (start, stop, bshape) = unsafe { slice_args(h, start, stop, buffershape)? };
        // SAFETY: caller contract: `buffer` has `buffersize` writable bytes.
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        h.array.get_slice_into(start, stop, dst, bshape)?;
        Ok(0)
    })
}

/// Overwrite the items of `[start, stop)` with those at the origin of `buffer`,
/// a C-order array of shape `buffershape`.
///
/// # Safety
/// As for `b2nd_get_slice_cbuffer`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_slice_cbuffer(
    buffer: *const c_void,
    buffershape: *const i64,
    buffersize: i64,
    start: *const i64,
    stop: *const i64,
    array: *mut b2nd_array_t,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        // SAFETY: caller contract: `start`, `stop` and `buffershape` have ndim items each.
        let (start, stop, bshape) = unsafe { slice_args(h, start, stop, buffershape)? };
        // SAFETY: caller contract: `buffer` has `buffersize` readable bytes.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        // SAFETY: `array` live (caller contract) and, as c-blosc2 requires of a handle
        // being changed, not used elsewhere meanwhile; `h` is not used past this point.
        unsafe { changing(array, |a| a.set_slice_from(start, stop, src, bshape)) }?;
        Ok(0)
    })
}

/// Pick up shape changes another handle made to an on-disk array: 1 if
/// re-synced, 0 if current.
///
/// # Safety
/// `array` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_refresh(array: *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { changing(array, |a| a.refresh()) }.map(i32::from))
}

/// The items at `ncoords` flat C-order indices into `buffer`, in order.
///
/// # Safety
/// `array` live; `coords` `ncoords` items; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_sparse_cbuffer(
    array: *const b2nd_array_t,
    ncoords: i64,
    coords: *const i64,
    buffer: *mut c_void,
    buffersize: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(array)? };
        let n = usize::try_from(ncoords).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `coords` has `ncoords` items.
        let flat = unsafe { items(coords, n)? };
        // SAFETY: caller contract: `buffer` has `buffersize` writable bytes.
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        h.array.get_points(flat, dst)?;
        Ok(0)
    })
}

/// The selection lists of an orthogonal selection call.
unsafe fn selection(
    h: &ArrayHandle,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffershape: *mut i64,
) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
    let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
    // SAFETY: caller contract: `ndim` lists and sizes.
    let (lists, sizes, bshape) = unsafe {
        (
            items(selection.cast_const(), nd)?,
            items(selection_size.cast_const(), nd)?,
            items(buffershape.cast_const(), nd)?,
        )
    };
    let mut out = Vec::with_capacity(nd);
    for i in 0..nd {
        let n = usize::try_from(sizes[i]).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `selection[i]` has `selection_size[i]` items.
        out.push(unsafe { items(lists[i].cast_const(), n)? }.to_vec());
    }
    Ok((out, bshape.to_vec()))
}

/// The items of an orthogonal selection into `buffer` (C order, shape `buffershape`).
///
/// # Safety
/// `array` live; `selection[i]` `selection_size[i]` items; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_orthogonal_selection(
    array: *const b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *mut c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(array)? };
        // SAFETY: caller contract: `selection`, `selection_size` and `buffershape` have ndim entries.
        let (sel, bshape) = unsafe { self::selection(h, selection, selection_size, buffershape)? };
        // SAFETY: caller contract: `buffer` has `buffersize` writable bytes.
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        h.array.get_orthogonal(&sel, dst, &bshape)?;
        Ok(0)
    })
}

/// Set the items of an orthogonal selection from `buffer` (C order, shape `buffershape`).
///
/// # Safety
/// As for `b2nd_get_orthogonal_selection`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_set_orthogonal_selection(
    array: *mut b2nd_array_t,
    selection: *mut *mut i64,
    selection_size: *mut i64,
    buffer: *const c_void,
    buffershape: *mut i64,
    buffersize: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        // SAFETY: caller contract: `selection`, `selection_size` and `buffershape` have ndim entries.
        let (sel, bshape) = unsafe { self::selection(h, selection, selection_size, buffershape)? };
        // SAFETY: caller contract: `buffer` has `buffersize` readable bytes.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        // SAFETY: `array` live (caller contract) and, as c-blosc2 requires of a handle
        // being changed, not used elsewhere meanwhile; `h` is not used past this point.
        unsafe { changing(array, |a| a.set_orthogonal(&sel, src, &bshape)) }?;
        Ok(0)
    })
}

/// Record the shape a call gave a new array in the context (as c-blosc2 does).
unsafe fn note_shape(ctx: *mut b2nd_context_t, shape: &[i64]) {
    // SAFETY: caller contract: a live context.
    if let Some(c) = unsafe { ctx.as_mut() } {
        c.ndim = shape.len() as i8;
        c.shape[..shape.len()].copy_from_slice(shape);
    }
}

/// A new array (made as `ctx` says, with the slice's shape) holding the items
/// of `[start, stop)` of `src`.
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `src` live; `start`/`stop` ndim items; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice(
    ctx: *mut b2nd_context_t,
    array: *mut *mut b2nd_array_t,
    src: *const b2nd_array_t,
    start: *const i64,
    stop: *const i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(src)? };
        let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `start` and `stop` have ndim items each.
        let (s0, s1) = unsafe { (items(start, nd)?, items(stop, nd)?) };
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        let shape: Vec<i64> = s0.iter().zip(s1).map(|(a, b)| b - a).collect();
        // SAFETY: caller contract: `ctx` NULL or from b2nd_create_ctx (its public struct comes first).
        unsafe { note_shape(ctx, &shape) };
        // SAFETY: caller contract: `ctx` from b2nd_create_ctx.
        let (c, core) = unsafe { core_context(ctx)? };
        publish_new(h.array.slice(&c, s0, s1)?, &core, array)
    })
}

/// A copy of `src`, made as `ctx` says (its shape becomes `src`'s).
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `src` live; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy(
    ctx: *mut b2nd_context_t,
    src: *const b2nd_array_t,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { current(src)? };
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract: `ctx` NULL or from b2nd_create_ctx (its public struct comes first).
        unsafe { note_shape(ctx, h.array.shape()) };
        // SAFETY: caller contract: `ctx` from b2nd_create_ctx.
        let (c, core) = unsafe { core_context(ctx)? };
        publish_new(h.array.copy(&c)?, &core, array)
    })
}

/// Change the shape of an array: along each dimension, items open (as zeros)
/// or go at `start[i]` (NULL: at the end).
///
/// # Safety
/// `array` live; `new_shape` ndim items; `start` NULL or ndim items.
#[no_mangle]
pub unsafe extern "C" fn b2nd_resize(
    array: *mut b2nd_array_t,
    new_shape: *const i64,
    start: *const i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let nd =
            usize::try_from(unsafe { array_handle(array)? }.public.ndim).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `new_shape` has ndim items.
        let ns = unsafe { items(new_shape, nd)? };
        // SAFETY: caller contract: `start`, non-NULL here, has ndim items.
        let st = if start.is_null() { None } else { Some(unsafe { items(start, nd)? }) };
        // SAFETY: `array` live (caller contract) and, as c-blosc2 requires of a handle
        // being changed, not used elsewhere meanwhile.
        unsafe { changing(array, |a| a.resize(ns, st)) }?;
        Ok(0)
    })
}

/// Insert the items of `buffer` along `axis` at `insert_start` (the buffer has
/// the array's shape, but for `axis`).
///
/// # Safety
/// `array` live; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_insert(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
    insert_start: i64,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        let axis = usize::try_from(axis).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `array` live (caller contract) and, as c-blosc2 requires of a handle
        // being changed, not used elsewhere meanwhile.
        unsafe { changing(array, |a| a.insert(src, axis, insert_start)) }?;
        Ok(0)
    })
}

/// Append the items of `buffer` at the end of `axis`.
///
/// # Safety
/// As for `b2nd_insert`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_append(
    array: *mut b2nd_array_t,
    buffer: *const c_void,
    buffersize: i64,
    axis: i8,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        let axis = usize::try_from(axis).map_err(|_| Error::InvalidParam)?;
        // SAFETY: `array` live (caller contract) and, as c-blosc2 requires of a handle
        // being changed, not used elsewhere meanwhile.
        unsafe { changing(array, |a| a.append(src, axis)) }?;
        Ok(0)
    })
}

/// Remove `delete_len` items along `axis` from `delete_start`.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_delete(
    array: *mut b2nd_array_t,
    axis: i8,
    delete_start: i64,
    delete_len: i64,
) -> c_int {
    guard_code(|| {
        let axis = usize::try_from(axis).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract.
        unsafe { changing(array, |a| a.delete(axis, delete_start, delete_len)) }?;
        Ok(0)
    })
}

/// `src1` followed by `src2` along `axis`: a new array made as `ctx` says
/// (`copy`), or `src1` itself, extended.
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `src1`, `src2` live; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_concatenate(
    ctx: *mut b2nd_context_t,
    src1: *const b2nd_array_t,
    src2: *const b2nd_array_t,
    axis: i8,
    copy: bool,
    array: *mut *mut b2nd_array_t,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let two = unsafe { array_handle(src2)? }.array.clone();
        // SAFETY: caller contract: `src1` live.
        let one = unsafe { array_handle(src1)? };
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        let axis = usize::try_from(axis).map_err(|_| Error::InvalidParam)?;
        if copy {
            // SAFETY: caller contract: `ctx` NULL or from b2nd_create_ctx (its public struct comes first).
            unsafe { note_shape(ctx, one.array.shape()) };
            // SAFETY: caller contract: `ctx` from b2nd_create_ctx.
            let (c, core) = unsafe { core_context(ctx)? };
            return publish_new(one.array.concatenate(&c, &two, axis)?, &core, array);
        }
        let target = src1.cast_mut();
        // SAFETY: `src1` live (caller contract) and, as c-blosc2 requires of a handle
        // being changed, not used elsewhere meanwhile; `one` is not used past this
        // point, and `two` is a clone, not a borrow.
        unsafe { changing(target, |a| a.extend(&two, axis)) }?;
        // SAFETY: `array` checked non-NULL above; valid for a write (caller contract).
        unsafe { *array = target };
        Ok(0)
    })
}

/// A view of `array` (sharing its data) made by `f`; free it with `b2nd_free`
/// before the array.
unsafe fn view(
    array: *const b2nd_array_t,
    out: *mut *mut b2nd_array_t,
    f: impl FnOnce(&Array) -> Result<Array>,
) -> Result<i32> {
    // SAFETY: caller contract.
    let h = unsafe { array_handle(array)? };
    let v = f(&h.array)?;
    publish(v, h.public.sc, false, out)
}

/// A view of `array` without the dimensions marked in `index` (each of size 1).
/// The view shares the array's data; free it with `b2nd_free` before the array.
///
/// # Safety
/// `array` live; `index` ndim items; `view` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze_index(
    array: *mut b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    index: *const bool,
) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let nd =
            usize::try_from(unsafe { array_handle(array)? }.public.ndim).map_err(|_| Error::InvalidParam)?;
        // SAFETY: caller contract: `index` has ndim items.
        let idx = unsafe { items(index, nd)? };
        // SAFETY: caller contract: `array` live, `view` valid for a write.
        unsafe { self::view(array, view, |a| a.squeeze_index(idx)) }
    })
}

/// A view of `array` without its dimensions of size 1.
///
/// # Safety
/// `array` live; `view` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze(array: *mut b2nd_array_t, view: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { self::view(array, view, Array::squeeze) })
}

/// A view of `array` with `final_dims` dimensions: those marked in `axis` are
/// new ones of size 1, the others are the array's, in order.
///
/// # Safety
/// `array` live; `axis` `final_dims` items; `view` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_expand_dims(
    array: *const b2nd_array_t,
    view: *mut *mut b2nd_array_t,
    axis: *const bool,
    final_dims: u8,
) -> c_int {
    guard_code(|| {
        let fd = usize::from(final_dims);
        if fd > B2ND_MAX_DIM {
            return Err(Error::InvalidParam);
        }
        // SAFETY: caller contract.
        let ax = unsafe { items(axis, fd)? };
        // SAFETY: caller contract: `array` live, `view` valid for a write.
        unsafe { self::view(array, view, |a| a.expand_dims(ax)) }
    })
}
/// Print the array's metalayer to standard output.
///
/// # Safety
/// `array` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_print_meta(array: *const b2nd_array_t) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        print!("{}", h.array.meta());
        Ok(0)
    })
}
