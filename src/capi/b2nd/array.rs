//! The b2nd C API (`b2nd.h`) over [`crate::b2nd`]: contexts, array creation,
//! opening and saving, slices to and from C buffers, the metalayer.
//!
//! A `b2nd_array_t*` handed to C is the first field of an [`ArrayHandle`];
//! its `sc` is a super-chunk handle of this library, owned by the array.

use super::b2nd_types::*;
use super::ffi::{c_str, guard, guard_code, slice, slice_mut};
use super::schunk::{blosc2_schunk_append_file, blosc2_schunk_free, blosc2_schunk_from_buffer, blosc2_schunk_new};
use super::schunk::{blosc2_schunk_open_offset, blosc2_schunk_to_buffer, blosc2_schunk_to_file, change, reader};
use super::types::*;
use crate::b2nd::{Fill, Geometry, Meta};
use crate::error::{Error, Result};
use crate::frame::Metalayer;
use libc::{c_char, c_int, c_void};
use std::ffi::CString;

/// A context as C sees it, and the memory its pointers point to.
#[repr(C)]
struct ContextHandle {
    public: b2nd_context_s,
    storage: Box<blosc2_storage>,
    cparams: Box<blosc2_cparams>,
    dparams: Option<Box<blosc2_dparams>>,
    urlpath: Option<CString>,
    dtype: CString,
    names: Vec<CString>,
    contents: Vec<Vec<u8>>,
}

/// An array as C sees it, and what it is made of.
#[repr(C)]
struct ArrayHandle {
    public: b2nd_array_t,
    meta: Meta,
    /// The geometry of the stored array (for a view: of the array it views).
    geom: Geometry,
    dtype: CString,
    /// For a view: which dimension of the stored array each of its dimensions
    /// is (`None`: a dimension of size 1 added by `b2nd_expand_dims`).
    view: Option<Vec<Option<usize>>>,
}

impl ArrayHandle {
    fn owns_schunk(&self) -> bool {
        self.view.is_none()
    }

    /// A slice in this array's coordinates, in the stored array's.
    fn to_base(&self, start: &[i64], stop: &[i64], bshape: &[i64]) -> Result<(Vec<i64>, Vec<i64>, Vec<i64>)> {
        let Some(map) = &self.view else {
            return Ok((start.to_vec(), stop.to_vec(), bshape.to_vec()));
        };
        let nd = self.geom.ndim();
        let (mut s0, mut s1, mut bs) = (vec![0i64; nd], vec![1i64; nd], vec![1i64; nd]);
        for (j, m) in map.iter().enumerate() {
            match m {
                Some(b) => {
                    s0[*b] = start[j];
                    s1[*b] = stop[j];
                    bs[*b] = bshape[j];
                }
                None if start[j] == 0 && stop[j] <= 1 && bshape[j] >= stop[j] => {}
                None => return Err(Error::InvalidParam),
            }
        }
        Ok((s0, s1, bs))
    }

    /// An orthogonal selection (and its buffer shape) in this array's
    /// coordinates, in the stored array's.
    fn sel_to_base(&self, sel: Vec<Vec<i64>>, bshape: Vec<i64>) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
        let Some(map) = &self.view else {
            return Ok((sel, bshape));
        };
        let nd = self.geom.ndim();
        let (mut s, mut b) = (vec![vec![0i64]; nd], vec![1i64; nd]);
        for (j, m) in map.iter().enumerate() {
            match m {
                Some(base) => {
                    s[*base] = sel[j].clone();
                    b[*base] = bshape[j];
                }
                None if sel[j].iter().all(|&x| x == 0) && sel[j].len() as i64 <= bshape[j] && sel[j].len() <= 1 => {}
                None => return Err(Error::InvalidParam),
            }
        }
        Ok((s, b))
    }
}

