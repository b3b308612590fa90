//! zlib (deflate with the zlib wrapper) through `libz-sys`, built on zlib-ng as
//! c-blosc2 is (same library, same output bytes).
//!
//! One deflate and one inflate stream per thread are kept and reset between
//! blocks instead of being set up anew for every block (as `compress2` and
//! `uncompress` do): the bytes are the same, without the allocation and the
//! clearing of the state each time.

use libz_sys as z;
use std::ffi::CStr;
use std::os::raw::{c_int, c_uint};

pub fn version() -> String {
    // zlib-ng in compatibility mode reports zlib's version: give zlib-ng's own, as c-blosc2 does.
    let ng = env!("B2ND_ZLIBNG_VERSION");
    if !ng.is_empty() {
        return ng.to_string();
    }
    // SAFETY: zlibVersion returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(z::zlibVersion()) }.to_string_lossy().into_owned()
}

extern "C" fn zalloc(_opaque: z::voidpf, items: z::uInt, size: z::uInt) -> z::voidpf {
    // SAFETY: plain allocation, released by `zfree`.
    unsafe { libc::calloc(items as usize, size as usize) }
}

extern "C" fn zfree(_opaque: z::voidpf, address: z::voidpf) {
    // SAFETY: `address` came from `zalloc`.
    unsafe { libc::free(address) }
}

fn new_stream() -> Box<z::z_stream> {
    Box::new(z::z_stream {
        next_in: std::ptr::null_mut(),
        avail_in: 0,
        total_in: 0,
        next_out: std::ptr::null_mut(),
        avail_out: 0,
        total_out: 0,
        msg: std::ptr::null_mut(),
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
    strm: Box<z::z_stream>,
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
                z::inflateEnd(&mut *self.strm);
            } else {
                z::deflateEnd(&mut *self.strm);
            }
        }
    }
}

/// The per-thread zlib streams.
#[derive(Default)]
pub struct State {
    deflate: Option<Stream>,
    inflate: Option<Stream>,
}

const STREAM_SIZE: c_int = std::mem::size_of::<z::z_stream>() as c_int;

impl State {
    fn deflater(&mut self, level: c_int) -> Option<&mut z::z_stream> {
        if self.deflate.as_ref().is_some_and(|s| s.level != level) {
            self.deflate = None;
        }
        if self.deflate.is_none() {
            let mut strm = new_stream();
            // SAFETY: a fresh stream with allocators; version and size of this library.
            let rc = unsafe { z::deflateInit_(&mut *strm, level, z::zlibVersion(), STREAM_SIZE) };
            if rc != z::Z_OK {
                return None;
            }
            self.deflate = Some(Stream { strm, inflate: false, level });
        }
        self.deflate.as_mut().map(|s| &mut *s.strm)
    }

    fn inflater(&mut self) -> Option<&mut z::z_stream> {
        if self.inflate.is_none() {
            let mut strm = new_stream();
            // SAFETY: a fresh stream with allocators; version and size of this library.
            let rc = unsafe { z::inflateInit_(&mut *strm, z::zlibVersion(), STREAM_SIZE) };
            if rc != z::Z_OK {
                return None;
            }
            self.inflate = Some(Stream { strm, inflate: true, level: 0 });
        }
        self.inflate.as_mut().map(|s| &mut *s.strm)
    }

    /// Compress as `compress2` would; 0 when the output does not fit.
    pub fn compress(&mut self, src: &[u8], dst: &mut [u8], level: i32) -> usize {
        let (Ok(sl), Ok(dl)) = (c_uint::try_from(src.len()), c_uint::try_from(dst.len())) else { return 0 };
        let Some(strm) = self.deflater(level) else { return 0 };
        // SAFETY: the stream is initialized; the buffers are live for the call and
        // zlib reads at most `avail_in` and writes at most `avail_out` bytes.
        unsafe {
            if z::deflateReset(strm) != z::Z_OK {
                return 0;
            }
            strm.next_in = src.as_ptr().cast_mut();
            strm.avail_in = sl;
            strm.next_out = dst.as_mut_ptr();
            strm.avail_out = dl;
            let rc = z::deflate(strm, z::Z_FINISH);
            let n = strm.total_out as usize;
            strm.next_in = std::ptr::null_mut();
            strm.next_out = std::ptr::null_mut();
            if rc == z::Z_STREAM_END {
                n
            } else {
                0
            }
        }
    }

    /// Decompress a whole zlib stream into `dst`; `None` on malformed input or
    /// when it does not fit.
    pub fn decompress(&mut self, src: &[u8], dst: &mut [u8]) -> Option<usize> {
        let sl = c_uint::try_from(src.len()).ok()?;
        let dl = c_uint::try_from(dst.len()).ok()?;
        let strm = self.inflater()?;
        // SAFETY: as in `compress`.
        unsafe {
            if z::inflateReset(strm) != z::Z_OK {
                return None;
            }
            strm.next_in = src.as_ptr().cast_mut();
            strm.avail_in = sl;
            strm.next_out = dst.as_mut_ptr();
            strm.avail_out = dl;
            let rc = z::inflate(strm, z::Z_FINISH);
            let n = strm.total_out as usize;
            strm.next_in = std::ptr::null_mut();
            strm.next_out = std::ptr::null_mut();
            (rc == z::Z_STREAM_END).then_some(n)
        }
    }
}
