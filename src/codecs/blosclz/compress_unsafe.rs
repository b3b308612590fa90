//! Pointer-based twin of `compress.rs`: same algorithm, same output, no
//! bounds checks in the hot loop.  Every access is justified by the loop
//! invariants spelled out in the `SAFETY` comments.

use super::{slot, LEN_SHIFT, MAX_COPY, MAX_DISTANCE, MAX_FAR_DISTANCE, MIN_LEN};

/// Unaligned little-endian loads from the input.
pub(super) struct Input<'a> {
    buf: &'a [u8],
}

impl<'a> Input<'a> {
    pub(super) fn new(buf: &'a [u8]) -> Self {
        Input { buf }
    }

    pub(super) fn bytes(&self) -> &'a [u8] {
        self.buf
    }

    /// # Safety
    /// `pos + 4 <= self.buf.len()`.
    #[inline(always)]
    pub(super) unsafe fn u32_at(&self, pos: usize) -> u32 {
        debug_assert!(pos + 4 <= self.buf.len());
        // SAFETY: the caller keeps the 4 bytes in bounds.
        u32::from_le(unsafe { self.buf.as_ptr().add(pos).cast::<u32>().read_unaligned() })
    }
}

/// Same contract and result as `compress::match_end`, 16 bytes a step.
/// Checks its preconditions, so it is safe to call from anywhere.
#[inline(always)]
pub(super) fn match_end(buf: &[u8], mut ip: usize, mut reference: usize, bound: usize) -> usize {
    assert!(reference < ip && ip <= bound && bound <= buf.len());
    let base = buf.as_ptr();
    while ip + 16 <= bound {
        // SAFETY: `reference < ip` and `ip + 16 <= bound <= buf.len()`.
        let differ = unsafe { differing_bytes_16(base.add(ip), base.add(reference)) };
        if differ != 0 {
            return ip + differ.trailing_zeros() as usize + 1;
        }
        ip += 16;
        reference += 16;
    }
    while ip < bound {
        // SAFETY: `reference < ip < bound <= buf.len()`.
        if unsafe { *base.add(ip) != *base.add(reference) } {
            return ip + 1;
        }
        ip += 1;
        reference += 1;
    }
    bound
}

/// Bit `i` is set when byte `i` of the two 16-byte blocks differ.
///
/// # Safety
/// Both pointers are valid for 16-byte reads.
#[inline(always)]
unsafe fn differing_bytes_16(a: *const u8, b: *const u8) -> u32 {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_cmpeq_epi8, _mm_loadu_si128, _mm_movemask_epi8};
        // SAFETY: SSE2 is part of the x86_64 baseline; the caller
        // guarantees both 16-byte reads.
        let equal = unsafe {
            let x = _mm_loadu_si128(a.cast::<__m128i>());
            let y = _mm_loadu_si128(b.cast::<__m128i>());
            _mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) as u32
        };
        !equal & 0xFFFF
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        // SAFETY: the caller guarantees both 16-byte reads.
        let (x, y) = unsafe { (a.cast::<u128>().read_unaligned(), b.cast::<u128>().read_unaligned()) };
        let diff = u128::from_le(x ^ y);
        let mut mask = 0;
        for i in 0..16 {
            if (diff >> (8 * i)) as u8 != 0 {
                mask |= 1 << i;
            }
        }
        mask
    }
}

