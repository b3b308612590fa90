//! The safe Rust API of n-dimensional arrays, end to end: an array of f64 in
//! a frame file, grown, cut and sliced chunk by chunk as typed elements, a
//! view, a copy, reopened; a read as the wrong type is refused.
//!
//!     cargo run --release --example arrays [DIR]
//!
//! DIR (where the two files go) is the system's temporary directory by default, and the
//! current directory on WASI, which has none: `wasmtime run --dir . arrays.wasm`.

use b2nd::chunk::CParams;
use b2nd::codecs::Codec;
use b2nd::{Array, Context};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let dir: std::path::PathBuf = match std::env::args_os().nth(1) {
        Some(dir) => dir.into(),
        // (std's temp_dir panics there)
        None if cfg!(target_os = "wasi") => ".".into(),
        None => std::env::temp_dir(),
    };
    let path = dir.join("example_arrays.b2nd").to_string_lossy().into_owned();
    let copy_path = dir.join("example_arrays_copy.b2nd").to_string_lossy().into_owned();
    for p in [&path, &copy_path] {
        b2nd::schunk::remove_urlpath(p)?;
    }

    // 1000 x 600 float64 in chunks of 200 x 200 (blocks of 50 x 200), Zstd + shuffle.
    let cparams = CParams::classic(Codec::Zstd, 1, 1, 8, false);
    let ctx = Context::of::<f64>(&[1000, 600], &[200, 200], &[50, 200], cparams).stored(&path, true);
    let data: Vec<f64> = (0..1000 * 600).map(|i| i as f64 * 0.5).collect();
    let mut a = Array::from_elements(&ctx, &data)?;
    println!("created {:?} {} in {} chunks", a.shape(), a.dtype(), a.schunk().read()?.nchunks());

    // Grow and cut, chunk by chunk: 200 rows appended, 100 columns opened at
    // column 250 (not on a chunk boundary), 200 rows deleted from row 400.
    a.append_as(&vec![-1.0f64; 200 * 600], 0)?;
    a.resize(&[1200, 700], Some(&[1200, 250]))?;
    a.delete(0, 400, 200)?;
    println!("after append, resize and delete: {:?}", a.shape());

    // A slice into a buffer, and one into a new array.
    let row: Vec<f64> = a.get_slice_as(&[500, 0], &[501, 700])?;
    println!("row 500: [{}, {}, ..., {} (opened), ..., {}]", row[0], row[249], row[300], row[699]);
    let part = a.slice(
        &Context::new(&[0, 0], &[100, 100], &[50, 100], CParams::classic(Codec::Lz4, 5, 1, 8, false)),
        &[0, 0],
        &[300, 300],
    )?;
    println!("slice into a new in-memory array: {:?}", part.shape());

    // A view with a new first dimension, copied to another file with its shape.
    let view = a.expand_dims(&[true, false, false])?;
    let copy = view.copy(
        &Context::new(&[], &[1, 200, 200], &[1, 50, 200], CParams::classic(Codec::Zstd, 1, 1, 8, false))
            .stored(&copy_path, true),
    )?;
    println!("view {:?} copied to {}", copy.shape(), copy_path);
    drop((a, copy));

    let again = Array::open(&path)?;
    let last: Vec<f64> = again.get_slice_as(&[999, 699], &[1000, 700])?;
    println!("reopened {:?}; last item {}", again.shape(), last[0]);
    // The dtype is checked: this array holds <f8 items, not f32.
    if let Err(e) = again.get_slice_as::<f32>(&[0, 0], &[1, 1]) {
        println!("read as f32: {e}");
    }
    Ok(())
}
