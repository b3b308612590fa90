//! The context and metalayer exports of `b2nd.h`: how C describes a new
//! array (`b2nd_context_t`, turned into a core [`b2nd::array::Context`]), the
//! `b2nd` metalayer to and from bytes, and box copies between C buffers.

use super::types::*;
use crate::blosc2::global::malloc_str;
use crate::blosc2::params::default_cparams;
use crate::blosc2::schunk::CoreStorage;
use crate::blosc2::types::*;
use crate::ffi::{c_str, guard, guard_code, slice, slice_mut, write_opt};
use crate::os::{c_char, c_int, c_void};
use b2nd::array::{Context, Meta};
use b2nd::error::{Error, Result};
use b2nd::frame::Metalayer;
use std::ffi::CString;

/// A context as C sees it, and the memory its pointers point to.
#[repr(C)]
pub(super) struct ContextHandle {
    public: b2nd_context_s,
    storage: Box<blosc2_storage>,
    pub(super) cparams: Box<blosc2_cparams>,
    dparams: Option<Box<blosc2_dparams>>,
    urlpath: Option<CString>,
    dtype: CString,
    names: Vec<CString>,
    contents: Vec<Vec<u8>>,
}

/// The three shapes of a C call as slices of `ndim` items.
///
/// # Safety
/// Each pointer NULL (an error) or valid for `ndim` items, for `'a`.
unsafe fn shapes<'a>(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
) -> Result<(&'a [i64], &'a [i32], &'a [i32])> {
    let nd = usize::try_from(ndim).ok().filter(|&n| n <= B2ND_MAX_DIM).ok_or(Error::InvalidParam)?;
    // SAFETY: caller contract: `ndim` items behind each pointer.
    unsafe {
        Ok((
            std::slice::from_raw_parts(nonnull(shape, nd)?, nd),
            std::slice::from_raw_parts(nonnull(chunkshape, nd)?, nd),
            std::slice::from_raw_parts(nonnull(blockshape, nd)?, nd),
        ))
    }
}

pub(super) fn nonnull<T>(p: *const T, n: usize) -> Result<*const T> {
    if n == 0 {
        Ok(std::ptr::NonNull::dangling().as_ptr())
    } else if p.is_null() {
        Err(Error::NullPointer)
    } else {
        Ok(p)
    }
}