fn shapes<'a>(ndim: i8, shape: *const i64, chunkshape: *const i32, blockshape: *const i32) -> Result<(&'a [i64], &'a [i32], &'a [i32])> {
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

fn nonnull<T>(p: *const T, n: usize) -> Result<*const T> {
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
            let (shape, chunkshape, blockshape) = shapes(ndim, shape, chunkshape, blockshape)?;
            // SAFETY: caller contract.
            let st = unsafe { b2_storage.as_ref() };
            let mut cparams = st.and_then(|s| unsafe { s.cparams.as_ref() }).copied().unwrap_or_else(super::context::default_cparams);
            let dparams = st.and_then(|s| unsafe { s.dparams.as_ref() }).copied().map(Box::new);
            let dtype = match unsafe { c_str(dtype) } {
                Some(d) => d.to_string(),
                None => format!("|S{}", cparams.typesize),
            };
            let meta = Meta { shape: shape.to_vec(), chunkshape: chunkshape.to_vec(), blockshape: blockshape.to_vec(), dtype: dtype.clone(), dtype_format: u8::try_from(dtype_format).map_err(|_| Error::InvalidParam)? };
            let geom = Geometry::new(&meta)?;
            cparams.blocksize = geom.block_bytes(cparams.typesize)?;
            let n = usize::try_from(nmetalayers).map_err(|_| Error::InvalidParam)?;
            if n > B2ND_MAX_METALAYERS {
                return Err(Error::InvalidParam);
            }
            let ms = unsafe { std::slice::from_raw_parts(nonnull(metalayers, n)?, n) };
            let mut names = Vec::with_capacity(n);
            let mut contents = Vec::with_capacity(n);
            for m in ms {
                names.push(CString::new(unsafe { c_str(m.name) }.ok_or(Error::InvalidParam)?).map_err(|_| Error::InvalidParam)?);
                contents.push(unsafe { slice(m.content, i64::from(m.content_len)) }?.to_vec());
            }
            let urlpath = match st.map(|s| s.urlpath) {
                Some(u) if !u.is_null() => Some(CString::new(unsafe { c_str(u) }.ok_or(Error::InvalidParam)?).map_err(|_| Error::InvalidParam)?),
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
            h.storage.dparams = h.dparams.as_deref_mut().map_or(std::ptr::null_mut(), |d| d as *mut blosc2_dparams);
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

fn c_strides(shape: &[i64]) -> [i64; B2ND_MAX_DIM] {
    let mut s = [0i64; B2ND_MAX_DIM];
    let mut acc = 1i64;
    for i in (0..shape.len()).rev() {
        s[i] = acc;
        acc = acc.saturating_mul(shape[i]);
    }
    s
}

/// Fill the public fields of an array from its geometry.
fn fill_public(h: &mut ArrayHandle, sc: *mut blosc2_schunk) {
    let g = h.geom.clone();
    fill_public_as(h, sc, &g);
}

/// Fill the public fields of an array as having geometry `g` (a view's).
fn fill_public_as(h: &mut ArrayHandle, sc: *mut blosc2_schunk, g: &Geometry) {
    let nd = g.ndim();
    // SAFETY: plain data; all-zero is a valid (empty) value.
    let mut p: b2nd_array_t = unsafe { std::mem::zeroed() };
    p.sc = sc;
    p.ndim = nd as i8;
    let extshape: Vec<i64> = g.shape.iter().zip(&g.chunkshape).map(|(&s, &c)| (s + c - 1) / c * c).collect();
    let blocks: Vec<i64> = g.extchunkshape.iter().zip(&g.blockshape).map(|(&e, &b)| e / b).collect();
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
    p.chunknitems = g.chunkshape.iter().product::<i64>() as i32;
    p.extnitems = extshape.iter().product();
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
    p.dtype_format = h.meta.dtype_format as i8;
    h.public = p;
}

/// An array over the super-chunk handle `sc` (taken over on success).
unsafe fn wrap(sc: *mut blosc2_schunk, array: *mut *mut b2nd_array_t) -> Result<i32> {
    if array.is_null() {
        return Err(Error::NullPointer);
    }
    // SAFETY: caller contract: `sc` is a live handle of this library.
    let (_, r) = unsafe { reader(sc)? };
    let meta = Meta::deserialize(r.meta_get("b2nd").map_err(|_| Error::MetalayerNotFound)?)?;
    let tick = r.change_tick();
    drop(r);
    let geom = Geometry::new(&meta)?;
    let dtype = CString::new(meta.dtype.clone()).map_err(|_| Error::InvalidHeader)?;
    let mut h = Box::new(ArrayHandle {
        // SAFETY: plain data; replaced by fill_public.
        public: unsafe { std::mem::zeroed() },
        meta,
        geom,
        dtype,
        view: None,
    });
    fill_public(&mut h, sc);
    h.public.last_tick = tick;
    // SAFETY: checked non-NULL.
    unsafe { *array = Box::into_raw(h).cast() };
    Ok(0)
}

/// The handle behind an array pointer.
unsafe fn array_handle<'a>(array: *const b2nd_array_t) -> Result<&'a ArrayHandle> {
    // SAFETY: caller contract: NULL or an array of this library.
    unsafe { array.cast::<ArrayHandle>().as_ref() }.ok_or(Error::NullPointer)
}

/// Make a new array as `ctx` says, its items set by `fill`.
unsafe fn create(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t, fill: Fill) -> Result<i32> {
    // SAFETY: caller contract.
    let c = unsafe { ctx.cast::<ContextHandle>().as_mut() }.ok_or(Error::NullPointer)?;
    if array.is_null() {
        return Err(Error::NullPointer);
    }
    let nd = usize::try_from(c.public.ndim).map_err(|_| Error::InvalidParam)?;
    let meta = Meta {
        shape: c.public.shape[..nd].to_vec(),
        chunkshape: c.public.chunkshape[..nd].to_vec(),
        blockshape: c.public.blockshape[..nd].to_vec(),
        dtype: c.dtype.to_string_lossy().into_owned(),
        dtype_format: c.public.dtype_format as u8,
    };
    let geom = Geometry::new(&meta)?;
    let metas: Vec<Metalayer> = (0..c.public.nmetalayers.max(0) as usize)
        .map(|i| Metalayer { name: c.names[i].to_string_lossy().into_owned(), content: c.contents[i].clone() })
        .collect();
    // SAFETY: the context's storage is valid.
    let sc = unsafe { blosc2_schunk_new(c.public.b2_storage) };
    if sc.is_null() {
        return Err(Error::Failure);
    }
    // SAFETY: `sc` was just made.
    if let Err(e) = unsafe { change(sc, |s| geom.init(s, &meta, &metas, fill)) } {
        // SAFETY: not handed out.
        unsafe { blosc2_schunk_free(sc) };
        return Err(e);
    }
    // SAFETY: `sc` is live; on failure it is freed here.
    unsafe { wrap(sc, array) }.inspect_err(|_| unsafe {
        blosc2_schunk_free(sc);
    })
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
pub unsafe extern "C" fn b2nd_full(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t, fill_value: *const c_void) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let c = unsafe { ctx.cast::<ContextHandle>().as_ref() }.ok_or(Error::NullPointer)?;
        let v = unsafe { slice(fill_value.cast(), i64::from(c.cparams.typesize)) }?;
        unsafe { create(ctx, array, Fill::Value(v)) }
    })
}

/// Free an array and its super-chunk (NULL is ignored).
///
/// # Safety
/// `array` NULL or a live array of this library, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn b2nd_free(array: *mut b2nd_array_t) -> c_int {
    guard_code(|| {
        if array.is_null() {
            return Ok(0);
        }
        // SAFETY: made by Box::into_raw in `wrap`.
        let h = unsafe { Box::from_raw(array.cast::<ArrayHandle>()) };
        if !h.public.sc.is_null() && h.owns_schunk() {
            // SAFETY: the array owns its super-chunk.
            unsafe { blosc2_schunk_free(h.public.sc) };
        }
        Ok(0)
    })
}

