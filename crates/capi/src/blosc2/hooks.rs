//! C prefilters and postfilters (`cparams.prefilter`/`preparams`,
//! `dparams.postfilter`/`postparams`) as the core's [`Prefilter`] and
//! [`Postfilter`]: each block's call gets its own copy of the user's
//! parameters, filled in as c-blosc2 fills them.

use super::types::*;
use b2nd::chunk::{Postfilter, PostfilterBlock, Prefilter, PrefilterBlock};
use b2nd::error::{Error, Result};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

/// The chunk number c-blosc2 reports when the caller did not say: the
/// super-chunk's `current_nchunk`, or -1 without a super-chunk.
fn current_nchunk(schunk: usize) -> i64 {
    let p = schunk as *const blosc2_schunk;
    if p.is_null() {
        return -1;
    }
    // SAFETY: c-blosc2's contract: cparams.schunk / dparams.schunk is NULL or a
    // live super-chunk; the field is read atomically (other threads may write it).
    unsafe {
        let field = (&raw const (*p).current_nchunk).cast::<std::sync::atomic::AtomicI64>();
        (*field).load(Ordering::Relaxed)
    }
}

pub(crate) struct CPrefilter {
    f: unsafe extern "C" fn(*mut blosc2_prefilter_params) -> crate::os::c_int,
    params: blosc2_prefilter_params,
    schunk: usize,
    ctx: AtomicUsize,
}

// SAFETY: the parameters hold the caller's pointers (user_data), handed back
// to the caller's function; the caller vouches for their use from worker threads,
// as with c-blosc2.
unsafe impl Send for CPrefilter {}
// SAFETY: `&CPrefilter` only copies `params` (never writes them) and touches
// `ctx` atomically; it calls the caller's function from several threads at once,
// as c-blosc2's worker threads do.
unsafe impl Sync for CPrefilter {}

impl CPrefilter {
    /// The prefilter of `cparams`, if any.
    pub(crate) fn from_cparams(c: &blosc2_cparams) -> Option<Arc<CPrefilter>> {
        let f = c.prefilter?;
        // SAFETY: c-blosc2's contract: preparams is NULL or valid.
        let params = unsafe { c.preparams.as_ref() }.copied().unwrap_or_else(|| {
            // SAFETY: a plain-data struct of integers and pointers; zero is valid.
            unsafe { std::mem::zeroed() }
        });
        Some(Arc::new(CPrefilter { f, params, schunk: c.schunk as usize, ctx: AtomicUsize::new(0) }))
    }

    /// The context the calls report (`preparams.ctx`).
    pub(crate) fn set_context(&self, ctx: *mut blosc2_context) {
        self.ctx.store(ctx as usize, Ordering::Relaxed);
    }
}

impl Prefilter for CPrefilter {
    fn apply(&self, b: &mut PrefilterBlock) -> Result<()> {
        let mut p = self.params;
        let ots = if p.output_typesize > 0 { p.output_typesize } else { b.typesize };
        if ots != b.typesize {
            // Blocks that change size (another output typesize) are not supported.
            return Err(Error::FilterPipeline);
        }
        p.input = b.input.as_ptr();
        p.output = b.output.as_mut_ptr();
        p.output_size = b.output.len() as i32;
        p.output_typesize = ots;
        p.output_offset = b.offset as i32;
        p.nblock = b.nblock as i32;
        p.nchunk = b.nchunk.unwrap_or_else(|| current_nchunk(self.schunk));
        p.tid = b.tid as i32;
        p.ttmp = b.tmp.as_mut_ptr();
        p.ttmp_nbytes = b.tmp.len();
        p.ctx = self.ctx.load(Ordering::Relaxed) as *mut blosc2_context;
        // SAFETY: the user's function with parameters pointing at live buffers of the stated sizes.
        if unsafe { (self.f)(&mut p) } != 0 {
            return Err(Error::FilterPipeline);
        }
        Ok(())
    }

    fn output_is_disposable(&self) -> bool {
        self.params.output_is_disposable
    }
}

pub(crate) struct CPostfilter {
    f: unsafe extern "C" fn(*mut blosc2_postfilter_params) -> crate::os::c_int,
    params: blosc2_postfilter_params,
    schunk: usize,
    ctx: AtomicUsize,
}

// SAFETY: as for CPrefilter.
unsafe impl Send for CPostfilter {}
// SAFETY: as for CPrefilter: `params` is only copied, `ctx` is atomic.
unsafe impl Sync for CPostfilter {}

impl CPostfilter {
    /// The postfilter of `dparams`, if any.
    pub(crate) fn from_dparams(d: &blosc2_dparams) -> Option<Arc<CPostfilter>> {
        let f = d.postfilter?;
        // SAFETY: c-blosc2's contract: postparams is NULL or valid.
        let params = unsafe { d.postparams.as_ref() }.copied().unwrap_or_else(|| {
            // SAFETY: a plain-data struct of integers and pointers; zero is valid.
            unsafe { std::mem::zeroed() }
        });
        Some(Arc::new(CPostfilter { f, params, schunk: d.schunk as usize, ctx: AtomicUsize::new(0) }))
    }

    pub(crate) fn set_context(&self, ctx: *mut blosc2_context) {
        self.ctx.store(ctx as usize, Ordering::Relaxed);
    }
}

impl Postfilter for CPostfilter {
    fn apply(&self, b: &mut PostfilterBlock) -> Result<()> {
        let mut p = self.params;
        p.input = b.input.as_ptr();
        p.output = b.output.as_mut_ptr();
        p.size = b.output.len() as i32;
        p.typesize = b.typesize;
        p.offset = b.offset as i32;
        p.nchunk = b.nchunk.unwrap_or_else(|| current_nchunk(self.schunk));
        p.nblock = b.nblock as i32;
        p.tid = b.tid as i32;
        p.ttmp = b.tmp.as_mut_ptr();
        p.ttmp_nbytes = b.tmp.len();
        p.ctx = self.ctx.load(Ordering::Relaxed) as *mut blosc2_context;
        // SAFETY: the user's function with parameters pointing at live buffers of the stated sizes.
        if unsafe { (self.f)(&mut p) } != 0 {
            return Err(Error::Postfilter);
        }
        Ok(())
    }
}
