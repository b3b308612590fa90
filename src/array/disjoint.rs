//! A caller's buffer that several threads fill at once, each its own bytes.
//!
//! A slice read decodes blocks (of one chunk, or of several chunks at once)
//! on several threads, and each thread copies its block's rows into the
//! caller's buffer. Every item of the slice belongs to exactly one chunk and,
//! inside it, to exactly one block, so the rows two threads copy never share
//! a byte: the writes need no lock. A `Mutex` around the buffer would
//! serialize the copies, which at 8-16 threads cost more than the decoding.
//!
//! This is the one place of the b2nd layer that writes through a raw
//! pointer; every write is bounds-checked, and the callers' part of the
//! contract (no two threads write the same bytes, nobody reads them while
//! the buffer is shared) is the geometry's, stated at each call.

use crate::error::{Error, Result};
use std::marker::PhantomData;
use std::ops::Range;

/// `&mut [u8]` shared by threads that write disjoint parts of it.
pub(crate) struct Disjoint<'a> {
    ptr: *mut u8,
    len: usize,
    _buf: PhantomData<&'a mut [u8]>,
}

// SAFETY: the buffer is only written through `write`/`range_mut`, whose
// contract is that concurrent writers touch disjoint bytes; the borrow of the
// whole buffer is held for `'a`, so nothing else reads or writes it meanwhile.
unsafe impl Send for Disjoint<'_> {}
// SAFETY: as above.
unsafe impl Sync for Disjoint<'_> {}

impl<'a> Disjoint<'a> {
    pub fn new(buf: &'a mut [u8]) -> Disjoint<'a> {
        Disjoint { ptr: buf.as_mut_ptr(), len: buf.len(), _buf: PhantomData }
    }

    fn check(&self, r: &Range<usize>) -> Result<()> {
        if r.start <= r.end && r.end <= self.len {
            Ok(())
        } else {
            Err(Error::WriteBuffer)
        }
    }

    /// Copy `src` to `at..at + src.len()` (`WriteBuffer` past the end).
    ///
    /// # Safety
    /// No other thread reads or writes any of these bytes during the call.
    pub unsafe fn write(&self, at: usize, src: &[u8]) -> Result<()> {
        let r = at..at.checked_add(src.len()).ok_or(Error::WriteBuffer)?;
        self.check(&r)?;
        // SAFETY: `r` is inside the buffer (checked), `src` is another
        // allocation or part of one (it is borrowed while the buffer is
        // borrowed mutably), and the caller guarantees no concurrent access.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), self.ptr.add(at), src.len()) };
        Ok(())
    }

    /// Bytes `r` as a slice of their own (`WriteBuffer` past the end).
    ///
    /// # Safety
    /// While the returned slice lives, no other thread reads or writes any of
    /// these bytes.
    #[allow(clippy::mut_from_ref)] // an `unsafe fn`: callers vouch that the ranges they take are disjoint
    pub unsafe fn range_mut(&self, r: Range<usize>) -> Result<&mut [u8]> {
        self.check(&r)?;
        // SAFETY: inside the buffer (checked); exclusive by the caller's contract.
        Ok(unsafe { std::slice::from_raw_parts_mut(self.ptr.add(r.start), r.len()) })
    }

    /// Ask the CPU to bring in the cache lines of `at..at + len` (a hint:
    /// nothing is read or written; ranges past the end are ignored).
    pub fn prefetch(&self, at: usize, len: usize) {
        #[cfg(target_arch = "x86_64")]
        if at.checked_add(len).is_some_and(|end| end <= self.len) {
            use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
            let mut off = 0;
            while off < len {
                // SAFETY: the address is inside the buffer; a prefetch has no
                // effect on memory.
                unsafe { _mm_prefetch::<_MM_HINT_T0>(self.ptr.add(at + off).cast::<i8>()) };
                off += 64;
            }
        }
        #[cfg(not(target_arch = "x86_64"))]
        let _ = (at, len);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    #[cfg_attr(target_os = "wasi", ignore = "WASI: no threads")]
    fn threads_fill_their_own_parts_and_writes_past_the_end_fail() {
        let mut buf = vec![0u8; 4096];
        {
            let d = Disjoint::new(&mut buf);
            std::thread::scope(|s| {
                for t in 0..4u8 {
                    let d = &d;
                    s.spawn(move || {
                        for k in 0..64usize {
                            let at = (k * 4 + t as usize) * 16;
                            // SAFETY: each thread writes its own 16-byte pieces.
                            unsafe { d.write(at, &[t + 1; 16]) }.unwrap();
                        }
                    });
                }
            });
            // SAFETY: no other user of the buffer is left.
            assert!(matches!(unsafe { d.write(4090, &[9; 7]) }, Err(Error::WriteBuffer)));
            // SAFETY: the threads are done: nothing else uses the buffer (and the range is refused).
            assert!(unsafe { d.range_mut(4000..4097) }.is_err());
            // SAFETY: as above, no other user of the buffer; the slice dies within the statement.
            assert_eq!(unsafe { d.range_mut(10..20) }.unwrap().len(), 10);
            d.prefetch(4000, 1000);
        }
        for (i, b) in buf.iter().enumerate() {
            assert_eq!(*b as usize, (i / 16) % 4 + 1, "byte {i}");
        }
    }
}
