//! zlib (deflate with the zlib wrapper) through zlib-ng 2.3.3, the library
//! c-blosc2 uses (same output bytes), vendored in `vendor/zlib-ng` and built
//! by `build.rs` in its native mode (`zng_` names).
//!
//! One deflate and one inflate stream per thread are kept and reset between
//! blocks instead of being set up anew for every block (as `compress2` and
//! `uncompress` do): the bytes are the same, without the allocation and the
//! clearing of the state each time.
//!
//! Whole blocks are decoded by libdeflate (the `libdeflate-sys` crate), which
//! decodes a buffer in one call, about 1.5x as fast as zlib-ng's streaming
//! inflate; every valid zlib stream decodes to the same bytes, and a
//! malformed one (bad data, a wrong checksum, more output than the block
//! holds) fails as it does through zlib-ng. zlib-ng still writes (c-blosc2's
//! bytes) and decodes the prefixes `getitem` asks for.

use std::ffi::CStr;
use std::os::raw::{c_char, c_int, c_uint, c_ulong, c_void};

/// The parts of `zlib-ng.h` this codec uses.
mod ffi {
    use super::*;

    pub const Z_OK: c_int = 0;
    pub const Z_STREAM_END: c_int = 1;
    pub const Z_BUF_ERROR: c_int = -5;
    pub const Z_FINISH: c_int = 4;
    pub const Z_DEFAULT_STRATEGY: c_int = 0;

    pub type AllocFunc = extern "C" fn(*mut c_void, c_uint, c_uint) -> *mut c_void;
    pub type FreeFunc = extern "C" fn(*mut c_void, *mut c_void);

    /// `zng_stream`.
    #[repr(C)]
    pub struct Stream {
        pub next_in: *const u8,
        pub avail_in: u32,
        pub total_in: usize,
        pub next_out: *mut u8,
        pub avail_out: u32,
        pub total_out: usize,
        pub msg: *const c_char,
        pub state: *mut c_void,
        pub zalloc: AllocFunc,
        pub zfree: FreeFunc,
        pub opaque: *mut c_void,
        pub data_type: c_int,
        pub adler: u32,
        pub reserved: c_ulong,
    }

    extern "C" {
        pub fn zlibng_version() -> *const c_char;
        pub fn zng_deflateInit(strm: *mut Stream, level: i32) -> i32;
        pub fn zng_deflateReset(strm: *mut Stream) -> i32;
        pub fn zng_deflateParams(strm: *mut Stream, level: i32, strategy: i32) -> i32;
        pub fn zng_deflate(strm: *mut Stream, flush: i32) -> i32;
        pub fn zng_deflateEnd(strm: *mut Stream) -> i32;
        pub fn zng_inflateInit(strm: *mut Stream) -> i32;
        pub fn zng_inflateReset(strm: *mut Stream) -> i32;
        pub fn zng_inflate(strm: *mut Stream, flush: i32) -> i32;
        pub fn zng_inflateEnd(strm: *mut Stream) -> i32;
    }
}

use ffi as z;

/// The version of the zlib-ng library linked in (as c-blosc2 reports it).
pub fn version() -> String {
    // SAFETY: zlibng_version returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(z::zlibng_version()) }.to_string_lossy().into_owned()
}

extern "C" fn zalloc(_opaque: *mut c_void, items: c_uint, size: c_uint) -> *mut c_void {
    // SAFETY: plain allocation, released by `zfree`.
    unsafe { libc::calloc(items as usize, size as usize) }
}

extern "C" fn zfree(_opaque: *mut c_void, address: *mut c_void) {
    // SAFETY: `address` came from `zalloc`.
    unsafe { libc::free(address) }
}

fn new_stream() -> Box<z::Stream> {
    Box::new(z::Stream {
        next_in: std::ptr::null(),
        avail_in: 0,
        total_in: 0,
        next_out: std::ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: std::ptr::null(),
        state: std::ptr::null_mut(),
        zalloc,
        zfree,
        opaque: std::ptr::null_mut(),
        data_type: 0,
        adler: 0,
        reserved: 0,
    })
}

/// A deflate or inflate stream. Boxed: zlib-ng keeps a pointer back to it.
struct Stream {
    strm: Box<z::Stream>,
    inflate: bool,
    level: c_int,
}

// SAFETY: the stream and its state are owned by this struct alone and used
// by one thread at a time (the owner holds `&mut`).
unsafe impl Send for Stream {}

impl Drop for Stream {
    fn drop(&mut self) {
        // SAFETY: the stream was initialized and is ended once.
        unsafe {
            if self.inflate {
                z::zng_inflateEnd(&mut *self.strm);
            } else {
                z::zng_deflateEnd(&mut *self.strm);
            }
        }
    }
}

