//! LZ4 and LZ4HC through `lz4-sys` (one raw LZ4 block per stream).

use crate::error::{Error, Result};
use libc::{c_char, c_int, c_void};

// Functions of liblz4 (linked by lz4-sys) that lz4-sys does not declare.
extern "C" {
    fn LZ4_createStream() -> *mut c_void;
    fn LZ4_freeStream(s: *mut c_void) -> c_int;
    fn LZ4_loadDict(s: *mut c_void, dict: *const c_char, size: c_int) -> c_int;
    fn LZ4_compress_fast_continue(
        s: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_cap: c_int,
        accel: c_int,
    ) -> c_int;
    fn LZ4_decompress_safe_usingDict(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_cap: c_int,
        dict: *const c_char,
        dict_size: c_int,
    ) -> c_int;
    fn LZ4_decompress_safe_partial(
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        target_output_size: c_int,
        dst_cap: c_int,
    ) -> c_int;
    fn LZ4_createStreamHC() -> *mut c_void;
    fn LZ4_freeStreamHC(s: *mut c_void) -> c_int;
    fn LZ4_resetStreamHC_fast(s: *mut c_void, level: c_int);
    fn LZ4_loadDictHC(s: *mut c_void, dict: *const c_char, size: c_int) -> c_int;
    fn LZ4_compress_HC_continue(
        s: *mut c_void,
        src: *const c_char,
        dst: *mut c_char,
        src_size: c_int,
        dst_cap: c_int,
    ) -> c_int;
}

pub fn version() -> String {
    // SAFETY: a pure query of the linked library.
    let v = unsafe { lz4_sys::LZ4_versionNumber() };
    format!("{}.{}.{}", v / 10000, v / 100 % 100, v % 100)
}

/// Streams for dictionary compression, created on first use and reused.
#[derive(Default)]
pub struct State {
    fast: Option<Stream>,
    hc: Option<Stream>,
}

struct Stream {
    ptr: *mut c_void,
    hc: bool,
}

// SAFETY: an LZ4 stream is plain memory owned by this struct alone; it is
// used by one thread at a time (the owner holds `&mut`).
unsafe impl Send for Stream {}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: ptr came from the matching create function and is freed once.
        unsafe {
            if self.hc {
                LZ4_freeStreamHC(self.ptr);
            } else {
                LZ4_freeStream(self.ptr);
            }
        }
    }
}

fn stream(slot: &mut Option<Stream>, hc: bool) -> Result<*mut c_void> {
    if slot.is_none() {
        // SAFETY: allocation functions without preconditions.
        let ptr = unsafe {
            if hc {
                LZ4_createStreamHC()
            } else {
                LZ4_createStream()
            }
        };
        if ptr.is_null() {
            return Err(Error::MemoryAlloc);
        }
        *slot = Some(Stream { ptr, hc });
    }
    Ok(slot.as_ref().map_or(std::ptr::null_mut(), |s| s.ptr))
}

/// The LZ4 block of no bytes (one token), if `dst` has room for it.
fn empty_block(dst: &mut [u8]) -> usize {
    match dst.first_mut() {
        Some(b) => {
            *b = 0;
            1
        }
        None => 0,
    }
}

fn len(n: usize) -> Result<c_int> {
    c_int::try_from(n).map_err(|_| Error::TwoGbLimit)
}

impl State {
    /// Create the stream a compression with a dictionary uses (fast or HC)
    /// ahead of use; without a dictionary liblz4 needs none.
    pub fn prepare(&mut self, hc: bool, dict: bool) {
        if dict {
            let _ = stream(if hc { &mut self.hc } else { &mut self.fast }, hc);
        }
    }

    pub fn compress_fast(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        accel: i32,
        dict: Option<&[u8]>,
    ) -> Result<usize> {
        let (sl, dl) = (len(src.len())?, len(dst.len())?);
        let (sp, dp) = (src.as_ptr().cast::<c_char>(), dst.as_mut_ptr().cast::<c_char>());
        let n = match dict {
            None => {
                // SAFETY: pointers and lengths describe live, non-overlapping slices.
                unsafe { lz4_sys::LZ4_compress_fast(sp, dp, sl, dl, accel) }
            }
            Some(d) => {
                let s = stream(&mut self.fast, false)?;
                // SAFETY: `s` is a live stream; the dictionary outlives the call.
                unsafe {
                    LZ4_loadDict(s, d.as_ptr().cast(), len(d.len())?);
                    LZ4_compress_fast_continue(s, sp, dp, sl, dl, accel)
                }
            }
        };
        Ok(n.max(0) as usize)
    }