/// Create the parameters of a new array. `b2_storage` (copied; NULL: in
/// memory, default parameters) says where and how; its cparams' block size is
/// set to the block shape's.
///
/// # Safety
/// Pointers NULL or valid for `ndim` items (`nmetalayers` for `metalayers`); strings NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn b2nd_create_ctx(
    b2_storage: *const blosc2_storage,
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    metalayers: *const blosc2_metalayer,
    nmetalayers: i32,
) -> *mut b2nd_context_t {
    guard(std::ptr::null_mut(), || {
        let r = (|| {
            // SAFETY: caller contract: `ndim` items behind each shape pointer.
            let (shape, chunkshape, blockshape) = unsafe { shapes(ndim, shape, chunkshape, blockshape)? };
            // SAFETY: caller contract.
            let st = unsafe { b2_storage.as_ref() };
            let mut cparams =
                // SAFETY: caller contract: `b2_storage->cparams` NULL or valid.
                st.and_then(|s| unsafe { s.cparams.as_ref() }).copied().unwrap_or_else(default_cparams);
            // SAFETY: caller contract: `b2_storage->dparams` NULL or valid.
            let dparams = st.and_then(|s| unsafe { s.dparams.as_ref() }).copied().map(Box::new);
            // SAFETY: caller contract: `dtype` NULL or NUL-terminated.
            let dtype = match unsafe { c_str(dtype) } {
                Some(d) => d.to_string(),
                None => format!("|S{}", cparams.typesize),
            };
            let meta = Meta {
                shape: shape.to_vec(),
                chunkshape: chunkshape.to_vec(),
                blockshape: blockshape.to_vec(),
                dtype: dtype.clone(),
                dtype_format: u8::try_from(dtype_format).map_err(|_| Error::InvalidParam)?,
            };
            cparams.blocksize = meta.check_params()?.block_bytes(cparams.typesize)?;
            let n = usize::try_from(nmetalayers).map_err(|_| Error::InvalidParam)?;
            if n > B2ND_MAX_METALAYERS {
                return Err(Error::InvalidParam);
            }
            // SAFETY: caller contract: `metalayers` has `nmetalayers` (`n`) entries; `nonnull`
            // allows NULL only for none.
            let ms = unsafe { std::slice::from_raw_parts(nonnull(metalayers, n)?, n) };
            let mut names = Vec::with_capacity(n);
            let mut contents = Vec::with_capacity(n);
            for m in ms {
                names.push(
                    // SAFETY: caller contract: each metalayer's `name` NULL or NUL-terminated.
                    CString::new(unsafe { c_str(m.name) }.ok_or(Error::InvalidParam)?)
                        .map_err(|_| Error::InvalidParam)?,
                );
                // SAFETY: caller contract: each metalayer's `content` has `content_len` readable bytes.
                contents.push(unsafe { slice(m.content, i64::from(m.content_len)) }?.to_vec());
            }
            let urlpath = match st.map(|s| s.urlpath) {
                Some(u) if !u.is_null() => Some(
                    // SAFETY: caller contract: `b2_storage->urlpath`, non-NULL here, is NUL-terminated.
                    CString::new(unsafe { c_str(u) }.ok_or(Error::InvalidParam)?)
                        .map_err(|_| Error::InvalidParam)?,
                ),
                _ => None,
            };
            let mut h = Box::new(ContextHandle {
                // SAFETY: plain data; all-zero is a valid (empty) value.
                public: unsafe { std::mem::zeroed() },
                storage: Box::new(st.copied().unwrap_or(blosc2_storage {
                    contiguous: false,
                    urlpath: std::ptr::null_mut(),
                    cparams: std::ptr::null_mut(),
                    dparams: std::ptr::null_mut(),
                    io: std::ptr::null_mut(),
                })),
                cparams: Box::new(cparams),
                dparams,
                urlpath,
                dtype: CString::new(dtype).map_err(|_| Error::InvalidParam)?,
                names,
                contents,
            });
            h.storage.cparams = &mut *h.cparams;
            h.storage.dparams =
                h.dparams.as_deref_mut().map_or(std::ptr::null_mut(), |d| d as *mut blosc2_dparams);
            h.storage.urlpath = h.urlpath.as_ref().map_or(std::ptr::null_mut(), |u| u.as_ptr().cast_mut());
            let p = &mut h.public;
            p.ndim = ndim;
            p.shape[..shape.len()].copy_from_slice(shape);
            p.chunkshape[..shape.len()].copy_from_slice(chunkshape);
            p.blockshape[..shape.len()].copy_from_slice(blockshape);
            p.dtype = h.dtype.as_ptr().cast_mut();
            p.dtype_format = dtype_format;
            p.b2_storage = &mut *h.storage;
            for i in 0..n {
                p.metalayers[i] = blosc2_metalayer {
                    name: h.names[i].as_ptr().cast_mut(),
                    content: h.contents[i].as_mut_ptr(),
                    content_len: h.contents[i].len() as i32,
                };
            }
            p.nmetalayers = n as i32;
            Ok(Box::into_raw(h).cast::<b2nd_context_t>())
        })();
        r.unwrap_or(std::ptr::null_mut())
    })
}

/// Free a context made by `b2nd_create_ctx` (NULL is ignored).
///
/// # Safety
/// `ctx` NULL or a live context from `b2nd_create_ctx`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free_ctx(ctx: *mut b2nd_context_t) -> c_int {
    guard_code(|| {
        if !ctx.is_null() {
            // SAFETY: made by Box::into_raw in b2nd_create_ctx.
            drop(unsafe { Box::from_raw(ctx.cast::<ContextHandle>()) });
        }
        Ok(0)
    })
}

