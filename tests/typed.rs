//! The typed element API (and, with the `ndarray` feature, `ArrayD<T>` in and
//! out) against the byte API, on every element type: the same items in the
//! same places, dtypes checked both ways.

use b2nd::array::{Array, Context, Element, TypedError};
use b2nd::chunk::CParams;

/// Items `i` of `T` made from the bytes `i * 7 + k` (so every byte differs).
fn items<T: Element>(n: usize) -> Vec<T> {
    let size = std::mem::size_of::<T>();
    let bytes: Vec<u8> = (0..n * size).map(|i| ((i / size) * 7 + i % size) as u8).collect();
    bytes.chunks_exact(size).map(bytemuck::pod_read_unaligned).collect()
}

/// The bytes of items (NaN items compare by their bits).
fn b<T: Element>(v: &[T]) -> Vec<u8> {
    bytemuck::cast_slice(v).to_vec()
}

fn check<T: Element + PartialEq + std::fmt::Debug>() {
    let shape = [9i64, 7, 5];
    let n = 9 * 7 * 5;
    let size = std::mem::size_of::<T>();
    let ctx = Context::of::<T>(&shape, &[4, 3, 5], &[2, 3, 2], CParams::default());
    let vals = items::<T>(n);
    let a = Array::from_elements(&ctx, &vals).unwrap();
    assert_eq!((a.dtype(), a.typesize()), (T::DTYPE, size));
    // the same bytes as the byte API reads
    let bytes = a.to_vec().unwrap();
    assert_eq!(bytes, bytemuck::cast_slice::<T, u8>(&vals), "{}", T::DTYPE);
    assert_eq!(b(&a.to_vec_as::<T>().unwrap()), b(&vals));
    // a slice across chunks, typed and as bytes
    let (start, stop) = ([2i64, 1, 1], [8i64, 6, 4]);
    let typed: Vec<T> = a.get_slice_as(&start, &stop).unwrap();
    let mut raw = vec![0u8; 6 * 5 * 3 * size];
    a.get_slice(&start, &stop, &mut raw).unwrap();
    assert_eq!(bytemuck::cast_slice::<T, u8>(&typed), &raw[..]);
    let mut into = vec![T::default(); typed.len()];
    a.get_slice_into_as(&start, &stop, &mut into).unwrap();
    assert_eq!(b(&into), b(&typed));
    // a typed write reads back through the byte API
    let mut c = a.copy(&a.save_context(Default::default())).unwrap();
    let new = items::<T>(90).into_iter().rev().collect::<Vec<T>>();
    c.set_slice_as(&start, &stop, &new).unwrap();
    let mut raw = vec![0u8; 90 * size];
    c.get_slice(&start, &stop, &mut raw).unwrap();
    assert_eq!(&raw[..], bytemuck::cast_slice::<T, u8>(&new));
    // typed appends and inserts
    let mut g = a.copy(&a.save_context(Default::default())).unwrap();
    let slab = items::<T>(7 * 5);
    g.append_as(&slab, 0).unwrap();
    g.insert_as(&slab, 0, 0).unwrap();
    assert_eq!(g.shape(), &[11, 7, 5]);
    assert_eq!(b(&g.get_slice_as::<T>(&[10, 0, 0], &[11, 7, 5]).unwrap()), b(&slab));
    assert_eq!(b(&g.get_slice_as::<T>(&[0, 0, 0], &[1, 7, 5]).unwrap()), b(&slab));
    // wrong lengths
    assert_eq!(c.set_slice_as(&start, &stop, &new[1..]), Err(TypedError::Len { expected: 90, given: 89 }));
    assert!(matches!(a.get_slice_into_as(&start, &stop, &mut into[1..]), Err(TypedError::Len { .. })));
}

#[test]
fn typed_slices_match_the_byte_api_on_every_element_type() {
    check::<u8>();
    check::<u64>();
    check::<f32>();
    check::<[f64; 2]>();
    if cfg!(miri) {
        return; // (four of the types under Miri: it is slow)
    }
    check::<u16>();
    check::<u32>();
    check::<i8>();
    check::<i16>();
    check::<i32>();
    check::<i64>();
    check::<f64>();
    check::<[f32; 2]>();
}

