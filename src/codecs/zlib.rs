//! zlib (deflate with the zlib wrapper) through `libz-sys`, built on zlib-ng as
//! c-blosc2 is (same library, same output bytes, same speed).

use std::ffi::CStr;

pub fn version() -> String {
    // zlib-ng in compatibility mode reports zlib's version: give zlib-ng's own, as c-blosc2 does.
    let ng = env!("B2ND_ZLIBNG_VERSION");
    if !ng.is_empty() {
        return ng.to_string();
    }
    // SAFETY: zlibVersion returns a static NUL-terminated string.
    unsafe { CStr::from_ptr(libz_sys::zlibVersion()) }
        .to_string_lossy()
        .into_owned()
}

/// Compress with zlib's `compress2`; 0 when the output does not fit.
pub fn compress(src: &[u8], dst: &mut [u8], level: i32) -> usize {
    let mut out_len = dst.len() as libz_sys::uLongf;
    // SAFETY: pointers and lengths describe live, non-overlapping slices.
    let rc = unsafe {
        libz_sys::compress2(
            dst.as_mut_ptr(),
            &mut out_len,
            src.as_ptr(),
            src.len() as libz_sys::uLong,
            level,
        )
    };
    if rc == libz_sys::Z_OK {
        out_len as usize
    } else {
        0
    }
}

/// Decompress a zlib stream into `dst`; `None` on malformed input.
pub fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let mut out_len = dst.len() as libz_sys::uLongf;
    // SAFETY: pointers and lengths describe live, non-overlapping slices;
    // zlib never writes past `out_len` nor reads past the source length.
    let rc = unsafe {
        libz_sys::uncompress(dst.as_mut_ptr(), &mut out_len, src.as_ptr(), src.len() as libz_sys::uLong)
    };
    (rc == libz_sys::Z_OK).then_some(out_len as usize)
}
