//! NDLZ with 4x4 cells. Besides the shared records, a cell can name rows of
//! an earlier literal cell:
//!
//! | token | record | rows from earlier literals |
//! |---|---|---|
//! | `0x20 \| j << 3` (j = 1..3) | u16, u16 | rows 0 and j from the first, the other two from the second |
//! | `0xE0` | u16, 1 row | rows 1-3 (the record's row is row 0) |
//! | `0xE0 \| (j + k - 2) << 3` | u16, 1 row | rows 0, j, k (j < k) |
//! | `0x80 \| i << 5 \| j << 3` | u16, 2 rows | rows i and j (i < j, not 2 and 3) |
//! | `0x80` | u16, 2 rows | rows 2 and 3 |
//!
//! The row-group offsets are stored less 3 (less 5 for the two-pair record)
//! than the distance from the token.

use super::{hash, Cell, Decoder, Encoder};

const N: usize = 4;
/// The three rows of a triple, in the order the encoder tries them.
const TRIPLES: [[usize; 3]; 4] = [[0, 1, 2], [0, 1, 3], [0, 2, 3], [1, 2, 3]];
/// The pairs of rows, in the order the encoder tries them.
const PAIRS: [[usize; 2]; 6] = [[0, 1], [0, 2], [0, 3], [1, 2], [1, 3], [2, 3]];

fn rows<const K: usize>(cell: &[u8], which: [usize; K], out: &mut [u8]) {
    for (k, &r) in which.iter().enumerate() {
        out[k * N..(k + 1) * N].copy_from_slice(&cell[r * N..(r + 1) * N]);
    }
}

/// Compress the cells; false when the output does not pay.
pub(super) fn encode(e: &mut Encoder) -> bool {
    // Which positions a literal cell records, and under which hashes: the
    // hashes persist from cell to cell (c-blosc2 resets only the positions).
    let mut hash_triple = [0usize; 2];
    let mut hash_pair = [0usize; 3];
    e.cells::<N>(|e, cell| {
        let (done, hcell) = e.whole_cell(cell);
        if done {
            return;
        }
        let anchor = e.op;
        let mut new_triple = [0u32; 2];
        let mut new_pair = [0u32; 3];
        let mut group = [0u8; 12];
        // Two pairs: rows 0 and j, then the other two.
        for j in 1..N {
            rows(cell, [0, j], &mut group);
            let first = e.tables.pair[hash(&group[..8])];
            if !e.matches(first, &group[..8], anchor) {
                continue;
            }
            let [l, m] = match j {
                1 => [2, 3],
                2 => [1, 3],
                _ => [1, 2],
            };
            rows(cell, [l, m], &mut group);
            let second = e.tables.pair[hash(&group[..8])];
            if e.matches(second, &group[..8], anchor + l * N) {
                e.put(&[0x20 | (j as u8) << 3]);
                e.put_offset(anchor, first);
                e.put_offset(anchor, second);
                return;
            }
        }
        // Three rows.
        for t in TRIPLES {
            let [i, j, k] = t;
            rows(cell, t, &mut group);
            let h = hash(&group);
            let prev = e.tables.triple[h];
            if prev == 0 && j == i + 1 && k == j + 1 {
                new_triple[i] = (anchor + 1 + i * N) as u32;
                hash_triple[i] = h;
            }
            if e.matches(prev, &group, anchor + i * N) {
                let token = if i == 1 { 0xE0 } else { 0xE0 | ((j + k - 2) as u8) << 3 };
                e.put(&[token]);
                e.put_offset(anchor, prev);
                let other = (0..N).find(|r| !t.contains(r)).unwrap_or(0);
                e.put(&cell[other * N..(other + 1) * N]);
                return;
            }
        }
        // Two rows.
        for p in PAIRS {
            let [i, j] = p;
            rows(cell, p, &mut group);
            let h = hash(&group[..8]);
            let prev = e.tables.pair[h];
            if prev == 0 && j == i + 1 {
                new_pair[i] = (anchor + 1 + i * N) as u32;
                hash_pair[i] = h;
            }
            if e.matches(prev, &group[..8], anchor + i * N) {
                let token = if i == 2 { 0x80 } else { 0x80 | (i as u8) << 5 | (j as u8) << 3 };
                e.put(&[token]);
                e.put_offset(anchor, prev);
                for r in (0..N).filter(|r| !p.contains(r)) {
                    e.put(&cell[r * N..(r + 1) * N]);
                }
                return;
            }
        }
        e.literal(cell, hcell, (&hash_triple, &new_triple), (&hash_pair, &new_pair));
    })
}

/// Read one cell's record (`pr` x `pc`: the cell's rows and columns).
pub(super) fn decode(d: &mut Decoder, pr: usize, pc: usize, buf: &mut [u8; 64]) -> Option<Cell> {
    let cur = d.pos;
    let token = d.u8()?;
    if let Some(cell) = d.common(token, cur, pr, pc, buf) {
        return cell;
    }
    // Rows `from` taken at `at` in the stream, the others read in order.
    let mut fill = |d: &mut Decoder, at: usize, from: &[usize]| -> Option<Cell> {
        for (k, &r) in from.iter().enumerate() {
            d.copy(at + k * N, &mut buf[r * N..(r + 1) * N]);
        }
        for r in (0..N).filter(|r| !from.contains(r)) {
            d.read(&mut buf[r * N..(r + 1) * N])?;
        }
        Some(Cell::Buf)
    };
    match token {
        224.. => {
            let back = usize::from(d.u16()?.wrapping_add(3));
            let from: [usize; 3] = match token >> 3 {
                28 => [1, 2, 3],
                29 => [0, 1, 2],
                30 => [0, 1, 3],
                _ => [0, 2, 3],
            };
            let at = d.back(cur + 3, back, 3 * N)?;
            fill(d, at, &from)
        }
        128..=191 => {
            let back = usize::from(d.u16()?.wrapping_add(3));
            let from = if token == 128 {
                [2, 3]
            } else {
                let i = usize::from(token - 128) >> 5;
                [i, (usize::from(token - 128) >> 3) - (i << 2)]
            };
            let at = d.back(cur + 3, back, 2 * N)?;
            fill(d, at, &from)
        }
        40..=63 => {
            let first = usize::from(d.u16()?.wrapping_add(5));
            let second = usize::from(d.u16()?.wrapping_add(5));
            let j = usize::from(token - 32) >> 3;
            let [l, m] = match j {
                1 => [2, 3],
                2 => [1, 3],
                _ => [1, 2],
            };
            let a = d.back(cur + 5, first, 2 * N)?;
            let b = d.back(cur + 5, second, 2 * N)?;
            d.copy(a, &mut buf[..N]);
            d.copy(a + N, &mut buf[j * N..(j + 1) * N]);
            d.copy(b, &mut buf[l * N..(l + 1) * N]);
            d.copy(b + N, &mut buf[m * N..(m + 1) * N]);
            Some(Cell::Buf)
        }
        _ => None,
    }
}
