//! Pointer-based twin of `compress.rs`: same algorithm, same output, no
//! bounds checks in the hot loop.  Every access is justified by the loop
//! invariants spelled out in the `SAFETY` comments.

use super::{slot, Level, LEN_SHIFT, MAX_COPY, MAX_DISTANCE, MAX_FAR_DISTANCE, MIN_LEN};

/// Unaligned little-endian loads from the input.
struct Input<'a> {
    buf: &'a [u8],
}

impl Input<'_> {
    /// # Safety
    /// `pos + 4 <= self.buf.len()`.
    #[inline(always)]
    unsafe fn u32_at(&self, pos: usize) -> u32 {
        debug_assert!(pos + 4 <= self.buf.len());
        // SAFETY: the caller keeps the 4 bytes in bounds.
        u32::from_le(unsafe { self.buf.as_ptr().add(pos).cast::<u32>().read_unaligned() })
    }

    /// # Safety
    /// `pos + 8 <= self.buf.len()`.
    #[inline(always)]
    unsafe fn u64_at(&self, pos: usize) -> u64 {
        debug_assert!(pos + 8 <= self.buf.len());
        // SAFETY: the caller keeps the 8 bytes in bounds.
        u64::from_le(unsafe { self.buf.as_ptr().add(pos).cast::<u64>().read_unaligned() })
    }

    /// Same contract and result as `compress::match_end`, 16 bytes a step.
    ///
    /// # Safety
    /// `reference < ip <= bound <= self.buf.len()`.
    #[inline(always)]
    unsafe fn match_end(&self, mut ip: usize, mut reference: usize, bound: usize) -> usize {
        debug_assert!(reference < ip && ip <= bound && bound <= self.buf.len());
        // SAFETY (all loads below): `ip + k <= bound <= len` is checked
        // before each load of `k` bytes at `ip`, and `reference < ip`.
        while ip + 16 <= bound {
            let lo = unsafe { self.u64_at(ip) ^ self.u64_at(reference) };
            let hi = unsafe { self.u64_at(ip + 8) ^ self.u64_at(reference + 8) };
            if lo | hi != 0 {
                let (skip, diff) = if lo != 0 { (0, lo) } else { (8, hi) };
                return ip + skip + (diff.trailing_zeros() / 8) as usize + 1;
            }
            ip += 16;
            reference += 16;
        }
        if ip + 8 <= bound {
            let diff = unsafe { self.u64_at(ip) ^ self.u64_at(reference) };
            if diff != 0 {
                return ip + (diff.trailing_zeros() / 8) as usize + 1;
            }
            ip += 8;
            reference += 8;
        }
        while ip < bound {
            // SAFETY: `reference < ip < bound <= len`.
            if unsafe { self.buf.get_unchecked(ip) != self.buf.get_unchecked(reference) } {
                return ip + 1;
            }
            ip += 1;
            reference += 1;
        }
        bound
    }
}

/// Output cursor, as in `compress.rs`.  Invariant: `pos <= cap`, and when
/// `run > 0` the run's control byte sits at `pos - run - 1 >= 0`.
struct Sink {
    out: *mut u8,
    cap: usize,
    pos: usize,
    run: usize,
}

impl Sink {
    #[inline(always)]
    fn room(&self, n: usize) -> Option<()> {
        (self.cap - self.pos >= n).then_some(())
    }

    /// # Safety
    /// `room(bytes.len())` must have succeeded since the last write.
    #[inline(always)]
    unsafe fn put<const K: usize>(&mut self, bytes: [u8; K]) {
        debug_assert!(self.pos + K <= self.cap);
        // SAFETY: the caller checked that `K` bytes fit below `cap`.
        unsafe { self.out.add(self.pos).cast::<[u8; K]>().write_unaligned(bytes) };
        self.pos += K;
    }

    #[inline(always)]
    fn literal(&mut self, byte: u8) -> Option<()> {
        self.room(2)?;
        // SAFETY: two bytes fit; at most two are written.
        unsafe {
            self.put([byte]);
            self.run += 1;
            if self.run == MAX_COPY {
                self.run = 0;
                self.put([(MAX_COPY - 1) as u8]);
            }
        }
        Some(())
    }

