//! The safe Rust API of n-dimensional arrays, end to end: an array in a frame
//! file, grown, cut and sliced chunk by chunk, a view, a copy, reopened.
//!
//!     cargo run --release --example arrays [DIR]

use b2nd::b2nd::{Array, Context};
use b2nd::chunk::CParams;
use b2nd::codecs::Codec;
use b2nd::error::Result;

fn f64s(bytes: &[u8]) -> Vec<f64> {
    bytes.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect()
}

fn bytes(values: impl IntoIterator<Item = f64>) -> Vec<u8> {
    values.into_iter().flat_map(f64::to_le_bytes).collect()
}

fn main() -> Result<()> {
    let dir = std::env::args().nth(1).map_or_else(std::env::temp_dir, Into::into);
    let path = dir.join("example_arrays.b2nd").to_string_lossy().into_owned();
    let copy_path = dir.join("example_arrays_copy.b2nd").to_string_lossy().into_owned();
    for p in [&path, &copy_path] {
        b2nd::schunk::remove_urlpath(p)?;
    }

    // 1000 x 600 float64 in chunks of 200 x 200 (blocks of 50 x 200), Zstd + shuffle.
    let cparams = CParams::classic(Codec::Zstd, 1, 1, 8, false);
    let ctx = Context::new(&[1000, 600], &[200, 200], &[50, 200], cparams).dtype("<f8").stored(&path, true);
    let data = bytes((0..1000 * 600).map(|i| i as f64 * 0.5));
    let mut a = Array::from_buffer(&ctx, &data)?;
    println!("created {:?} {} in {} chunks", a.shape(), a.dtype(), a.schunk().read()?.nchunks());

    // Grow and cut, chunk by chunk: 200 rows appended, 100 columns opened at
    // column 250 (not on a chunk boundary), 200 rows deleted from row 400.
    a.append(&bytes(std::iter::repeat_n(-1.0, 200 * 600)), 0)?;
    a.resize(&[1200, 700], Some(&[1200, 250]))?;
    a.delete(0, 400, 200)?;
    println!("after append, resize and delete: {:?}", a.shape());

    // A slice into a buffer, and one into a new array.
    let mut row = vec![0u8; 700 * 8];
    a.get_slice(&[500, 0], &[501, 700], &mut row)?;
    let row = f64s(&row);
    println!("row 500: [{}, {}, ..., {} (opened), ..., {}]", row[0], row[249], row[300], row[699]);
    let part = a.slice(&Context::new(&[0, 0], &[100, 100], &[50, 100], CParams::classic(Codec::Lz4, 5, 1, 8, false)), &[0, 0], &[300, 300])?;
    println!("slice into a new in-memory array: {:?}", part.shape());

    // A view with a new first dimension, copied to another file with its shape.
    let view = a.expand_dims(&[true, false, false])?;
    let copy = view.copy(&Context::new(&[], &[1, 200, 200], &[1, 50, 200], CParams::classic(Codec::Zstd, 1, 1, 8, false)).stored(&copy_path, true))?;
    println!("view {:?} copied to {}", copy.shape(), copy_path);
    drop((a, copy));

    let again = Array::open(&path)?;
    let mut v = vec![0u8; 8];
    again.get_slice(&[999, 699], &[1000, 700], &mut v)?;
    println!("reopened {:?}; last item {}", again.shape(), f64s(&v)[0]);
    Ok(())
}
