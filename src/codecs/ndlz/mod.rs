//! NDLZ (plugin codec 32): a Lempel-Ziv codec for 2-D blocks of bytes that
//! looks for repetitions among square cells (4x4 or 8x8 bytes, the codec
//! meta) and among groups of their rows, rather than along the flat data.
//!
//! The stream: 1 byte `ndim` (2), the block's two lengths (i32, little
//! endian), then one record per cell in C order over the grid of cells, each
//! starting with a token:
//!
//! | token | record | cell |
//! |---|---|---|
//! | `0x00` | the cell's bytes | literal (always for cells cut short by the block's end) |
//! | `0x40` | 1 byte | every byte equal |
//! | `0xC0` | u16 offset | the same bytes as an earlier literal cell |
//! | other | u16 offset(s), then the rows not matched | some rows equal to rows of an earlier literal cell |
//!
//! An offset counts back from the token to the literal bytes it names. The
//! row-group tokens differ between the two cell sizes (`cell4`, `cell8`).
//! The encoder's choices (hash tables of 4096 entries over XXH32 with seed 1,
//! the order it tries matches in, which positions it records) are c-blosc2's,
//! so the streams are byte for byte the ones c-blosc2 writes.
//!
//! The block's shape comes from the `b2nd` metalayer of the super-chunk when
//! compressing (a 2-D array of 1-byte items per stream), and from the stream
//! when decompressing.

mod cell4;
mod cell8;
mod xxh32;

use crate::error::{Error, Result};
use crate::ndmeta::Meta;

/// Hash table size (log2).
const HASH_LOG: u32 = 12;
const TABLE: usize = 1 << HASH_LOG;
/// Matches at this distance or more are not taken.
const MAX_DISTANCE: usize = 65535;
/// `ndim` and the two block lengths.
const HEADER: usize = 9;

fn hash(bytes: &[u8]) -> usize {
    (xxh32::xxh32(bytes, 1) >> (32 - HASH_LOG)) as usize
}

/// Compress one block; the compressed size, 0 when it does not pay.
pub fn encode(meta: u8, _typesize: i32, b2nd: Option<&[u8]>, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let side = cell_side(meta)?;
    let Some(b2nd) = b2nd else {
        crate::trace!("ndlz: the super-chunk has no b2nd metalayer");
        return Err(Error::Failure);
    };
    let block = match Meta::deserialize_parts(b2nd) {
        Ok((m, _, _)) if m.blockshape.len() == 2 => [m.blockshape[0], m.blockshape[1]],
        _ => {
            crate::trace!("ndlz: the codec works on 2-D arrays only");
            return Err(Error::Failure);
        }
    };
    if block[0] < 0 || block[1] < 0 || i64::from(block[0]) * i64::from(block[1]) != src.len() as i64 {
        crate::trace!("ndlz: a block of {} bytes is not a {}x{} block", src.len(), block[0], block[1]);
        return Err(Error::Failure);
    }
    if dst.len() < HEADER {
        crate::trace!("ndlz: output buffer too small");
        return Err(Error::Failure);
    }
    let cell = side * side;
    let overhead = 17 + (src.len() as i64 / cell as i64 - 1) * 2;
    if src.len() < cell || (dst.len() as i64) < overhead {
        return Ok(0);
    }
    let mut e = Encoder {
        src,
        dst,
        op: 0,
        rows: block[0] as usize,
        cols: block[1] as usize,
        tables: Tables { cell: [0; TABLE], triple: [0; TABLE], pair: [0; TABLE] },
    };
    e.dst[0] = 2;
    e.dst[1..5].copy_from_slice(&block[0].to_le_bytes());
    e.dst[5..9].copy_from_slice(&block[1].to_le_bytes());
    e.op = HEADER;
    let done = if side == 4 { cell4::encode(&mut e) } else { cell8::encode(&mut e) };
    Ok(if done { e.op } else { 0 })
}