/// Output cursor, as in `compress.rs`.  Invariants: `out` is valid for
/// writes of `cap` bytes for as long as the `Sink` lives (it is built from
/// a `&mut [u8]` that is not touched meanwhile), `pos <= cap`, and when
/// `run > 0` the run's control byte sits at `pos - run - 1 >= 0`, while
/// when `run == 0` a placeholder control byte sits at `pos - 1`.
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

    /// Writes `K` bytes if they fit (the reference's check), else fails.
    #[inline(always)]
    fn push<const K: usize>(&mut self, bytes: [u8; K]) -> Option<()> {
        self.room(K)?;
        // SAFETY: `pos + K <= cap` was just checked.
        unsafe { self.out.add(self.pos).cast::<[u8; K]>().write_unaligned(bytes) };
        self.pos += K;
        Some(())
    }

    /// Appends one literal; like the reference, insists on room for two.
    #[inline(always)]
    fn literal(&mut self, byte: u8) -> Option<()> {
        self.room(2)?;
        // SAFETY: two bytes fit; at most two are written.
        unsafe {
            *self.out.add(self.pos) = byte;
            self.run += 1;
            if self.run == MAX_COPY {
                self.run = 0;
                *self.out.add(self.pos + 1) = (MAX_COPY - 1) as u8;
                self.pos += 1;
            }
        }
        self.pos += 1;
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
        self.push([(MAX_COPY - 1) as u8])
    }

    /// Same encoding and the same room checks as `compress.rs`.
    #[inline(always)]
    fn back_reference(&mut self, len: usize, distance: usize) -> Option<()> {
        let far = distance >= MAX_DISTANCE;
        let d = if far { distance - MAX_DISTANCE } else { distance };
        let (hi, lo) = ((d >> 8) as u8, d as u8);
        if len < 7 {
            let head = (len as u8) << 5;
            return if far { self.push([head + 31, 255, hi, lo]) } else { self.push([head + hi, lo]) };
        }
        self.push([(7 << 5) + if far { 31 } else { hi }])?;
        let mut rest = len - 7;
        while rest >= 255 {
            self.push([255])?;
            rest -= 255;
        }
        if far {
            self.push([rest as u8, 255, hi, lo])
        } else {
            self.push([rest as u8, lo])
        }
    }
}

/// Same contract as `compress::compress`.
/// `SECOND_HASH` is `level.second_hash`, as a constant.
pub(super) fn compress<const N: usize, const SECOND_HASH: bool>(
    src: &[u8],
    dst: &mut [u8],
    table: &mut [u32; N],
) -> Option<usize> {
    // The safety arguments below rest on these two bounds.
    assert!(src.len() >= 16 && dst.len() >= 66);
    let input = Input::new(src);
    let bound = src.len() - 1;
    let last_anchor = src.len() - 12;

    dst[0] = (MAX_COPY - 1) as u8;
    dst[1..5].copy_from_slice(&src[..4]);
    let mut sink = Sink { out: dst.as_mut_ptr(), cap: dst.len(), pos: 5, run: 4 };

    let mut ip = 4;
    while ip < last_anchor {
        let anchor = ip;
        // SAFETY: `anchor < src.len() - 12`.
        let word = unsafe { input.u32_at(anchor) };
        let entry = slot::<N>(word);
        let candidate = table[entry] as usize;
        table[entry] = anchor as u32;
        let distance = anchor.wrapping_sub(candidate);

        let mut len = 0;
        // SAFETY: a distance in `1..MAX_FAR_DISTANCE` puts `candidate`
        // before `anchor < src.len() - 12` (whatever the table holds).
        if distance.wrapping_sub(1) < MAX_FAR_DISTANCE - 1 && unsafe { input.u32_at(candidate) } == word {
            len = match_end(src, anchor + 4, candidate + 4, bound) - LEN_SHIFT - anchor;
        }
        let distance = distance.wrapping_sub(1);
        if len < MIN_LEN || (len <= 5 && distance >= MAX_DISTANCE) {
            // SAFETY: `anchor < src.len() - 12`.
            sink.literal(unsafe { *src.get_unchecked(anchor) })?;
            ip = anchor + 1;
            continue;
        }

        sink.close_run();
        sink.back_reference(len, distance)?;

        // `match_end <= bound`, so `ip <= bound - 4 = src.len() - 5`.
        ip = anchor + len;
        // SAFETY: `ip + 4 <= src.len() - 1`.
        let word = unsafe { input.u32_at(ip) };
        table[slot::<N>(word)] = ip as u32;
        if SECOND_HASH {
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
