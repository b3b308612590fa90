//! Safe BloscLZ decoder (the reference for `decompress_unsafe.rs`).

use super::{MAX_COPY, MAX_DISTANCE};

/// A decoded back-reference: copy `len` bytes from `distance` bytes back.
pub(super) struct BackRef {
    pub(super) len: usize,
    pub(super) distance: usize,
}

/// Reads the rest of a back-reference token whose control byte `ctrl`
/// (>= 32) has been consumed; `*ip` is advanced past the token.
/// Follows the reference's rules: at least two bytes must remain before
/// the distance byte and before a far distance.
#[inline(always)]
pub(super) fn read_back_ref(src: &[u8], ip: &mut usize, ctrl: usize) -> Option<BackRef> {
    let mut len = (ctrl >> 5) + 2;
    let hi = (ctrl & 31) << 8;
    if len == 9 {
        loop {
            if *ip + 1 >= src.len() {
                return None;
            }
            let code = src[*ip];
            *ip += 1;
            len = len.saturating_add(code as usize);
            if code != 255 {
                break;
            }
        }
    } else if *ip + 1 >= src.len() {
        return None;
    }
    let lo = src[*ip] as usize;
    *ip += 1;
    let mut distance = hi + lo + 1;
    if lo == 255 && hi == 31 << 8 {
        if *ip + 1 >= src.len() {
            return None;
        }
        let far = (src[*ip] as usize) << 8 | src[*ip + 1] as usize;
        *ip += 2;
        distance = far + MAX_DISTANCE + 1;
    }
    Some(BackRef { len, distance })
}

/// Copies `len` bytes from `distance` back to `op`, byte after byte in
/// effect (the copy may overlap its own output).  Bytes up to 8 past the
/// copy may be overwritten when `buf` has room.  Needs
/// `1 <= distance <= op` and `op + len <= buf.len()`.
#[inline(always)]
fn copy_back_ref(buf: &mut [u8], op: usize, len: usize, distance: usize) {
    let from = op - distance;
    if distance == 1 {
        let byte = buf[from];
        buf[op..op + len].fill(byte);
    } else if distance >= 8 && buf.len() - op >= len + 8 {
        // Each 8-byte step reads only bytes that are already final.
        let (mut s, mut d) = (from, op);
        while d < op + len {
            let chunk: [u8; 8] = buf[s..s + 8].try_into().unwrap();
            buf[d..d + 8].copy_from_slice(&chunk);
            s += 8;
            d += 8;
        }
    } else if distance >= len {
        buf.copy_within(from..from + len, op);
    } else {
        // The pattern repeats every `distance` bytes: copy it in chunks
        // that double, each a whole number of periods.
        let mut done = 0;
        let mut chunk = distance;
        while done < len {
            let n = chunk.min(len - done);
            buf.copy_within(from..from + n, op + done);
            done += n;
            chunk *= 2;
        }
    }
}

/// Copies the literal run `src[ip..ip + n]` to `dst[op..]`; both ranges
/// must be in bounds.  Short runs go as one fixed-size copy when both
/// buffers have room for it.
#[inline(always)]
fn copy_literals(src: &[u8], ip: usize, dst: &mut [u8], op: usize, n: usize) {
    let room = (src.len() - ip).min(dst.len() - op);
    if n <= 16 && room >= 16 {
        let chunk: [u8; 16] = src[ip..ip + 16].try_into().unwrap();
        dst[op..op + 16].copy_from_slice(&chunk);
    } else if room >= MAX_COPY {
        let chunk: [u8; MAX_COPY] = src[ip..ip + MAX_COPY].try_into().unwrap();
        dst[op..op + MAX_COPY].copy_from_slice(&chunk);
    } else {
        dst[op..op + n].copy_from_slice(&src[ip..ip + n]);
    }
}

pub(super) fn decompress(src: &[u8], dst: &mut [u8]) -> Option<usize> {
    decompress_until(src, dst, usize::MAX)
}

/// As `decompress`, but returns as soon as `stop` bytes or more are out.
pub(super) fn decompress_until(src: &[u8], dst: &mut [u8], stop: usize) -> Option<usize> {
    let (&first, _) = src.split_first()?;
    let mut ctrl = (first & 31) as usize;
    let mut ip = 1;
    let mut op = 0;
    loop {
        if ctrl < 32 {
            let n = ctrl + 1;
            if n > dst.len() - op || n > src.len() - ip {
                return None;
            }
            copy_literals(src, ip, dst, op, n);
            op += n;
            ip += n;
        } else {
            let BackRef { len, distance } = read_back_ref(src, &mut ip, ctrl)?;
            if len > dst.len() - op || distance > op {
                return None;
            }
            // The reference ends the stream here without the copy.
            if ip >= src.len() {
                return Some(op);
            }
            copy_back_ref(dst, op, len, distance);
            op += len;
        }
        if ip >= src.len() || op >= stop {
            return Some(op);
        }
        ctrl = src[ip] as usize;
        ip += 1;
    }
}