/// A libdeflate decompressor (it holds no stream state: reused from block to block).
struct Decoder(*mut libdeflate_sys::libdeflate_decompressor);

// SAFETY: owned by this struct alone, used by one thread at a time (`&mut`).
unsafe impl Send for Decoder {}

impl Drop for Decoder {
    fn drop(&mut self) {
        // SAFETY: allocated by libdeflate_alloc_decompressor, freed once.
        unsafe { libdeflate_sys::libdeflate_free_decompressor(self.0) }
    }
}

/// The per-thread zlib streams.
#[derive(Default)]
pub struct State {
    deflate: Option<Stream>,
    inflate: Option<Stream>,
    decoder: Option<Decoder>,
}

impl State {
    fn deflater(&mut self, level: c_int) -> Option<&mut z::Stream> {
        if let Some(s) = self.deflate.as_mut().filter(|s| s.level != level) {
            // Another level on the same stream (its buffers do not depend on
            // the level): reset, then deflateParams, which leaves the state
            // deflateInit at that level would (no flush: nothing is pending
            // after a reset), so the bytes are the same, without freeing and
            // allocating the stream's memory (a tuner moves between levels).
            // SAFETY: an initialized stream, not in use.
            let ok = unsafe {
                z::zng_deflateReset(&mut *s.strm) == z::Z_OK
                    && z::zng_deflateParams(&mut *s.strm, level, z::Z_DEFAULT_STRATEGY) == z::Z_OK
            };
            if ok {
                s.level = level;
            } else {
                self.deflate = None;
            }
        }
        if self.deflate.is_none() {
            let mut strm = new_stream();
            // SAFETY: a fresh stream with its allocators.
            let rc = unsafe { z::zng_deflateInit(&mut *strm, level) };
            if rc != z::Z_OK {
                return None;
            }
            self.deflate = Some(Stream { strm, inflate: false, level });
        }
        self.deflate.as_mut().map(|s| &mut *s.strm)
    }

    fn inflater(&mut self) -> Option<&mut z::Stream> {
        if self.inflate.is_none() {
            let mut strm = new_stream();
            // SAFETY: a fresh stream with its allocators.
            let rc = unsafe { z::zng_inflateInit(&mut *strm) };
            if rc != z::Z_OK {
                return None;
            }
            self.inflate = Some(Stream { strm, inflate: true, level: 0 });
        }
        self.inflate.as_mut().map(|s| &mut *s.strm)
    }

    /// Create the deflate stream for `level` ahead of use.
    pub fn prepare_deflate(&mut self, level: c_int) {
        self.deflater(level);
    }

    fn decoder(&mut self) -> Option<*mut libdeflate_sys::libdeflate_decompressor> {
        if self.decoder.is_none() {
            // SAFETY: no preconditions; NULL when out of memory.
            let d = unsafe { libdeflate_sys::libdeflate_alloc_decompressor() };
            if d.is_null() {
                return None;
            }
            self.decoder = Some(Decoder(d));
        }
        self.decoder.as_ref().map(|d| d.0)
    }

    /// Create the decoders ahead of use.
    pub fn prepare_inflate(&mut self) {
        self.inflater();
        self.decoder();
    }

