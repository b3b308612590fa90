//! The super-chunk C API over [`b2nd::schunk::SuperChunk`]: the handle
//! behind `blosc2_schunk*`, creating, opening, copying and freeing
//! super-chunks, locking, and frames. The chunks of a super-chunk are in
//! `schunk_chunks.rs`, its metalayers in `schunk_meta.rs`.
//!
//! A `blosc2_schunk*` handed to C is the first field of a `SchunkHandle` (`handle.rs`),
//! which also holds the safe super-chunk (behind a read-write lock, so that
//! reads from several threads run at once) and the memory the public fields
//! point to. Its public fields are kept in line with the core by `fields.rs`.

use super::context::{blosc2_create_cctx, blosc2_create_dctx, blosc2_free_ctx};
use super::fields::{change, first_publish, reader};
use super::handle::{handle, SchunkHandle};
use super::hooks::{CPostfilter, CPrefilter};
use super::io::{choose, CallbackBackend};
use super::params::{c_cparams, core_cparams, default_cparams, default_dparams};
use super::types::*;
use crate::ffi::{c_str, guard, guard_code, guard_code64, slice};
use crate::os::{c_char, c_int, c_void};
use b2nd::chunk::DParams;
use b2nd::error::{Error, Result};
use b2nd::schunk::{SChunk, Storage, SuperChunk};
use std::borrow::Cow;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, Ordering};
use std::sync::Arc;

/// An in-memory frame that the caller handed over (`from_buffer` without copy).
struct ForeignFrame {
    ptr: usize,
    len: usize,
    owned: Arc<AtomicBool>,
}

impl AsRef<[u8]> for ForeignFrame {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: blosc2_schunk_from_buffer's contract: the buffer stays valid
        // (and is ours to free) for the super-chunk's life.
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }
}

impl Drop for ForeignFrame {
    fn drop(&mut self) {
        if self.owned.load(Ordering::Relaxed) {
            // SAFETY: the buffer was malloc'd by the caller and handed over.
            unsafe { crate::os::free(self.ptr as *mut c_void) };
        }
    }
}

pub(super) fn index(n: i64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::InvalidParam)
}

