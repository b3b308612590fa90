//! n-dimensional arrays on super-chunks (the b2nd format,
//! README_B2ND_METALAYER.rst): the shapes live in the `b2nd` metalayer
//! ([`meta`]), the layout of items in chunks and blocks in [`geometry`].
//!
//! [`Array`] does everything c-blosc2's `b2nd.h` does, chunk by chunk: memory
//! stays within a few chunks plus the caller's buffers whatever the array's
//! size.
//!
//! - `geometry`: shapes, padded chunks, blocks, runs of items;
//! - `boxes`: index arithmetic and box copies of C-order buffers;
//! - `slice`: slices to and from buffers; `select`: orthogonal selections;
//! - `view`: squeezed and expanded views of a stored array;
//! - `base`: the array type, creating, opening, saving, metalayers;
//! - `npy`, `npy_io`: the NumPy `.npy` format, and arrays streamed to and
//!   from it;
//! - `typed`: slices as `Vec<T>` (and `ndarray` arrays) checked against the
//!   dtype;
//! - `reshape`: resize, insert, append, delete; `copy`: copies, slices into
//!   new arrays, concatenation.

mod base;
mod blocks;
mod boxes;
mod copy;
mod disjoint;
pub mod geometry;
pub mod meta;
pub mod npy;
pub mod npy_io;
mod reshape;
mod select;
mod slice;
pub mod typed;
pub mod view;

pub use base::{Array, Context, Fill};
pub use boxes::copy_box;
pub use geometry::Geometry;
pub use meta::Meta;
pub use typed::{Element, TypedError};
pub use view::View;