/// Decompress one block; its size (the stream's block), 0 when `dst` cannot hold it.
pub fn decode(meta: u8, _typesize: i32, _b2nd: Option<&[u8]>, src: &[u8], dst: &mut [u8]) -> Result<usize> {
    let side = cell_side(meta)?;
    if src.len() < HEADER {
        return Ok(0);
    }
    if src[0] != 2 {
        crate::trace!("ndlz: the stream is not of a 2-D block");
        return Err(Error::Failure);
    }
    let rows = i32::from_le_bytes([src[1], src[2], src[3], src[4]]);
    let cols = i32::from_le_bytes([src[5], src[6], src[7], src[8]]);
    if rows < 0 || cols < 0 {
        crate::trace!("ndlz: negative block lengths {rows}x{cols}");
        return Err(Error::Failure);
    }
    let n = i64::from(rows) * i64::from(cols);
    if (dst.len() as i64) < n {
        crate::trace!("ndlz: a {rows}x{cols} block does not fit in {} bytes", dst.len());
        return Ok(0);
    }
    if n == 0 {
        return Ok(0);
    }
    let (rows, cols) = (rows as usize, cols as usize);
    let dst = &mut dst[..n as usize];
    dst.fill(0);
    let mut d = Decoder { src, pos: HEADER };
    let mut cellbuf = [0u8; 64];
    for ci in 0..rows.div_ceil(side) {
        for cj in 0..cols.div_ceil(side) {
            let pr = edge(rows, side, ci);
            let pc = edge(cols, side, cj);
            let cell = if side == 4 {
                cell4::decode(&mut d, pr, pc, &mut cellbuf)
            } else {
                cell8::decode(&mut d, pr, pc, &mut cellbuf)
            };
            let cell = match cell {
                Some(Cell::Src(at)) => &src[at..at + pr * pc],
                Some(Cell::Buf) => &cellbuf[..],
                None => {
                    crate::trace!("ndlz: invalid or truncated record for cell ({ci}, {cj})");
                    return Err(Error::Failure);
                }
            };
            let orig = ci * side * cols + cj * side;
            for (i, row) in cell.chunks_exact(pc).take(pr).enumerate() {
                let at = orig + i * cols;
                dst[at..at + pc].copy_from_slice(row);
            }
        }
    }
    Ok(n as usize)
}

fn cell_side(meta: u8) -> Result<usize> {
    match meta {
        4 | 8 => Ok(usize::from(meta)),
        _ => {
            crate::trace!("ndlz: no cell size {meta} (4 or 8)");
            Err(Error::Failure)
        }
    }
}

/// The length of cell `i` along a dimension of `len` bytes.
fn edge(len: usize, side: usize, i: usize) -> usize {
    if i + 1 == len.div_ceil(side) && !len.is_multiple_of(side) {
        len % side
    } else {
        side
    }
}

/// Where earlier literal bytes were written in the output (0: nowhere), by
/// the hash of the cell, group of three rows or pair of rows they hold.
struct Tables {
    cell: [u32; TABLE],
    triple: [u32; TABLE],
    pair: [u32; TABLE],
}

struct Encoder<'a> {
    src: &'a [u8],
    dst: &'a mut [u8],
    op: usize,
    rows: usize,
    cols: usize,
    /// On the stack (48 KiB), as c-blosc2 has them: nothing allocated per block.
    tables: Tables,
}