/// An array over an existing super-chunk (which the array then owns).
///
/// # Safety
/// `schunk` NULL or a live super-chunk of this library; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_schunk(schunk: *mut blosc2_schunk, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { wrap(schunk, array) })
}

/// Open the array stored in a frame file (or sparse directory).
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open(urlpath: *const c_char, array: *mut *mut b2nd_array_t) -> c_int {
    // SAFETY: caller contract.
    unsafe { b2nd_open_offset(urlpath, array, 0) }
}

/// Open the array stored in a frame `offset` bytes into a file.
///
/// # Safety
/// As for `b2nd_open`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_open_offset(urlpath: *const c_char, array: *mut *mut b2nd_array_t, offset: i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let sc = unsafe { blosc2_schunk_open_offset(urlpath, offset) };
        if sc.is_null() {
            return Err(Error::FileOpen);
        }
        unsafe { wrap(sc, array) }.inspect_err(|_| unsafe {
            blosc2_schunk_free(sc);
        })
    })
}

/// An array over the contiguous frame in `cframe` (see `blosc2_schunk_from_buffer`).
///
/// # Safety
/// `cframe` NULL or `cframe_len` readable bytes; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cframe(cframe: *mut u8, cframe_len: i64, copy: bool, array: *mut *mut b2nd_array_t) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let sc = unsafe { blosc2_schunk_from_buffer(cframe, cframe_len, copy) };
        if sc.is_null() {
            return Err(Error::Failure);
        }
        unsafe { wrap(sc, array) }.inspect_err(|_| unsafe {
            blosc2_schunk_free(sc);
        })
    })
}

/// The array as a contiguous frame (see `blosc2_schunk_to_buffer`).
///
/// # Safety
/// `array` live; the out pointers valid for writes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_to_cframe(array: *const b2nd_array_t, cframe: *mut *mut u8, cframe_len: *mut i64, needs_free: *mut bool) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        if cframe_len.is_null() {
            return Err(Error::NullPointer);
        }
        let n = unsafe { blosc2_schunk_to_buffer(h.public.sc, cframe, needs_free) };
        if n < 0 {
            return Err(Error::from_code(n as i32).unwrap_or(Error::Failure));
        }
        unsafe { *cframe_len = n };
        Ok(0)
    })
}

/// Save the array as a contiguous frame file.
///
/// # Safety
/// `array` live; `urlpath` NULL or NUL-terminated.
#[no_mangle]
pub unsafe extern "C" fn b2nd_save(array: *const b2nd_array_t, urlpath: *mut c_char) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let n = unsafe { blosc2_schunk_to_file(h.public.sc, urlpath) };
        if n < 0 {
            return Err(Error::from_code(n as i32).unwrap_or(Error::Failure));
        }
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
        // SAFETY: caller contract.
        match unsafe { array_handle(array) } {
            Ok(h) => unsafe { blosc2_schunk_append_file(h.public.sc, urlpath) },
            Err(e) => i64::from(e.code()),
        }
    })
}

