//! I/O backends of the C API: the registry behind `blosc2_register_io_cb` /
//! `blosc2_get_io_cb`, and the adapter that lets the safe core reach files
//! through a `blosc2_io_cb`'s callbacks (the mmap backend and user backends).
//! The default filesystem backend (id 0) goes straight to the core's
//! [`b2nd::io::FileSystem`], which reads at explicit positions and is safe
//! from several threads.

use super::types::*;
use crate::ffi::{c_str, guard, guard_code, reference};
use crate::os::{c_int, c_void};
use crate::stdio::*;
use b2nd::error::{Error, Result};
use b2nd::io::{Backend, Mode, Stream};
use std::ffi::CString;
use std::sync::{Arc, Mutex, OnceLock};

/// Registered backends; boxed so the pointers `blosc2_get_io_cb` returns stay valid.
#[allow(clippy::vec_box)] // blosc2_get_io_cb hands out pointers that must survive pushes
struct Registry(Vec<Box<blosc2_io_cb>>);
// SAFETY: the callbacks and names are plain C function pointers and static strings.
unsafe impl Send for Registry {}

fn registry() -> &'static Mutex<Registry> {
    static R: OnceLock<Mutex<Registry>> = OnceLock::new();
    R.get_or_init(|| {
        let fs = blosc2_io_cb {
            id: BLOSC2_IO_FILESYSTEM as u8,
            name: c"filesystem".as_ptr().cast_mut(),
            is_allocation_necessary: true,
            open: Some(blosc2_stdio_open),
            close: Some(blosc2_stdio_close),
            size: Some(blosc2_stdio_size),
            write: Some(blosc2_stdio_write),
            read: Some(blosc2_stdio_read),
            truncate: Some(blosc2_stdio_truncate),
            destroy: Some(blosc2_stdio_destroy),
        };
        let mmap = blosc2_io_cb {
            id: BLOSC2_IO_FILESYSTEM_MMAP as u8,
            name: c"filesystem_mmap".as_ptr().cast_mut(),
            is_allocation_necessary: false,
            open: Some(blosc2_stdio_mmap_open),
            close: Some(blosc2_stdio_mmap_close),
            size: Some(blosc2_stdio_mmap_size),
            write: Some(blosc2_stdio_mmap_write),
            read: Some(blosc2_stdio_mmap_read),
            truncate: Some(blosc2_stdio_mmap_truncate),
            destroy: Some(blosc2_stdio_mmap_destroy),
        };
        Mutex::new(Registry(vec![Box::new(fs), Box::new(mmap)]))
    })
}

/// The registered callbacks of backend `id`.
pub(crate) fn lookup(id: u8) -> Option<blosc2_io_cb> {
    let r = registry().lock().unwrap_or_else(|e| e.into_inner());
    r.0.iter().find(|c| c.id == id).map(|c| **c)
}

/// Register a user-defined I/O backend (ids from `BLOSC2_IO_REGISTERED` on).
///
/// # Safety
/// `io` must be NULL or point to a valid `blosc2_io_cb` whose callbacks stay valid.
#[no_mangle]
pub unsafe extern "C" fn blosc2_register_io_cb(io: *const blosc2_io_cb) -> c_int {
    guard_code(|| {
        // SAFETY: caller contract.
        let io = unsafe { reference(io) }.map_err(|_| Error::InvalidParam)?;
        if i32::from(io.id) < BLOSC2_IO_REGISTERED {
            return Err(Error::PluginIo);
        }
        let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
        if let Some(old) = r.0.iter().find(|c| c.id == io.id) {
            // Registering the same backend again is fine; another one under its id is not.
            // SAFETY: registered names are NUL-terminated strings (or NULL).
            let same = unsafe { c_str(old.name) == c_str(io.name) };
            return if same { Ok(0) } else { Err(Error::PluginIo) };
        }
        if r.0.len() >= u8::MAX as usize {
            return Err(Error::PluginIo);
        }
        r.0.push(Box::new(*io));
        Ok(0)
    })
}