    #[inline(always)]
    fn close_run(&mut self) {
        if self.run > 0 {
            debug_assert!(self.pos > self.run);
            // SAFETY: the run's control byte is in bounds (invariant).
            unsafe { *self.out.add(self.pos - self.run - 1) = (self.run - 1) as u8 };
        } else {
            // A placeholder control byte is always there to take back.
            self.pos -= 1;
        }
        self.run = 0;
    }

    #[inline(always)]
    fn open_run(&mut self) -> Option<()> {
        self.room(1)?;
        // SAFETY: one byte fits.
        unsafe { self.put([(MAX_COPY - 1) as u8]) };
        Some(())
    }

    /// Same encoding and the same room checks as `compress.rs`.
    #[inline(always)]
    fn back_reference(&mut self, len: usize, distance: usize) -> Option<()> {
        let far = distance >= MAX_DISTANCE;
        let d = if far { distance - MAX_DISTANCE } else { distance };
        let (hi, lo) = ((d >> 8) as u8, d as u8);
        // SAFETY (every `put` below): preceded by a `room` check of its size.
        if len < 7 {
            let head = (len as u8) << 5;
            if far {
                self.room(4)?;
                unsafe { self.put([head + 31, 255, hi, lo]) };
            } else {
                self.room(2)?;
                unsafe { self.put([head + hi, lo]) };
            }
            return Some(());
        }
        self.room(1)?;
        unsafe { self.put([(7 << 5) + if far { 31 } else { hi }]) };
        let mut rest = len - 7;
        while rest >= 255 {
            self.room(1)?;
            unsafe { self.put([255]) };
            rest -= 255;
        }
        if far {
            self.room(4)?;
            unsafe { self.put([rest as u8, 255, hi, lo]) };
        } else {
            self.room(2)?;
            unsafe { self.put([rest as u8, lo]) };
        }
        Some(())
    }
}

/// Same contract as `compress::compress`.
pub(super) fn compress<const N: usize>(
    level: &Level,
    src: &[u8],
    dst: &mut [u8],
    table: &mut [u32; N],
) -> Option<usize> {
    // The safety arguments below rest on these two bounds.
    assert!(src.len() >= 16 && dst.len() >= 66);
    let input = Input { buf: src };
    let bound = src.len() - 1;
    let last_anchor = src.len() - 12;

    dst[0] = (MAX_COPY - 1) as u8;
    dst[1..5].copy_from_slice(&src[..4]);
    let mut sink = Sink { out: dst.as_mut_ptr(), cap: dst.len(), pos: 5, run: 4 };

    let mut ip = 4;
    while ip < last_anchor {
        let anchor = ip;
        // SAFETY: `anchor < len - 12`.
        let word = unsafe { input.u32_at(anchor) };
        let entry = slot::<N>(word);
        // Table entries are earlier anchors or match ends, all < `anchor`
        // (or 0 in a fresh table), so `candidate <= anchor`.
        let candidate = table[entry] as usize;
        table[entry] = anchor as u32;
        let distance = anchor - candidate;

        let mut len = 0;
        // SAFETY: `candidate < anchor < len - 12`, and `anchor + 4 < bound`.
        if distance != 0 && distance < MAX_FAR_DISTANCE && unsafe { input.u32_at(candidate) } == word {
            len = unsafe { input.match_end(anchor + 4, candidate + 4, bound) } - LEN_SHIFT - anchor;
        }
        let distance = distance.wrapping_sub(1);
        if len < MIN_LEN || (len <= 5 && distance >= MAX_DISTANCE) {
            // SAFETY: `anchor < len - 12`.
            sink.literal(unsafe { *src.get_unchecked(anchor) })?;
            ip = anchor + 1;
            continue;
        }

        sink.close_run();
        sink.back_reference(len, distance)?;

        // `match_end <= bound`, so `ip <= bound - 4 = len - 5`.
        ip = anchor + len;
        // SAFETY: `ip + 4 <= len - 1`.
        let word = unsafe { input.u32_at(ip) };
        table[slot::<N>(word)] = ip as u32;
        if level.second_hash {
            table[slot::<N>(word >> 8)] = (ip + 1) as u32;
        }
        ip += 2;
        sink.open_run()?;
    }

    while ip <= bound {
        sink.literal(src[ip])?;
        ip += 1;
    }
    sink.close_run();
    dst[0] |= 1 << 5;
    Some(sink.pos)
}
