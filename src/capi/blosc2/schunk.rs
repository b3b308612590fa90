//! The super-chunk C API over [`crate::schunk::SuperChunk`]: the handle
//! behind `blosc2_schunk*`, creating, opening, copying and freeing
//! super-chunks, locking, and frames. The chunks of a super-chunk are in
//! `schunk_chunks.rs`, its metalayers in `schunk_meta.rs`.
//!
//! A `blosc2_schunk*` handed to C is the first field of a [`SchunkHandle`],
//! which also holds the safe super-chunk (behind a read-write lock, so that
//! reads from several threads run at once) and the memory the public fields
//! point to. The public fields are refreshed after every change.

use super::context::{blosc2_create_cctx, blosc2_create_dctx, blosc2_free_ctx};
use super::hooks::{CPostfilter, CPrefilter};
use super::io::{choose, CallbackBackend};
use super::params::{c_cparams, core_cparams, default_cparams, default_dparams};
use super::types::*;
use crate::capi::ffi::{c_str, guard, guard_code, guard_code64, slice};
use crate::chunk::DParams;
use crate::error::{Error, Result};
use crate::schunk::{Reading, SChunk, Storage, SuperChunk};
use libc::{c_char, c_int, c_void};
use std::borrow::Cow;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, RwLockReadGuard, RwLockWriteGuard};

/// The memory behind a `blosc2_schunk*`.
#[repr(C)]
pub struct SchunkHandle {
    pub(super) public: blosc2_schunk,
    pub(super) inner: SChunk,
    storage: Box<blosc2_storage>,
    pub(super) cparams: Box<blosc2_cparams>,
    pub(super) dparams: Box<blosc2_dparams>,
    io: Box<blosc2_io>,
    urlpath: Option<CString>,
    metas: Vec<MirrorMeta>,
    pub(super) vlmetas: Vec<MirrorMeta>,
    #[allow(clippy::vec_box)] // C holds pointers to the boxed records
    meta_ptrs: Vec<Box<blosc2_metalayer>>,
    #[allow(clippy::vec_box)]
    vlmeta_ptrs: Vec<Box<blosc2_metalayer>>,
    synced_tick: i64,
    /// `public.chunksize`, `cctx` and `dctx` as last published (or adopted),
    /// to see whether the caller wrote them.
    published_chunksize: AtomicI32,
    published_cctx: AtomicU64,
    published_dctx: AtomicU64,
    data_ptrs: Vec<*mut u8>,
    callbacks: Option<Arc<CallbackBackend>>,
    cframe_owned: Option<Arc<AtomicBool>>,
}

/// A (vl)metalayer as the public fields show it; `meta_ptrs` box the
/// `blosc2_metalayer`s so that the pointers handed to C stay put.
pub(super) struct MirrorMeta {
    pub(super) name: CString,
    content: Vec<u8>,
}

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
            unsafe { libc::free(self.ptr as *mut c_void) };
        }
    }
}

/// The handle behind a public pointer.
///
/// # Safety
/// `schunk` must be NULL or a pointer returned by this library's schunk constructors.
pub(super) unsafe fn handle<'a>(schunk: *mut blosc2_schunk) -> Result<&'a SchunkHandle> {
    // SAFETY: `public` is the first field of the repr(C) SchunkHandle.
    unsafe { schunk.cast::<SchunkHandle>().as_ref() }.ok_or(Error::NullPointer)
}

pub(super) fn read(h: &SchunkHandle) -> RwLockReadGuard<'_, SuperChunk> {
    h.inner.read_cached()
}

fn write(h: &SchunkHandle) -> RwLockWriteGuard<'_, SuperChunk> {
    h.inner.write()
}

/// The shared super-chunk behind a handle (what core arrays hold).
///
/// # Safety
/// `schunk` as for [`handle`].
pub(crate) unsafe fn shared(schunk: *mut blosc2_schunk) -> Result<SChunk> {
    // SAFETY: caller contract.
    unsafe { adopt_written(schunk)? };
    // SAFETY: caller contract.
    Ok(unsafe { handle(schunk)? }.inner.clone())
}

/// Bring the public fields in line after a change made through the shared super-chunk.
///
/// # Safety
/// `schunk` as for [`handle`]; no guard on it is held by the caller.
pub(crate) unsafe fn resync(schunk: *mut blosc2_schunk) -> Result<()> {
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk)? };
    let mut w = write(h);
    // SAFETY: the write lock is held.
    unsafe {
        adopt_public(schunk, &mut w);
        sync(schunk, &w);
    }
    Ok(())
}