/// The core context of a C one, and its storage in core terms.
///
/// # Safety
/// `ctx` NULL or from `b2nd_create_ctx`.
pub(super) unsafe fn core_context(ctx: *const b2nd_context_t) -> Result<(Context, CoreStorage)> {
    // SAFETY: caller contract.
    let c = unsafe { ctx.cast::<ContextHandle>().as_ref() }.ok_or(Error::NullPointer)?;
    let nd = usize::try_from(c.public.ndim).ok().filter(|&n| n <= B2ND_MAX_DIM).ok_or(Error::InvalidParam)?;
    let meta = Meta {
        shape: c.public.shape[..nd].to_vec(),
        chunkshape: c.public.chunkshape[..nd].to_vec(),
        blockshape: c.public.blockshape[..nd].to_vec(),
        dtype: c.dtype.to_string_lossy().into_owned(),
        dtype_format: u8::try_from(c.public.dtype_format).map_err(|_| Error::InvalidParam)?,
    };
    let metalayers = (0..c.public.nmetalayers.clamp(0, B2ND_MAX_METALAYERS as i32) as usize)
        .map(|i| Metalayer {
            name: c.names[i].to_string_lossy().into_owned(),
            content: c.contents[i].clone(),
        })
        .collect();
    // SAFETY: the context's storage points into the context.
    let core = unsafe { CoreStorage::from_c(&*c.storage) }?;
    let ctx = Context {
        meta,
        cparams: core.cparams.clone(),
        dparams: core.dparams.clone(),
        storage: core.storage.clone(),
        metalayers,
    };
    Ok((ctx, core))
}

/// The b2nd metalayer for these shapes, in a malloc'd buffer; returns its length.
///
/// # Safety
/// Shapes `ndim` items; `dtype` NULL or NUL-terminated; `smeta` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_serialize_meta(
    ndim: i8,
    shape: *const i64,
    chunkshape: *const i32,
    blockshape: *const i32,
    dtype: *const c_char,
    dtype_format: i8,
    smeta: *mut *mut u8,
) -> c_int {
    guard_code(|| {
        if smeta.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract: `ndim` items behind each shape pointer.
        let (shape, chunkshape, blockshape) = unsafe { shapes(ndim, shape, chunkshape, blockshape)? };
        let meta = Meta {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            // SAFETY: caller contract.
            dtype: unsafe { c_str(dtype) }.unwrap_or(b2nd::array::meta::DEFAULT_DTYPE).to_string(),
            dtype_format: u8::try_from(dtype_format).map_err(|_| Error::Failure)?,
        };
        let bytes = meta.serialize()?;
        // SAFETY: plain allocation of the metalayer's size.
        let p = unsafe { crate::os::malloc(bytes.len()) }.cast::<u8>();
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
        // SAFETY: `p` is a fresh allocation of `bytes.len()` bytes (checked non-NULL);
        // `smeta` checked non-NULL above, valid for a write (caller contract).
        unsafe {
            std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len());
            *smeta = p;
        }
        Ok(bytes.len() as i32)
    })
}

