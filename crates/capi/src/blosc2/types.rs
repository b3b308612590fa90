//! The `repr(C)` mirrors and integer constants of `blosc2.h`, with c-blosc2
//! 3.3.5's names, values, field order and layout (cbindgen turns this file
//! into the declarations of `include/blosc2.h`), and the opaque types the C
//! structs point to (`blosc2_context`, `blosc2_frame`).
#![allow(non_camel_case_types)] // the C names of blosc2.h, kept for cbindgen

use crate::os::{c_char, c_int, c_void, size_t};
use b2nd::chunk::{Compressor, Decompressor};

/// Major version of the c-blosc2 API this library implements (the header's
/// version macros are written by `cbindgen/blosc2.toml`, on one line each with
/// the comments build scripts look for; `tests/header_text.rs` keeps them equal).
pub const BLOSC2_VERSION_MAJOR: c_int = 3;
/// Minor version of that API.
pub const BLOSC2_VERSION_MINOR: c_int = 3;
/// Release of that API.
pub const BLOSC2_VERSION_RELEASE: c_int = 5;

/// Most metalayers a super-chunk holds.
pub const BLOSC2_MAX_METALAYERS: usize = 16;
/// Longest metalayer name.
pub const BLOSC2_METALAYER_NAME_MAXLEN: c_int = 31;
/// Most variable-length metalayers a super-chunk holds.
pub const BLOSC2_MAX_VLMETALAYERS: usize = 8 * 1024;
/// Longest variable-length metalayer name.
pub const BLOSC2_VLMETALAYERS_NAME_MAXLEN: c_int = 31;