/// Shapes of a slice call, checked.
unsafe fn slice_args<'a>(h: &ArrayHandle, start: *const i64, stop: *const i64, buffershape: *const i64) -> Result<(&'a [i64], &'a [i64], &'a [i64])> {
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

/// A new array holding the C-order items of `buffer`.
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `array` valid for a write; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_from_cbuffer(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t, buffer: *const c_void, buffersize: i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        unsafe { create(ctx, array, Fill::Uninit)? };
        let a = unsafe { *array };
        let r = (|| {
            let h = unsafe { array_handle(a)? };
            let ts = i64::from(unsafe { (*h.public.sc).typesize });
            if (src.len() as i64) < h.geom.nitems().saturating_mul(ts) {
                return Err(Error::InvalidParam);
            }
            let start = vec![0i64; h.geom.ndim()];
            let shape = h.geom.shape.clone();
            unsafe { change(h.public.sc, |s| h.geom.set_slice(s, &start, &shape, src, &shape)) }
        })();
        if let Err(e) = r {
            unsafe {
                b2nd_free(a);
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
pub unsafe extern "C" fn b2nd_to_cbuffer(array: *const b2nd_array_t, buffer: *mut c_void, buffersize: i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        let (_, r) = unsafe { reader(h.public.sc)? };
        let start = vec![0i64; h.geom.ndim()];
        h.geom.get_slice(&r, &start, &h.geom.shape, dst, &h.geom.shape)?;
        Ok(0)
    })
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
        let h = unsafe { array_handle(array)? };
        let (start, stop, bshape) = unsafe { slice_args(h, start, stop, buffershape)? };
        let (start, stop, bshape) = h.to_base(start, stop, bshape)?;
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        let (_, r) = unsafe { reader(h.public.sc)? };
        h.geom.get_slice(&r, &start, &stop, dst, &bshape)?;
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
        let (start, stop, bshape) = unsafe { slice_args(h, start, stop, buffershape)? };
        let (start, stop, bshape) = h.to_base(start, stop, bshape)?;
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        unsafe { change(h.public.sc, |s| h.geom.set_slice(s, &start, &stop, src, &bshape)) }?;
        Ok(0)
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
        let m = &h.meta;
        let join = |v: Vec<String>| v.join(", ");
        println!("b2nd metalayer parameters:");
        println!(" Ndim:       {}", m.ndim());
        println!(" shape:      {}", join(m.shape.iter().map(|x| x.to_string()).collect()));
        println!(" chunkshape: {}", join(m.chunkshape.iter().map(|x| x.to_string()).collect()));
        println!(" dtype: {}", m.dtype);
        println!(" blockshape: {}", join(m.blockshape.iter().map(|x| x.to_string()).collect()));
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
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array.cast::<ArrayHandle>().as_mut() }.ok_or(Error::NullPointer)?;
        let sc = h.public.sc;
        let changed = unsafe { change(sc, |s| s.refresh()) }?;
        if h.view.is_some() {
            // A view keeps its shape; the data it reads is current.
            return Ok(i32::from(changed));
        }
        let (_, r) = unsafe { reader(sc)? };
        if !changed && r.change_tick() == h.public.last_tick {
            return Ok(0);
        }
        let meta = Meta::deserialize(r.meta_get("b2nd").map_err(|_| Error::MetalayerNotFound)?)?;
        let tick = r.change_tick();
        drop(r);
        if meta.ndim() != h.meta.ndim() || meta.chunkshape != h.meta.chunkshape || meta.blockshape != h.meta.blockshape {
            return Err(Error::Data);
        }
        h.geom = Geometry::new(&meta)?;
        h.meta = meta;
        fill_public(h, sc);
        h.public.last_tick = tick;
        Ok(1)
    })
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
        let (shape, chunkshape, blockshape) = shapes(ndim, shape, chunkshape, blockshape)?;
        let meta = Meta {
            shape: shape.to_vec(),
            chunkshape: chunkshape.to_vec(),
            blockshape: blockshape.to_vec(),
            // SAFETY: caller contract.
            dtype: unsafe { c_str(dtype) }.unwrap_or(crate::b2nd::meta::DEFAULT_DTYPE).to_string(),
            dtype_format: u8::try_from(dtype_format).map_err(|_| Error::Failure)?,
        };
        let bytes = meta.serialize()?;
        // SAFETY: plain allocation of the metalayer's size.
        let p = unsafe { libc::malloc(bytes.len()) }.cast::<u8>();
        if p.is_null() {
            return Err(Error::MemoryAlloc);
        }
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
        if smeta.is_null() || ndim.is_null() || shape.is_null() || chunkshape.is_null() || blockshape.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        unsafe {
            super::ffi::write_opt(dtype, std::ptr::null_mut());
            super::ffi::write_opt(dtype_format, 0);
        }
        let bytes = unsafe { slice(smeta, i64::from(smeta_len)) }.map_err(|_| Error::Failure)?;
        let (m, used, has_dtype) = Meta::deserialize_parts(bytes).map_err(|_| Error::Failure)?;
        let nd = m.ndim();
        unsafe {
            *ndim = nd as i8;
            for i in 0..nd {
                *shape.add(i) = m.shape[i];
                *chunkshape.add(i) = m.chunkshape[i];
                *blockshape.add(i) = m.blockshape[i];
            }
            if !dtype.is_null() && !dtype_format.is_null() {
                if has_dtype {
                    *dtype = super::global::malloc_str(&m.dtype);
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
unsafe fn items<'a, T>(p: *const T, n: usize) -> Result<&'a [T]> {
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
    guard_code(|| {
        let nd = usize::try_from(ndim).ok().filter(|&n| n <= B2ND_MAX_DIM).ok_or(Error::InvalidParam)?;
        let is = usize::try_from(itemsize).ok().filter(|&i| i > 0).ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract.
        let (ss, s0, s1, ds, d0) = unsafe {
            (items(src_pad_shape, nd)?, items(src_start, nd)?, items(src_stop, nd)?, items(dst_pad_shape, nd)?, items(dst_start, nd)?)
        };
        let count = |shape: &[i64]| shape.iter().try_fold(is as i64, |a, &x| a.checked_mul(x)).ok_or(Error::InvalidParam);
        let src = unsafe { slice(src.cast(), count(ss)?)? };
        let dst = unsafe { slice_mut(dst.cast(), count(ds)?)? };
        crate::b2nd::copy_box(is, src, ss, s0, s1, dst, ds, d0)?;
        Ok(0)
    })
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
    unsafe { b2nd_copy_buffer2(ndim, i32::from(itemsize), src, src_pad_shape, src_start, src_stop, dst, dst_pad_shape, dst_start) }
}

/// The items at `ncoords` flat C-order indices into `buffer`, in order.
///
/// # Safety
/// `array` live; `coords` `ncoords` items; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_sparse_cbuffer(array: *const b2nd_array_t, ncoords: i64, coords: *const i64, buffer: *mut c_void, buffersize: i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let n = usize::try_from(ncoords).map_err(|_| Error::InvalidParam)?;
        if n == 0 {
            return Ok(0);
        }
        let nd = h.geom.ndim();
        if nd == 0 {
            return Err(Error::InvalidParam);
        }
        // Flat C-order indices, turned into coordinates.
        let flat = unsafe { items(coords, n)? };
        let nitems = h.geom.nitems();
        let mut tuples = Vec::with_capacity(n * nd);
        for &f in flat {
            if f < 0 || f >= nitems {
                return Err(Error::InvalidParam);
            }
            let start = tuples.len();
            tuples.resize(start + nd, 0);
            let mut rest = f;
            for i in (0..nd).rev() {
                tuples[start + i] = rest % h.geom.shape[i];
                rest /= h.geom.shape[i];
            }
        }
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        let (_, r) = unsafe { reader(h.public.sc)? };
        h.geom.get_points(&r, &tuples, dst)?;
        Ok(0)
    })
}