    pub fn compress_hc(
        &mut self,
        src: &[u8],
        dst: &mut [u8],
        level: i32,
        dict: Option<&[u8]>,
    ) -> Result<usize> {
        if src.is_empty() {
            // liblz4's optimal parser (levels 10-12) reads the input even
            // when it is empty.
            return Ok(empty_block(dst));
        }
        let (sl, dl) = (len(src.len())?, len(dst.len())?);
        let (sp, dp) = (src.as_ptr().cast::<c_char>(), dst.as_mut_ptr().cast::<c_char>());
        let n = match dict {
            None => {
                // SAFETY: pointers and lengths describe live, non-overlapping slices.
                unsafe { lz4_sys::LZ4_compress_HC(sp, dp, sl, dl, level) }
            }
            Some(d) => {
                let s = stream(&mut self.hc, true)?;
                // SAFETY: `s` is a live HC stream; the dictionary outlives the call.
                unsafe {
                    LZ4_resetStreamHC_fast(s, level);
                    LZ4_loadDictHC(s, d.as_ptr().cast(), len(d.len())?);
                    LZ4_compress_HC_continue(s, sp, dp, sl, dl)
                }
            }
        };
        Ok(n.max(0) as usize)
    }
}

/// Decode one LZ4 block; `None` on malformed input (liblz4's safe decoder
/// never reads or writes outside the given buffers).
pub fn decompress(src: &[u8], dst: &mut [u8], dict: Option<&[u8]>) -> Option<usize> {
    let sl = c_int::try_from(src.len()).ok()?;
    let dl = c_int::try_from(dst.len()).ok()?;
    let (sp, dp) = (src.as_ptr().cast::<c_char>(), dst.as_mut_ptr().cast::<c_char>());
    // SAFETY: pointers and lengths describe live, non-overlapping slices.
    let n = unsafe {
        match dict {
            Some(d) => {
                let dlen = c_int::try_from(d.len()).ok()?;
                LZ4_decompress_safe_usingDict(sp, dp, sl, dl, d.as_ptr().cast(), dlen)
            }
            None => lz4_sys::LZ4_decompress_safe(sp, dp, sl, dl),
        }
    };
    usize::try_from(n).ok()
}

/// Decode the first `want` bytes (at least) of an LZ4 block whose decoded
/// size is `dst.len()`; the count decoded, or `None` on malformed input.
pub fn decompress_prefix(src: &[u8], dst: &mut [u8], want: usize) -> Option<usize> {
    let sl = c_int::try_from(src.len()).ok()?;
    let dl = c_int::try_from(dst.len()).ok()?;
    let target = c_int::try_from(want.min(dst.len())).ok()?;
    let (sp, dp) = (src.as_ptr().cast::<c_char>(), dst.as_mut_ptr().cast::<c_char>());
    // SAFETY: pointers and lengths describe live, non-overlapping slices;
    // liblz4 writes at most `dl` bytes.
    let n = unsafe { LZ4_decompress_safe_partial(sp, dp, sl, target, dl) };
    usize::try_from(n).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codec lz4")]
    fn empty_input_is_the_one_token_block_at_every_level() {
        // liblz4's optimal parser (LZ4HC levels 10-12) reads its input even
        // when it is empty; an empty slice's pointer dangles, so this
        // crashed before `compress_hc` answered empty input itself.
        let mut state = State::default();
        for level in 1..=12 {
            let mut dst = [0xFFu8; 16];
            assert_eq!(state.compress_hc(&[], &mut dst, level, None).unwrap(), 1, "level {level}");
            assert_eq!(dst[0], 0);
            assert_eq!(decompress(&dst[..1], &mut [], None), Some(0));
            assert_eq!(state.compress_hc(&[], &mut [], level, None).unwrap(), 0);
        }
        let mut dst = [0xFFu8; 16];
        assert_eq!(state.compress_fast(&[], &mut dst, 1, None).unwrap(), 1);
        assert_eq!(dst[0], 0);
    }
}