pub const BLOSC1_VERSION_FORMAT_PRE1: c_int = 1;
pub const BLOSC1_VERSION_FORMAT: c_int = 2;
pub const BLOSC2_VERSION_FORMAT_ALPHA: c_int = 3;
pub const BLOSC2_VERSION_FORMAT_BETA1: c_int = 4;
pub const BLOSC2_VERSION_FORMAT_STABLE: c_int = 5;
pub const BLOSC2_VERSION_FORMAT_VL_BLOCKS: c_int = 6;
pub const BLOSC2_VERSION_FORMAT: c_int = 6;
pub const BLOSC2_VERSION_FRAME_FORMAT_BETA2: c_int = 1;
pub const BLOSC2_VERSION_FRAME_FORMAT_RC1: c_int = 2;
pub const BLOSC2_VERSION_FRAME_FORMAT_VL_BLOCKS: c_int = 3;
pub const BLOSC2_VERSION_FRAME_FORMAT: c_int = 3;
pub const BLOSC_MIN_HEADER_LENGTH: c_int = 16;
pub const BLOSC_EXTENDED_HEADER_LENGTH: c_int = 32;
pub const BLOSC2_MAX_OVERHEAD: c_int = 32;
pub const BLOSC2_MAX_BUFFERSIZE: c_int = 2147483615;
pub const BLOSC_MAX_TYPESIZE: c_int = 255;
pub const BLOSC_MIN_BUFFERSIZE: c_int = 32;
pub const BLOSC2_DEFINED_TUNER_START: c_int = 0;
pub const BLOSC2_DEFINED_TUNER_STOP: c_int = 31;
pub const BLOSC2_GLOBAL_REGISTERED_TUNER_START: c_int = 32;
pub const BLOSC2_GLOBAL_REGISTERED_TUNER_STOP: c_int = 159;
pub const BLOSC2_GLOBAL_REGISTERED_TUNERS: c_int = 0;
pub const BLOSC2_USER_REGISTERED_TUNER_START: c_int = 160;
pub const BLOSC2_USER_REGISTERED_TUNER_STOP: c_int = 255;
pub const BLOSC_STUNE: c_int = 0;
pub const BLOSC_LAST_TUNER: c_int = 1;
pub const BLOSC_LAST_REGISTERED_TUNE: c_int = 31;
pub const BLOSC2_DEFINED_FILTERS_START: c_int = 0;
pub const BLOSC2_DEFINED_FILTERS_STOP: c_int = 31;
pub const BLOSC2_GLOBAL_REGISTERED_FILTERS_START: c_int = 32;
pub const BLOSC2_GLOBAL_REGISTERED_FILTERS_STOP: c_int = 159;
pub const BLOSC2_GLOBAL_REGISTERED_FILTERS: c_int = 5;
pub const BLOSC2_USER_REGISTERED_FILTERS_START: c_int = 160;
pub const BLOSC2_USER_REGISTERED_FILTERS_STOP: c_int = 255;
pub const BLOSC2_MAX_FILTERS: usize = 6;
pub const BLOSC2_MAX_UDFILTERS: c_int = 16;
pub const BLOSC_NOSHUFFLE: c_int = 0;
pub const BLOSC_NOFILTER: c_int = 0;
pub const BLOSC_SHUFFLE: c_int = 1;
pub const BLOSC_BITSHUFFLE: c_int = 2;
pub const BLOSC_DELTA: c_int = 3;
pub const BLOSC_TRUNC_PREC: c_int = 4;
pub const BLOSC_LAST_FILTER: c_int = 5;
pub const BLOSC_LAST_REGISTERED_FILTER: c_int = 36;
pub const BLOSC_DOSHUFFLE: c_int = 1;
pub const BLOSC_MEMCPYED: c_int = 2;
pub const BLOSC_DOBITSHUFFLE: c_int = 4;
pub const BLOSC_DODELTA: c_int = 8;
pub const BLOSC2_USEDICT: c_int = 1;
pub const BLOSC2_BIGENDIAN: c_int = 2;
pub const BLOSC2_INSTR_CODEC: c_int = 128;
pub const BLOSC2_VL_BLOCKS: c_int = 1;
pub const BLOSC2_MAXDICTSIZE: c_int = 32768;
pub const BLOSC2_MINUSEFULDICT: c_int = 256;
pub const BLOSC2_MAXBLOCKSIZE: c_int = 536866816;
pub const BLOSC2_MAXTYPESIZE: c_int = 536866816;
pub const BLOSC2_DEFINED_CODECS_START: c_int = 0;
pub const BLOSC2_DEFINED_CODECS_STOP: c_int = 31;
pub const BLOSC2_GLOBAL_REGISTERED_CODECS_START: c_int = 32;
pub const BLOSC2_GLOBAL_REGISTERED_CODECS_STOP: c_int = 159;
pub const BLOSC2_GLOBAL_REGISTERED_CODECS: c_int = 5;
pub const BLOSC2_USER_REGISTERED_CODECS_START: c_int = 160;
pub const BLOSC2_USER_REGISTERED_CODECS_STOP: c_int = 255;
pub const BLOSC_BLOSCLZ: c_int = 0;
pub const BLOSC_LZ4: c_int = 1;
pub const BLOSC_LZ4HC: c_int = 2;
pub const BLOSC_ZLIB: c_int = 4;
pub const BLOSC_ZSTD: c_int = 5;
pub const BLOSC_LAST_CODEC: c_int = 6;
pub const BLOSC_LAST_REGISTERED_CODEC: c_int = 36;
pub const BLOSC_BLOSCLZ_LIB: c_int = 0;
pub const BLOSC_LZ4_LIB: c_int = 1;
pub const BLOSC_ZLIB_LIB: c_int = 3;
pub const BLOSC_ZSTD_LIB: c_int = 4;
pub const BLOSC_UDCODEC_LIB: c_int = 6;
pub const BLOSC_SCHUNK_LIB: c_int = 7;
pub const BLOSC_BLOSCLZ_FORMAT: c_int = 0;
pub const BLOSC_LZ4_FORMAT: c_int = 1;
pub const BLOSC_LZ4HC_FORMAT: c_int = 1;
pub const BLOSC_ZLIB_FORMAT: c_int = 3;
pub const BLOSC_ZSTD_FORMAT: c_int = 4;
pub const BLOSC_UDCODEC_FORMAT: c_int = 6;
pub const BLOSC_BLOSCLZ_VERSION_FORMAT: c_int = 1;
pub const BLOSC_LZ4_VERSION_FORMAT: c_int = 1;
pub const BLOSC_LZ4HC_VERSION_FORMAT: c_int = 1;
pub const BLOSC_ZLIB_VERSION_FORMAT: c_int = 1;
pub const BLOSC_ZSTD_VERSION_FORMAT: c_int = 1;
pub const BLOSC_UDCODEC_VERSION_FORMAT: c_int = 1;
pub const BLOSC_ALWAYS_SPLIT: c_int = 1;
pub const BLOSC_NEVER_SPLIT: c_int = 2;
pub const BLOSC_AUTO_SPLIT: c_int = 3;
pub const BLOSC_FORWARD_COMPAT_SPLIT: c_int = 4;
pub const BLOSC2_CHUNK_VERSION: c_int = 0;
pub const BLOSC2_CHUNK_VERSIONLZ: c_int = 1;
pub const BLOSC2_CHUNK_FLAGS: c_int = 2;
pub const BLOSC2_CHUNK_TYPESIZE: c_int = 3;
pub const BLOSC2_CHUNK_NBYTES: c_int = 4;
pub const BLOSC2_CHUNK_BLOCKSIZE: c_int = 8;
pub const BLOSC2_CHUNK_CBYTES: c_int = 12;
pub const BLOSC2_CHUNK_FILTER_CODES: c_int = 16;
pub const BLOSC2_CHUNK_FILTER_META: c_int = 24;
pub const BLOSC2_CHUNK_BLOSC2_FLAGS2: c_int = 30;
pub const BLOSC2_CHUNK_BLOSC2_FLAGS: c_int = 31;
pub const BLOSC2_NO_SPECIAL: c_int = 0;
pub const BLOSC2_SPECIAL_ZERO: c_int = 1;
pub const BLOSC2_SPECIAL_NAN: c_int = 2;
pub const BLOSC2_SPECIAL_VALUE: c_int = 3;
pub const BLOSC2_SPECIAL_UNINIT: c_int = 4;
pub const BLOSC2_SPECIAL_LASTID: c_int = 4;
pub const BLOSC2_SPECIAL_MASK: c_int = 7;
pub const BLOSC2_ERROR_SUCCESS: c_int = 0;
pub const BLOSC2_ERROR_FAILURE: c_int = -1;
pub const BLOSC2_ERROR_STREAM: c_int = -2;
pub const BLOSC2_ERROR_DATA: c_int = -3;
pub const BLOSC2_ERROR_MEMORY_ALLOC: c_int = -4;
pub const BLOSC2_ERROR_READ_BUFFER: c_int = -5;
pub const BLOSC2_ERROR_WRITE_BUFFER: c_int = -6;
pub const BLOSC2_ERROR_CODEC_SUPPORT: c_int = -7;
pub const BLOSC2_ERROR_CODEC_PARAM: c_int = -8;
pub const BLOSC2_ERROR_CODEC_DICT: c_int = -9;
pub const BLOSC2_ERROR_VERSION_SUPPORT: c_int = -10;
pub const BLOSC2_ERROR_INVALID_HEADER: c_int = -11;
pub const BLOSC2_ERROR_INVALID_PARAM: c_int = -12;
pub const BLOSC2_ERROR_FILE_READ: c_int = -13;
pub const BLOSC2_ERROR_FILE_WRITE: c_int = -14;
pub const BLOSC2_ERROR_FILE_OPEN: c_int = -15;
pub const BLOSC2_ERROR_NOT_FOUND: c_int = -16;
pub const BLOSC2_ERROR_RUN_LENGTH: c_int = -17;
pub const BLOSC2_ERROR_FILTER_PIPELINE: c_int = -18;
pub const BLOSC2_ERROR_CHUNK_INSERT: c_int = -19;
pub const BLOSC2_ERROR_CHUNK_APPEND: c_int = -20;
pub const BLOSC2_ERROR_CHUNK_UPDATE: c_int = -21;
pub const BLOSC2_ERROR_2GB_LIMIT: c_int = -22;
pub const BLOSC2_ERROR_SCHUNK_COPY: c_int = -23;
pub const BLOSC2_ERROR_FRAME_TYPE: c_int = -24;
pub const BLOSC2_ERROR_FILE_TRUNCATE: c_int = -25;
pub const BLOSC2_ERROR_THREAD_CREATE: c_int = -26;
pub const BLOSC2_ERROR_POSTFILTER: c_int = -27;
pub const BLOSC2_ERROR_FRAME_SPECIAL: c_int = -28;
pub const BLOSC2_ERROR_SCHUNK_SPECIAL: c_int = -29;
pub const BLOSC2_ERROR_PLUGIN_IO: c_int = -30;
pub const BLOSC2_ERROR_FILE_REMOVE: c_int = -31;
pub const BLOSC2_ERROR_NULL_POINTER: c_int = -32;
pub const BLOSC2_ERROR_INVALID_INDEX: c_int = -33;
pub const BLOSC2_ERROR_METALAYER_NOT_FOUND: c_int = -34;
pub const BLOSC2_ERROR_MAX_BUFSIZE_EXCEEDED: c_int = -35;
pub const BLOSC2_ERROR_TUNER: c_int = -36;
pub const BLOSC2_ERROR_LOCK: c_int = -37;
pub const BLOSC2_IO_FILESYSTEM: c_int = 0;
pub const BLOSC2_IO_FILESYSTEM_MMAP: c_int = 1;
pub const BLOSC_IO_LAST_BLOSC_DEFINED: c_int = 2;
pub const BLOSC_IO_LAST_REGISTERED: c_int = 32;
pub const BLOSC2_IO_BLOSC_DEFINED: c_int = 32;
pub const BLOSC2_IO_REGISTERED: c_int = 160;
pub const BLOSC2_IO_USER_DEFINED: c_int = 256;

