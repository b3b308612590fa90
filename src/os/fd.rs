//! Open files as descriptors, for the C API's structs: the same on unix and
//! on WASI (`std::os::fd`), used by both sides of [`crate::os`].

use std::fs::File;
use std::os::fd::AsRawFd;

/// An open file as a plain value (its descriptor), for C structs.
pub type RawFile = std::os::fd::RawFd;
/// No file.
pub const NO_RAW_FILE: RawFile = -1;

/// Give `f` up as its descriptor (not closed).
pub fn file_into_raw(f: File) -> RawFile {
    std::os::fd::IntoRawFd::into_raw_fd(f)
}

/// The descriptor of `f`, borrowed.
pub fn raw_file_of(f: &File) -> RawFile {
    f.as_raw_fd()
}

/// Take a descriptor back as a file (`None` for [`NO_RAW_FILE`]).
///
/// # Safety
/// `raw` must be an open descriptor that nothing else owns, or [`NO_RAW_FILE`].
pub unsafe fn file_from_raw(raw: RawFile) -> Option<File> {
    // SAFETY: caller contract.
    (raw >= 0).then(|| unsafe { std::os::fd::FromRawFd::from_raw_fd(raw) })
}