/// Read access after picking up changes another handle made to the frame on disk.
///
/// # Safety
/// `schunk` as for [`handle`].
pub(crate) unsafe fn reader<'a>(schunk: *mut blosc2_schunk) -> Result<(&'a SchunkHandle, Reading<'a>)> {
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk)? };
    // SAFETY: caller contract.
    unsafe { adopt_written(schunk)? };
    if h.inner.refresh_if_stale()? {
        let w = write(h);
        // SAFETY: the write lock is held; no reader is using the mirror fields' targets.
        unsafe { sync(schunk, &w) };
    }
    let r = h.inner.read()?;
    if r.reloaded() {
        // SAFETY: `r` holds the write lock; no reader is using the mirror fields' targets.
        unsafe { sync(schunk, &r) };
    }
    Ok((h, r))
}



/// What a super-chunk shows the plugins that depend on it (NULL: nothing).
/// Nothing either while the super-chunk is being changed (a plugin called
/// from that change compresses with the view the change started with).
///
/// # Safety
/// `schunk` is NULL or as for [`handle`].
pub(crate) unsafe fn plugin_view(schunk: *mut blosc2_schunk) -> Option<crate::chunk::SchunkView> {
    if schunk.is_null() {
        return None;
    }
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk) }.ok()?;
    let view = h.inner.try_read_cached()?.plugin_view();
    Some(view)
}

/// Run a change with the write lock held, then refresh the public fields.
///
/// # Safety
/// `schunk` as for [`handle`].
pub(crate) unsafe fn change<T>(schunk: *mut blosc2_schunk, f: impl FnOnce(&mut SuperChunk) -> Result<T>) -> Result<T> {
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk)? };
    let mut w = write(h);
    // SAFETY: the write lock is held.
    unsafe { adopt_public(schunk, &mut w) };
    let r = f(&mut w);
    // SAFETY: the write lock is held.
    unsafe { sync(schunk, &w) };
    r
}

/// A public field read or written atomically: threads reading through one
/// handle check the fields the caller may have written while a change updates them.
///
/// # Safety
/// `field` points into a live handle's public struct, aligned for `A`, which
/// has the size of the field.
unsafe fn public_field<'a, A>(field: *mut impl Sized) -> &'a A {
    // SAFETY: caller contract.
    unsafe { &*field.cast::<A>() }
}

/// The serial of the context at address `p` (0 for NULL): a context freed and
/// another made at the same address still count as a change.
///
/// # Safety
/// `p` is NULL or the address of a live context (c-blosc2's contract for the
/// `cctx`/`dctx` fields of a super-chunk).
unsafe fn ctx_serial(p: usize) -> u64 {
    // SAFETY: caller contract.
    unsafe { super::context::serial(p as *const blosc2_context) }
}

/// Whether the caller wrote `chunksize`, `cctx` or `dctx` since they were published.
///
/// # Safety
/// `schunk` is a live handle.
unsafe fn written(schunk: *mut blosc2_schunk) -> bool {
    let h = schunk.cast::<SchunkHandle>();
    // SAFETY: caller contract; the fields are aligned i32 and pointers.
    unsafe {
        let p = &raw mut (*h).public;
        public_field::<AtomicI32>(&raw mut (*p).chunksize).load(Ordering::Relaxed) != (*h).published_chunksize.load(Ordering::Relaxed)
            || ctx_serial(public_field::<AtomicUsize>(&raw mut (*p).cctx).load(Ordering::Relaxed)) != (*h).published_cctx.load(Ordering::Relaxed)
            || ctx_serial(public_field::<AtomicUsize>(&raw mut (*p).dctx).load(Ordering::Relaxed)) != (*h).published_dctx.load(Ordering::Relaxed)
    }
}