/// Opaque compression or decompression context: C sees only pointers to it.
pub struct blosc2_context {
    pub(crate) kind: Kind,
    /// Unique among the contexts made in this process (from 1): tells a
    /// context from one made later at the same address.
    pub(crate) serial: u64,
}

/// What a context does, with the C parameters it was made from.
pub(crate) enum Kind {
    Compress { core: Compressor, c: blosc2_cparams },
    Decompress { core: Decompressor, d: blosc2_dparams },
}

// SAFETY: the raw pointers kept in the C parameter structs are user data that
// the context never dereferences itself; the core objects are Send.
unsafe impl Send for blosc2_context {}

/// Opaque frame (owned by a super-chunk).
pub struct blosc2_frame {
    _private: (),
}

/// Instrumentation record of a codec (development aid).
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_instr {
    pub cratio: f32,
    pub cspeed: f32,
    pub filter_speed: f32,
    pub flags: [u8; 4],
}

pub type blosc2_open_cb = Option<
    unsafe extern "C" fn(urlpath: *const c_char, mode: *const c_char, params: *mut c_void) -> *mut c_void,
>;
pub type blosc2_close_cb = Option<unsafe extern "C" fn(stream: *mut c_void) -> c_int>;
pub type blosc2_size_cb = Option<unsafe extern "C" fn(stream: *mut c_void) -> i64>;
pub type blosc2_write_cb = Option<
    unsafe extern "C" fn(
        ptr: *const c_void,
        size: i64,
        nitems: i64,
        position: i64,
        stream: *mut c_void,
    ) -> i64,