impl Encoder<'_> {
    /// Whether the output at `at` (a table entry) holds `bytes` within
    /// `MAX_DISTANCE` of `from`.
    fn matches(&self, at: u32, bytes: &[u8], from: usize) -> bool {
        let at = at as usize;
        at != 0 && self.dst.get(at..at + bytes.len()) == Some(bytes) && from - at < MAX_DISTANCE
    }

    fn put(&mut self, bytes: &[u8]) {
        self.dst[self.op..self.op + bytes.len()].copy_from_slice(bytes);
        self.op += bytes.len();
    }

    /// The back reference from the token at `anchor` to `at`.
    fn put_offset(&mut self, anchor: usize, at: u32) {
        self.put(&((anchor - at as usize) as u16).to_le_bytes());
    }

    /// Walk the cells: cells cut short are literal, whole ones go to
    /// `whole` (with the cell's bytes, row after row). False when the output
    /// does not fit or is no smaller than the input.
    fn cells<const N: usize>(&mut self, mut whole: impl FnMut(&mut Self, &[u8])) -> bool {
        let (rows, cols) = (self.rows, self.cols);
        let mut buf = [0u8; 64];
        for ci in 0..rows.div_ceil(N) {
            for cj in 0..cols.div_ceil(N) {
                if self.op + N * N + 1 > self.dst.len() {
                    return false;
                }
                let orig = ci * N * cols + cj * N;
                let (pr, pc) = (edge(rows, N, ci), edge(cols, N, cj));
                if pr < N || pc < N {
                    self.put(&[0]);
                    for i in 0..pr {
                        let at = orig + i * cols;
                        self.dst[self.op..self.op + pc].copy_from_slice(&self.src[at..at + pc]);
                        self.op += pc;
                    }
                } else {
                    for i in 0..N {
                        let at = orig + i * cols;
                        buf[i * N..(i + 1) * N].copy_from_slice(&self.src[at..at + N]);
                    }
                    whole(self, &buf[..N * N]);
                }
                if self.op > self.src.len() {
                    return false;
                }
            }
        }
        true
    }

    /// A literal cell (token 0 and its bytes), recording where the cell and
    /// the row groups whose table slots were free start. The slots follow
    /// c-blosc2: when the first group was recorded, every group's (hash, new
    /// position) pair is written, a position of 0 clearing the slot of a hash
    /// left from an earlier cell.
    fn literal(&mut self, cell: &[u8], hcell: usize, triples: (&[usize], &[u32]), pairs: (&[usize], &[u32])) {
        let anchor = self.op;
        self.tables.cell[hcell] = (anchor + 1) as u32;
        for ((hashes, at), table) in [(triples, &mut self.tables.triple), (pairs, &mut self.tables.pair)] {
            if at[0] != 0 {
                for (&h, &a) in hashes.iter().zip(at) {
                    table[h] = a;
                }
            }
        }
        self.put(&[0]);
        self.put(cell);
    }

    /// The common start of a whole cell: a run of one byte, or a match of the
    /// whole cell. Returns false when neither applies (nothing written), with
    /// the cell's hash.
    fn whole_cell(&mut self, cell: &[u8]) -> (bool, usize) {
        let anchor = self.op;
        let h = hash(cell);
        let prev = self.tables.cell[h];
        let matched = self.matches(prev, cell, anchor);
        if cell.iter().all(|&b| b == cell[0]) {
            self.put(&[0x40, cell[0]]);
        } else if matched {
            self.put(&[0xC0]);
            self.put_offset(anchor, prev);
        } else {
            return (false, h);
        }
        (true, h)
    }
}

/// Where a decoded cell's bytes are, row after row (rows of the cell's
/// width): in the stream, or in the cell buffer.
enum Cell {
    Src(usize),
    Buf,
}

struct Decoder<'a> {
    src: &'a [u8],
    pos: usize,
}

impl Decoder<'_> {
    /// The position of the next `n` bytes, now read.
    fn take(&mut self, n: usize) -> Option<usize> {
        let at = self.pos;
        if self.src.len() - at < n {
            return None;
        }
        self.pos += n;
        Some(at)
    }

    fn u8(&mut self) -> Option<u8> {
        self.take(1).map(|at| self.src[at])
    }

    fn u16(&mut self) -> Option<u16> {
        self.take(2).map(|at| u16::from_le_bytes([self.src[at], self.src[at + 1]]))
    }

    /// The position of `n` bytes `back` bytes before `from` (a token's position).
    fn back(&self, from: usize, back: usize, n: usize) -> Option<usize> {
        let at = from.checked_sub(back)?;
        (self.src.len() - at >= n).then_some(at)
    }

    /// Copy `n` bytes from `at` in the stream into `dst`.
    fn copy(&self, at: usize, dst: &mut [u8]) {
        dst.copy_from_slice(&self.src[at..at + dst.len()]);
    }

    /// Read `n` more bytes into `dst`.
    fn read(&mut self, dst: &mut [u8]) -> Option<()> {
        let at = self.take(dst.len())?;
        self.copy(at, dst);
        Some(())
    }

    /// The records every cell size shares: literal, run, whole-cell match.
    /// `None` for another token (left to the caller), `Some(None)` for a
    /// bad record.
    fn common(
        &mut self,
        token: u8,
        cur: usize,
        pr: usize,
        pc: usize,
        buf: &mut [u8; 64],
    ) -> Option<Option<Cell>> {
        let n = pr * pc;
        Some(match token {
            0 => self.take(n).map(Cell::Src),
            0xC0 => self.u16().and_then(|off| self.back(cur, usize::from(off), n)).map(Cell::Src),
            0x40 => self.u8().map(|b| {
                buf.fill(b);
                Cell::Buf
            }),
            _ => return None,
        })
    }
}

#[cfg(test)]
mod tests;
