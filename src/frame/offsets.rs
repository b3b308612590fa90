//! The offsets index of an open frame, in memory as runs of equal entries.
//!
//! A stored chunk has an offset (or chunk id) of its own, but special chunks
//! repeat the same value: a frame of millions of chunks of zeros has an index
//! of a few bytes on disk. Held as runs, the index takes memory by what the
//! frame really holds (its stored chunks and its runs of specials), not by
//! the chunk count its header states.

use crate::chunk::header::{Header, Special};
use crate::chunk::{DParams, Decompressor};
use crate::error::{Error, Result};

/// Decode an offsets index chunk of `n` entries (`index`, as stored) into
/// runs, piece by piece: the decoded entries never sit in memory whole. An
/// index that alternates more often than `frame_len` bytes of frame can hold
/// (stored chunks each take bytes, runs of specials come between them) is a
/// crafted one and is refused before it takes more memory. `check` vets each
/// entry.
pub fn decode_index(
    index: &[u8],
    n: u64,
    frame_len: u64,
    check: impl Fn(i64) -> Result<i64>,
) -> Result<Offsets> {
    let mut offsets = Offsets::new();
    if n == 0 {
        return Ok(offsets);
    }
    let (nbytes, cbytes, _) = Header::sizes(index)?;
    if nbytes < 0 || nbytes as u64 != 8 * n || cbytes < 16 || cbytes as usize > index.len() {
        return Err(Error::InvalidHeader);
    }
    let index = &index[..cbytes as usize];
    let ih = Header::parse(index)?;
    if ih.special() == Special::Value && ih.typesize == 8 && index.len() >= 40 {
        // one value repeated (what a frame filled with one special writes)
        let v = i64::from_le_bytes(index[32..40].try_into().map_err(|_| Error::InvalidHeader)?);
        offsets.push_n(check(v)?, n);
        return named_once(offsets);
    }
    const PIECE: u64 = 1 << 16;
    let max_runs = frame_len.saturating_mul(2).max(1 << 20);
    let mut d = Decompressor::new(DParams::default());
    let mut buf = vec![0u8; 8 * PIECE.min(n) as usize];
    let mut at = 0u64;
    while at < n {
        let k = (n - at).min(PIECE);
        let piece = &mut buf[..8 * k as usize];
        if d.getitem_bytes(index, (8 * at) as i64, (8 * k) as i64, piece)? != piece.len() {
            return Err(Error::InvalidHeader);
        }
        for b in piece.chunks_exact(8) {
            offsets.push(check(i64::from_le_bytes(b.try_into().map_err(|_| Error::InvalidHeader)?))?);
        }
        // (a stored chunk repeated is refused as soon as a piece shows it)
        let start = offsets.runs.len().checked_sub(2).map_or(0, |k| offsets.runs[k].1);
        if let Some(&(v, end)) = offsets.runs.last() {
            if v >= 0 && end - start > 1 {
                return named_once(offsets);
            }
        }
        if offsets.runs() as u64 > max_runs {
            crate::trace!(
                "the offsets index alternates more often than a frame of {frame_len} bytes can justify"
            );
            return Err(Error::InvalidHeader);
        }
        at += k;
    }
    named_once(offsets)
}

/// A stored chunk is named by one index entry: no writer repeats an offset
/// (or a chunk file's id), and a crafted index that repeats one a billion
/// times would make every walk over the chunks (a copy, a slice search) that long.
fn named_once(offsets: Offsets) -> Result<Offsets> {
    let mut start = 0u64;
    for &(v, end) in &offsets.runs {
        if v >= 0 && end - start > 1 {
            crate::trace!("the offsets index names the chunk at {v} {} times in a row", end - start);
            return Err(Error::InvalidHeader);
        }
        start = end;
    }
    Ok(offsets)
}

/// Runs of equal entries: `(value, end)`, `end` the index after the run.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Offsets {
    runs: Vec<(i64, u64)>,
}

impl Offsets {
    pub fn new() -> Offsets {
        Offsets::default()
    }

    pub fn len(&self) -> usize {
        self.runs.last().map_or(0, |r| r.1 as usize)
    }

    /// How many runs hold the entries (what the index takes in memory, 16 bytes each).
    pub fn runs(&self) -> usize {
        self.runs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.runs.is_empty()
    }

    /// The run holding entry `i`.
    fn run_of(&self, i: usize) -> Option<usize> {
        if i >= self.len() {
            return None;
        }
        Some(self.runs.partition_point(|r| r.1 <= i as u64))
    }

