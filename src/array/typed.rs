//! Arrays of plain elements: slices read into and written from `Vec<T>`
//! (and, with the `ndarray` feature, `ndarray::ArrayD<T>`), checked against
//! the array's dtype, so an `<f4` array is never read as `f64`.
//!
//! ```
//! use b2nd::array::{Array, Context};
//! use b2nd::chunk::CParams;
//!
//! let ctx = Context::of::<f64>(&[4, 5], &[2, 5], &[2, 5], CParams::default());
//! let values: Vec<f64> = (0..20).map(|i| i as f64 * 0.5).collect();
//! let mut a = Array::from_elements(&ctx, &values).unwrap();
//! assert_eq!(a.dtype(), if cfg!(target_endian = "little") { "<f8" } else { ">f8" });
//! let row: Vec<f64> = a.get_slice_as(&[1, 0], &[2, 5]).unwrap();
//! assert_eq!(row, [2.5, 3.0, 3.5, 4.0, 4.5]);
//! a.set_slice_as(&[0, 0], &[1, 2], &[-1.0f64, -2.0]).unwrap();
//! assert_eq!(a.get_slice_as::<f64>(&[0, 0], &[1, 3]).unwrap(), [-1.0, -2.0, 1.0]);
//! // the dtype is checked
//! let err = a.get_slice_as::<f32>(&[0, 0], &[1, 1]).unwrap_err();
//! assert!(err.to_string().contains(&format!("holds {} items", a.dtype())), "{err}");
//! ```

use super::{Array, Context};
use crate::chunk::CParams;
use std::fmt;

/// A plain element type an array can hold: its items are the element's
/// bytes in the machine's byte order, described by a NumPy dtype.
pub trait Element: bytemuck::Pod + Default + Send + Sync {
    /// The dtype python-blosc2 writes for this element on this machine.
    const DTYPE: &'static str;

    /// Whether `dtype` (as an array's metalayer holds it) describes this
    /// element: `DTYPE`, or the same type with `=` (native) or, for single
    /// bytes, any byte order mark.
    fn matches(dtype: &str) -> bool {
        let (want_order, want) = Self::DTYPE.split_at(1);
        let dtype = dtype.trim();
        if dtype == Self::DTYPE {
            return true;
        }
        match dtype.split_at_checked(1) {
            Some(("=", rest)) => rest == want,
            Some(("<" | ">" | "|", rest)) if std::mem::size_of::<Self>() == 1 => {
                rest == want && want_order == "|"
            }
            _ => false,
        }
    }
}

macro_rules! element {
    ($($t:ty => $kind:literal, $size:literal;)*) => {$(
        impl Element for $t {
            const DTYPE: &'static str = if $size == 1 {
                concat!("|", $kind, $size)
            } else if cfg!(target_endian = "little") {
                concat!("<", $kind, $size)
            } else {
                concat!(">", $kind, $size)
            };
        }
    )*};
}

element! {
    u8 => "u", 1; u16 => "u", 2; u32 => "u", 4; u64 => "u", 8;
    i8 => "i", 1; i16 => "i", 2; i32 => "i", 4; i64 => "i", 8;
    f32 => "f", 4; f64 => "f", 8;
    [f32; 2] => "c", 8; [f64; 2] => "c", 16;
}

/// Why a typed read or write failed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TypedError {
    /// The array's dtype does not describe the element type.
    Dtype { array: String, element: &'static str },
    /// The elements given are not as many as the slice holds.
    Len { expected: usize, given: usize },
    /// The library's error.
    Blosc(crate::Error),
}

impl fmt::Display for TypedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            TypedError::Dtype { array, element } => {
                write!(f, "the array holds {array} items, not {element} (the element type asked for)")
            }
            TypedError::Len { expected, given } => {
                write!(f, "the slice holds {expected} items, {given} were given")
            }
            TypedError::Blosc(e) => write!(f, "{e}"),
        }
    }
}

impl std::error::Error for TypedError {}

impl From<crate::Error> for TypedError {
    fn from(e: crate::Error) -> Self {
        TypedError::Blosc(e)
    }
}

pub type TypedResult<T> = std::result::Result<T, TypedError>;

impl Context {
    /// [`Context::new`] for an array of `T`: its dtype and typesize are `T`'s.
    pub fn of<T: Element>(
        shape: &[i64],
        chunkshape: &[i32],
        blockshape: &[i32],
        mut cparams: CParams,
    ) -> Context {
        cparams.typesize = std::mem::size_of::<T>() as i32;
        Context::new(shape, chunkshape, blockshape, cparams).dtype(T::DTYPE)
    }
}

fn items(start: &[i64], stop: &[i64]) -> usize {
    start.iter().zip(stop).map(|(a, b)| (b - a).max(0) as usize).product()
}

impl Array {
    /// Check that the array holds items of `T`.
    pub fn check_element<T: Element>(&self) -> TypedResult<()> {
        if T::matches(self.dtype()) && self.typesize() == std::mem::size_of::<T>() {
            Ok(())
        } else {
            Err(TypedError::Dtype { array: self.dtype().to_string(), element: T::DTYPE })
        }
    }

    /// A new array made as `ctx` says (its dtype and typesize become `T`'s)
    /// holding `items` in C order.
    pub fn from_elements<T: Element>(ctx: &Context, items: &[T]) -> TypedResult<Array> {
        let mut ctx = ctx.clone();
        ctx.cparams.typesize = std::mem::size_of::<T>() as i32;
        ctx.dparams.typesize = ctx.cparams.typesize;
        ctx.meta.dtype = T::DTYPE.to_string();
        ctx.meta.dtype_format = 0;
        let n: usize = ctx.meta.shape.iter().map(|&d| d.max(0) as usize).product();
        if items.len() != n {
            return Err(TypedError::Len { expected: n, given: items.len() });
        }
        Ok(Array::from_buffer(&ctx, bytemuck::cast_slice(items))?)
    }

