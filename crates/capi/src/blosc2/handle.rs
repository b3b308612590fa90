//! The memory behind a `blosc2_schunk*`: the public struct C reads and
//! writes, the shared super-chunk behind it, and what the public fields point
//! to. Below the contexts and parameter conversions (which ask it what a
//! super-chunk shows plugins); the fields are kept in line by `fields.rs`.

use super::io::CallbackBackend;
use super::types::*;
use crate::os::c_void;
use b2nd::error::{Error, Result};
use b2nd::schunk::SChunk;
use std::ffi::CString;
use std::sync::atomic::{AtomicBool, AtomicI32, AtomicU64};
use std::sync::Arc;

/// The memory behind a `blosc2_schunk*`.
#[repr(C)]
pub struct SchunkHandle {
    pub(super) public: blosc2_schunk,
    pub(super) inner: SChunk,
    pub(super) storage: Box<blosc2_storage>,
    pub(super) cparams: Box<blosc2_cparams>,
    pub(super) dparams: Box<blosc2_dparams>,
    pub(super) io: Box<blosc2_io>,
    pub(super) urlpath: Option<CString>,
    pub(super) metas: Vec<MirrorMeta>,
    pub(super) vlmetas: Vec<MirrorMeta>,
    #[allow(clippy::vec_box)] // C holds pointers to the boxed records
    pub(super) meta_ptrs: Vec<Box<blosc2_metalayer>>,
    #[allow(clippy::vec_box)] // as above: C holds pointers to the boxed records
    pub(super) vlmeta_ptrs: Vec<Box<blosc2_metalayer>>,
    pub(super) synced_tick: i64,
    /// `public.chunksize`, `cctx` and `dctx` as last published (or adopted),
    /// to see whether the caller wrote them.
    pub(super) published_chunksize: AtomicI32,
    pub(super) published_cctx: AtomicU64,
    pub(super) published_dctx: AtomicU64,
    pub(super) data_ptrs: Vec<*mut u8>,
    pub(super) callbacks: Option<Arc<CallbackBackend>>,
    pub(super) cframe_owned: Option<Arc<AtomicBool>>,
}

/// A (vl)metalayer as the public fields show it; `meta_ptrs` box the
/// `blosc2_metalayer`s so that the pointers handed to C stay put.
pub(super) struct MirrorMeta {
    pub(super) name: CString,
    pub(super) content: Vec<u8>,
}

/// The handle behind a public pointer.
///
/// # Safety
/// `schunk` must be NULL or a pointer returned by this library's schunk constructors.
pub(super) unsafe fn handle<'a>(schunk: *mut blosc2_schunk) -> Result<&'a SchunkHandle> {
    // SAFETY: `public` is the first field of the repr(C) SchunkHandle.
    unsafe { schunk.cast::<SchunkHandle>().as_ref() }.ok_or(Error::NullPointer)
}

pub(super) fn read(h: &SchunkHandle) -> b2nd::schunk::Cached<'_> {
    h.inner.read_cached()
}

pub(super) fn write(h: &SchunkHandle) -> b2nd::schunk::Writing<'_> {
    h.inner.write()
}

/// What a super-chunk shows the plugins that depend on it (NULL: nothing).
/// Nothing either while the super-chunk is being changed (a plugin called
/// from that change compresses with the view the change started with).
///
/// # Safety
/// `schunk` is NULL or as for [`handle`].
pub(crate) unsafe fn plugin_view(schunk: *mut blosc2_schunk) -> Option<b2nd::chunk::SchunkView> {
    if schunk.is_null() {
        return None;
    }
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk) }.ok()?;
    let view = h.inner.try_read_cached()?.plugin_view();
    Some(view)
}

/// Run `f` with the lazy-chunk source of super-chunk `sp` (NULL: none), for
/// decompressing lazy chunks through a context.
///
/// # Safety
/// c-blosc2's contract: `sp` is NULL or a live super-chunk.
pub(crate) unsafe fn with_lazy_source<T>(
    sp: *mut c_void,
    f: impl FnOnce(Option<&dyn b2nd::chunk::LazySource>) -> T,
) -> T {
    // SAFETY: caller contract.
    match unsafe { handle(sp.cast()) } {
        Ok(h) => {
            let sc = read(h);
            f(sc.lazy_source())
        }
        Err(_) => f(None),
    }
}