    pub fn get(&self, i: usize) -> Option<i64> {
        self.run_of(i).map(|r| self.runs[r].0)
    }

    /// Add `n` entries of `value` at the end.
    pub fn push_n(&mut self, value: i64, n: u64) {
        if n == 0 {
            return;
        }
        let end = self.len() as u64 + n;
        match self.runs.last_mut() {
            Some(last) if last.0 == value => last.1 = end,
            _ => self.runs.push((value, end)),
        }
    }

    pub fn push(&mut self, value: i64) {
        self.push_n(value, 1);
    }

    /// `n` entries of `value`.
    pub fn repeat(value: i64, n: usize) -> Offsets {
        let mut o = Offsets::new();
        o.push_n(value, n as u64);
        o
    }

    /// Every entry, in order.
    pub fn iter(&self) -> impl Iterator<Item = i64> + '_ {
        let mut start = 0u64;
        self.runs.iter().flat_map(move |&(v, end)| {
            let n = end - start;
            start = end;
            std::iter::repeat_n(v, n as usize)
        })
    }

    /// The runs: value, first entry, entry after the last.
    pub fn spans(&self) -> impl Iterator<Item = (i64, usize, usize)> + '_ {
        let mut start = 0usize;
        self.runs.iter().map(move |&(v, end)| {
            let s = start;
            start = end as usize;
            (v, s, end as usize)
        })
    }

    /// The distinct values in order of their runs (each stored chunk once).
    pub fn values(&self) -> impl Iterator<Item = i64> + '_ {
        self.runs.iter().map(|r| r.0)
    }

    pub fn to_vec(&self) -> Vec<i64> {
        self.iter().collect()
    }

    /// Rebuild from entries (merging equal neighbours).
    pub fn from_entries(entries: impl IntoIterator<Item = i64>) -> Offsets {
        let mut o = Offsets::new();
        for v in entries {
            o.push(v);
        }
        o
    }

    /// Entries `start..` with `f` applied to each run's value.
    pub fn map_values(&mut self, f: impl Fn(i64) -> i64) {
        for r in &mut self.runs {
            r.0 = f(r.0);
        }
        self.merge();
    }

    /// Merge equal neighbours around run `r` (after a change there).
    fn merge_near(&mut self, r: usize) {
        let lo = r.saturating_sub(1);
        let hi = (r + 2).min(self.runs.len());
        for k in (lo + 1..hi).rev() {
            if self.runs[k - 1].0 == self.runs[k].0 {
                self.runs[k - 1].1 = self.runs[k].1;
                self.runs.remove(k);
            }
        }
    }

    fn merge(&mut self) {
        let mut out: Vec<(i64, u64)> = Vec::with_capacity(self.runs.len());
        for &(v, end) in &self.runs {
            match out.last_mut() {
                Some(last) if last.0 == v => last.1 = end,
                _ => out.push((v, end)),
            }
        }
        self.runs = out;
    }

    /// Split the runs so that one starts at entry `i` (`i <= len`); returns its run index.
    fn split_at(&mut self, i: usize) -> usize {
        let i = i as u64;
        let r = self.runs.partition_point(|r| r.1 <= i);
        if r == self.runs.len() {
            return r;
        }
        let start = if r == 0 { 0 } else { self.runs[r - 1].1 };
        if start == i {
            return r;
        }
        let v = self.runs[r].0;
        self.runs.insert(r, (v, i));
        r + 1
    }

    pub fn set(&mut self, i: usize, value: i64) {
        if i >= self.len() {
            return;
        }
        let r = self.split_at(i);
        self.split_at(i + 1);
        self.runs[r].0 = value;
        self.merge_near(r);
    }

    pub fn insert(&mut self, i: usize, value: i64) {
        let i = i.min(self.len());
        if i == self.len() {
            self.push(value);
            return;
        }
        let r = self.split_at(i);
        for run in &mut self.runs[r..] {
            run.1 += 1;
        }
        self.runs.insert(r, (value, i as u64 + 1));
        self.merge_near(r);
    }

    pub fn remove(&mut self, i: usize) -> Option<i64> {
        let r = self.run_of(i)?;
        let v = self.runs[r].0;
        for run in &mut self.runs[r..] {
            run.1 -= 1;
        }
        let start = if r == 0 { 0 } else { self.runs[r - 1].1 };
        if self.runs[r].1 == start {
            self.runs.remove(r);
        }
        self.merge_near(r);
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::writer::index_chunk;

    #[test]
    fn an_index_decodes_into_its_runs() {
        let mut o = Offsets::new();
        // (Under Miri 7000 entries: it is slow.)
        let n: i64 = if cfg!(miri) { 7_000 } else { 70_000 };
        for i in 0..n {
            o.push(if i % 1000 < 500 { i64::MIN | (1 << 56) } else { i * 100 });
        }
        let index = index_chunk(&o, o.len()).unwrap();
        let back = decode_index(&index, o.len() as u64, 10 << 20, Ok).unwrap();
        assert_eq!(back, o);
        // the wrong entry count, or a checker that refuses an entry, fail
        assert!(decode_index(&index, o.len() as u64 + 1, 10 << 20, Ok).is_err());
        assert!(decode_index(&index, o.len() as u64, 10 << 20, |v| if v == (n - 1) * 100 {
            Err(Error::InvalidHeader)
        } else {
            Ok(v)
        })
        .is_err());
        assert!(decode_index(&index[..index.len() - 1], o.len() as u64, 10 << 20, Ok).is_err());
    }

    #[test]
    fn an_index_alternating_more_than_its_frame_can_hold_is_refused() {
        // 1.2 M entries alternating between two values: 1.2 M runs, from a
        // compressed index of a few kB; a frame of 1 kB cannot hold them
        // (under Miri 12,000 entries, too few to be refused, only decoded:
        // it is slow)
        let n: i64 = if cfg!(miri) { 12_000 } else { 1_200_000 };
        let o = Offsets::from_entries((0..n).map(|i| i & 1));
        let index = index_chunk(&o, o.len()).unwrap();
        assert!(index.len() < 100_000, "{}", index.len());
        if !cfg!(miri) {
            assert!(decode_index(&index, o.len() as u64, 1024, Ok).is_err());
        }
        assert_eq!(decode_index(&index, o.len() as u64, 1 << 20, Ok).unwrap().runs(), n as usize);
    }

    #[test]
    fn an_index_naming_a_chunk_twice_in_a_row_is_refused() {
        // specials repeat; a stored chunk named by consecutive entries does not
        for entries in [vec![0i64, 100, 100, 200], vec![5; 1000]] {
            let o = Offsets::from_entries(entries);
            let index = index_chunk(&o, o.len()).unwrap();
            assert_eq!(decode_index(&index, o.len() as u64, 1 << 20, Ok), Err(Error::InvalidHeader));
        }
        let o = Offsets::from_entries([0i64, 100, i64::MIN | (1 << 56), i64::MIN | (1 << 56), 200]);
        let index = index_chunk(&o, o.len()).unwrap();
        assert_eq!(decode_index(&index, o.len() as u64, 1 << 20, Ok).unwrap(), o);
    }

    #[test]
    fn behaves_as_a_vector() {
        let mut v: Vec<i64> = Vec::new();
        let mut o = Offsets::new();
        let mut x = 12345u64;
        // (Under Miri 600 steps: it is slow.)
        for step in 0..if cfg!(miri) { 600 } else { 3000 } {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let val = if x.is_multiple_of(3) { (x % 50) as i64 } else { -((x % 3) as i64) - 1 };
            match (x >> 8) % 5 {
                0 | 1 => {
                    let n = 1 + (x >> 20) % 40;
                    o.push_n(val, n);
                    v.extend(std::iter::repeat_n(val, n as usize));
                }
                2 if !v.is_empty() => {
                    let i = (x >> 16) as usize % v.len();
                    assert_eq!(o.remove(i), Some(v.remove(i)));
                }
                3 => {
                    let i = (x >> 16) as usize % (v.len() + 1);
                    o.insert(i, val);
                    v.insert(i, val);
                }
                _ if !v.is_empty() => {
                    let i = (x >> 16) as usize % v.len();
                    o.set(i, val);
                    v[i] = val;
                }
                _ => {}
            }
            assert_eq!(o.len(), v.len(), "step {step}");
            if step % 97 == 0 {
                assert_eq!(o.to_vec(), v);
                for (i, &e) in v.iter().enumerate() {
                    assert_eq!(o.get(i), Some(e));
                }
                o.map_values(|a| if a > 10 { a + 5 } else { a });
                for e in &mut v {
                    if *e > 10 {
                        *e += 5;
                    }
                }
                assert_eq!(o.to_vec(), v);
            }
        }
        assert_eq!(o.get(v.len()), None);
        assert_eq!(Offsets::from_entries(v.iter().copied()), o);
        let n = usize::MAX / 3; // (1 << 40 where usize has 64 bits would do as well)
        let big = Offsets::repeat(-7, n);
        assert_eq!(big.len(), n);
        assert_eq!(big.runs.len(), 1);
    }
}
