//! Pointer-based twin of `decompress.rs`: same results on every input.
//! Token parsing is shared (and bounds-checked); the copies, which are
//! where the time goes, use wide unaligned moves.

use super::decompress::{read_back_ref, BackRef};
use super::MAX_COPY;
use std::ptr;

/// Copies `len` bytes from `distance` bytes back to `op`, with byte-by-byte
/// semantics (the copy may overlap its own output).  May overwrite up to
/// 16 bytes past the copy when `cap` leaves room for that.
///
/// # Safety
/// `out` is valid for reads and writes of `cap` bytes,
/// `1 <= distance <= op` and `op + len <= cap`.
#[inline(always)]
unsafe fn copy_back_ref(out: *mut u8, cap: usize, op: usize, len: usize, distance: usize) {
    debug_assert!(1 <= distance && distance <= op && op + len <= cap);
    let room = cap - op;
    // SAFETY: `op - distance >= 0` and `op + len <= cap`.
    let (from, to) = unsafe { (out.add(op - distance), out.add(op)) };
    if distance == 1 {
        // SAFETY: `from` and `to .. to + len` are in bounds.
        unsafe { ptr::write_bytes(to, *from, len) };
    } else if distance >= 16 && room >= len + 16 {
        // SAFETY: the steps end before `to + len + 16 <= out + cap`, and
        // each reads 16 bytes that are already final.
        unsafe { copy_steps::<16>(from, to, len.div_ceil(16)) };
    } else if distance >= len {
        // SAFETY: the ranges are in bounds and do not overlap.
        unsafe { ptr::copy_nonoverlapping(from, to, len) };
    } else {
        // The pattern repeats every `distance` bytes, so any multiple of it
        // can serve as the distance once that many bytes back are written:
        // `step`, the smallest multiple that is >= 8, can after `head`
        // bytes, and then reads `from + head`.
        let step = distance * 8usize.div_ceil(distance);
        let head = (step - distance).min(len);
        // SAFETY: `head <= len`; each source byte precedes its target.
        unsafe { copy_bytes(from, to, head) };
        let rest = len - head;
        // SAFETY: `head <= len` keeps both pointers in bounds.
        let (from, to) = unsafe { (from.add(head), to.add(head)) };
        if room >= len + 8 {
            // SAFETY: the steps end before `to + rest + 8 <= out + cap`;
            // sources are `step >= 8` bytes behind their targets.
            unsafe { copy_steps::<8>(from, to, rest.div_ceil(8)) };
        } else {
            // SAFETY: as above, without going past `to + rest`.
            unsafe {
                copy_steps::<8>(from, to, rest / 8);
                let done = rest / 8 * 8;
                copy_bytes(from.add(done), to.add(done), rest % 8);
            }
        }
    }
}

/// `count` moves of `K` bytes, each `K` bytes further on.
///
/// # Safety
/// `from + count * K` and `to + count * K` stay in one buffer, and each
/// move's source does not overlap its own destination (`to - from >= K`).
#[inline(always)]
unsafe fn copy_steps<const K: usize>(from: *const u8, to: *mut u8, count: usize) {
    for i in 0..count {
        // SAFETY: guaranteed by the caller.
        unsafe { ptr::copy_nonoverlapping(from.add(i * K), to.add(i * K), K) };
    }
}

/// Byte-by-byte forward copy; overlap is fine when `from < to`.
///
/// # Safety
/// Both ranges of `n` bytes are in bounds.
#[inline(always)]
unsafe fn copy_bytes(from: *const u8, to: *mut u8, n: usize) {
    for i in 0..n {
        // SAFETY: guaranteed by the caller.
        unsafe { *to.add(i) = *from.add(i) };
    }
}

/// Same contract and results as `decompress::decompress`.
pub(super) fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    let (&first, _) = src.split_first()?;
    let (in_len, cap) = (src.len(), dst.len());
    let (input, out) = (src.as_ptr(), dst.as_mut_ptr());
    let mut ctrl = (first & 31) as usize;
    let mut ip = 1;
    let mut op = 0;
    loop {
        if ctrl < 32 {
            let n = ctrl + 1;
            if n > cap - op || n > in_len - ip {
                return None;
            }
            // Copy a whole MAX_COPY block when both sides have room: a
            // fixed-size move is cheaper than an exact one.
            let k = if in_len - ip >= MAX_COPY && cap - op >= MAX_COPY { MAX_COPY } else { n };
            // SAFETY: `k` bytes are in bounds on both sides (checked just
            // above), and `src` and `dst` are distinct borrows.
            unsafe { ptr::copy_nonoverlapping(input.add(ip), out.add(op), k) };
            op += n;
            ip += n;
        } else {
            let BackRef { len, distance } = read_back_ref(src, &mut ip, ctrl)?;
            if len > cap - op || distance > op {
                return None;
            }
            if ip >= in_len {
                return Some(op);
            }
            // SAFETY: `out` spans `cap` bytes; the checks above give
            // `distance <= op` and `op + len <= cap`; `distance >= 1`.
            unsafe { copy_back_ref(out, cap, op, len, distance) };
            op += len;
        }
        if ip >= in_len {
            return Some(op);
        }
        // SAFETY: `ip < in_len`.
        ctrl = unsafe { *input.add(ip) } as usize;
        ip += 1;
    }
}
