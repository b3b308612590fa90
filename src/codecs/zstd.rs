//! Zstandard through `zstd-sys`, with trained dictionaries.

use std::ffi::{c_void, CStr};
use zstd_sys as z;

pub fn version() -> String {
    // SAFETY: ZSTD_versionString returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(z::ZSTD_versionString()) }.to_string_lossy().into_owned()
}

/// The Zstd level c-blosc2 uses for a Blosc clevel: odd levels up to 7 for
/// clevels 1..7, two below the maximum for 8, the maximum for 9.
pub fn level_for(clevel: u8) -> i32 {
    // SAFETY: pure query.
    let max = unsafe { z::ZSTD_maxCLevel() };
    match clevel {
        0..=7 => i32::from(clevel) * 2 - 1,
        8 => max - 2,
        _ => max,
    }
}

fn is_error(code: usize) -> bool {
    // SAFETY: pure function of its argument.
    unsafe { z::ZSTD_isError(code) != 0 }
}

/// Per-thread compression and decompression contexts, created on first use.
#[derive(Default)]
pub struct State {
    cctx: Option<Owned<z::ZSTD_CCtx>>,
    dctx: Option<Owned<z::ZSTD_DCtx>>,
}

/// An owned zstd object freed on drop.
pub struct Owned<T: Free>(*mut T);

pub trait Free {
    /// # Safety
    /// `p` must be a live object of this type, freed exactly once.
    unsafe fn free(p: *mut Self);
}
impl Free for z::ZSTD_CCtx {
    unsafe fn free(p: *mut Self) {
        // SAFETY: caller contract (`Free::free`): `p` is a live CCtx, freed once.
        unsafe { z::ZSTD_freeCCtx(p) };
    }
}
impl Free for z::ZSTD_DCtx {
    unsafe fn free(p: *mut Self) {
        // SAFETY: caller contract (`Free::free`): `p` is a live DCtx, freed once.
        unsafe { z::ZSTD_freeDCtx(p) };
    }
}
impl Free for z::ZSTD_CDict {
    unsafe fn free(p: *mut Self) {
        // SAFETY: caller contract (`Free::free`): `p` is a live CDict, freed once.
        unsafe { z::ZSTD_freeCDict(p) };
    }
}
impl Free for z::ZSTD_DDict {
    unsafe fn free(p: *mut Self) {
        // SAFETY: caller contract (`Free::free`): `p` is a live DDict, freed once.
        unsafe { z::ZSTD_freeDDict(p) };
    }
}
impl<T: Free> Drop for Owned<T> {
    fn drop(&mut self) {
        // SAFETY: the pointer is owned, non-null and freed only here.
        unsafe { T::free(self.0) }
    }
}
// SAFETY: zstd contexts and dictionaries hold no thread affinity; CDict and
// DDict are read-only after creation and documented as shareable between threads.
unsafe impl<T: Free> Send for Owned<T> {}
// SAFETY: a shared `&Owned` gives no access to the object outside this module;
// here contexts are used only through `&mut State`, and dictionaries, read-only
// after creation, are the objects zstd documents as shareable.
unsafe impl<T: Free> Sync for Owned<T> {}

fn owned<T: Free>(p: *mut T) -> Option<Owned<T>> {
    (!p.is_null()).then_some(Owned(p))
}

/// A compression dictionary digested for one level.
pub struct CDict(Owned<z::ZSTD_CDict>);
/// A decompression dictionary.
pub struct DDict(Owned<z::ZSTD_DDict>);

impl CDict {
    pub fn new(dict: &[u8], level: i32) -> Option<CDict> {
        // SAFETY: the dictionary bytes are copied by zstd.
        owned(unsafe { z::ZSTD_createCDict(dict.as_ptr().cast(), dict.len(), level) }).map(CDict)
    }
}

impl DDict {
    pub fn new(dict: &[u8]) -> Option<DDict> {
        // SAFETY: the dictionary bytes are copied by zstd.
        owned(unsafe { z::ZSTD_createDDict(dict.as_ptr().cast(), dict.len()) }).map(DDict)
    }
}

/// Train a dictionary of at most `dict.len()` bytes from `nsamples` equal
/// samples laid end to end in `samples`. Returns the dictionary size.
pub fn train_dict(dict: &mut [u8], samples: &[u8], sample_size: usize, nsamples: usize) -> Option<usize> {
    if sample_size.checked_mul(nsamples)? > samples.len() {
        return None;
    }
    let sizes = vec![sample_size; nsamples];
    // SAFETY: `samples` holds at least sum(sizes) bytes, `dict` is writable.
    let n = unsafe {
        z::ZDICT_trainFromBuffer(
            dict.as_mut_ptr().cast::<c_void>(),
            dict.len(),
            samples.as_ptr().cast::<c_void>(),
            sizes.as_ptr(),
            nsamples as u32,
        )
    };
    // SAFETY: pure function of its argument.
    let err = unsafe { z::ZDICT_isError(n) } != 0;
    (!err && n > 0).then_some(n)
}

impl State {
    /// Create the compression context ahead of use.
    pub fn prepare_compress(&mut self) {
        if self.cctx.is_none() {
            // SAFETY: allocation without preconditions.
            self.cctx = owned(unsafe { z::ZSTD_createCCtx() });
        }
    }

    /// Create the decompression context ahead of use.
    pub fn prepare_decompress(&mut self) {
        if self.dctx.is_none() {
            // SAFETY: allocation without preconditions.
            self.dctx = owned(unsafe { z::ZSTD_createDCtx() });
        }
    }

    /// Compress; 0 when zstd fails (e.g. the output does not fit).
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8], level: i32, dict: Option<&CDict>) -> usize {
        self.prepare_compress();
        let Some(cctx) = &self.cctx else { return 0 };
        let (dp, dl, sp, sl) = (dst.as_mut_ptr().cast(), dst.len(), src.as_ptr().cast(), src.len());
        // SAFETY: live context, live non-overlapping buffers, live dictionary.
        let n = unsafe {
            match dict {
                Some(d) => z::ZSTD_compress_usingCDict(cctx.0, dp, dl, sp, sl, d.0 .0),
                None => z::ZSTD_compressCCtx(cctx.0, dp, dl, sp, sl, level),
            }
        };
        if is_error(n) {
            0
        } else {
            n
        }
    }

    /// Decompress one frame; `None` on malformed input.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8], dict: Option<&DDict>) -> Option<usize> {
        self.prepare_decompress();
        let dctx = self.dctx.as_ref()?;
        let (dp, dl, sp, sl) = (dst.as_mut_ptr().cast(), dst.len(), src.as_ptr().cast(), src.len());
        // SAFETY: live context, live non-overlapping buffers, live dictionary.
        let n = unsafe {
            match dict {
                Some(d) => z::ZSTD_decompress_usingDDict(dctx.0, dp, dl, sp, sl, d.0 .0),
                None => z::ZSTD_decompressDCtx(dctx.0, dp, dl, sp, sl),
            }
        };
        (!is_error(n)).then_some(n)
    }
}