/// The selection lists of an orthogonal selection call.
unsafe fn selection(h: &ArrayHandle, selection: *mut *mut i64, selection_size: *mut i64, buffershape: *mut i64) -> Result<(Vec<Vec<i64>>, Vec<i64>)> {
    let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
    // SAFETY: caller contract: `ndim` lists and sizes.
    let (lists, sizes, bshape) = unsafe { (items(selection.cast_const(), nd)?, items(selection_size.cast_const(), nd)?, items(buffershape.cast_const(), nd)?) };
    let mut out = Vec::with_capacity(nd);
    for i in 0..nd {
        let n = usize::try_from(sizes[i]).map_err(|_| Error::InvalidParam)?;
        out.push(unsafe { items(lists[i].cast_const(), n)? }.to_vec());
    }
    h.sel_to_base(out, bshape.to_vec())
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
        let h = unsafe { array_handle(array)? };
        let (sel, bshape) = unsafe { self::selection(h, selection, selection_size, buffershape)? };
        let dst = unsafe { slice_mut(buffer.cast(), buffersize)? };
        let (_, r) = unsafe { reader(h.public.sc)? };
        let ts = r.typesize().max(1) as usize;
        let mut chunk = vec![0u8; h.geom.chunk_items as usize * ts];
        h.geom.for_each_selected(&sel, &bshape, |n, pairs| {
            r.decompress_chunk(n, &mut chunk)?;
            for &(co, bo) in pairs {
                let d = dst.get_mut(bo * ts..(bo + 1) * ts).ok_or(Error::WriteBuffer)?;
                d.copy_from_slice(&chunk[co * ts..(co + 1) * ts]);
            }
            Ok(())
        })?;
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
        let (sel, bshape) = unsafe { self::selection(h, selection, selection_size, buffershape)? };
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        unsafe {
            change(h.public.sc, |sc| {
                let ts = sc.typesize().max(1) as usize;
                let mut chunk = vec![0u8; h.geom.chunk_items as usize * ts];
                let mut todo = Vec::new();
                h.geom.for_each_selected(&sel, &bshape, |n, pairs| {
                    todo.push((n, pairs.to_vec()));
                    Ok(())
                })?;
                for (n, pairs) in todo {
                    chunk.fill(0);
                    sc.decompress_chunk(n, &mut chunk)?;
                    for (co, bo) in pairs {
                        let s = src.get(bo * ts..(bo + 1) * ts).ok_or(Error::ReadBuffer)?;
                        chunk[co * ts..(co + 1) * ts].copy_from_slice(s);
                    }
                    let c = sc.compress(&chunk)?;
                    sc.update_chunk(n, &c)?;
                }
                Ok(())
            })
        }?;
        Ok(0)
    })
}

/// A new array (made as `ctx` says, with the slice's shape) holding the items
/// of `[start, stop)` of `src`.
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `src` live; `start`/`stop` ndim items; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_get_slice(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t, src: *const b2nd_array_t, start: *const i64, stop: *const i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(src)? };
        let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
        let (s0, s1) = unsafe { (items(start, nd)?, items(stop, nd)?) };
        let shape: Vec<i64> = s0.iter().zip(s1).map(|(a, b)| b - a).collect();
        if shape.iter().any(|&x| x < 0) {
            return Err(Error::InvalidParam);
        }
        let ts = unsafe { (*h.public.sc).typesize }.max(1) as usize;
        let n = shape.iter().try_fold(1usize, |a, &x| a.checked_mul(x as usize)).ok_or(Error::InvalidParam)?;
        let mut buf = vec![0u8; n.checked_mul(ts).ok_or(Error::InvalidParam)?];
        {
            let (b0, b1, bshape) = h.to_base(s0, s1, &shape)?;
            let (_, r) = unsafe { reader(h.public.sc)? };
            h.geom.get_slice(&r, &b0, &b1, &mut buf, &bshape)?;
        }
        unsafe { from_buffer_shaped(ctx, array, &buf, &shape) }
    })
}

