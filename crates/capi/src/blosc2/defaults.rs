//! The `blosc2_get_blosc2_*_defaults` getters (for languages that cannot use
//! the `*_DEFAULTS` initializers of the headers).

use super::types::*;
use crate::stdio::blosc2_stdio_mmap;

static FILESYSTEM: &[u8] = b"filesystem\0";
static MODE_R: &[u8] = b"r\0";

/// Storage defaults: sparse, in memory, default parameters.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_storage_defaults() -> blosc2_storage {
    blosc2_storage {
        contiguous: false,
        urlpath: std::ptr::null_mut(),
        cparams: std::ptr::null_mut(),
        dparams: std::ptr::null_mut(),
        io: std::ptr::null_mut(),
    }
}

/// I/O defaults: the filesystem backend.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_io_defaults() -> blosc2_io {
    blosc2_io {
        id: BLOSC2_IO_FILESYSTEM as u8,
        name: FILESYSTEM.as_ptr().cast(),
        params: std::ptr::null_mut(),
    }
}

/// Memory-mapped I/O defaults: read-only, 1 GiB initial mapping.
#[no_mangle]
pub extern "C" fn blosc2_get_blosc2_stdio_mmap_defaults() -> blosc2_stdio_mmap {
    blosc2_stdio_mmap {
        mode: MODE_R.as_ptr().cast(),
        initial_mapping_size: b2nd::io::DEFAULT_INITIAL_MAPPING_SIZE,
        needs_free: false,
        addr: std::ptr::null_mut(),
        urlpath: std::ptr::null_mut(),
        file_size: 0,
        mapping_size: 0,
        is_memory_only: false,
        file: std::ptr::null_mut(),
        fd: -1,
        access_flags: -1,
        map_flags: -1,
        #[cfg(target_os = "windows")]
        mmap_handle: usize::MAX as *mut crate::os::c_void, // INVALID_HANDLE_VALUE
    }
}