/// Copy `bytes` into a new malloc'd buffer (which C frees with `free`).
pub(crate) fn malloc_copy(bytes: &[u8]) -> Result<*mut u8> {
    // SAFETY: plain allocation, at least one byte.
    let p = unsafe { crate::os::malloc(bytes.len().max(1)) }.cast::<u8>();
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: `p` has room for `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    Ok(p)
}

/// Build the handle for a super-chunk and return its public pointer.
fn publish(
    sc: SuperChunk,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    io: blosc2_io,
    callbacks: Option<Arc<CallbackBackend>>,
) -> Result<*mut blosc2_schunk> {
    publish_shared(SChunk::new(sc), cparams, dparams, io, callbacks)
}

/// Build the handle for a shared super-chunk and return its public pointer.
pub(crate) fn publish_shared(
    sc: SChunk,
    cparams: blosc2_cparams,
    dparams: blosc2_dparams,
    io: blosc2_io,
    callbacks: Option<Arc<CallbackBackend>>,
) -> Result<*mut blosc2_schunk> {
    let (urlpath, contiguous, is_frame) = {
        let r = sc.read_cached();
        let u = r
            .storage()
            .urlpath
            .as_deref()
            .map(|u| CString::new(u).map_err(|_| Error::InvalidParam))
            .transpose()?;
        (u, r.storage().contiguous, r.frame().is_some())
    };
    let mut h = Box::new(SchunkHandle {
        // SAFETY: blosc2_schunk is plain data (integers, arrays, raw pointers); all-zero is valid.
        public: unsafe { std::mem::zeroed() },
        inner: sc,
        storage: Box::new(blosc2_storage {
            contiguous,
            urlpath: std::ptr::null_mut(),
            cparams: std::ptr::null_mut(),
            dparams: std::ptr::null_mut(),
            io: std::ptr::null_mut(),
        }),
        cparams: Box::new(cparams),
        dparams: Box::new(dparams),
        io: Box::new(io),
        urlpath,
        metas: Vec::new(),
        vlmetas: Vec::new(),
        meta_ptrs: Vec::new(),
        vlmeta_ptrs: Vec::new(),
        synced_tick: -1,
        published_chunksize: AtomicI32::new(-1),
        published_cctx: AtomicU64::new(0),
        published_dctx: AtomicU64::new(0),
        data_ptrs: Vec::new(),
        callbacks,
        cframe_owned: None,
    });
    let hp: *mut SchunkHandle = &mut *h;
    h.storage.urlpath = h.urlpath.as_ref().map_or(std::ptr::null_mut(), |u| u.as_ptr().cast_mut());
    h.storage.cparams = &mut *h.cparams;
    h.storage.dparams = &mut *h.dparams;
    h.storage.io = &mut *h.io;
    h.public.storage = &mut *h.storage;
    h.public.version = 0;
    h.cparams.schunk = hp.cast();
    h.dparams.schunk = hp.cast();
    h.public.frame = if is_frame { hp.cast() } else { std::ptr::null_mut() };
    // SAFETY: `schunk` is this handle, boxed, which outlives its contexts; the hooks and their
    // params come from the storage of the C call that makes the super-chunk, whose contract
    // keeps them valid while it lives (as c-blosc2's does).
    h.public.cctx = unsafe { blosc2_create_cctx(*h.cparams) };
    // SAFETY: as above.
    h.public.dctx = unsafe { blosc2_create_dctx(*h.dparams) };
    // User codecs and filters get this handle as `cparams->schunk` / `dparams->schunk`.
    h.inner.write().set_owner(hp as usize);
    let p = Box::into_raw(h);
    // SAFETY: `p` is the live handle just made; nobody else has it yet.
    unsafe { first_publish(p.cast()) };
    Ok(p.cast())
}

fn global_nthreads() -> i16 {
    super::global::blosc2_get_nthreads()
}

// ------------------------------------------------------------------ creating

/// Create a new super-chunk (in memory, or at `storage->urlpath`, which is overwritten).
///
/// # Safety
/// `storage` must be NULL or a valid `blosc2_storage` (its pointers NULL or valid).
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_new(storage: *mut blosc2_storage) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: caller contract.
        let r = (|| unsafe {
            let core = CoreStorage::from_c(storage)?;
            let sc = SuperChunk::new(core.cparams.clone(), core.dparams.clone(), core.storage.clone())?;
            adopt(SChunk::new(sc), &core)
        })();
        r.unwrap_or(std::ptr::null_mut())
    })
}

/// A `blosc2_storage` in the core's terms, with what the handle mirrors.
pub(crate) struct CoreStorage {
    pub storage: Storage,
    pub cparams: b2nd::chunk::CParams,
    pub dparams: DParams,
    c_cparams: blosc2_cparams,
    c_dparams: blosc2_dparams,
    io: super::io::IoChoice,
}

impl CoreStorage {
    /// Convert `storage` (NULL: in memory, default parameters).
    ///
    /// # Safety
    /// `storage` NULL or valid, its pointers NULL or valid.
    pub(crate) unsafe fn from_c(storage: *const blosc2_storage) -> Result<CoreStorage> {
        // SAFETY: caller contract.
        let st = unsafe { storage.as_ref() };
        let mut c_cparams =
            // SAFETY: caller contract: `storage->cparams` NULL or valid.
            st.and_then(|s| unsafe { s.cparams.as_ref() }).copied().unwrap_or_else(default_cparams);
        if std::env::var_os("BTUNE_TRADEOFF").is_some() {
            // as in c-blosc2: Btune's variable makes every new super-chunk tuned
            c_cparams.tuner_id = crate::registry::tuners::BLOSC_BTUNE;
        }
        let c_dparams =
            // SAFETY: caller contract: `storage->dparams` NULL or valid.
            st.and_then(|s| unsafe { s.dparams.as_ref() }).copied().unwrap_or_else(default_dparams);
        super::context::registered_tuner(c_cparams.tuner_id)?;
        // SAFETY: caller contract: `storage->io` NULL or a valid `blosc2_io`.
        let io = unsafe { choose(st.map_or(std::ptr::null(), |s| s.io.cast_const()))? };
        let urlpath = match st.map(|s| s.urlpath) {
            // SAFETY: caller contract: `storage->urlpath`, non-NULL here, is NUL-terminated.
            Some(u) if !u.is_null() => Some(unsafe { c_str(u) }.ok_or(Error::InvalidParam)?.to_string()),
            _ => None,
        };
        let storage = Storage {
            contiguous: st.is_some_and(|s| s.contiguous),
            urlpath,
            backend: io.backend.clone(),
            locking: io.locking,
            durability: env_durability(),
        };
        let mut cparams = core_cparams(&c_cparams)?;
        cparams.nthreads = c_cparams.nthreads.max(1);
        let dparams = DParams {
            nthreads: c_dparams.nthreads.max(1),
            typesize: cparams.typesize,
            owner: 0,
            schunk: None,
        };
        Ok(CoreStorage { storage, cparams, dparams, c_cparams, c_dparams, io })
    }
}

/// The handle for a super-chunk made in the core as `core` says, with the
/// C prefilter and postfilter of its parameters attached.
pub(crate) fn adopt(sc: SChunk, core: &CoreStorage) -> Result<*mut blosc2_schunk> {
    let (pre, post) = (CPrefilter::from_cparams(&core.c_cparams), CPostfilter::from_dparams(&core.c_dparams));
    {
        let mut w = sc.write();
        w.set_prefilter(pre.clone().map(|p| p as Arc<dyn b2nd::chunk::Prefilter>));
        w.set_postfilter(post.clone().map(|p| p as Arc<dyn b2nd::chunk::Postfilter>));
    }
    let p = publish_shared(sc, core.c_cparams, core.c_dparams, core.io.io, core.io.callbacks.clone())?;
    // SAFETY: `p` was just published.
    let (cctx, dctx) = unsafe { ((*p).cctx, (*p).dctx) };
    if let Some(pre) = pre {
        pre.set_context(cctx);
    }
    if let Some(post) = post {
        post.set_context(dctx);
    }
    Ok(p)
}

/// The durability of the frames the C API makes and opens: `B2ND_DURABILITY`
/// (`off`, `consistent` or `durable`), read here at the API's edge; the
/// default (consistent) when unset or unknown.
pub(crate) fn env_durability() -> b2nd::io::Durability {
    match std::env::var(b2nd::io::Durability::ENV) {
        Ok(v) => b2nd::io::Durability::parse(&v).unwrap_or_else(|| {
            b2nd::trace!(
                "{}={v:?}: unknown; off, consistent or durable (using the default)",
                b2nd::io::Durability::ENV
            );
            Default::default()
        }),
        Err(_) => Default::default(),
    }
}

/// Open a super-chunk stored at `urlpath` through backend `udio`, starting at `offset`.
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; `udio` NULL or valid.
pub(crate) unsafe fn open_handle(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> Result<*mut blosc2_schunk> {
    // SAFETY: caller contract.
    let path = unsafe { c_str(urlpath) }.ok_or(Error::InvalidParam)?;
    let offset = u64::try_from(offset).map_err(|_| Error::InvalidParam)?;
    // SAFETY: caller contract: `udio` NULL or valid.
    let io = unsafe { choose(udio)? };
    let mut sc = SuperChunk::open_with(path, offset, io.backend.clone(), true, io.locking)?;
    sc.set_durability(env_durability())?;
    let n = global_nthreads();
    sc.set_nthreads(n, n);
    let mut cparams = c_cparams(sc.cparams());
    cparams.nthreads = n;
    let dparams = blosc2_dparams { nthreads: n, typesize: sc.typesize(), ..default_dparams() };
    publish(sc, cparams, dparams, io.io, io.callbacks)
}

/// [`open_handle`], NULL on failure.
unsafe fn open_any(urlpath: *const c_char, offset: i64, udio: *const blosc2_io) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: caller contract: `urlpath` NULL or NUL-terminated, `udio` NULL or valid.
        unsafe { open_handle(urlpath, offset, udio) }.unwrap_or(std::ptr::null_mut())
    })
}

/// Open the frame (file or sparse directory) at `urlpath`.
///
/// # Safety
/// `urlpath` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open(urlpath: *const c_char) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    unsafe { open_any(urlpath, 0, std::ptr::null()) }
}

/// Open the frame that starts `offset` bytes into the file at `urlpath`.
///
/// # Safety
/// `urlpath` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset(
    urlpath: *const c_char,
    offset: i64,
) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    unsafe { open_any(urlpath, offset, std::ptr::null()) }
}

/// Open the frame at `urlpath` through the I/O backend `udio`.
///
/// # Safety
/// `urlpath` a NUL-terminated string or NULL; `udio` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_udio(
    urlpath: *const c_char,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    unsafe { open_any(urlpath, 0, udio) }
}

/// Open the frame at `offset` in `urlpath` through the I/O backend `udio`.
///
/// # Safety
/// `urlpath` a NUL-terminated string or NULL; `udio` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset_udio(
    urlpath: *const c_char,
    offset: i64,
    udio: *const blosc2_io,
) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    unsafe { open_any(urlpath, offset, udio) }
}

/// A super-chunk over the contiguous frame in `cframe` (`len` bytes, exactly
/// the frame). With `copy` the chunks are copied into an in-memory
/// super-chunk (not a frame), as c-blosc2 does; without, the super-chunk reads
/// the caller's buffer, which stays the caller's (c-blosc2 3.3 sets
/// `avoid_cframe_free` there, whatever its documentation says; python-blosc2
/// relies on it) unless `blosc2_schunk_avoid_cframe_free(schunk, false)` hands it over.
///
/// # Safety
/// `cframe` must be NULL or point to `len` readable bytes, valid while the
/// super-chunk lives when `copy` is false.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_from_buffer(
    cframe: *mut u8,
    len: i64,
    copy: bool,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        // SAFETY: caller contract: `cframe` NULL or `len` readable bytes (kept
        // valid while the super-chunk lives when `copy` is false).
        unsafe { from_buffer_handle(cframe, len, copy) }.unwrap_or(std::ptr::null_mut())
    })
}

/// A handle over the contiguous frame in `cframe` (see [`blosc2_schunk_from_buffer`]).
///
/// # Safety
/// As for [`blosc2_schunk_from_buffer`].
pub(crate) unsafe fn from_buffer_handle(cframe: *mut u8, len: i64, copy: bool) -> Result<*mut blosc2_schunk> {
    // SAFETY: caller contract.
    let bytes = unsafe { slice(cframe, len)? };
    let mut owned = None;
    let mut sc = if copy {
        let framed = SuperChunk::from_cframe(bytes.to_vec())?;
        framed.copy_to_memory()?
    } else {
        let flag = Arc::new(AtomicBool::new(false));
        let f = ForeignFrame { ptr: cframe as usize, len: bytes.len(), owned: flag.clone() };
        owned = Some(flag);
        SuperChunk::from_shared_cframe(Arc::new(f))?
    };
    let n = global_nthreads();
    sc.set_nthreads(n, n);
    let mut cparams = c_cparams(sc.cparams());
    cparams.nthreads = n;
    let dparams = blosc2_dparams { nthreads: n, typesize: sc.typesize(), ..default_dparams() };
    let io = blosc2_io {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: c"filesystem".as_ptr(),
        params: std::ptr::null_mut(),
    };
    let p = publish(sc, cparams, dparams, io, None)?;
    // SAFETY: `p` was just published.
    unsafe { (*p.cast::<SchunkHandle>()).cframe_owned = owned };
    Ok(p)
}

/// Whether the super-chunk frees the buffer it was made from (`from_buffer` without copy).
///
/// # Safety
/// `schunk` NULL or a live super-chunk.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_avoid_cframe_free(
    schunk: *mut blosc2_schunk,
    avoid_cframe_free: bool,
) {
    guard((), || {
        // SAFETY: caller contract.
        if let Ok(h) = unsafe { handle(schunk) } {
            if let Some(f) = &h.cframe_owned {
                f.store(!avoid_cframe_free, Ordering::Relaxed);
            }
        }
    })
}

/// A copy of a super-chunk in another storage.
///
/// # Safety
/// `schunk` NULL or live; `storage` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_copy(
    schunk: *mut blosc2_schunk,
    storage: *mut blosc2_storage,
) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        let r = (|| {
            // SAFETY: caller contract.
            let (_, src) = unsafe { reader(schunk)? };
            // SAFETY: caller contract: `storage` NULL or valid.
            let st = unsafe { storage.as_ref() };
            // SAFETY: caller contract: `storage->io` NULL or a valid `blosc2_io`.
            let io = unsafe { choose(st.map_or(std::ptr::null(), |s| s.io.cast_const()))? };
            let urlpath = match st.map(|s| s.urlpath) {
                // SAFETY: caller contract: `storage->urlpath`, non-NULL here, is NUL-terminated.
                Some(u) if !u.is_null() => Some(unsafe { c_str(u) }.ok_or(Error::InvalidParam)?.to_string()),
                _ => None,
            };
            let core = Storage {
                contiguous: st.is_some_and(|s| s.contiguous),
                urlpath,
                backend: io.backend.clone(),
                locking: io.locking,
                durability: env_durability(),
            };
            let given = match st.map(|s| s.cparams) {
                Some(c) if !c.is_null() => {
                    // SAFETY: caller contract: `storage->cparams`, non-NULL here, is valid.
                    let c = unsafe { *c };
                    let mut cp = core_cparams(&c)?;
                    cp.nthreads = c.nthreads.max(0);
                    Some(cp)
                }
                _ => None,
            };
            // SAFETY: caller contract: `storage->dparams` NULL or valid.
            let dparams_given = st.and_then(|s| unsafe { s.dparams.as_ref() }).map(|d| DParams {
                nthreads: d.nthreads.max(1),
                typesize: src.typesize(),
                owner: 0,
                schunk: None,
            });
            let sc = src.copy_with_params(core, given, dparams_given)?;
            let cparams = c_cparams(sc.cparams());
            let dparams = blosc2_dparams {
                nthreads: sc.dparams().nthreads,
                typesize: sc.typesize(),
                ..default_dparams()
            };
            drop(src);
            publish(sc, cparams, dparams, io.io, io.callbacks)
        })();
        r.unwrap_or(std::ptr::null_mut())
    })
}

/// Free a super-chunk (and its contexts; on-disk data stays).
///
/// # Safety
/// `schunk` NULL or a live super-chunk, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_free(schunk: *mut blosc2_schunk) -> c_int {
    guard(Error::Failure.code(), || {
        // SAFETY: caller contract.
        unsafe { free_handle(schunk) };
        0
    })
}

/// Free a handle (NULL is ignored).
///
/// # Safety
/// `schunk` NULL or a live handle, not used afterwards.
pub(crate) unsafe fn free_handle(schunk: *mut blosc2_schunk) {
    {
        if schunk.is_null() {
            return;
        }
        // SAFETY: caller contract: the pointer came from Box::into_raw in `publish`.
        let h = unsafe { Box::from_raw(schunk.cast::<SchunkHandle>()) };
        // SAFETY: the contexts were made by blosc2_create_*ctx and are freed once.
        unsafe {
            blosc2_free_ctx(h.public.cctx);
            blosc2_free_ctx(h.public.dctx);
        }
        let callbacks = h.callbacks.clone();
        drop(h);
        if let Some(cb) = callbacks {
            cb.destroy();
        }
    }
}

// ------------------------------------------------------------------- locking

/// Take the frame lock across several operations (no-op without locking).
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_lock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { change(schunk, |sc| sc.lock()) }.map(|_| 0))
}

/// Release the lock taken by `blosc2_schunk_lock`.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_unlock(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { change(schunk, |sc| sc.unlock()) }.map(|_| 0))
}

/// Re-read an on-disk frame changed by another handle: 1 if it changed, 0 if not.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_refresh(schunk: *mut blosc2_schunk) -> c_int {
    // SAFETY: caller contract.
    guard_code(|| unsafe { change(schunk, |sc| sc.refresh()) }.map(i32::from))
}

// -------------------------------------------------------------------- frames

/// The super-chunk as a contiguous frame. In-memory frames give their own
/// buffer (`*needs_free` false); otherwise a malloc'd copy.
///
/// # Safety
/// `schunk` NULL or live; `cframe` and `needs_free` valid for writes.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_buffer(
    schunk: *mut blosc2_schunk,
    cframe: *mut *mut u8,
    needs_free: *mut bool,
) -> i64 {
    guard_code64(|| {
        if cframe.is_null() || needs_free.is_null() {
            return Err(Error::NullPointer);
        }
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        let bytes = sc.to_cframe()?;
        let len = bytes.len();
        let (p, free) = match bytes {
            Cow::Borrowed(b) => (b.as_ptr().cast_mut(), false),
            Cow::Owned(v) => (malloc_copy(&v)?, true),
        };
        // SAFETY: checked non-NULL above.
        unsafe {
            *cframe = p;
            *needs_free = free;
        }
        Ok(len as i64)
    })
}

/// Write the super-chunk as a contiguous frame file; returns its size.
///
/// # Safety
/// `schunk` NULL or live; `urlpath` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_to_file(schunk: *mut blosc2_schunk, urlpath: *const c_char) -> i64 {
    guard_code64(|| {
        // SAFETY: caller contract.
        let path = unsafe { c_str(urlpath) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let (_, sc) = unsafe { reader(schunk)? };
        if sc.storage().urlpath.as_deref() == Some(path) {
            return Err(Error::InvalidParam);
        }
        Ok(sc.to_file(path)? as i64)
    })
}

/// Append the super-chunk as a contiguous frame to the end of a file; returns
/// the offset where the frame starts.
///
/// # Safety
/// `schunk` NULL or live; `urlpath` NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_append_file(
    schunk: *mut blosc2_schunk,
    urlpath: *const c_char,
) -> i64 {
    guard_code64(|| {
        // SAFETY: caller contract.
        let path = unsafe { c_str(urlpath) }.ok_or(Error::InvalidParam)?;
        // SAFETY: caller contract: `schunk` NULL or live.
        let (_, sc) = unsafe { reader(schunk)? };
        Ok(sc.append_to_file(path)? as i64)
    })
}

/// The length of the super-chunk's frame.
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_frame_len(schunk: *mut blosc2_schunk) -> i64 {
    guard_code64(|| {
        // SAFETY: caller contract.
        let (_, sc) = unsafe { reader(schunk)? };
        match sc.frame_len() {
            Ok(n) => Ok(n as i64),
            Err(_) => Ok(sc.to_cframe()?.len() as i64),
        }
    })
}

/// The chunk offsets of a frame-backed super-chunk (malloc'd; `free` it).
///
/// # Safety
/// `schunk` NULL or live.
#[no_mangle]
pub unsafe extern "C" fn blosc2_frame_get_offsets(schunk: *mut blosc2_schunk) -> *mut i64 {
    guard(std::ptr::null_mut(), || {
        let r = (|| {
            // SAFETY: caller contract.
            let (_, sc) = unsafe { reader(schunk)? };
            let f = sc.frame().ok_or(Error::FrameType)?;
            let bytes: Vec<u8> = f.offsets().iter().flat_map(|o| o.to_ne_bytes()).collect();
            Ok::<_, Error>(malloc_copy(&bytes)?.cast::<i64>())
        })();
        r.unwrap_or(std::ptr::null_mut())
    })
}
