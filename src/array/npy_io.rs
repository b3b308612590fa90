//! Arrays to and from `.npy` files, streamed: memory stays within a slab of
//! the file (16 MiB or one chunk, whichever is more) plus the array's own
//! few chunks, whatever the array's size.
//!
//! A slab is a box of the array that is whole chunks along the file's
//! outermost axes and spans the other axes entirely, so the file holds it as
//! a few long runs and the array gets each of its chunks whole, once. For
//! C order the outermost axis is the first; for Fortran order, the last.

use super::npy::{header_bytes, FormatError, Header};
use super::{Array, Context, Fill};
use std::fmt;
use std::fs::File;
use std::path::Path;

/// The least memory a slab may take.
const SLAB_BYTES: usize = 16 << 20;

/// Why a conversion failed.
#[derive(Debug)]
pub enum NpyError {
    Io(std::io::Error),
    Format(FormatError),
    Blosc(crate::Error),
}

impl fmt::Display for NpyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            NpyError::Io(e) => write!(f, "{e}"),
            NpyError::Format(e) => write!(f, "{e}"),
            NpyError::Blosc(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for NpyError {}

impl From<std::io::Error> for NpyError {
    fn from(e: std::io::Error) -> Self {
        NpyError::Io(e)
    }
}

impl From<FormatError> for NpyError {
    fn from(e: FormatError) -> Self {
        NpyError::Format(e)
    }
}

impl From<crate::Error> for NpyError {
    fn from(e: crate::Error) -> Self {
        NpyError::Blosc(e)
    }
}

/// Told how many of the items' bytes are done, and how many there are.
pub type Progress<'a> = &'a mut dyn FnMut(u64, u64);

/// The header of the `.npy` file at `path`, checked against the file's length.
pub fn read_header(path: &Path) -> Result<(Header, File), NpyError> {
    let f = File::open(path)?;
    let mut start = [0u8; 12];
    let got = read_all_at(&f, &mut start)?;
    let (_, text_at, len) = Header::needed(&start[..got])?;
    let mut bytes = vec![0u8; text_at + len];
    let got = read_all_at(&f, &mut bytes)?;
    let header = Header::parse(&bytes[..got])?;
    let need = header
        .data_offset
        .checked_add(header.data_len()?)
        .ok_or_else(|| FormatError("the array's size overflows".into()))?;
    let have = f.metadata()?.len();
    if have < need {
        return Err(FormatError(format!(
            "the file ends early: the header announces {} bytes of items, the file holds {}",
            need - header.data_offset,
            have.saturating_sub(header.data_offset)
        ))
        .into());
    }
    Ok((header, f))
}

fn read_all_at(f: &File, buf: &mut [u8]) -> std::io::Result<usize> {
    crate::os::read_at(f, 0, buf)
}

/// Read exactly `buf.len()` bytes of `f` at `pos`.
fn read_exact_at(f: &File, pos: u64, buf: &mut [u8]) -> std::io::Result<()> {
    if crate::os::read_at(f, pos, buf)? == buf.len() {
        Ok(())
    } else {
        Err(std::io::ErrorKind::UnexpectedEof.into())
    }
}

/// A new array made as `ctx` says, holding the items of the `.npy` file at
/// `path`: its shape and dtype are the file's (`ctx`'s are replaced), and
/// `ctx`'s chunk and block shapes must have as many dimensions.
pub fn import(path: &Path, ctx: &Context, progress: Progress) -> Result<Array, NpyError> {
    let (h, file) = read_header(path)?;
    let mut ctx = ctx.clone();
    ctx.meta.shape = h.shape.clone();
    ctx.meta.dtype = h.dtype.clone();
    ctx.meta.dtype_format = 0;
    ctx.cparams.typesize = i32::try_from(h.itemsize)
        .ok()
        .filter(|&t| t > 0)
        .ok_or_else(|| FormatError(format!("items of {} bytes", h.itemsize)))?;
    ctx.dparams.typesize = ctx.cparams.typesize;
    if ctx.meta.chunkshape.len() != h.shape.len() || ctx.meta.blockshape.len() != h.shape.len() {
        return Err(FormatError(format!(
            "the chunk and block shapes need {} dimensions, as the array has",
            h.shape.len()
        ))
        .into());
    }
    let mut a = Array::new(&ctx, Fill::Uninit)?;
    let plan = Slabs::new(&h.shape, a.chunkshape(), h.itemsize, h.fortran_order);
    let total = h.data_len()?;
    let mut buf = Vec::new();
    let mut c_order = Vec::new();
    let mut done = 0u64;
    progress(0, total);
    for (start, stop) in plan.boxes() {
        let n = plan.box_bytes(&start, &stop);
        buf.resize(n, 0);
        for (file_off, at, len) in plan.runs(&start, &stop) {
            read_exact_at(&file, h.data_offset + file_off, &mut buf[at..at + len])?;
        }
        let items = if h.fortran_order {
            c_order.resize(n, 0);
            fortran_to_c(&buf, &mut c_order, &box_shape(&start, &stop), h.itemsize);
            &c_order
        } else {
            &buf
        };
        a.set_slice(&start, &stop, items)?;
        done += n as u64;
        progress(done, total);
    }
    Ok(a)
}

/// Write `array`'s items to a new `.npy` file at `path`, in C order or in
/// Fortran order; its dtype must be a NumPy one.
pub fn export(array: &Array, path: &Path, fortran_order: bool, progress: Progress) -> Result<(), NpyError> {
    let itemsize = array.typesize();
    let dt_size = super::npy::dtype_itemsize(array.dtype())?;
    if dt_size != itemsize {
        return Err(FormatError(format!(
            "the dtype {:?} has items of {dt_size} bytes, the array's are {itemsize}",
            array.dtype()
        ))
        .into());
    }
    // a chunk the array's metalayer makes too big to hold is refused before any slab is allocated
    array.geometry().chunk_bytes(itemsize)?;
    let header = header_bytes(array.dtype(), fortran_order, array.shape())?;
    let file = std::fs::OpenOptions::new().write(true).create_new(true).open(path)?;
    crate::os::write_all_at(&file, 0, &header)?;
    let total = array
        .shape()
        .iter()
        .try_fold(itemsize as u64, |acc, &d| acc.checked_mul(d as u64))
        .ok_or(crate::Error::InvalidParam)?;
    file.set_len(header.len() as u64 + total)?;
    let plan = Slabs::new(array.shape(), array.chunkshape(), itemsize, fortran_order);
    let mut buf = Vec::new();
    let mut f_order = Vec::new();
    let mut done = 0u64;
    progress(0, total);
    for (start, stop) in plan.boxes() {
        let n = plan.box_bytes(&start, &stop);
        buf.resize(n, 0);
        array.get_slice(&start, &stop, &mut buf)?;
        let items = if fortran_order {
            f_order.resize(n, 0);
            c_to_fortran(&buf, &mut f_order, &box_shape(&start, &stop), itemsize);
            &f_order
        } else {
            &buf
        };
        for (file_off, at, len) in plan.runs(&start, &stop) {
            crate::os::write_all_at(&file, header.len() as u64 + file_off, &items[at..at + len])?;
        }
        done += n as u64;
        progress(done, total);
    }
    Ok(())
}

fn box_shape(start: &[i64], stop: &[i64]) -> Vec<i64> {
    start.iter().zip(stop).map(|(a, b)| b - a).collect()
}

/// How a file of `shape` is read or written in slabs.
struct Slabs {
    shape: Vec<i64>,
    chunks: Vec<i64>,
    itemsize: usize,
    /// The array's axes from the file's outermost to its innermost.
    axes: Vec<usize>,
    /// How many of the outermost axes a slab takes in whole chunks.
    k: usize,
}

impl Slabs {
    fn new(shape: &[i64], chunkshape: &[i32], itemsize: usize, fortran: bool) -> Slabs {
        let nd = shape.len();
        let chunks: Vec<i64> = (0..nd).map(|i| i64::from(chunkshape[i]).clamp(1, shape[i].max(1))).collect();
        let axes: Vec<usize> = if fortran { (0..nd).rev().collect() } else { (0..nd).collect() };
        let chunk_bytes = chunks.iter().fold(itemsize as u128, |acc, &c| acc * c as u128);
        let budget = (SLAB_BYTES as u128).max(chunk_bytes);
        // The fewest outer axes in chunks that bring the slab within the budget.
        let mut k = nd.min(1);
        while k < nd {
            let bytes = (0..nd).fold(itemsize as u128, |acc, j| {
                acc * if j < k { chunks[axes[j]] } else { shape[axes[j]] } as u128
            });
            if bytes <= budget {
                break;
            }
            k += 1;
        }
        Slabs { shape: shape.to_vec(), chunks, itemsize, axes, k }
    }

    /// The slabs in file order: (start, stop) in the array's axes.
    fn boxes(&self) -> Vec<(Vec<i64>, Vec<i64>)> {
        let nd = self.shape.len();
        if self.shape.contains(&0) {
            return Vec::new();
        }
        let counts: Vec<i64> = (0..self.k)
            .map(|j| (self.shape[self.axes[j]] + self.chunks[self.axes[j]] - 1) / self.chunks[self.axes[j]])
            .collect();
        let mut out = Vec::new();
        let mut idx = vec![0i64; self.k];
        loop {
            let mut start = vec![0i64; nd];
            let mut stop = self.shape.clone();
            for (j, &i) in idx.iter().enumerate() {
                let ax = self.axes[j];
                start[ax] = i * self.chunks[ax];
                stop[ax] = (start[ax] + self.chunks[ax]).min(self.shape[ax]);
            }
            out.push((start, stop));
            // the next index, the innermost of the k axes fastest
            let mut j = self.k;
            loop {
                if j == 0 {
                    return out;
                }
                j -= 1;
                idx[j] += 1;
                if idx[j] < counts[j] {
                    break;
                }
                idx[j] = 0;
            }
        }
    }

    fn box_bytes(&self, start: &[i64], stop: &[i64]) -> usize {
        start.iter().zip(stop).map(|(a, b)| (b - a) as usize).product::<usize>() * self.itemsize
    }

    /// The slab's runs: (offset in the file's items, offset in the slab
    /// laid out in file order, length), all in bytes.
    fn runs(&self, start: &[i64], stop: &[i64]) -> Vec<(u64, usize, usize)> {
        let nd = self.shape.len();
        if nd == 0 {
            return vec![(0, 0, self.itemsize)];
        }
        // strides of the file, in file-axis order
        let mut stride = vec![self.itemsize as u64; nd];
        for j in (0..nd - 1).rev() {
            stride[j] = stride[j + 1] * self.shape[self.axes[j + 1]] as u64;
        }
        let last = self.k - 1;
        let ext = |j: usize| (stop[self.axes[j]] - start[self.axes[j]]) as u64;
        let run = (ext(last) * stride[last]) as usize;
        let base: u64 = (0..=last).map(|j| start[self.axes[j]] as u64 * stride[j]).sum();
        let mut out = Vec::new();
        let mut idx = vec![0u64; last];
        let mut at = 0usize;
        loop {
            let off = base + idx.iter().enumerate().map(|(j, &i)| i * stride[j]).sum::<u64>();
            out.push((off, at, run));
            at += run;
            let mut j = last;
            loop {
                if j == 0 {
                    return out;
                }
                j -= 1;
                idx[j] += 1;
                if idx[j] < ext(j) {
                    break;
                }
                idx[j] = 0;
            }
        }
    }
}

/// Items of a box laid out in Fortran order, copied into C order.
fn fortran_to_c(src: &[u8], dst: &mut [u8], shape: &[i64], itemsize: usize) {
    transpose(src, dst, shape, itemsize, true);
}

/// Items of a box laid out in C order, copied into Fortran order.
fn c_to_fortran(src: &[u8], dst: &mut [u8], shape: &[i64], itemsize: usize) {
    transpose(src, dst, shape, itemsize, false);
}

/// Walk the box in C order; the Fortran-order offset follows along.
/// `gather`: read Fortran, write C; else read C, write Fortran.
fn transpose(src: &[u8], dst: &mut [u8], shape: &[i64], itemsize: usize, gather: bool) {
    let nd = shape.len();
    let n: usize = shape.iter().map(|&s| s as usize).product();
    if n == 0 {
        return;
    }
    if nd <= 1 {
        dst[..n * itemsize].copy_from_slice(&src[..n * itemsize]);
        return;
    }
    // Fortran strides in items
    let mut fstride = vec![1usize; nd];
    for i in 1..nd {
        fstride[i] = fstride[i - 1] * shape[i - 1] as usize;
    }
    let inner = shape[nd - 1] as usize;
    let mut idx = vec![0usize; nd - 1];
    let mut c = 0usize;
    loop {
        let base: usize = idx.iter().enumerate().map(|(i, &x)| x * fstride[i]).sum();
        for j in 0..inner {
            let f = (base + j * fstride[nd - 1]) * itemsize;
            let (s, d) = if gather { (f, c) } else { (c, f) };
            dst[d..d + itemsize].copy_from_slice(&src[s..s + itemsize]);
            c += itemsize;
        }
        let mut i = nd - 1;
        loop {
            if i == 0 {
                return;
            }
            i -= 1;
            idx[i] += 1;
            if idx[i] < shape[i] as usize {
                break;
            }
            idx[i] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slabs_cover_the_array_once_in_file_order() {
        for fortran in [false, true] {
            for (shape, chunks, its) in [
                (vec![10i64, 7, 5], vec![3i32, 4, 2], 8usize),
                (vec![2000, 3000], vec![100, 100], 8),
                (vec![5], vec![2], 2),
                (vec![4, 1 << 22], vec![2, 1 << 20], 1),
            ] {
                let p = Slabs::new(&shape, &chunks, its, fortran);
                let total: i64 = shape.iter().product();
                let mut seen = 0i64;
                let mut file_bytes = Vec::new();
                for (start, stop) in p.boxes() {
                    assert!(
                        p.box_bytes(&start, &stop)
                            <= SLAB_BYTES.max(chunks.iter().map(|&c| c as usize).product::<usize>() * its)
                    );
                    seen += box_shape(&start, &stop).iter().product::<i64>();
                    let mut at = 0;
                    for (off, a, len) in p.runs(&start, &stop) {
                        assert_eq!(a, at);
                        at += len;
                        file_bytes.push((off, len));
                    }
                    assert_eq!(at, p.box_bytes(&start, &stop));
                }
                assert_eq!(seen, total, "{shape:?}");
                file_bytes.sort();
                let mut end = 0u64;
                for (off, len) in file_bytes {
                    assert_eq!(off, end, "runs tile the file: {shape:?} {fortran}");
                    end += len as u64;
                }
                assert_eq!(end, total as u64 * its as u64);
            }
        }
    }

    #[test]
    fn transposes_round_trip() {
        let shape = [3i64, 4, 5];
        let c: Vec<u8> = (0..60u8).collect();
        let mut f = vec![0u8; 60];
        c_to_fortran(&c, &mut f, &shape, 1);
        // item (i, j, k) is at i + 3j + 12k in Fortran order
        assert_eq!(f[1 + 3 * 2 + 12 * 4], c[20 + 2 * 5 + 4]);
        let mut back = vec![0u8; 60];
        fortran_to_c(&f, &mut back, &shape, 1);
        assert_eq!(back, c);
    }
}