/// A new array as `ctx` says but of `shape`, holding `buf` (C order).
unsafe fn from_buffer_shaped(ctx: *mut b2nd_context_t, array: *mut *mut b2nd_array_t, buf: &[u8], shape: &[i64]) -> Result<i32> {
    // SAFETY: caller contract.
    let c = unsafe { ctx.cast::<ContextHandle>().as_mut() }.ok_or(Error::NullPointer)?;
    if usize::try_from(c.public.ndim).ok() != Some(shape.len()) {
        return Err(Error::InvalidParam);
    }
    c.public.shape[..shape.len()].copy_from_slice(shape);
    // SAFETY: the context is valid; `buf` holds the whole array.
    unsafe {
        let r = b2nd_from_cbuffer(ctx, array, buf.as_ptr().cast(), buf.len() as i64);
        if r < 0 {
            return Err(Error::from_code(r).unwrap_or(Error::Failure));
        }
    }
    Ok(0)
}

/// A copy of `src`, made as `ctx` says (its shape becomes `src`'s).
///
/// # Safety
/// `ctx` from `b2nd_create_ctx`; `src` live; `array` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_copy(ctx: *mut b2nd_context_t, src: *const b2nd_array_t, array: *mut *mut b2nd_array_t) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(src)? };
        let c = unsafe { ctx.cast::<ContextHandle>().as_mut() }.ok_or(Error::NullPointer)?;
        c.public.ndim = h.public.ndim;
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
        let stop = h.public.shape[..nd].to_vec();
        let start = vec![0i64; stop.len()];
        unsafe { *array = std::ptr::null_mut() };
        let rc = unsafe { b2nd_get_slice(ctx, array, src, start.as_ptr(), stop.as_ptr()) };
        if rc < 0 {
            return Err(Error::from_code(rc).unwrap_or(Error::Failure));
        }
        Ok(0)
    })
}

/// Change an array's shape and items: `f` gets its shape and items (C order)
/// and returns the new shape and items; chunks and metalayer are rewritten.
unsafe fn reshape_with(array: *mut b2nd_array_t, f: impl FnOnce(&[i64], &[u8], usize) -> Result<(Vec<i64>, Vec<u8>)>) -> Result<i32> {
    // SAFETY: caller contract.
    let h = unsafe { array.cast::<ArrayHandle>().as_mut() }.ok_or(Error::NullPointer)?;
    if !h.owns_schunk() {
        return Err(Error::InvalidParam);
    }
    let sc = h.public.sc;
    let geom = h.geom.clone();
    let mut meta = h.meta.clone();
    let new_geom = unsafe {
        change(sc, |s| {
            let ts = s.typesize().max(1) as usize;
            let all = geom.read_all(s)?;
            let (shape, data) = f(&geom.shape, &all, ts)?;
            meta.shape = shape;
            geom.rewrite(s, &meta, &data)
        })
    }?;
    h.geom = new_geom;
    h.meta = meta;
    let tick = h.public.last_tick;
    fill_public(h, sc);
    h.public.last_tick = tick;
    Ok(0)
}

/// Move the items of `old` (shape `shape`) along `axis` so that `n` new items
/// (zeros) open at `at` (n > 0), or `-n` items from `at` go (n < 0).
fn shift_axis(old: &[u8], shape: &[i64], ts: usize, axis: usize, at: i64, n: i64) -> Result<(Vec<i64>, Vec<u8>)> {
    let mut new_shape = shape.to_vec();
    new_shape[axis] = shape[axis] + n;
    if new_shape[axis] < 0 || at < 0 || at > shape[axis] || (n < 0 && at - n > shape[axis]) {
        return Err(Error::InvalidParam);
    }
    let zeros = vec![0i64; shape.len()];
    // The part before `at` stays.
    let mut stop1 = shape.to_vec();
    stop1[axis] = at;
    let mut out = crate::b2nd::reshaped(ts, old, shape, &new_shape, &zeros, &stop1, &zeros)?;
    // The part after moves by `n`.
    let mut src_start = zeros.clone();
    src_start[axis] = if n > 0 { at } else { at - n };
    let mut dst_start = zeros.clone();
    dst_start[axis] = if n > 0 { at + n } else { at };
    if src_start[axis] < shape[axis] {
        crate::b2nd::copy_box(ts, old, shape, &src_start, shape, &mut out, &new_shape, &dst_start)?;
    }
    Ok((new_shape, out))
}

/// Change the shape of an array: along each dimension, items open (as zeros)
/// or go at `start[i]` (NULL: at the end).
///
/// # Safety
/// `array` live; `new_shape` ndim items; `start` NULL or ndim items.
#[no_mangle]
pub unsafe extern "C" fn b2nd_resize(array: *mut b2nd_array_t, new_shape: *const i64, start: *const i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h0 = unsafe { array_handle(array)? };
        let nd = h0.geom.ndim();
        let ns = unsafe { items(new_shape, nd)? }.to_vec();
        let st = if start.is_null() { None } else { Some(unsafe { items(start, nd)? }.to_vec()) };
        let old = h0.geom.shape.clone();
        let grows_first_at_end = nd > 0
            && ns[0] > old[0]
            && old[1..].iter().all(|&x| x > 0)
            && ns[1..] == old[1..]
            && st.as_ref().is_none_or(|s| s[0] == old[0])
            && h0.owns_schunk();
        if grows_first_at_end {
            // New zero items after the end of the first dimension: chunk by chunk.
            let ts = unsafe { (*h0.public.sc).typesize }.max(1) as usize;
            let n = usize::try_from((ns[0] - old[0]) * old[1..].iter().product::<i64>()).map_err(|_| Error::InvalidParam)?;
            let zeros = vec![0u8; n.checked_mul(ts).ok_or(Error::InvalidParam)?];
            let rc = unsafe { b2nd_insert(array, zeros.as_ptr().cast(), zeros.len() as i64, 0, old[0]) };
            return if rc < 0 { Err(Error::from_code(rc).unwrap_or(Error::Failure)) } else { Ok(0) };
        }
        unsafe {
            reshape_with(array, |shape, all, ts| {
                let (mut shape, mut data) = (shape.to_vec(), all.to_vec());
                for i in 0..nd {
                    let n = ns[i] - shape[i];
                    if n == 0 {
                        continue;
                    }
                    let at = st.as_ref().map_or(shape[i].min(ns[i]), |s| s[i]);
                    (shape, data) = shift_axis(&data, &shape, ts, i, at, n)?;
                }
                Ok((shape, data))
            })
        }
    })
}