/// The callbacks registered for backend `id` (NULL when none).
#[no_mangle]
pub extern "C" fn blosc2_get_io_cb(id: u8) -> *mut blosc2_io_cb {
    guard(std::ptr::null_mut(), || {
        let mut r = registry().lock().unwrap_or_else(|e| e.into_inner());
        r.0.iter_mut().find(|c| c.id == id).map_or(std::ptr::null_mut(), |c| &mut **c as *mut blosc2_io_cb)
    })
}

/// A backend reached through C callbacks, with the parameters of a `blosc2_io`.
#[derive(Clone)]
pub(crate) struct CallbackBackend {
    cb: blosc2_io_cb,
    params: usize,
}

// SAFETY: the callbacks are C functions; calls on one stream are serialized by
// CallbackStream's mutex, and the parameters are the caller's to share.
unsafe impl Send for CallbackBackend {}
// SAFETY: `&CallbackBackend` only reads its callbacks and parameters (copied at
// creation) and calls the callbacks, as c-blosc2 may from several threads.
unsafe impl Sync for CallbackBackend {}

impl CallbackBackend {
    pub(crate) fn new(cb: blosc2_io_cb, params: *mut c_void) -> CallbackBackend {
        CallbackBackend { cb, params: params as usize }
    }

    /// Call the backend's destroy callback on its parameters.
    pub(crate) fn destroy(&self) {
        if let Some(d) = self.cb.destroy {
            // SAFETY: the registered callback receives the parameters it was given.
            unsafe { d(self.params as *mut c_void) };
        }
    }
}

struct CallbackStream {
    cb: blosc2_io_cb,
    stream: Mutex<usize>,
}

// SAFETY: see CallbackBackend; every call holds the mutex.
unsafe impl Send for CallbackStream {}
// SAFETY: `cb` is only read; every callback call on the stream holds the
// `stream` mutex.
unsafe impl Sync for CallbackStream {}

impl Backend for CallbackBackend {
    fn open(&self, path: &str, mode: Mode) -> Result<Box<dyn Stream>> {
        let open = self.cb.open.ok_or(Error::PluginIo)?;
        let p = CString::new(path).map_err(|_| Error::InvalidParam)?;
        let m = CString::new(mode.as_c_mode()).map_err(|_| Error::InvalidParam)?;
        // SAFETY: a registered callback with NUL-terminated strings and its own parameters.
        let s = unsafe { open(p.as_ptr(), m.as_ptr(), self.params as *mut c_void) };
        if s.is_null() {
            return Err(Error::FileOpen);
        }
        Ok(Box::new(CallbackStream { cb: self.cb, stream: Mutex::new(s as usize) }))
    }

    fn id(&self) -> u8 {
        self.cb.id
    }

    /// A frame's journal (`<urlpath>.b2journal`) goes through the same
    /// callbacks; through the filesystem for the built-in memory-mapping ones
    /// (their parameters map one file).
    fn sidecar(&self) -> Option<Arc<dyn Backend>> {
        if i32::from(self.cb.id) == BLOSC2_IO_FILESYSTEM_MMAP {
            return Some(b2nd::io::filesystem());
        }
        Some(Arc::new(self.clone()))
    }
}

impl Stream for CallbackStream {
    fn read_at(&self, pos: u64, buf: &mut [u8]) -> Result<usize> {
        let read = self.cb.read.ok_or(Error::PluginIo)?;
        let s = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        let mut p = buf.as_mut_ptr().cast::<c_void>();
        let pos = i64::try_from(pos).map_err(|_| Error::FileRead)?;
        // SAFETY: `p` points to `buf.len()` writable bytes; the callback may
        // instead point it at its own memory (mmap), valid until the next call.
        let n = unsafe { read(&mut p, 1, buf.len() as i64, pos, *s as *mut c_void) };
        if n < 0 {
            return Err(Error::FileRead);
        }
        let n = (n as usize).min(buf.len());
        if p != buf.as_mut_ptr().cast::<c_void>() && n > 0 {
            if p.is_null() {
                return Err(Error::FileRead);
            }
            // SAFETY: the callback says `n` bytes are readable at `p`.
            let src = unsafe { std::slice::from_raw_parts(p.cast::<u8>(), n) };
            buf[..n].copy_from_slice(src);
        }
        Ok(n)
    }