>;
pub type blosc2_read_cb = Option<
    unsafe extern "C" fn(
        ptr: *mut *mut c_void,
        size: i64,
        nitems: i64,
        position: i64,
        stream: *mut c_void,
    ) -> i64,
>;
pub type blosc2_truncate_cb = Option<unsafe extern "C" fn(stream: *mut c_void, size: i64) -> c_int>;
pub type blosc2_destroy_cb = Option<unsafe extern "C" fn(params: *mut c_void) -> c_int>;

/// An I/O backend: the callbacks a super-chunk uses to reach its storage.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io_cb {
    pub id: u8,
    pub name: *mut c_char,
    pub is_allocation_necessary: bool,
    pub open: blosc2_open_cb,
    pub close: blosc2_close_cb,
    pub size: blosc2_size_cb,
    pub write: blosc2_write_cb,
    pub read: blosc2_read_cb,
    pub truncate: blosc2_truncate_cb,
    pub destroy: blosc2_destroy_cb,
}

/// Which I/O backend a storage uses, and its parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_io {
    pub id: u8,
    pub name: *const c_char,
    pub params: *mut c_void,
}

/// A tuner: the hooks that choose block sizes and parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_tuner {
    pub init: Option<
        unsafe extern "C" fn(
            config: *mut c_void,
            cctx: *mut blosc2_context,
            dctx: *mut blosc2_context,
        ) -> c_int,
    >,
    pub next_blocksize: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub next_cparams: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub update: Option<unsafe extern "C" fn(context: *mut blosc2_context, ctime: f64) -> c_int>,
    pub free: Option<unsafe extern "C" fn(context: *mut blosc2_context) -> c_int>,
    pub id: c_int,
    pub name: *mut c_char,
}

/// What a prefilter sees for one block.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_prefilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub output_size: i32,
    pub output_typesize: i32,
    pub output_offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: size_t,
    pub ctx: *mut blosc2_context,
    pub output_is_disposable: bool,
}

/// What a postfilter sees for one block.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_postfilter_params {
    pub user_data: *mut c_void,
    pub input: *const u8,
    pub output: *mut u8,
    pub size: i32,
    pub typesize: i32,
    pub offset: i32,
    pub nchunk: i64,
    pub nblock: i32,
    pub tid: i32,
    pub ttmp: *mut u8,
    pub ttmp_nbytes: size_t,
    pub ctx: *mut blosc2_context,
}

pub type blosc2_prefilter_fn = Option<unsafe extern "C" fn(params: *mut blosc2_prefilter_params) -> c_int>;
pub type blosc2_postfilter_fn = Option<unsafe extern "C" fn(params: *mut blosc2_postfilter_params) -> c_int>;