/// Hand the core what the caller wrote into the public fields since they were
/// last published, as c-blosc2 works from them: `chunksize` (python-blosc2 sets
/// it on a new super-chunk), and the contexts `cctx` and `dctx` (a caller that
/// replaces them changes the parameters, prefilter and postfilter the
/// super-chunk compresses and decompresses with).
///
/// # Safety
/// `schunk` is a live handle and its write lock is held.
pub(super) unsafe fn adopt_public(schunk: *mut blosc2_schunk, sc: &mut SuperChunk) {
    let h = schunk.cast::<SchunkHandle>();
    // SAFETY: caller contract; the contexts are NULL or live ones of this library.
    unsafe {
        let written = (*schunk).chunksize;
        if written != (*h).published_chunksize.load(Ordering::Relaxed) {
            // A refusal (chunks exist already) is traced; the field is set back at the next sync.
            let _ = sc.set_chunksize(written);
            (*h).published_chunksize.store(sc.chunksize(), Ordering::Relaxed);
        }
        let cctx = (*schunk).cctx;
        if ctx_serial(cctx as usize) != (*h).published_cctx.load(Ordering::Relaxed) {
            if let Some(Kind::Compress { c, .. }) = cctx.as_ref().map(|x| &x.kind) {
                match core_cparams(c) {
                    Ok(mut cp) => {
                        cp.nthreads = c.nthreads.max(1);
                        let pre = CPrefilter::from_cparams(c);
                        if let Some(p) = &pre {
                            p.set_context(cctx);
                        }
                        sc.set_prefilter(pre.map(|p| p as Arc<dyn crate::chunk::Prefilter>));
                        if let Err(e) = sc.set_cparams(cp) {
                            crate::trace!("the compression context set in the super-chunk is not usable: {e}");
                        }
                    }
                    Err(e) => crate::trace!("the compression context set in the super-chunk is not usable: {e}"),
                }
            }
            (*h).published_cctx.store(ctx_serial(cctx as usize), Ordering::Relaxed);
        }
        let dctx = (*schunk).dctx;
        if ctx_serial(dctx as usize) != (*h).published_dctx.load(Ordering::Relaxed) {
            if let Some(Kind::Decompress { d, .. }) = dctx.as_ref().map(|x| &x.kind) {
                let post = CPostfilter::from_dparams(d);
                if let Some(p) = &post {
                    p.set_context(dctx);
                }
                sc.set_postfilter(post.map(|p| p as Arc<dyn crate::chunk::Postfilter>));
                let owner = sc.dparams().owner;
                sc.set_dparams(DParams { nthreads: d.nthreads.max(1), typesize: sc.typesize(), owner, schunk: None });
            }
            (*h).published_dctx.store(ctx_serial(dctx as usize), Ordering::Relaxed);
        }
    }
}

/// Pick up what the caller wrote into the public fields (see [`adopt_public`]).
///
/// # Safety
/// `schunk` as for [`handle`]; no guard on it is held by the caller.
pub(crate) unsafe fn adopt_written(schunk: *mut blosc2_schunk) -> Result<()> {
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk)? };
    // SAFETY: a live handle.
    if unsafe { written(schunk) } {
        let mut w = write(h);
        // SAFETY: the write lock is held.
        unsafe {
            adopt_public(schunk, &mut w);
            sync(schunk, &w);
        }
    }
    Ok(())
}

/// Record the chunk an operation works on in the public `current_nchunk` (as
/// c-blosc2 does; prefilters and postfilters read it). Written atomically:
/// readers on other threads may do the same.
pub(super) unsafe fn set_current(schunk: *mut blosc2_schunk, n: i64) {
    if !schunk.is_null() {
        // SAFETY: a live handle; the field is an aligned i64.
        unsafe { (*(&raw mut (*schunk).current_nchunk).cast::<std::sync::atomic::AtomicI64>()).store(n, std::sync::atomic::Ordering::Relaxed) };
    }
}

pub(super) fn index(n: i64) -> Result<usize> {
    usize::try_from(n).map_err(|_| Error::InvalidParam)
}

/// Copy `bytes` into a new malloc'd buffer (which C frees with `free`).
pub(crate) fn malloc_copy(bytes: &[u8]) -> Result<*mut u8> {
    // SAFETY: plain allocation, at least one byte.
    let p = unsafe { libc::malloc(bytes.len().max(1)) }.cast::<u8>();
    if p.is_null() {
        return Err(Error::MemoryAlloc);
    }
    // SAFETY: `p` has room for `bytes.len()` bytes.
    unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), p, bytes.len()) };
    Ok(p)
}

fn meta_mirror(list: &[crate::frame::Metalayer]) -> Vec<MirrorMeta> {
    list.iter()
        .map(|m| MirrorMeta { name: CString::new(m.name.replace('\0', "")).unwrap_or_default(), content: m.content.clone() })
        .collect()
}