    /// Compress as `compress2` would; 0 when the output does not fit.
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8], level: i32) -> usize {
        let (Ok(sl), Ok(dl)) = (c_uint::try_from(src.len()), c_uint::try_from(dst.len())) else { return 0 };
        let Some(strm) = self.deflater(level) else { return 0 };
        // SAFETY: the stream is initialized; the buffers are live for the call and
        // zlib reads at most `avail_in` and writes at most `avail_out` bytes.
        unsafe {
            if z::zng_deflateReset(strm) != z::Z_OK {
                return 0;
            }
            strm.next_in = src.as_ptr();
            strm.avail_in = sl;
            strm.next_out = dst.as_mut_ptr();
            strm.avail_out = dl;
            let rc = z::zng_deflate(strm, z::Z_FINISH);
            let n = strm.total_out;
            strm.next_in = std::ptr::null();
            strm.next_out = std::ptr::null_mut();
            if rc == z::Z_STREAM_END {
                n
            } else {
                0
            }
        }
    }

    /// Decompress a whole zlib stream into `dst`; `None` on malformed input or
    /// when it does not fit. Bytes after the stream's end are ignored, as
    /// inflate ignores them.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let d = self.decoder()?;
        let (mut used, mut n) = (0usize, 0usize);
        // SAFETY: `d` is a live decompressor; libdeflate reads at most
        // `src.len()` bytes and writes at most `dst.len()`.
        let rc = unsafe {
            libdeflate_sys::libdeflate_zlib_decompress_ex(
                d,
                src.as_ptr().cast(),
                src.len(),
                dst.as_mut_ptr().cast(),
                dst.len(),
                &mut used,
                &mut n,
            )
        };
        (rc == libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS && n <= dst.len()).then_some(n)
    }

    /// [`State::decompress`] through zlib-ng's inflate (the oracle of the tests).
    #[cfg(test)]
    fn decompress_inflate(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let (rc, n) = self.inflate(src, dst)?;
        (rc == z::Z_STREAM_END).then_some(n)
    }

    /// Inflate until `dst` (the first bytes of the stream's output) is full
    /// or the stream ends; the count written, or `None` on malformed input.
    pub fn decompress_prefix(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let (rc, n) = self.inflate(src, dst)?;
        // Z_BUF_ERROR: the output filled before the stream's end.
        (rc == z::Z_STREAM_END || (rc == z::Z_BUF_ERROR && n == dst.len())).then_some(n)
    }

    /// One `inflate(Z_FINISH)` of `src` into `dst`: its return code and the
    /// bytes written.
    fn inflate(&mut self, src: &[u8], dst: &mut [u8]) -> Option<(c_int, usize)> {
        let sl = c_uint::try_from(src.len()).ok()?;
        let dl = c_uint::try_from(dst.len()).ok()?;
        let strm = self.inflater()?;
        // SAFETY: as in `compress`.
        unsafe {
            if z::zng_inflateReset(strm) != z::Z_OK {
                return None;
            }
            strm.next_in = src.as_ptr();
            strm.avail_in = sl;
            strm.next_out = dst.as_mut_ptr();
            strm.avail_out = dl;
            let rc = z::zng_inflate(strm, z::Z_FINISH);
            let n = strm.total_out;
            strm.next_in = std::ptr::null();
            strm.next_out = std::ptr::null_mut();
            Some((rc, n))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed | 1;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if (i / 512) % 3 == 0 {
                    x as u8
                } else {
                    (i / 7) as u8
                }
            })
            .collect()
    }

    /// libdeflate and zlib-ng's inflate agree on every stream: valid ones at
    /// every level, and each one cut short, with a byte flipped, or followed by
    /// other bytes; also when the output does not fit.
    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codecs zlib-ng and libdeflate")]
    fn libdeflate_decodes_as_inflate_does() {
        let mut st = State::default();
        for level in [1, 5, 9] {
            for (n, seed) in [(0usize, 1u64), (1, 2), (1000, 3), (70_000, 4)] {
                let src = sample(n, seed);
                let mut z = vec![0u8; n + n / 10 + 64];
                let zl = st.compress(&src, &mut z, level);
                assert!(zl > 0);
                z.truncate(zl);
                let mut cases = vec![z.clone(), z[..zl / 2].to_vec(), [z.clone(), vec![7u8; 5]].concat()];
                for at in [0, 1, zl / 3, zl - 1] {
                    let mut bad = z.clone();
                    bad[at] ^= 0x5a;
                    cases.push(bad);
                }
                for case in cases {
                    for room in [n, n.saturating_sub(1), n + 10] {
                        let (mut a, mut b) = (vec![0u8; room], vec![0u8; room]);
                        let (ra, rb) = (st.decompress(&case, &mut a), st.decompress_inflate(&case, &mut b));
                        assert_eq!(ra, rb, "level {level}, {n} bytes, room {room}");
                        if let Some(k) = ra {
                            assert_eq!(a[..k], b[..k]);
                        }
                    }
                }
            }
        }
    }

    /// A stream moved from level to level (and back) writes the bytes a
    /// fresh stream at each level writes, and keeps its memory.
    #[test]
    #[cfg_attr(miri, ignore = "Miri: calls the C codec zlib-ng")]
    fn a_stream_moved_between_levels_writes_what_a_fresh_one_does() {
        let src = sample(200_000, 9);
        let mut moved = State::default();
        let state = |st: &State| st.deflate.as_ref().map(|s| s.strm.state);
        moved.prepare_deflate(1);
        let first = state(&moved);
        for level in [1, 9, 5, 1, 6, 2, 9, 9, 3] {
            let mut fresh = State::default();
            let (mut a, mut b) = (vec![0u8; src.len() + 1000], vec![0u8; src.len() + 1000]);
            let (na, nb) = (moved.compress(&src, &mut a, level), fresh.compress(&src, &mut b, level));
            assert!(na > 0 && na < src.len(), "level {level}");
            assert_eq!(a[..na], b[..nb], "level {level}");
            assert_eq!(state(&moved), first, "level {level}: the stream was made anew");
        }
    }
}
