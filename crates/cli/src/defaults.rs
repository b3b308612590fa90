//! The parameters python-blosc2 (4.14) chooses for a new array when none are
//! given, so that `b2nd convert` makes the array `blosc2.asarray` would:
//! Zstd level 5 with shuffle, and chunk and block shapes sized from the CPU's
//! caches (as python-blosc2 reads them).

use b2nd::chunk::CParams;
use b2nd::codecs::Codec;

/// python-blosc2's default compression parameters for items of `dtype`
/// (a unicode string array shuffles its 4-byte code points).
pub fn cparams(dtype: &str) -> CParams {
    let mut cp = CParams::classic(Codec::Zstd, 5, 0, 8, false);
    cp.filters = [0, 0, 0, 0, 0, b2nd::params::filter::SHUFFLE];
    if dtype.starts_with("<U") || dtype.starts_with(">U") {
        cp.filters_meta[5] = 4;
    }
    cp
}

/// The CPU's data cache sizes in bytes: L1d, L2, L3.
struct Caches {
    l1: u64,
    l2: u64,
    l3: u64,
}

impl Caches {
    /// As python-blosc2 reads them (`b2nd::os::cache_sizes`), with its
    /// defaults, 32 KiB, 256 KiB and 1 MiB, where a size does not read.
    fn read() -> Caches {
        let [l1, l2, l3] = b2nd::os::cache_sizes();
        Caches { l1: l1.unwrap_or(32 << 10), l2: l2.unwrap_or(256 << 10), l3: l3.unwrap_or(1 << 20) }
    }
}

/// The largest divisor of `n` that is at most `r` (1 when there is none).
fn divisor_at_most(n: u64, r: u64) -> u64 {
    let mut best = 1;
    let mut i = 1;
    while i * i <= n {
        if n.is_multiple_of(i) {
            for d in [i, n / i] {
                if d <= r && d > best {
                    best = d;
                }
            }
        }
        i += 1;
    }
    best
}

/// Share `budget` items among the dimensions from the last to the first:
/// each takes its whole length while the budget allows, else the budget
/// (a divisor of its length when one is more than half of it).
fn partition(mut budget: u64, shape: &[u64], min: &[u64]) -> Vec<u64> {
    let mut part = vec![1u64; shape.len()];
    for d in (0..shape.len()).rev() {
        if budget <= 1 {
            break;
        }
        let mut r = shape[d].max(min[d]);
        if r > budget {
            r = budget.max(min[d]);
            if !shape[d].is_multiple_of(r) {
                let nr = divisor_at_most(shape[d], r);
                if nr > r / 2 {
                    r = nr;
                }
            }
        }
        part[d] = r;
        budget /= r.max(1);
    }
    part
}

/// python-blosc2's chunk and block shapes for an array of `shape` and items
/// of `itemsize` bytes, on a machine with these caches.
fn computed(shape: &[u64], itemsize: u64, c: &Caches) -> (Vec<u64>, Vec<u64>) {
    if shape.contains(&0) {
        return (shape.to_vec(), shape.to_vec());
    }
    let nd = shape.len();
    let min_block = if cfg!(target_arch = "x86_64") {
        if c.l2 >= 2 << 20 {
            4 * c.l1
        } else {
            c.l2 / 4
        }
    } else {
        c.l1
    };
    let bs = (32u64 << 10).max(min_block).max(itemsize);
    let blocks = partition(bs / itemsize, shape, &vec![1; nd]);
    let bbytes = blocks.iter().product::<u64>() * itemsize;
    let mut cs = if bbytes * 32 < 1 << 26 { bbytes * 32 } else { bbytes };
    if c.l3 > c.l2 {
        cs = c.l3;
    }
    cs /= 4;
    if c.l2 > cs {
        cs = if cfg!(target_os = "macos") { c.l2 } else { (c.l2 / 4).max(cs) };
    }
    cs = cs.clamp(4 << 20, (1u64 << 31) - 33).max(bbytes);
    cs = cs / bbytes * bbytes;
    let mut chunks = partition(cs / itemsize, shape, &blocks);
    for i in 0..nd {
        if !chunks[i].is_multiple_of(blocks[i]) {
            chunks[i] = (chunks[i] / blocks[i] + 1) * blocks[i];
        }
        chunks[i] = chunks[i].min(shape[i]);
    }
    (chunks, blocks)
}