#[allow(clippy::vec_box)] // C holds pointers to the boxed records
fn meta_ptrs(list: &mut [MirrorMeta]) -> Vec<Box<blosc2_metalayer>> {
    list.iter_mut()
        .map(|m| {
            Box::new(blosc2_metalayer {
                name: m.name.as_ptr().cast_mut(),
                content: m.content.as_mut_ptr(),
                content_len: m.content.len() as i32,
            })
        })
        .collect()
}

/// Bring the public fields in line with the super-chunk.
///
/// # Safety
/// `schunk` is a live handle, and nobody else accesses its mirror fields now.
unsafe fn sync(schunk: *mut blosc2_schunk, sc: &SuperChunk) {
    let h = schunk.cast::<SchunkHandle>();
    // SAFETY: caller contract; only fields other than `inner` are written.
    unsafe {
        let cp = sc.cparams();
        let p = &raw mut (*h).public;
        (*p).compcode = cp.compcode;
        (*p).compcode_meta = cp.compcode_meta;
        (*p).clevel = cp.clevel;
        (*p).splitmode = cp.splitmode as u8;
        (*p).typesize = cp.typesize;
        (*p).blocksize = cp.blocksize;
        public_field::<AtomicI32>(&raw mut (*p).chunksize).store(sc.chunksize(), Ordering::Relaxed);
        (*h).published_chunksize.store(sc.chunksize(), Ordering::Relaxed);
        (*p).flags2 = if sc.vl_blocks() { crate::chunk::header::VL_BLOCKS } else { 0 };
        (*p).use_dict = u8::from(cp.use_dict);
        (*p).filters = cp.filters;
        (*p).filters_meta = cp.filters_meta;
        (*p).nchunks = sc.nchunks() as i64;
        (*p).nbytes = sc.nbytes();
        (*p).cbytes = sc.cbytes();
        (*p).change_tick = sc.change_tick();
        if let Some(chunks) = sc.memory_chunks() {
            let ptrs = &mut (*h).data_ptrs;
            ptrs.clear();
            ptrs.extend(chunks.iter().map(|c| c.as_ptr().cast_mut()));
            (*p).data = ptrs.as_mut_ptr();
            (*p).data_len = ptrs.len() * std::mem::size_of::<*mut u8>();
        }
        if (*h).synced_tick != sc.change_tick() || (*p).nmetalayers as usize != sc.metalayers().len() {
            let metas = &mut (*h).metas;
            *metas = meta_mirror(sc.metalayers());
            let vlmetas = &mut (*h).vlmetas;
            *vlmetas = meta_mirror(sc.vlmetalayers());
            let mp = &mut (*h).meta_ptrs;
            *mp = meta_ptrs(metas);
            let vp = &mut (*h).vlmeta_ptrs;
            *vp = meta_ptrs(vlmetas);
            (*p).metalayers = [std::ptr::null_mut(); BLOSC2_MAX_METALAYERS];
            for (slot, m) in (*p).metalayers.iter_mut().zip(mp.iter_mut()) {
                *slot = &mut **m;
            }
            (*p).nmetalayers = mp.len().min(BLOSC2_MAX_METALAYERS) as u16;
            (*p).vlmetalayers = [std::ptr::null_mut(); BLOSC2_MAX_VLMETALAYERS];
            for (slot, m) in (*p).vlmetalayers.iter_mut().zip(vp.iter_mut()) {
                *slot = &mut **m;
            }
            (*p).nvlmetalayers = vp.len().min(BLOSC2_MAX_VLMETALAYERS) as i16;
            (*h).synced_tick = sc.change_tick();
        }
        let c = &mut (*h).cparams;
        let keep = (c.schunk, c.prefilter, c.preparams, c.tuner_params, c.tuner_id, c.codec_params, c.filter_params);
        **c = c_cparams(&sc.context_cparams());
        (c.schunk, c.prefilter, c.preparams, c.tuner_params, c.tuner_id, c.codec_params, c.filter_params) = keep;
        c.nthreads = cp.nthreads;
    }
}

/// Build the handle for a super-chunk and return its public pointer.
fn publish(sc: SuperChunk, cparams: blosc2_cparams, dparams: blosc2_dparams, io: blosc2_io, callbacks: Option<Arc<CallbackBackend>>) -> Result<*mut blosc2_schunk> {
    publish_shared(SChunk::new(sc), cparams, dparams, io, callbacks)
}