/// Insert the items of `buffer` along `axis` at `insert_start` (the buffer has
/// the array's shape, but for `axis`).
///
/// # Safety
/// `array` live; `buffer` `buffersize` bytes.
#[no_mangle]
pub unsafe extern "C" fn b2nd_insert(array: *mut b2nd_array_t, buffer: *const c_void, buffersize: i64, axis: i8, insert_start: i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let src = unsafe { slice(buffer.cast(), buffersize)? };
        let h0 = unsafe { array_handle(array)? };
        let nd = h0.geom.ndim();
        let axis = usize::try_from(axis).ok().filter(|&a| a < nd).ok_or(Error::InvalidParam)?;
        if axis == 0 && insert_start == h0.geom.shape[0] && h0.owns_schunk() {
            // Items after the end of the first dimension: chunk by chunk.
            let h = unsafe { array.cast::<ArrayHandle>().as_mut() }.ok_or(Error::NullPointer)?;
            let sc = h.public.sc;
            let (geom, meta) = (h.geom.clone(), h.meta.clone());
            let (new_meta, new_geom) = unsafe {
                change(sc, |s| {
                    let ts = s.typesize().max(1) as i64;
                    let others: i64 = geom.shape[1..].iter().product();
                    let row = others.checked_mul(ts).filter(|&r| r > 0).ok_or(Error::InvalidParam)?;
                    if src.len() as i64 % row != 0 {
                        return Err(Error::InvalidParam);
                    }
                    geom.append_first_axis(s, &meta, src, src.len() as i64 / row)
                })
            }?;
            h.meta = new_meta;
            h.geom = new_geom;
            let tick = h.public.last_tick;
            fill_public(h, sc);
            h.public.last_tick = tick;
            return Ok(0);
        }
        unsafe {
            reshape_with(array, |shape, all, ts| {
                let others: i64 = shape.iter().enumerate().filter(|(i, _)| *i != axis).map(|(_, &s)| s).product();
                let row = others.checked_mul(ts as i64).filter(|&r| r > 0).ok_or(Error::InvalidParam)?;
                if src.len() as i64 % row != 0 {
                    return Err(Error::InvalidParam);
                }
                let n = src.len() as i64 / row;
                let (new_shape, mut data) = shift_axis(all, shape, ts, axis, insert_start, n)?;
                let mut bshape = shape.to_vec();
                bshape[axis] = n;
                let zeros = vec![0i64; nd];
                let mut at = zeros.clone();
                at[axis] = insert_start;
                crate::b2nd::copy_box(ts, src, &bshape, &zeros, &bshape, &mut data, &new_shape, &at)?;
                Ok((new_shape, data))
            })
        }
    })
}

/// Append the items of `buffer` at the end of `axis`.
///
/// # Safety
/// As for `b2nd_insert`.
#[no_mangle]
pub unsafe extern "C" fn b2nd_append(array: *mut b2nd_array_t, buffer: *const c_void, buffersize: i64, axis: i8) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let a = usize::try_from(axis).ok().filter(|&a| a < h.geom.ndim()).ok_or(Error::InvalidParam)?;
        let end = h.geom.shape[a];
        let rc = unsafe { b2nd_insert(array, buffer, buffersize, axis, end) };
        if rc < 0 {
            return Err(Error::from_code(rc).unwrap_or(Error::Failure));
        }
        Ok(0)
    })
}

/// Remove `delete_len` items along `axis` from `delete_start`.
///
/// # Safety
/// `array` live.
#[no_mangle]
pub unsafe extern "C" fn b2nd_delete(array: *mut b2nd_array_t, axis: i8, delete_start: i64, delete_len: i64) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let nd = unsafe { array_handle(array)? }.geom.ndim();
        let axis = usize::try_from(axis).ok().filter(|&a| a < nd).ok_or(Error::InvalidParam)?;
        if delete_len < 0 {
            return Err(Error::InvalidParam);
        }
        unsafe { reshape_with(array, |shape, all, ts| shift_axis(all, shape, ts, axis, delete_start, -delete_len)) }
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
        let (h1, h2) = unsafe { (array_handle(src1)?, array_handle(src2)?) };
        if array.is_null() {
            return Err(Error::NullPointer);
        }
        let nd = h1.geom.ndim();
        let a = usize::try_from(axis).ok().filter(|&x| x < nd).ok_or(Error::InvalidParam)?;
        if h2.geom.ndim() != nd || (0..nd).any(|i| i != a && h1.geom.shape[i] != h2.geom.shape[i]) {
            return Err(Error::InvalidParam);
        }
        let ts1 = unsafe { (*h1.public.sc).typesize };
        if ts1 != unsafe { (*h2.public.sc).typesize } {
            return Err(Error::InvalidParam);
        }
        let two = {
            let (_, r) = unsafe { reader(h2.public.sc)? };
            h2.geom.read_all(&r)?
        };
        if copy {
            let one = {
                let (_, r) = unsafe { reader(h1.public.sc)? };
                h1.geom.read_all(&r)?
            };
            let ts = ts1.max(1) as usize;
            let mut shape = h1.geom.shape.clone();
            shape[a] += h2.geom.shape[a];
            let zeros = vec![0i64; nd];
            let mut data = crate::b2nd::reshaped(ts, &one, &h1.geom.shape, &shape, &zeros, &h1.geom.shape, &zeros)?;
            let mut at = zeros.clone();
            at[a] = h1.geom.shape[a];
            crate::b2nd::copy_box(ts, &two, &h2.geom.shape, &zeros, &h2.geom.shape, &mut data, &shape, &at)?;
            let c = unsafe { ctx.cast::<ContextHandle>().as_mut() }.ok_or(Error::NullPointer)?;
            c.public.ndim = nd as i8;
            return unsafe { from_buffer_shaped(ctx, array, &data, &shape) };
        }
        let target = src1.cast_mut();
        let rc = unsafe { b2nd_append(target, two.as_ptr().cast(), two.len() as i64, axis) };
        if rc < 0 {
            return Err(Error::from_code(rc).unwrap_or(Error::Failure));
        }
        unsafe { *array = target };
        Ok(0)
    })
}

