//! Entropy probe: a dry run of the encoder that only counts output bytes.
//!
//! The probe walks a window of the input (at most one hash table's worth
//! of bytes) with the same hashing and match rules as the encoder, but
//! without the far-match restriction and without writing anything.  Its
//! estimate decides whether the block is worth compressing at all.

use super::compress::match_end;
use super::{read_u32, slot, LEN_SHIFT, MAX_COPY, MAX_DISTANCE, MAX_FAR_DISTANCE, MIN_LEN};

/// Estimated compression ratio (bytes consumed / bytes produced) of
/// `window`, using `table`, which must be all zeros.  Windows of 12
/// bytes or less estimate to 0.
pub(super) fn estimate_ratio<const N: usize>(window: &[u8], table: &mut [u32; N]) -> f64 {
    let limit = window.len().min(N);
    if limit <= 12 {
        return 0.0;
    }
    let window = &window[..limit];
    let bound = limit - 1;
    let last_anchor = limit - 12;

    // The encoder opens with a control byte and four literals.
    let mut produced: u64 = 5;
    let mut run: usize = 4;
    let mut ip = 0;
    while ip < last_anchor {
        let anchor = ip;
        let word = read_u32(window, anchor);
        let entry = slot::<N>(word);
        let candidate = table[entry] as usize;
        table[entry] = anchor as u32;
        let distance = anchor.wrapping_sub(candidate);

        let mut len = 0;
        // One comparison rules out both 0 and too far.
        if distance.wrapping_sub(1) < MAX_FAR_DISTANCE - 1 && read_u32(window, candidate) == word {
            len = match_end(window, anchor + 4, candidate + 4, bound) - LEN_SHIFT - anchor;
        }
        if len < MIN_LEN {
            produced += 1;
            ip = anchor + 1;
            run += 1;
            if run == MAX_COPY {
                run = 0;
                produced += 1;
            }
            continue;
        }

        // A match right after a match reuses the pending control byte.
        if run == 0 {
            produced -= 1;
        }
        run = 0;
        if len >= 7 {
            produced += ((len - 7) / 255 + 1) as u64;
        }
        produced += if distance - 1 < MAX_DISTANCE { 2 } else { 4 };

        ip = anchor + len;
        table[slot::<N>(read_u32(window, ip))] = ip as u32;
        ip += 2;
        // Control byte of the next literal run.
        produced += 1;
    }
    ip as f64 / produced as f64
}
