//! NDLZ with 8x8 cells. Besides the shared records, a cell can name
//! consecutive rows of an earlier literal cell:
//!
//! | token | record | rows from an earlier literal |
//! |---|---|---|
//! | `0xA8 \| i` (i = 0..5) | u16, 5 rows | rows i, i+1, i+2 |
//! | `0x88 \| i` (i = 0..6) | u16, 6 rows | rows i, i+1 |
//!
//! The offset is the distance from the token to the literal rows.

use super::{hash, Cell, Decoder, Encoder};

const N: usize = 8;

/// Compress the cells; false when the output does not pay.
pub(super) fn encode(e: &mut Encoder) -> bool {
    // The hashes a literal records persist from cell to cell (c-blosc2 resets
    // only the positions).
    let mut hash_triple = [0usize; 6];
    let mut hash_pair = [0usize; 7];
    e.cells::<N>(|e, cell| {
        let (done, hcell) = e.whole_cell(cell);
        if done {
            return;
        }
        let anchor = e.op;
        let mut new_triple = [0u32; 6];
        let mut new_pair = [0u32; 7];
        // `rows` consecutive rows from row i, tried from the top.
        for (rows, token, table_new, hashes) in [
            (3, 0xA8u8, &mut new_triple[..], &mut hash_triple[..]),
            (2, 0x88, &mut new_pair[..], &mut hash_pair[..]),
        ] {
            for i in 0..=N - rows {
                let group = &cell[i * N..(i + rows) * N];
                let h = hash(group);
                let prev = if rows == 3 { e.tables.triple[h] } else { e.tables.pair[h] };
                if prev == 0 {
                    table_new[i] = (anchor + 1 + i * N) as u32;
                    hashes[i] = h;
                }
                if e.matches(prev, group, anchor + i * N) {
                    e.put(&[token | i as u8]);
                    e.put_offset(anchor, prev);
                    e.put(&cell[..i * N]);
                    e.put(&cell[(i + rows) * N..]);
                    return;
                }
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
    let rows = match token >> 3 {
        21 => 3,
        17 => 2,
        _ => return None,
    };
    let i = usize::from(token & 7);
    if i + rows > N {
        return None;
    }
    let back = usize::from(d.u16()?);
    let at = d.back(cur, back, rows * N)?;
    d.copy(at, &mut buf[i * N..(i + rows) * N]);
    d.read(&mut buf[..i * N])?;
    d.read(&mut buf[(i + rows) * N..])?;
    Some(Cell::Buf)
}