/// Build the handle for a shared super-chunk and return its public pointer.
pub(crate) fn publish_shared(sc: SChunk, cparams: blosc2_cparams, dparams: blosc2_dparams, io: blosc2_io, callbacks: Option<Arc<CallbackBackend>>) -> Result<*mut blosc2_schunk> {
    let (urlpath, contiguous, is_frame) = {
        let r = sc.read_cached();
        let u = r.storage().urlpath.as_deref().map(|u| CString::new(u).map_err(|_| Error::InvalidParam)).transpose()?;
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
    h.public.cctx = blosc2_create_cctx(*h.cparams);
    h.public.dctx = blosc2_create_dctx(*h.dparams);
    // SAFETY: just made (or NULL).
    unsafe {
        h.published_cctx = AtomicU64::new(ctx_serial(h.public.cctx as usize));
        h.published_dctx = AtomicU64::new(ctx_serial(h.public.dctx as usize));
    }
    // User codecs and filters get this handle as `cparams->schunk` / `dparams->schunk`.
    h.inner.write().set_owner(hp as usize);
    let p = Box::into_raw(h);
    // SAFETY: `p` is the live handle just made; nobody else has it yet.
    unsafe {
        let sc = (*p).inner.read_cached();
        sync(p.cast(), &sc);
    }
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
    pub cparams: crate::chunk::CParams,
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
        let c_cparams = st.and_then(|s| unsafe { s.cparams.as_ref() }).copied().unwrap_or_else(default_cparams);
        let c_dparams = st.and_then(|s| unsafe { s.dparams.as_ref() }).copied().unwrap_or_else(default_dparams);
        super::context::registered_tuner(c_cparams.tuner_id)?;
        let io = unsafe { choose(st.map_or(std::ptr::null(), |s| s.io.cast_const()))? };
        let urlpath = match st.map(|s| s.urlpath) {
            Some(u) if !u.is_null() => Some(unsafe { c_str(u) }.ok_or(Error::InvalidParam)?.to_string()),
            _ => None,
        };
        let storage = Storage { contiguous: st.is_some_and(|s| s.contiguous), urlpath, backend: io.backend.clone(), locking: io.locking };
        let mut cparams = core_cparams(&c_cparams)?;
        cparams.nthreads = c_cparams.nthreads.max(1);
        let dparams = DParams { nthreads: c_dparams.nthreads.max(1), typesize: cparams.typesize, owner: 0, schunk: None };
        Ok(CoreStorage { storage, cparams, dparams, c_cparams, c_dparams, io })
    }
}

/// The handle for a super-chunk made in the core as `core` says, with the
/// C prefilter and postfilter of its parameters attached.
pub(crate) fn adopt(sc: SChunk, core: &CoreStorage) -> Result<*mut blosc2_schunk> {
    let (pre, post) = (CPrefilter::from_cparams(&core.c_cparams), CPostfilter::from_dparams(&core.c_dparams));
    {
        let mut w = sc.write();
        w.set_prefilter(pre.clone().map(|p| p as Arc<dyn crate::chunk::Prefilter>));
        w.set_postfilter(post.clone().map(|p| p as Arc<dyn crate::chunk::Postfilter>));
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

/// Open a super-chunk stored at `urlpath` through backend `udio`, starting at `offset`.
///
/// # Safety
/// `urlpath` NULL or NUL-terminated; `udio` NULL or valid.
pub(crate) unsafe fn open_handle(urlpath: *const c_char, offset: i64, udio: *const blosc2_io) -> Result<*mut blosc2_schunk> {
    // SAFETY: caller contract.
    let path = unsafe { c_str(urlpath) }.ok_or(Error::InvalidParam)?;
    let offset = u64::try_from(offset).map_err(|_| Error::InvalidParam)?;
    let io = unsafe { choose(udio)? };
    let mut sc = SuperChunk::open_with(path, offset, io.backend.clone(), true, io.locking)?;
    let n = global_nthreads();
    sc.set_nthreads(n, n);
    let mut cparams = c_cparams(sc.cparams());
    cparams.nthreads = n;
    let dparams = blosc2_dparams { nthreads: n, typesize: sc.typesize(), ..default_dparams() };
    publish(sc, cparams, dparams, io.io, io.callbacks)
}

/// [`open_handle`], NULL on failure.
unsafe fn open_any(urlpath: *const c_char, offset: i64, udio: *const blosc2_io) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    guard(std::ptr::null_mut(), || unsafe { open_handle(urlpath, offset, udio) }.unwrap_or(std::ptr::null_mut()))
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
pub unsafe extern "C" fn blosc2_schunk_open_offset(urlpath: *const c_char, offset: i64) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    unsafe { open_any(urlpath, offset, std::ptr::null()) }
}

/// Open the frame at `urlpath` through the I/O backend `udio`.
///
/// # Safety
/// `urlpath` a NUL-terminated string or NULL; `udio` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_udio(urlpath: *const c_char, udio: *const blosc2_io) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    unsafe { open_any(urlpath, 0, udio) }
}