/// A view of `array` whose dimension `j` is `map[j]` of the stored array (or
/// an added dimension of size 1).
unsafe fn make_view(array: *const b2nd_array_t, map: Vec<Option<usize>>, out: *mut *mut b2nd_array_t) -> Result<i32> {
    // SAFETY: caller contract.
    let h = unsafe { array_handle(array)? };
    if out.is_null() {
        return Err(Error::NullPointer);
    }
    // Compose with the map of a view of a view.
    let map: Vec<Option<usize>> = match &h.view {
        Some(m0) => map.iter().map(|m| m.and_then(|j| m0[j])).collect(),
        None => map,
    };
    if map.len() > B2ND_MAX_DIM {
        return Err(Error::InvalidParam);
    }
    let base = &h.geom;
    let vmeta = Meta {
        shape: map.iter().map(|m| m.map_or(1, |b| base.shape[b])).collect(),
        chunkshape: map.iter().map(|m| m.map_or(1, |b| base.chunkshape[b] as i32)).collect(),
        blockshape: map.iter().map(|m| m.map_or(1, |b| base.blockshape[b] as i32)).collect(),
        dtype: h.meta.dtype.clone(),
        dtype_format: h.meta.dtype_format,
    };
    let vgeom = Geometry::new(&vmeta)?;
    let mut v = Box::new(ArrayHandle {
        // SAFETY: plain data; filled below.
        public: unsafe { std::mem::zeroed() },
        meta: h.meta.clone(),
        geom: h.geom.clone(),
        dtype: h.dtype.clone(),
        view: Some(map),
    });
    fill_public_as(&mut v, h.public.sc, &vgeom);
    v.public.last_tick = h.public.last_tick;
    // SAFETY: checked non-NULL.
    unsafe { *out = Box::into_raw(v).cast() };
    Ok(0)
}

/// A view of `array` without the dimensions marked in `index` (each of size 1).
/// The view shares the array's data; free it with `b2nd_free` before the array.
///
/// # Safety
/// `array` live; `index` ndim items; `view` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze_index(array: *mut b2nd_array_t, view: *mut *mut b2nd_array_t, index: *const bool) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
        let idx = unsafe { items(index, nd)? };
        let mut map = Vec::new();
        for (j, &drop) in idx.iter().enumerate() {
            if drop {
                if h.public.shape[j] != 1 {
                    return Err(Error::InvalidParam);
                }
            } else {
                map.push(Some(j));
            }
        }
        unsafe { make_view(array, map, view) }
    })
}

/// A view of `array` without its dimensions of size 1.
///
/// # Safety
/// `array` live; `view` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_squeeze(array: *mut b2nd_array_t, view: *mut *mut b2nd_array_t) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
        let index: Vec<bool> = (0..nd).map(|j| h.public.shape[j] == 1).collect();
        let rc = unsafe { b2nd_squeeze_index(array, view, index.as_ptr()) };
        if rc < 0 {
            return Err(Error::from_code(rc).unwrap_or(Error::Failure));
        }
        Ok(0)
    })
}

/// A view of `array` with `final_dims` dimensions: those marked in `axis` are
/// new ones of size 1, the others are the array's, in order.
///
/// # Safety
/// `array` live; `axis` `final_dims` items; `view` valid for a write.
#[no_mangle]
pub unsafe extern "C" fn b2nd_expand_dims(array: *const b2nd_array_t, view: *mut *mut b2nd_array_t, axis: *const bool, final_dims: u8) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let h = unsafe { array_handle(array)? };
        let nd = usize::try_from(h.public.ndim).map_err(|_| Error::InvalidParam)?;
        let fd = usize::from(final_dims);
        let ax = unsafe { items(axis, fd)? };
        if fd > B2ND_MAX_DIM || ax.iter().filter(|&&a| !a).count() != nd {
            return Err(Error::InvalidParam);
        }
        let mut next = 0;
        let map = ax
            .iter()
            .map(|&new| {
                if new {
                    None
                } else {
                    next += 1;
                    Some(next - 1)
                }
            })
            .collect();
        unsafe { make_view(array, map, view) }
    })
}