/// The chunk and block shapes: those given, the others as python-blosc2
/// chooses them (blocks within given chunks: the default ones, cut to fit).
pub fn chunks_blocks(
    shape: &[i64],
    itemsize: usize,
    chunks: Option<&[i64]>,
    blocks: Option<&[i64]>,
) -> Result<(Vec<i32>, Vec<i32>), String> {
    let nd = shape.len();
    for (opt, v) in [("--chunks", chunks), ("--blocks", blocks)] {
        if v.is_some_and(|v| v.len() != nd) {
            return Err(format!("{opt} needs {nd} lengths, one per dimension of the array"));
        }
    }
    let ushape: Vec<u64> = shape.iter().map(|&s| s.max(0) as u64).collect();
    let (dc, db) = computed(&ushape, itemsize.max(1) as u64, &Caches::read());
    let narrow = |v: Vec<u64>| -> Result<Vec<i32>, String> {
        v.into_iter()
            .map(|x| i32::try_from(x).map_err(|_| format!("a chunk length of {x} (over 2^31)")))
            .collect()
    };
    let chunks: Vec<i32> = match chunks {
        Some(c) => c.iter().map(|&x| x as i32).collect(),
        None => narrow(dc)?,
    };
    let blocks: Vec<i32> = match blocks {
        Some(b) => b.iter().map(|&x| x as i32).collect(),
        None => narrow(db)?.into_iter().zip(&chunks).map(|(b, &c)| b.min(c)).collect(),
    };
    if blocks.iter().zip(&chunks).any(|(b, c)| b > c) {
        return Err(format!("blocks {blocks:?} do not fit in chunks {chunks:?}"));
    }
    Ok((chunks, blocks))
}

// (python-blosc2 picks other block sizes off x86-64)
#[cfg(all(test, target_arch = "x86_64"))]
mod tests {
    use super::*;

    /// A case: shape, item size, and the chunk and block shapes python-blosc2 picks.
    type Case<'a> = (&'a [u64], u64, &'a [u64], &'a [u64]);

    #[test]
    fn shapes_as_python_blosc2_chooses_them() {
        // python-blosc2 4.14.1 on a machine with 48 KiB L1d, 2 MiB L2, 300 MiB L3
        let c = Caches { l1: 48 << 10, l2: 2 << 20, l3: 300 << 20 };
        let cases: &[Case] = &[
            (&[1000000], 8, &[1000000], &[20000]),
            (&[100000000], 1, &[50080000], &[160000]),
            (&[7000003], 8, &[7000003], &[24576]),
            (&[30000000], 16, &[3756000], &[12000]),
            (&[1000, 1000], 1, &[1000, 1000], &[125, 1000]),
            (&[10000, 10000], 8, &[626, 10000], &[2, 10000]),
            (&[20000, 20000], 4, &[800, 20000], &[2, 20000]),
            (&[1000000, 3], 8, &[1000000, 3], &[8000, 3]),
            (&[1000, 1000, 100], 8, &[50, 1000, 100], &[1, 200, 100]),
            (&[500, 600, 700], 2, &[50, 600, 700], &[1, 120, 700]),
            (&[128, 128, 128, 128], 1, &[32, 128, 128, 128], &[1, 8, 128, 128]),
            (&[1000, 100], 400, &[1000, 100], &[4, 100]),
            (&[1000], 300, &[1000], &[500]),
            (&[], 8, &[], &[]),
            (&[0, 10], 8, &[0, 10], &[0, 10]),
        ];
        for &(shape, isz, chunks, blocks) in cases {
            assert_eq!(computed(shape, isz, &c), (chunks.to_vec(), blocks.to_vec()), "{shape:?} x {isz}");
        }
    }
}