/// Read a b2nd metalayer; returns the number of bytes read. The dtype (when
/// the metalayer has one and `dtype` is not NULL) comes in a malloc'd string.
///
/// # Safety
/// `smeta` `smeta_len` bytes; out pointers NULL or valid (shapes for up to 16 items).
#[no_mangle]
pub unsafe extern "C" fn b2nd_deserialize_meta(
    smeta: *const u8,
    smeta_len: i32,
    ndim: *mut i8,
    shape: *mut i64,
    chunkshape: *mut i32,
    blockshape: *mut i32,
    dtype: *mut *mut c_char,
    dtype_format: *mut i8,
) -> c_int {
    guard_code(|| {
        if smeta.is_null()
            || ndim.is_null()
            || shape.is_null()
            || chunkshape.is_null()
            || blockshape.is_null()
        {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        unsafe {
            write_opt(dtype, std::ptr::null_mut());
            write_opt(dtype_format, 0);
        }
        // SAFETY: caller contract: `smeta` has `smeta_len` readable bytes.
        let bytes = unsafe { slice(smeta, i64::from(smeta_len)) }.map_err(|_| Error::Failure)?;
        let (m, used, has_dtype) = Meta::deserialize_parts(bytes).map_err(|_| Error::Failure)?;
        let nd = m.ndim();
        // SAFETY: the out pointers were checked non-NULL above (`dtype` and
        // `dtype_format` just before their writes); caller contract: each shape has
        // room for 16 items, and `nd` <= 16 (`deserialize_parts` refuses more).
        unsafe {
            *ndim = nd as i8;
            for i in 0..nd {
                *shape.add(i) = m.shape[i];
                *chunkshape.add(i) = m.chunkshape[i];
                *blockshape.add(i) = m.blockshape[i];
            }
            if !dtype.is_null() && !dtype_format.is_null() {
                if has_dtype {
                    *dtype = malloc_str(&m.dtype);
                    *dtype_format = m.dtype_format as i8;
                } else {
                    *dtype = std::ptr::null_mut();
                    *dtype_format = 0;
                }
            }
        }
        Ok(used as i32)
    })
}

/// `n` items of type `T` from a C pointer (NULL allowed when `n` is 0).
pub(super) unsafe fn items<'a, T>(p: *const T, n: usize) -> Result<&'a [T]> {
    // SAFETY: caller contract: `n` readable items.
    Ok(unsafe { std::slice::from_raw_parts(nonnull(p, n)?, n) })
}

/// Copy a box of a C-order buffer into another (`itemsize` bytes per item).
///
/// # Safety
/// Shapes and coordinates `ndim` items; `src` and `dst` hold their padded shapes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy_buffer2(
    ndim: i8,
    itemsize: i32,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe {
        copy_buffer(ndim, itemsize, src, src_pad_shape, src_start, src_stop, dst, dst_pad_shape, dst_start)
    })
}

/// The box copy of [`b2nd_copy_buffer2`].
///
/// # Safety
/// As for [`b2nd_copy_buffer2`].
#[allow(clippy::too_many_arguments)] // the nine parameters of b2nd_copy_buffer2, which it implements
unsafe fn copy_buffer(
    ndim: i8,
    itemsize: i32,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> Result<i32> {
    let nd = usize::try_from(ndim).ok().filter(|&n| n <= B2ND_MAX_DIM).ok_or(Error::InvalidParam)?;
    let is = usize::try_from(itemsize).ok().filter(|&i| i > 0).ok_or(Error::InvalidParam)?;
    // SAFETY: caller contract.
    let (ss, s0, s1, ds, d0) = unsafe {
        (
            items(src_pad_shape, nd)?,
            items(src_start, nd)?,
            items(src_stop, nd)?,
            items(dst_pad_shape, nd)?,
            items(dst_start, nd)?,
        )
    };
    let count =
        |shape: &[i64]| shape.iter().try_fold(is as i64, |a, &x| a.checked_mul(x)).ok_or(Error::InvalidParam);
    // SAFETY: caller contract: `src` holds `src_pad_shape` items of `itemsize` bytes.
    let src = unsafe { slice(src.cast(), count(ss)?)? };
    // SAFETY: caller contract: `dst` holds `dst_pad_shape` items of `itemsize` bytes.
    let dst = unsafe { slice_mut(dst.cast(), count(ds)?)? };
    b2nd::array::copy_box(is, src, ss, s0, s1, dst, ds, d0)?;
    Ok(0)
}

/// [`b2nd_copy_buffer2`] with the item size given as a byte (`uint8_t`).
///
/// # Safety
/// As for `b2nd_copy_buffer2`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy_buffer(
    ndim: i8,
    itemsize: u8,
    src: *const c_void,
    src_pad_shape: *const i64,
    src_start: *const i64,
    src_stop: *const i64,
    dst: *mut c_void,
    dst_pad_shape: *const i64,
    dst_start: *const i64,
) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe {
        copy_buffer(
            ndim,
            i32::from(itemsize),
            src,
            src_pad_shape,
            src_start,
            src_stop,
            dst,
            dst_pad_shape,
            dst_start,
        )
    })
}
