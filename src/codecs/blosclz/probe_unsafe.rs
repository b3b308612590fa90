//! Pointer-based twin of `probe.rs`: same estimate, no bounds checks.

use super::compress_unsafe::{match_end, Input};
use super::{slot, LEN_SHIFT, MAX_COPY, MAX_DISTANCE, MAX_FAR_DISTANCE, MIN_LEN};

/// Same contract and result as `probe::estimate_ratio`.
pub(super) fn estimate_ratio<const N: usize>(window: &[u8], table: &mut [u32; N]) -> f64 {
    let limit = window.len().min(N);
    if limit <= 12 {
        return 0.0;
    }
    let input = Input::new(&window[..limit]);
    let bound = limit - 1;
    let last_anchor = limit - 12;

    // Literals are counted in bulk when a match (or the end) closes their
    // run: `pending_from` is where the open run's literals start (the
    // encoder's first four literals sit before position 0), and
    // `produced` already includes the run's first control byte.
    let mut produced: u64 = 1;
    let mut pending_from: isize = -4;
    let mut ip = 0;
    while ip < last_anchor {
        let anchor = ip;
        // SAFETY: `anchor < limit - 12`.
        let word = unsafe { input.u32_at(anchor) };
        let entry = slot::<N>(word);
        let candidate = table[entry] as usize;
        table[entry] = anchor as u32;
        let distance = anchor.wrapping_sub(candidate);

        let mut len = 0;
        // SAFETY: a distance in `1..MAX_FAR_DISTANCE` puts `candidate`
        // before `anchor < limit - 12` (whatever the table holds).
        if distance.wrapping_sub(1) < MAX_FAR_DISTANCE - 1 && unsafe { input.u32_at(candidate) } == word {
            len = match_end(input.bytes(), anchor + 4, candidate + 4, bound) - LEN_SHIFT - anchor;
        }
        if len < MIN_LEN {
            ip = anchor + 1;
            continue;
        }

        let run = settle_literals(&mut produced, anchor as isize - pending_from);
        if run == 0 {
            produced -= 1;
        }
        if len >= 7 {
            produced += ((len - 7) / 255 + 1) as u64;
        }
        produced += if distance - 1 < MAX_DISTANCE { 2 } else { 4 };

        // `match_end <= bound`, so `ip + 4 <= limit - 1`.
        ip = anchor + len;
        // SAFETY: see above.
        table[slot::<N>(unsafe { input.u32_at(ip) })] = ip as u32;
        ip += 2;
        produced += 1;
        pending_from = ip as isize;
    }
    settle_literals(&mut produced, ip as isize - pending_from);
    ip as f64 / produced as f64
}

/// Counts `literals` (>= 0) consecutive literals, each full run of
/// `MAX_COPY` opening a new one with a control byte; returns the length
/// of the last, open run.
#[inline(always)]
fn settle_literals(produced: &mut u64, literals: isize) -> usize {
    let literals = literals as usize;
    *produced += (literals + literals / MAX_COPY) as u64;
    literals % MAX_COPY
}
