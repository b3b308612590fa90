//! The public fields of a super-chunk handle, kept in line with the core:
//! what the caller may write between calls (`chunksize`, `cctx`, `dctx`,
//! which python-blosc2 writes) is adopted before a call, and what the core
//! changed is published after it. Each export goes through one entry:
//! [`reader`] for reads, [`change`] for changes, [`adopt_written`] or
//! [`shared`] before a core call on the shared super-chunk, [`resync`] after one.

use super::context::serial;
use super::handle::{handle, write, MirrorMeta, SchunkHandle};
use super::hooks::{CPostfilter, CPrefilter};
use super::params::{c_cparams, core_cparams};
use super::types::*;
use b2nd::chunk::DParams;
use b2nd::error::Result;
use b2nd::schunk::{Reading, SChunk, SuperChunk};
use std::ffi::CString;
use std::sync::atomic::{AtomicI32, AtomicUsize, Ordering};
use std::sync::Arc;

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

/// Run a change with the write lock held, then refresh the public fields.
///
/// # Safety
/// `schunk` as for [`handle`].
pub(crate) unsafe fn change<T>(
    schunk: *mut blosc2_schunk,
    f: impl FnOnce(&mut SuperChunk) -> Result<T>,
) -> Result<T> {
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
    unsafe { serial(p as *const blosc2_context) }
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
        public_field::<AtomicI32>(&raw mut (*p).chunksize).load(Ordering::Relaxed)
            != (*h).published_chunksize.load(Ordering::Relaxed)
            || ctx_serial(public_field::<AtomicUsize>(&raw mut (*p).cctx).load(Ordering::Relaxed))
                != (*h).published_cctx.load(Ordering::Relaxed)
            || ctx_serial(public_field::<AtomicUsize>(&raw mut (*p).dctx).load(Ordering::Relaxed))
                != (*h).published_dctx.load(Ordering::Relaxed)
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
unsafe fn adopt_public(schunk: *mut blosc2_schunk, sc: &mut SuperChunk) {
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
                        sc.set_prefilter(pre.map(|p| p as Arc<dyn b2nd::chunk::Prefilter>));
                        if let Err(e) = sc.set_cparams(cp) {
                            b2nd::trace!("the compression context set in the super-chunk is not usable: {e}");
                        }
                    }
                    Err(e) => {
                        b2nd::trace!("the compression context set in the super-chunk is not usable: {e}")
                    }
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
                sc.set_postfilter(post.map(|p| p as Arc<dyn b2nd::chunk::Postfilter>));
                let owner = sc.dparams().owner;
                sc.set_dparams(DParams {
                    nthreads: d.nthreads.max(1),
                    typesize: sc.typesize(),
                    owner,
                    schunk: None,
                });
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

/// Publish the fields of a handle just made, and remember the contexts it
/// was made with.
///
/// # Safety
/// `schunk` is a live handle that nobody else has yet.
pub(super) unsafe fn first_publish(schunk: *mut blosc2_schunk) {
    let h = schunk.cast::<SchunkHandle>();
    // SAFETY: caller contract; the contexts are NULL or just made.
    unsafe {
        (*h).published_cctx.store(ctx_serial((*schunk).cctx as usize), Ordering::Relaxed);
        (*h).published_dctx.store(ctx_serial((*schunk).dctx as usize), Ordering::Relaxed);
        let sc = (*h).inner.read_cached();
        sync(schunk, &sc);
    }
}

/// Before a change made without the handle's lock (an append whose user
/// codecs may call back into the library): adopt what the caller wrote, and
/// record the chunk the change makes in `current_nchunk`. [`resync`] after it.
///
/// # Safety
/// `schunk` as for [`handle`].
pub(crate) unsafe fn before_unlocked_append<'a>(schunk: *mut blosc2_schunk) -> Result<&'a SchunkHandle> {
    // SAFETY: caller contract.
    let h = unsafe { handle(schunk)? };
    let mut w = write(h);
    // SAFETY: the write lock is held.
    unsafe {
        adopt_public(schunk, &mut w);
        set_current(schunk, w.nchunks() as i64);
    }
    Ok(h)
}

/// Record the chunk an operation works on in the public `current_nchunk` (as
/// c-blosc2 does; prefilters and postfilters read it). Written atomically:
/// readers on other threads may do the same.
pub(super) unsafe fn set_current(schunk: *mut blosc2_schunk, n: i64) {
    if !schunk.is_null() {
        // SAFETY: a live handle; the field is an aligned i64.
        unsafe {
            (*(&raw mut (*schunk).current_nchunk).cast::<std::sync::atomic::AtomicI64>())
                .store(n, std::sync::atomic::Ordering::Relaxed)
        };
    }
}

fn meta_mirror(list: &[b2nd::frame::Metalayer]) -> Vec<MirrorMeta> {
    list.iter()
        .map(|m| MirrorMeta {
            name: CString::new(m.name.replace('\0', "")).unwrap_or_default(),
            content: m.content.clone(),
        })
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
pub(super) unsafe fn sync(schunk: *mut blosc2_schunk, sc: &SuperChunk) {
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
        (*p).flags2 = if sc.vl_blocks() { b2nd::chunk::header::VL_BLOCKS } else { 0 };
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
        let keep =
            (c.schunk, c.prefilter, c.preparams, c.tuner_params, c.tuner_id, c.codec_params, c.filter_params);
        **c = c_cparams(&sc.context_cparams());
        (c.schunk, c.prefilter, c.preparams, c.tuner_params, c.tuner_id, c.codec_params, c.filter_params) =
            keep;
        c.nthreads = cp.nthreads;
    }
}