    fn write_at(&self, pos: u64, data: &[u8]) -> Result<()> {
        let write = self.cb.write.ok_or(Error::PluginIo)?;
        let s = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        let pos = i64::try_from(pos).map_err(|_| Error::FileWrite)?;
        // SAFETY: `data` is readable for its length.
        let n = unsafe { write(data.as_ptr().cast(), 1, data.len() as i64, pos, *s as *mut c_void) };
        if n == data.len() as i64 {
            Ok(())
        } else {
            Err(Error::FileWrite)
        }
    }

    fn size(&self) -> Result<u64> {
        let size = self.cb.size.ok_or(Error::PluginIo)?;
        let s = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        // SAFETY: the stream this callback set opened.
        let n = unsafe { size(*s as *mut c_void) };
        u64::try_from(n).map_err(|_| Error::FileRead)
    }

    fn truncate(&self, len: u64) -> Result<()> {
        let truncate = self.cb.truncate.ok_or(Error::PluginIo)?;
        let s = self.stream.lock().unwrap_or_else(|e| e.into_inner());
        let len = i64::try_from(len).map_err(|_| Error::FileTruncate)?;
        // SAFETY: the stream this callback set opened.
        if unsafe { truncate(*s as *mut c_void, len) } < 0 {
            Err(Error::FileTruncate)
        } else {
            Ok(())
        }
    }
}

impl Drop for CallbackStream {
    fn drop(&mut self) {
        if let Some(close) = self.cb.close {
            let s = *self.stream.get_mut().unwrap_or_else(|e| e.into_inner());
            // SAFETY: closing the stream this callback set opened, once.
            unsafe { close(s as *mut c_void) };
        }
    }
}

/// What a `blosc2_io` selects.
pub(crate) struct IoChoice {
    pub backend: Arc<dyn Backend>,
    /// Set for callback backends: destroy their parameters when the super-chunk goes.
    pub callbacks: Option<Arc<CallbackBackend>>,
    /// `blosc2_stdio_params.locking` for the default backend.
    pub locking: bool,
    pub io: blosc2_io,
}

/// The backend for a `blosc2_io` (NULL: the default filesystem backend).
///
/// # Safety
/// `io` must be NULL or valid; for the default backend its params must be NULL
/// or a `blosc2_stdio_params`.
pub(crate) unsafe fn choose(io: *const blosc2_io) -> Result<IoChoice> {
    // SAFETY: caller contract.
    let io = match unsafe { io.as_ref() } {
        Some(io) => *io,
        None => blosc2_io {
            id: BLOSC2_IO_FILESYSTEM as u8,
            name: c"filesystem".as_ptr(),
            params: std::ptr::null_mut(),
        },
    };
    if i32::from(io.id) == BLOSC2_IO_FILESYSTEM {
        // SAFETY: caller contract: the default backend's params are blosc2_stdio_params.
        let locking = unsafe { io.params.cast::<blosc2_stdio_params>().as_ref() }.is_some_and(|p| p.locking);
        return Ok(IoChoice { backend: b2nd::io::filesystem(), callbacks: None, locking, io });
    }
    let cb = lookup(io.id).ok_or(Error::PluginIo)?;
    let b = Arc::new(CallbackBackend::new(cb, io.params));
    Ok(IoChoice { backend: b.clone(), callbacks: Some(b), locking: false, io })
}
