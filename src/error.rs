//! The one error type of the safe core and its one mapping onto c-blosc2's
//! `BLOSC2_ERROR_*` codes.
//!
//! The table below never renumbers: the codes are c-blosc2 3.3's, and
//! [`message`] (which backs `blosc2_error_string`) is built from the same table.

use std::fmt;

/// Every failure the core can report. Each variant maps to exactly one
/// c-blosc2 error code through [`Error::code`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Error {
    Failure,
    Stream,
    Data,
    MemoryAlloc,
    ReadBuffer,
    WriteBuffer,
    CodecSupport,
    CodecParam,
    CodecDict,
    VersionSupport,
    InvalidHeader,
    InvalidParam,
    FileRead,
    FileWrite,
    FileOpen,
    NotFound,
    RunLength,
    FilterPipeline,
    ChunkInsert,
    ChunkAppend,
    ChunkUpdate,
    TwoGbLimit,
    SchunkCopy,
    FrameType,
    FileTruncate,
    ThreadCreate,
    Postfilter,
    FrameSpecial,
    SchunkSpecial,
    PluginIo,
    FileRemove,
    NullPointer,
    InvalidIndex,
    MetalayerNotFound,
    MaxBufsizeExceeded,
    Tuner,
    Lock,
}

/// `(variant, code, message)`: the single source of truth.
const TABLE: &[(Error, i32, &str)] = &[
    (Error::Failure, -1, "Generic failure"),
    (Error::Stream, -2, "Bad stream"),
    (Error::Data, -3, "Invalid data"),
    (Error::MemoryAlloc, -4, "Memory alloc/realloc failure"),
    (Error::ReadBuffer, -5, "Not enough space to read"),
    (Error::WriteBuffer, -6, "Not enough space to write"),
    (Error::CodecSupport, -7, "Codec not supported"),
    (Error::CodecParam, -8, "Invalid parameter supplied to codec"),
    (Error::CodecDict, -9, "Codec dictionary error"),
    (Error::VersionSupport, -10, "Version not supported"),
    (Error::InvalidHeader, -11, "Invalid value in header"),
    (Error::InvalidParam, -12, "Invalid parameter supplied to function"),
    (Error::FileRead, -13, "File read failure"),
    (Error::FileWrite, -14, "File write failure"),
    (Error::FileOpen, -15, "File open failure"),
    (Error::NotFound, -16, "Not found"),
    (Error::RunLength, -17, "Bad run length encoding"),
    (Error::FilterPipeline, -18, "Filter pipeline error"),
    (Error::ChunkInsert, -19, "Chunk insert failure"),
    (Error::ChunkAppend, -20, "Chunk append failure"),
    (Error::ChunkUpdate, -21, "Chunk update failure"),
    (Error::TwoGbLimit, -22, "Sizes larger than 2gb not supported"),
    (Error::SchunkCopy, -23, "Super-chunk copy failure"),
    (Error::FrameType, -24, "Wrong type for frame"),
    (Error::FileTruncate, -25, "File truncate failure"),
    (Error::ThreadCreate, -26, "Thread or thread context creation failure"),
    (Error::Postfilter, -27, "Postfilter failure"),
    (Error::FrameSpecial, -28, "Special frame failure"),
    (Error::SchunkSpecial, -29, "Special super-chunk failure"),
    (Error::PluginIo, -30, "IO plugin error"),
    (Error::FileRemove, -31, "Remove file failure"),
    (Error::NullPointer, -32, "Pointer is null"),
    (Error::InvalidIndex, -33, "Invalid index"),
    (Error::MetalayerNotFound, -34, "Metalayer has not been found"),
    (Error::MaxBufsizeExceeded, -35, "Maximum buffersize exceeded"),
    (Error::Tuner, -36, "Tuner failure"),
    (Error::Lock, -37, "Frame lock failure"),
];

impl Error {
    /// The c-blosc2 `BLOSC2_ERROR_*` value for this error (always negative).
    pub fn code(self) -> i32 {
        TABLE.iter().find(|(e, _, _)| *e == self).map_or(-1, |&(_, c, _)| c)
    }

    /// The error for a c-blosc2 code, if it is one of the table's.
    pub fn from_code(code: i32) -> Option<Error> {
        TABLE.iter().find(|(_, c, _)| *c == code).map(|&(e, _, _)| e)
    }
}

/// The message c-blosc2 gives for `code` ("Success" for 0, "Unknown error" otherwise).
pub fn message(code: i32) -> &'static str {
    if code == 0 {
        return "Success";
    }
    TABLE.iter().find(|(_, c, _)| *c == code).map_or("Unknown error", |&(_, _, m)| m)
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", message(self.code()), self.code())
    }
}

impl std::error::Error for Error {}

/// Result of the safe core.
pub type Result<T> = std::result::Result<T, Error>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_dense_unique_and_round_trip() {
        for (i, &(e, c, m)) in TABLE.iter().enumerate() {
            assert_eq!(c, -(i as i32) - 1, "table must stay in c-blosc2 order");
            assert_eq!(e.code(), c);
            assert_eq!(Error::from_code(c), Some(e));
            assert_eq!(message(c), m);
        }
        assert_eq!(message(0), "Success");
        assert_eq!(message(-38), "Unknown error");
        assert_eq!(message(7), "Unknown error");
        assert_eq!(Error::from_code(0), None);
    }
}