/// Compression parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_cparams {
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub use_dict: c_int,
    pub typesize: i32,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: i32,
    pub schunk: *mut c_void,
    pub filters: [u8; BLOSC2_MAX_FILTERS],
    pub filters_meta: [u8; BLOSC2_MAX_FILTERS],
    pub prefilter: blosc2_prefilter_fn,
    pub preparams: *mut blosc2_prefilter_params,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub instr_codec: bool,
    pub codec_params: *mut c_void,
    pub filter_params: [*mut c_void; BLOSC2_MAX_FILTERS],
}

/// Decompression parameters.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_dparams {
    pub nthreads: i16,
    pub schunk: *mut c_void,
    pub postfilter: blosc2_postfilter_fn,
    pub postparams: *mut blosc2_postfilter_params,
    pub typesize: i32,
}

/// Where and how a super-chunk is stored.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_storage {
    pub contiguous: bool,
    pub urlpath: *mut c_char,
    pub cparams: *mut blosc2_cparams,
    pub dparams: *mut blosc2_dparams,
    pub io: *mut blosc2_io,
}

/// A (fixed-length or variable-length) metalayer.
#[repr(C)]
pub struct blosc2_metalayer {
    pub name: *mut c_char,
    pub content: *mut u8,
    pub content_len: i32,
}

/// A super-chunk: the public view of a sequence of chunks.
#[repr(C)]
pub struct blosc2_schunk {
    pub version: u8,
    pub compcode: u8,
    pub compcode_meta: u8,
    pub clevel: u8,
    pub splitmode: u8,
    pub typesize: i32,
    pub blocksize: i32,
    pub chunksize: i32,
    pub flags2: u8,
    pub use_dict: u8,
    pub filters: [u8; BLOSC2_MAX_FILTERS],
    pub filters_meta: [u8; BLOSC2_MAX_FILTERS],
    pub nchunks: i64,
    pub current_nchunk: i64,
    pub nbytes: i64,
    pub cbytes: i64,
    pub data: *mut *mut u8,
    pub data_len: size_t,
    pub storage: *mut blosc2_storage,
    pub frame: *mut blosc2_frame,
    pub cctx: *mut blosc2_context,
    pub dctx: *mut blosc2_context,
    pub metalayers: [*mut blosc2_metalayer; BLOSC2_MAX_METALAYERS],
    pub nmetalayers: u16,
    pub vlmetalayers: [*mut blosc2_metalayer; BLOSC2_MAX_VLMETALAYERS],
    pub nvlmetalayers: i16,
    pub tuner_params: *mut c_void,
    pub tuner_id: c_int,
    pub ndim: i8,
    pub blockshape: *mut i64,
    pub view: bool,
    pub change_tick: i64,
}

pub type blosc2_codec_encoder_cb = Option<
    unsafe extern "C" fn(
        input: *const u8,
        input_len: i32,
        output: *mut u8,
        output_len: i32,
        meta: u8,
        cparams: *mut blosc2_cparams,
        chunk: *const c_void,
    ) -> c_int,
>;
pub type blosc2_codec_decoder_cb = Option<
    unsafe extern "C" fn(
        input: *const u8,
        input_len: i32,
        output: *mut u8,
        output_len: i32,
        meta: u8,
        dparams: *mut blosc2_dparams,
        chunk: *const c_void,
    ) -> c_int,
>;

/// A user-defined codec.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_codec {
    pub compcode: u8,
    pub compname: *mut c_char,
    pub complib: u8,
    pub version: u8,
    pub encoder: blosc2_codec_encoder_cb,
    pub decoder: blosc2_codec_decoder_cb,
}

pub type blosc2_filter_forward_cb =
    Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_cparams, u8) -> c_int>;
pub type blosc2_filter_backward_cb =
    Option<unsafe extern "C" fn(*const u8, *mut u8, i32, u8, *mut blosc2_dparams, u8) -> c_int>;

/// A user-defined filter.
#[repr(C)]
#[derive(Clone, Copy)]
pub struct blosc2_filter {
    pub id: u8,
    pub name: *mut c_char,
    pub version: u8,
    pub forward: blosc2_filter_forward_cb,
    pub backward: blosc2_filter_backward_cb,
}

/// The callback type of `blosc2_set_threads_callback`.
pub type blosc_threads_callback = Option<
    unsafe extern "C" fn(
        callback_data: *mut c_void,
        dojob: Option<unsafe extern "C" fn(*mut c_void)>,
        numjobs: c_int,
        jobdata_elsize: size_t,
        jobdata: *mut c_void,
    ),
>;

/// The system timestamp (`struct timespec` on POSIX, `LARGE_INTEGER` on
/// Windows).
pub type blosc_timestamp_t = crate::os::Timestamp;