    /// The items of `start..stop`, in C order.
    pub fn get_slice_as<T: Element>(&self, start: &[i64], stop: &[i64]) -> TypedResult<Vec<T>> {
        self.check_element::<T>()?;
        let mut out = vec![T::default(); items(start, stop)];
        self.get_slice(start, stop, bytemuck::cast_slice_mut(&mut out))?;
        Ok(out)
    }

    /// The items of `start..stop` into `out` (C order, exactly as many).
    pub fn get_slice_into_as<T: Element>(
        &self,
        start: &[i64],
        stop: &[i64],
        out: &mut [T],
    ) -> TypedResult<()> {
        self.check_element::<T>()?;
        let n = items(start, stop);
        if out.len() != n {
            return Err(TypedError::Len { expected: n, given: out.len() });
        }
        Ok(self.get_slice(start, stop, bytemuck::cast_slice_mut(out))?)
    }

    /// All items, in C order.
    pub fn to_vec_as<T: Element>(&self) -> TypedResult<Vec<T>> {
        let start = vec![0; self.ndim()];
        let stop = self.shape().to_vec();
        self.get_slice_as(&start, &stop)
    }

    /// Overwrite the items of `start..stop` with `values` (C order, exactly as many).
    pub fn set_slice_as<T: Element>(&mut self, start: &[i64], stop: &[i64], values: &[T]) -> TypedResult<()> {
        self.check_element::<T>()?;
        let n = items(start, stop);
        if values.len() != n {
            return Err(TypedError::Len { expected: n, given: values.len() });
        }
        Ok(self.set_slice(start, stop, bytemuck::cast_slice(values))?)
    }

    /// Insert `values` (C order, whole slabs across `axis`) at `at` along `axis`.
    pub fn insert_as<T: Element>(&mut self, values: &[T], axis: usize, at: i64) -> TypedResult<()> {
        self.check_element::<T>()?;
        Ok(self.insert(bytemuck::cast_slice(values), axis, at)?)
    }

    /// Append `values` (C order, whole slabs across `axis`) along `axis`.
    pub fn append_as<T: Element>(&mut self, values: &[T], axis: usize) -> TypedResult<()> {
        self.check_element::<T>()?;
        Ok(self.append(bytemuck::cast_slice(values), axis)?)
    }
}

#[cfg(feature = "ndarray")]
mod nd {
    use super::{Element, TypedError, TypedResult};
    use crate::array::{Array, Context};
    use ndarray::{ArrayD, ArrayViewD, IxDyn};

    #[cfg_attr(docsrs, doc(cfg(feature = "ndarray")))]
    impl Array {
        /// The items of `start..stop` as an `ndarray` array of the slice's shape.
        pub fn get_ndarray<T: Element>(&self, start: &[i64], stop: &[i64]) -> TypedResult<ArrayD<T>> {
            let v = self.get_slice_as::<T>(start, stop)?;
            let shape: Vec<usize> = start.iter().zip(stop).map(|(a, b)| (b - a).max(0) as usize).collect();
            ArrayD::from_shape_vec(IxDyn(&shape), v)
                .map_err(|_| TypedError::Blosc(crate::Error::InvalidParam))
        }

        /// The whole array as an `ndarray` array.
        pub fn to_ndarray<T: Element>(&self) -> TypedResult<ArrayD<T>> {
            let start = vec![0; self.ndim()];
            let stop = self.shape().to_vec();
            self.get_ndarray(&start, &stop)
        }

        /// Overwrite the box at `start` with `values` (its shape is the box's;
        /// any memory layout).
        pub fn set_ndarray<T: Element>(&mut self, start: &[i64], values: ArrayViewD<T>) -> TypedResult<()> {
            if start.len() != values.ndim() {
                return Err(TypedError::Blosc(crate::Error::InvalidParam));
            }
            let stop: Vec<i64> = start.iter().zip(values.shape()).map(|(&a, &n)| a + n as i64).collect();
            let standard = values.as_standard_layout();
            let items = standard.as_slice().ok_or(TypedError::Blosc(crate::Error::InvalidParam))?;
            self.set_slice_as(start, &stop, items)
        }

        /// A new array made as `ctx` says, with the shape, dtype and items of `values`.
        pub fn from_ndarray<T: Element>(ctx: &Context, values: ArrayViewD<T>) -> TypedResult<Array> {
            let mut ctx = ctx.clone();
            ctx.meta.shape = values.shape().iter().map(|&n| n as i64).collect();
            let standard = values.as_standard_layout();
            let items = standard.as_slice().ok_or(TypedError::Blosc(crate::Error::InvalidParam))?;
            Array::from_elements(&ctx, items)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dtype_strings() {
        assert!(f64::matches(f64::DTYPE) && f64::matches(&format!("={}", &f64::DTYPE[1..])));
        assert!(!f64::matches("<f4") && !f64::matches(">f8x") && !f32::matches("<i4"));
        assert!(u8::matches("|u1") && u8::matches("<u1") && !u8::matches("|i1") && !u8::matches("|b1"));
        assert_eq!(<[f64; 2]>::DTYPE.len(), 4);
        if cfg!(target_endian = "little") {
            assert!(!f64::matches(">f8"));
            assert_eq!(i16::DTYPE, "<i2");
        }
    }
}
