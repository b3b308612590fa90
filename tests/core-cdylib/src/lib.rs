//! Three C functions over the safe core, as a Rust user's shared library
//! would export them: compress, decompress, and an n-dimensional array
//! written to a frame and read back. Nothing else of the core is exported.

use b2nd::chunk::{CParams, Compressor, DParams, Decompressor};
use b2nd::codecs::Codec;
use b2nd::{Array, Context};

/// The caller's buffer, or an empty one for a null pointer.
///
/// # Safety
/// A non-null `p` must be valid for `len` bytes.
unsafe fn input<'a>(p: *const u8, len: usize) -> &'a [u8] {
    if p.is_null() {
        &[]
    } else {
        // SAFETY: caller contract: `p`, non-null here, is valid for `len` bytes.
        unsafe { std::slice::from_raw_parts(p, len) }
    }
}

/// # Safety
/// A non-null `p` must be valid for writing `len` bytes.
unsafe fn output<'a>(p: *mut u8, len: usize) -> &'a mut [u8] {
    if p.is_null() {
        &mut []
    } else {
        // SAFETY: caller contract: `p`, non-null here, is valid for writing `len` bytes.
        unsafe { std::slice::from_raw_parts_mut(p, len) }
    }
}

/// Compress `len` bytes at `src` into a Blosc2 chunk (zstd, shuffle, items of
/// `typesize` bytes) at `dst`; its size, or a negative number.
///
/// # Safety
/// `src` readable for `len` bytes, `dst` writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn embed_compress(
    src: *const u8,
    len: usize,
    dst: *mut u8,
    cap: usize,
    typesize: i32,
) -> i64 {
    let run = || {
        let mut c = Compressor::new(CParams::classic(Codec::Zstd, 5, 1, typesize, false))?;
        // SAFETY: caller contract: `src` readable for `len` bytes, `dst` writable for `cap`.
        c.compress(unsafe { input(src, len) }, unsafe { output(dst, cap) })
    };
    std::panic::catch_unwind(run).map_or(-1, |r| r.map_or(-1, |n| n as i64))
}

/// Decompress the chunk of `len` bytes at `src` into `dst`; the bytes
/// written, or a negative number.
///
/// # Safety
/// `src` readable for `len` bytes, `dst` writable for `cap` bytes.
#[no_mangle]
pub unsafe extern "C" fn embed_decompress(src: *const u8, len: usize, dst: *mut u8, cap: usize) -> i64 {
    let run = || {
        // SAFETY: caller contract: `src` readable for `len` bytes, `dst` writable for `cap`.
        let (src, dst) = unsafe { (input(src, len), output(dst, cap)) };
        Decompressor::new(DParams::default()).decompress(src, dst)
    };
    std::panic::catch_unwind(run).map_or(-1, |r| r.map_or(-1, |n| n as i64))
}

/// Store a 40 x 30 array of float64 (item i holds i / 2) as a b2nd array at
/// `path` (a NUL-terminated UTF-8 path, replaced if it exists), open it again
/// and check every item;
/// 0 when they all match, a negative number otherwise.
///
/// # Safety
/// `path` is a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn embed_array_roundtrip(path: *const std::ffi::c_char) -> i32 {
    if path.is_null() {
        return -1;
    }
    // SAFETY: `path` checked non-null above; NUL-terminated (caller contract).
    let Ok(path) = (unsafe { std::ffi::CStr::from_ptr(path) }).to_str() else { return -1 };
    let run = || -> Option<bool> {
        let vals: Vec<f64> = (0..1200).map(|i| i as f64 / 2.0).collect();
        let ctx =
            Context::of::<f64>(&[40, 30], &[16, 16], &[8, 8], CParams::classic(Codec::Lz4, 5, 1, 8, false));
        let _ = std::fs::remove_file(path);
        Array::from_elements(&ctx.stored(path, true), &vals).ok()?;
        let back: Vec<f64> = Array::open(path).ok()?.get_slice_as(&[0, 0], &[40, 30]).ok()?;
        Some(back == vals)
    };
    match std::panic::catch_unwind(run) {
        Ok(Some(true)) => 0,
        Ok(Some(false)) => -2,
        _ => -1,
    }
}
