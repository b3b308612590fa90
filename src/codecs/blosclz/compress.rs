//! Safe BloscLZ encoder (the reference for `compress_unsafe.rs`).

use super::{read_u32, slot, Level, LEN_SHIFT, MAX_COPY, MAX_DISTANCE, MAX_FAR_DISTANCE, MIN_LEN};

/// Position just past the first byte at or after `ip` that differs from
/// its counterpart at `reference + (pos - ip)`, capped at `bound`.
/// Requires `reference < ip < bound <= buf.len()`.
#[inline(always)]
pub(super) fn match_end(buf: &[u8], mut ip: usize, mut reference: usize, bound: usize) -> usize {
    while ip + 8 <= bound {
        let a = u64::from_le_bytes(buf[ip..ip + 8].try_into().unwrap());
        let b = u64::from_le_bytes(buf[reference..reference + 8].try_into().unwrap());
        let diff = a ^ b;
        if diff != 0 {
            return ip + (diff.trailing_zeros() / 8) as usize + 1;
        }
        ip += 8;
        reference += 8;
    }
    while ip < bound {
        if buf[ip] != buf[reference] {
            return ip + 1;
        }
        ip += 1;
        reference += 1;
    }
    bound
}

/// Output cursor.  `run` counts the literals of the open literal run,
/// whose control byte sits just before them (or, when `run == 0`, is the
/// last byte written: a placeholder a following match takes back).
struct Sink<'a> {
    buf: &'a mut [u8],
    pos: usize,
    run: usize,
}

impl Sink<'_> {
    /// Fails unless `n` more bytes fit.
    #[inline(always)]
    fn room(&self, n: usize) -> Option<()> {
        (self.buf.len() - self.pos >= n).then_some(())
    }

    #[inline(always)]
    fn put(&mut self, bytes: &[u8]) {
        self.buf[self.pos..self.pos + bytes.len()].copy_from_slice(bytes);
        self.pos += bytes.len();
    }

    /// Appends one literal, opening a new run when this one is full.
    /// Like the reference, insists on room for two bytes.
    #[inline(always)]
    fn literal(&mut self, byte: u8) -> Option<()> {
        self.room(2)?;
        self.buf[self.pos] = byte;
        self.pos += 1;
        self.run += 1;
        if self.run == MAX_COPY {
            self.run = 0;
            self.buf[self.pos] = (MAX_COPY - 1) as u8;
            self.pos += 1;
        }
        Some(())
    }

    /// Settles the control byte of the open run, or drops the placeholder.
    #[inline(always)]
    fn close_run(&mut self) {
        if self.run > 0 {
            self.buf[self.pos - self.run - 1] = (self.run - 1) as u8;
        } else {
            self.pos -= 1;
        }
        self.run = 0;
    }

    /// Writes the placeholder control byte of the next literal run.
    #[inline(always)]
    fn open_run(&mut self) -> Option<()> {
        self.room(1)?;
        self.put(&[(MAX_COPY - 1) as u8]);
        Some(())
    }

    /// Encodes a back-reference of biased length `len` (copies `len + 2`
    /// bytes) and biased distance `distance` (one less than the real one).
    fn back_reference(&mut self, len: usize, distance: usize) -> Option<()> {
        let far = distance >= MAX_DISTANCE;
        let d = if far { distance - MAX_DISTANCE } else { distance };
        let (hi, lo) = ((d >> 8) as u8, d as u8);
        if len < 7 {
            let head = (len as u8) << 5;
            if far {
                self.room(4)?;
                self.put(&[head + 31, 255, hi, lo]);
            } else {
                self.room(2)?;
                self.put(&[head + hi, lo]);
            }
            return Some(());
        }
        self.room(1)?;
        self.put(&[(7 << 5) + if far { 31 } else { hi }]);
        let mut rest = len - 7;
        while rest >= 255 {
            self.room(1)?;
            self.put(&[255]);
            rest -= 255;
        }
        if far {
            self.room(4)?;
            self.put(&[rest as u8, 255, hi, lo]);
        } else {
            self.room(2)?;
            self.put(&[rest as u8, lo]);
        }
        Some(())
    }
}

/// Compresses `src` (at least 16 bytes) into `dst` (at least 66 bytes)
/// with a zeroed `table`; `None` when the output does not fit.
pub(super) fn compress<const N: usize>(
    level: &Level,
    src: &[u8],
    dst: &mut [u8],
    table: &mut [u32; N],
) -> Option<usize> {
    let bound = src.len() - 1;
    let last_anchor = src.len() - 12;

    dst[0] = (MAX_COPY - 1) as u8;
    dst[1..5].copy_from_slice(&src[..4]);
    let mut sink = Sink { buf: dst, pos: 5, run: 4 };

    let mut ip = 4;
    while ip < last_anchor {
        let anchor = ip;
        let word = read_u32(src, anchor);
        let entry = slot::<N>(word);
        let candidate = table[entry] as usize;
        table[entry] = anchor as u32;
        let distance = anchor.wrapping_sub(candidate);

        let mut len = 0;
        if distance != 0 && distance < MAX_FAR_DISTANCE && read_u32(src, candidate) == word {
            len = match_end(src, anchor + 4, candidate + 4, bound) - LEN_SHIFT - anchor;
        }
        let distance = distance.wrapping_sub(1);
        // Short far matches cost more to decode than the literals.
        if len < MIN_LEN || (len <= 5 && distance >= MAX_DISTANCE) {
            sink.literal(src[anchor])?;
            ip = anchor + 1;
            continue;
        }

        sink.close_run();
        sink.back_reference(len, distance)?;

        ip = anchor + len;
        let word = read_u32(src, ip);
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
    sink.buf[0] |= 1 << 5;
    Some(sink.pos)
}
