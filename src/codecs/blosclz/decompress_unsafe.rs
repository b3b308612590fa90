//! Pointer-based twin of `decompress.rs`: same results on every input.
//! Token parsing is shared (and bounds-checked); the copies, which are
//! where the time goes, use wide unaligned moves.

use super::decompress::{read_back_ref, BackRef};
use super::MAX_COPY;
use std::ptr;

/// Copies `len` bytes from `distance` bytes back to `op`, with byte-by-byte
/// semantics (the copy may overlap its own output).  May overwrite up to
/// 32 bytes past the copy when `cap` leaves room for that.
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
        // SAFETY: `from` is in bounds, and so is `to` plus the size written.
        unsafe {
            if len <= 32 && room >= 32 {
                to.cast::<[u8; 32]>().write_unaligned([*from; 32]);
            } else {
                ptr::write_bytes(to, *from, len);
            }
        }
    } else if distance >= 8 && room >= len + 16 {
        // SAFETY: the moves end before `to + len + 16 <= out + cap`, and
        // each reads bytes that are already final (`distance` >= its size).
        // Most matches are short: one move does.
        unsafe {
            if distance >= 16 {
                ptr::copy_nonoverlapping(from, to, 16);
                if len > 16 {
                    copy_steps::<16>(from.add(16), to.add(16), (len - 16).div_ceil(16));
                }
            } else {
                ptr::copy_nonoverlapping(from, to, 8);
                if len > 8 {
                    copy_steps::<8>(from.add(8), to.add(8), (len - 8).div_ceil(8));
                }
            }
        }
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { copy_back_ref_slow(from, to, len, distance, room) };
    }
}

/// The rarer cases of `copy_back_ref`: distances 2..=7, or little room
/// left after the copy.
///
/// # Safety
/// `to - from == distance >= 2`, `to + room` ends the buffer and `len <= room`.
#[inline(never)]
unsafe fn copy_back_ref_slow(from: *const u8, to: *mut u8, len: usize, distance: usize, room: usize) {
    if distance >= len && room < len + 8 {
        // SAFETY: the ranges are in bounds and do not overlap.
        unsafe { ptr::copy_nonoverlapping(from, to, len) };
    } else {
        // SAFETY: forwarded from the caller.
        unsafe { copy_pattern(from, to, len, distance, room >= len + 8) };
    }
}

/// Overlapping copy for short distances or a tight end of buffer.  The
/// output repeats every `distance` bytes, so any multiple of `distance`
/// works as the distance once that many bytes back are written: `step`,
/// the smallest multiple that is >= 8, does after `head` bytes
/// (`head + distance == step`), and then reads from `from` onwards.
///
/// # Safety
/// As for `copy_back_ref`, with `to - from == distance >= 2`; `spare`
/// says that 8 bytes past `to + len` are writable.
#[inline(always)]
unsafe fn copy_pattern(from: *const u8, to: *mut u8, len: usize, distance: usize, spare: bool) {
    // `distance * ceil(8 / distance)`, without a division.
    const SMALL_STEPS: [u8; 8] = [0, 8, 8, 9, 8, 10, 12, 14];
    let step = if distance >= 8 { distance } else { SMALL_STEPS[distance] as usize };
    let head = (step - distance).min(len);
    // SAFETY: `head <= len`; each source byte precedes its target.
    unsafe { copy_bytes(from, to, head) };
    let rest = len - head;
    // SAFETY: `head <= len` keeps `to` in bounds.
    let to = unsafe { to.add(head) };
    if spare && rest <= 256 {
        // SAFETY: the steps end before `to + rest + 8`, which is writable;
        // sources are `step >= 8` bytes behind their targets.
        unsafe { copy_steps::<8>(from, to, rest.div_ceil(8)) };
        return;
    }
    // Long copies: chunks that double, each within what is already final
    // (`to - from` doubles with every chunk, starting at `step`).
    let (mut to, mut rest, mut gap) = (to, rest, step);
    while rest > 0 {
        let n = gap.min(rest);
        // SAFETY: `n <= rest` keeps the target in bounds, and `n <= gap`
        // keeps the source range before the target range.
        unsafe {
            ptr::copy_nonoverlapping(from, to, n);
            to = to.add(n);
        }
        rest -= n;
        gap *= 2;
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
    decompress_until(src, dst, usize::MAX)
}

/// As `decompress`, but returns as soon as `stop` bytes or more are out.
pub(super) fn decompress_until(src: &[u8], dst: &mut [u8], stop: usize) -> Option<usize> {
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
            // SAFETY: `n` bytes, or the fixed size moved when that fits,
            // are in bounds on both sides; `src` and `dst` are distinct.
            unsafe {
                // A fixed-size move is cheaper than an exact one.
                let room = (in_len - ip).min(cap - op);
                if n <= 16 && room >= 16 {
                    ptr::copy_nonoverlapping(input.add(ip), out.add(op), 16);
                } else if room >= MAX_COPY {
                    ptr::copy_nonoverlapping(input.add(ip), out.add(op), MAX_COPY);
                } else {
                    ptr::copy_nonoverlapping(input.add(ip), out.add(op), n);
                }
            }
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
        if ip >= in_len || op >= stop {
            return Some(op);
        }
        // SAFETY: `ip < in_len`.
        ctrl = unsafe { *input.add(ip) } as usize;
        ip += 1;
    }
}