#[test]
fn dtypes_are_checked() {
    // f32 in this machine's byte order ("<f4" or ">f4"), and the other order
    let (native, other) = if cfg!(target_endian = "little") { ("<f4", ">f4") } else { (">f4", "<f4") };
    assert_eq!(<f32 as Element>::DTYPE, native);
    let ctx = Context::new(&[10], &[5], &[5], CParams { typesize: 4, ..CParams::default() }).dtype(native);
    let a = Array::from_buffer(&ctx, &[0u8; 40]).unwrap();
    assert!(a.get_slice_as::<f32>(&[0], &[10]).is_ok());
    for e in [
        a.get_slice_as::<i32>(&[0], &[10]).unwrap_err(),
        a.get_slice_as::<u32>(&[0], &[10]).unwrap_err(),
        a.get_slice_as::<f64>(&[0], &[5]).unwrap_err(),
    ] {
        assert!(matches!(&e, TypedError::Dtype { array, .. } if array == native), "{e}");
        assert!(e.to_string().contains(&format!("holds {native} items, not")), "{e}");
    }
    // the other byte order, a structured dtype and raw bytes are not f32
    for dt in [other, "[('a', '<f4')]", "|S4", "|V4"] {
        let a = Array::from_buffer(
            &Context::new(&[2], &[2], &[2], CParams { typesize: 4, ..CParams::default() }).dtype(dt),
            &[0u8; 8],
        )
        .unwrap();
        assert!(a.check_element::<f32>().is_err(), "{dt}");
    }
    // '=' is the machine's order; one-byte types take any order mark
    let a = Array::from_buffer(
        &Context::new(&[2], &[2], &[2], CParams { typesize: 4, ..CParams::default() }).dtype("=f4"),
        &[0u8; 8],
    )
    .unwrap();
    assert!(a.check_element::<f32>().is_ok());
    let a = Array::from_buffer(
        &Context::new(&[2], &[2], &[2], CParams { typesize: 1, ..CParams::default() }).dtype("<u1"),
        &[0u8; 2],
    )
    .unwrap();
    assert!(a.check_element::<u8>().is_ok() && a.check_element::<i8>().is_err());
    // a write is checked too, and changes nothing
    let mut a = Array::from_buffer(&ctx, &[0u8; 40]).unwrap();
    assert!(a.set_slice_as(&[0], &[2], &[1i32, 2]).is_err());
    assert_eq!(a.to_vec().unwrap(), vec![0u8; 40]);
    // a library error comes through as such
    assert!(matches!(a.get_slice_as::<f32>(&[0], &[11]), Err(TypedError::Blosc(_))));
}

#[cfg(feature = "ndarray")]
mod nd {
    use super::*;
    use ndarray::{ArrayD, IxDyn, ShapeBuilder};

    /// The items of an ndarray in its logical (C) order, as bytes.
    fn nb<T: Element>(a: &ArrayD<T>) -> Vec<u8> {
        b(&a.iter().cloned().collect::<Vec<T>>())
    }

    fn check_nd<T: Element + PartialEq + std::fmt::Debug>() {
        let shape = [6usize, 5, 4];
        let vals = items::<T>(120);
        let arr = ArrayD::from_shape_vec(IxDyn(&shape), vals.clone()).unwrap();
        let ctx = Context::new(&[], &[3, 2, 4], &[3, 2, 2], CParams::default());
        let a = Array::from_ndarray(&ctx, arr.view()).unwrap();
        assert_eq!(a.shape(), &[6, 5, 4]);
        assert_eq!(a.dtype(), T::DTYPE);
        assert_eq!(b(&a.to_vec_as::<T>().unwrap()), b(&vals));
        let whole = a.to_ndarray::<T>().unwrap();
        assert_eq!((whole.shape(), nb(&whole)), (arr.shape(), nb(&arr)));
        let part = a.get_ndarray::<T>(&[1, 2, 0], &[4, 5, 3]).unwrap();
        assert_eq!(part.shape(), &[3, 3, 3]);
        assert_eq!(nb(&part), nb(&arr.slice(ndarray::s![1..4, 2..5, 0..3]).into_dyn().to_owned()));
        // a Fortran-order ndarray is written by its logical layout
        let mut c = a.copy(&a.save_context(Default::default())).unwrap();
        let f = ArrayD::from_shape_vec(IxDyn(&[2, 3, 2]).f(), items::<T>(12)).unwrap();
        c.set_ndarray(&[4, 1, 2], f.view()).unwrap();
        assert_eq!(nb(&c.get_ndarray::<T>(&[4, 1, 2], &[6, 4, 4]).unwrap()), nb(&f));
        let mut bytes = vec![0u8; 12 * std::mem::size_of::<T>()];
        c.get_slice(&[4, 1, 2], &[6, 4, 4], &mut bytes).unwrap();
        assert_eq!(bytes, nb(&f));
    }

    #[test]
    fn ndarrays_in_and_out_on_every_element_type() {
        check_nd::<u8>();
        check_nd::<u16>();
        check_nd::<u32>();
        check_nd::<u64>();
        check_nd::<i8>();
        check_nd::<i16>();
        check_nd::<i32>();
        check_nd::<i64>();
        check_nd::<f32>();
        check_nd::<f64>();
        check_nd::<[f32; 2]>();
        check_nd::<[f64; 2]>();
    }

    #[test]
    fn ndarray_dtype_mismatch() {
        let a = Array::from_ndarray(
            &Context::new(&[], &[2], &[2], CParams::default()),
            ArrayD::<f64>::zeros(IxDyn(&[4])).view(),
        )
        .unwrap();
        assert!(matches!(a.to_ndarray::<f32>(), Err(TypedError::Dtype { .. })));
    }
}