/// Open the frame at `offset` in `urlpath` through the I/O backend `udio`.
///
/// # Safety
/// `urlpath` a NUL-terminated string or NULL; `udio` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_schunk_open_offset_udio(urlpath: *const c_char, offset: i64, udio: *const blosc2_io) -> *mut blosc2_schunk {
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
pub unsafe extern "C" fn blosc2_schunk_from_buffer(cframe: *mut u8, len: i64, copy: bool) -> *mut blosc2_schunk {
    // SAFETY: caller contract.
    guard(std::ptr::null_mut(), || unsafe { from_buffer_handle(cframe, len, copy) }.unwrap_or(std::ptr::null_mut()))
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
    let io = blosc2_io { id: BLOSC2_IO_FILESYSTEM as u8, name: c"filesystem".as_ptr(), params: std::ptr::null_mut() };
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
pub unsafe extern "C" fn blosc2_schunk_avoid_cframe_free(schunk: *mut blosc2_schunk, avoid_cframe_free: bool) {
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
pub unsafe extern "C" fn blosc2_schunk_copy(schunk: *mut blosc2_schunk, storage: *mut blosc2_storage) -> *mut blosc2_schunk {
    guard(std::ptr::null_mut(), || {
        let r = (|| {
            // SAFETY: caller contract.
            let (_, src) = unsafe { reader(schunk)? };
            let st = unsafe { storage.as_ref() };
            let io = unsafe { choose(st.map_or(std::ptr::null(), |s| s.io.cast_const()))? };
            let urlpath = match st.map(|s| s.urlpath) {
                Some(u) if !u.is_null() => Some(unsafe { c_str(u) }.ok_or(Error::InvalidParam)?.to_string()),
                _ => None,
            };
            let core = Storage { contiguous: st.is_some_and(|s| s.contiguous), urlpath, backend: io.backend.clone(), locking: io.locking };
            let given = match st.map(|s| s.cparams) {
                Some(c) if !c.is_null() => {
                    let c = unsafe { *c };
                    let mut cp = core_cparams(&c)?;
                    cp.nthreads = c.nthreads.max(0);
                    Some(cp)
                }
                _ => None,
            };
            let dparams_given = st.and_then(|s| unsafe { s.dparams.as_ref() }).map(|d| DParams { nthreads: d.nthreads.max(1), typesize: src.typesize(), owner: 0, schunk: None });
            let sc = src.copy_with_params(core, given, dparams_given)?;
            let cparams = c_cparams(sc.cparams());
            let dparams = blosc2_dparams { nthreads: sc.dparams().nthreads, typesize: sc.typesize(), ..default_dparams() };
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
pub unsafe extern "C" fn blosc2_schunk_to_buffer(schunk: *mut blosc2_schunk, cframe: *mut *mut u8, needs_free: *mut bool) -> i64 {
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
pub unsafe extern "C" fn blosc2_schunk_append_file(schunk: *mut blosc2_schunk, urlpath: *const c_char) -> i64 {
    guard_code64(|| {
        // SAFETY: caller contract.
        let path = unsafe { c_str(urlpath) }.ok_or(Error::InvalidParam)?;
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

/// Run `f` with the lazy-chunk source of super-chunk `sp` (NULL: none), for
/// decompressing lazy chunks through a context.
///
/// # Safety
/// c-blosc2's contract: `sp` is NULL or a live super-chunk.
pub(crate) unsafe fn with_lazy_source<T>(sp: *mut c_void, f: impl FnOnce(Option<&dyn crate::chunk::LazySource>) -> T) -> T {
    // SAFETY: caller contract.
    match unsafe { handle(sp.cast()) } {
        Ok(h) => {
            let sc = read(h);
            f(sc.lazy_source())
        }
        Err(_) => f(None),
    }
}
