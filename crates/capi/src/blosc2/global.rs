//! The global (non-context) API: library state set by `blosc1_set_*` /
//! `blosc2_set_*`, the environment variables c-blosc2 honours (read here, at
//! the API edge, on every global call as c-blosc2 does), and the version and
//! codec listing functions.

use super::types::blosc_threads_callback;
use crate::ffi::{c_str, guard, guard_code, write_opt};
use crate::os::{c_char, c_int};
use b2nd::chunk::{CParams, Compressor, DParams, Decompressor, SplitMode};
use b2nd::codecs::{Codec, Library, ALL};
use b2nd::error::Error;
use b2nd::os::PerProcess;
use std::ffi::{CStr, CString};
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// What the global API uses when it builds its parameters.
pub(crate) struct Globals {
    pub compressor: Codec,
    pub nthreads: i16,
    pub blocksize: i32,
    pub splitmode: SplitMode,
    pub delta: bool,
    pub cctx: Option<Compressor>,
    pub dctx: Option<Decompressor>,
}

impl Default for Globals {
    fn default() -> Self {
        Globals {
            compressor: Codec::BloscLz,
            nthreads: 1,
            blocksize: 0,
            splitmode: SplitMode::ForwardCompat,
            delta: false,
            cctx: None,
            dctx: None,
        }
    }
}

/// The global state of this process. A forked child gets its own (the
/// parent's lock may be held by a thread the child does not have, in the
/// middle of a global call): the settings as the parent last left them, and
/// contexts of its own.
static GLOBALS: PerProcess<Mutex<Globals>> = PerProcess::new(|| Mutex::new(Globals::inherited()));

/// The settings as of the last global call that returned, read without a
/// lock (by a forked child).
static SETTINGS: [AtomicI64; 5] = [const { AtomicI64::new(-1) }; 5];

impl Globals {
    /// The defaults, with the settings a forked child's parent had.
    fn inherited() -> Globals {
        let mut g = Globals::default();
        let [compressor, nthreads, blocksize, splitmode, delta] =
            SETTINGS.each_ref().map(|a| a.load(Ordering::Relaxed));
        if compressor < 0 {
            return g; // nothing published yet
        }
        g.compressor =
            ALL.iter().copied().find(|c| i64::from(c.compcode()) == compressor).unwrap_or(g.compressor);
        g.nthreads = nthreads as i16;
        g.blocksize = blocksize as i32;
        g.splitmode = SplitMode::from_code(splitmode as c_int);
        g.delta = delta != 0;
        g
    }

    fn publish(&self) {
        let values = [
            i64::from(self.compressor.compcode()),
            i64::from(self.nthreads),
            i64::from(self.blocksize),
            self.splitmode as i64,
            i64::from(self.delta),
        ];
        for (a, v) in SETTINGS.iter().zip(values) {
            a.store(v, Ordering::Relaxed);
        }
    }
}

/// The locked global state; publishes the settings when released.
pub(crate) struct GlobalsGuard(MutexGuard<'static, Globals>);

impl std::ops::Deref for GlobalsGuard {
    type Target = Globals;
    fn deref(&self) -> &Globals {
        &self.0
    }
}

impl std::ops::DerefMut for GlobalsGuard {
    fn deref_mut(&mut self) -> &mut Globals {
        &mut self.0
    }
}

impl Drop for GlobalsGuard {
    fn drop(&mut self) {
        self.0.publish();
    }
}

pub(crate) fn globals() -> GlobalsGuard {
    GlobalsGuard(GLOBALS.get().lock().unwrap_or_else(|e| e.into_inner()))
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok()
}

/// Leading integer of a string, as C's strtol reads it (None if there is none).
/// `BLOSC_NTHREADS`, when set to a number: 1 to 32767, anything else is an
/// error (as in c-blosc2, whose calls then fail with `BLOSC2_ERROR_INVALID_PARAM`).
fn env_nthreads() -> Result<Option<i16>, Error> {
    match env("BLOSC_NTHREADS").as_deref().and_then(parse_long) {
        None => Ok(None),
        Some(v) => i16::try_from(v).ok().filter(|&n| n > 0).map(Some).ok_or(Error::InvalidParam),
    }
}

fn parse_long(s: &str) -> Option<i64> {
    let t = s.trim_start();
    let end = t
        .char_indices()
        .find(|&(i, c)| !(c.is_ascii_digit() || (i == 0 && (c == '-' || c == '+'))))
        .map_or(t.len(), |(i, _)| i);
    t[..end].parse().ok()
}

/// Parameters of one global compression call, after the environment has had its say.
pub(crate) struct GlobalCall {
    pub params: CParams,
    pub nolock: bool,
    pub blosc1_header: bool,
}

/// Apply c-blosc2's environment variables to a global compression call.
pub(crate) fn compression_call(clevel: c_int, doshuffle: c_int, typesize: i32) -> Result<GlobalCall, Error> {
    // Compression ignores a BLOSC_NTHREADS out of range (decompression fails on it), as c-blosc2 does.
    let nthreads = env_nthreads().unwrap_or(None);
    let mut clevel = clevel;
    let mut doshuffle = doshuffle;
    let mut typesize = typesize;
    if let Some(v) = env("BLOSC_CLEVEL").as_deref().and_then(parse_long) {
        if v >= 0 {
            clevel = v as c_int;
        }
    }
    match env("BLOSC_SHUFFLE").as_deref() {
        Some("NOSHUFFLE") => doshuffle = 0,
        Some("SHUFFLE") => doshuffle = 1,
        Some("BITSHUFFLE") => doshuffle = 2,
        _ => {}
    }
    let mut g = globals();
    match env("BLOSC_DELTA").as_deref() {
        Some("1") => g.delta = true,
        Some("0") => g.delta = false,
        _ => {}
    }
    if let Some(v) = env("BLOSC_TYPESIZE").as_deref().and_then(parse_long) {
        if v > 0 {
            typesize = v as i32;
        }
    }
    if let Some(c) = env("BLOSC_COMPRESSOR").and_then(|n| Codec::from_name(&n.to_ascii_lowercase())) {
        g.compressor = c;
    }
    if let Some(v) = env("BLOSC_BLOCKSIZE").as_deref().and_then(parse_long) {
        if v > 0 {
            g.blocksize = v.min(i64::from(i32::MAX)) as i32;
        }
    }
    if let Some(n) = nthreads {
        g.nthreads = n;
    }
    match env("BLOSC_SPLITMODE").as_deref() {
        Some("ALWAYS") => g.splitmode = SplitMode::Always,
        Some("NEVER") => g.splitmode = SplitMode::Never,
        Some("AUTO") => g.splitmode = SplitMode::Auto,
        Some("FORWARD_COMPAT") => g.splitmode = SplitMode::ForwardCompat,
        _ => {}
    }
    let clevel = clevel.clamp(-1, 255);
    let mut params = CParams::classic(g.compressor, clevel.max(0) as u8, doshuffle, typesize, g.delta);
    if !(0..=9).contains(&clevel) {
        params.clevel = 10; // rejected by the compressor with CODEC_PARAM
    }
    params.nthreads = g.nthreads;
    params.blocksize = g.blocksize;
    params.splitmode = g.splitmode;
    Ok(GlobalCall {
        params,
        nolock: env("BLOSC_NOLOCK").is_some(),
        blosc1_header: env("BLOSC_BLOSC1_COMPAT").is_some(),
    })
}

/// Compress through the global context (or a private one under BLOSC_NOLOCK).
pub(crate) fn global_compress(call: GlobalCall, src: &[u8], dst: &mut [u8]) -> Result<usize, Error> {
    if call.params.clevel > 9 {
        return Err(Error::CodecParam);
    }
    if call.nolock {
        let mut c = Compressor::new(call.params)?;
        return c.compress(src, dst);
    }
    let mut g = globals();
    let reuse = matches!(&g.cctx, Some(c) if *c.params() == call.params);
    if !reuse {
        g.cctx = Some(Compressor::new(call.params)?);
    }
    let c = g.cctx.as_mut().ok_or(Error::Failure)?;
    c.blosc1_header = call.blosc1_header;
    c.compress(src, dst)
}

/// Decompress through the global context (or a private one under BLOSC_NOLOCK).
pub(crate) fn global_decompress(src: &[u8], dst: &mut [u8]) -> Result<usize, Error> {
    let mut nthreads = globals().nthreads;
    if let Some(n) = env_nthreads()? {
        nthreads = n;
        globals().nthreads = n;
    }
    if env("BLOSC_NOLOCK").is_some() {
        return Decompressor::new(DParams { nthreads, typesize: 8, owner: 0, schunk: None })
            .decompress(src, dst);
    }
    let mut g = globals();
    let d = g
        .dctx
        .get_or_insert_with(|| Decompressor::new(DParams { nthreads, typesize: 8, owner: 0, schunk: None }));
    d.set_nthreads(nthreads);
    d.decompress(src, dst)
}

/// Run `f` with the global decompression context.
pub(crate) fn with_global_dctx<T>(f: impl FnOnce(&mut Decompressor) -> T) -> T {
    let mut g = globals();
    let nthreads = g.nthreads;
    let d = g
        .dctx
        .get_or_insert_with(|| Decompressor::new(DParams { nthreads, typesize: 8, owner: 0, schunk: None }));
    f(d)
}

/// Initialize the library (optional: every function initializes on demand).
#[no_mangle]
pub extern "C" fn blosc2_init() {
    guard((), || {
        super::plugins::register_runtime_plugins();
        let mut g = globals();
        if let Ok(Some(n)) = env_nthreads() {
            g.nthreads = n;
        }
    })
}

/// Release the global contexts and reset the global settings.
#[no_mangle]
pub extern "C" fn blosc2_destroy() {
    guard((), || *globals() = Globals::default())
}

/// Release the memory and threads held by the global contexts.
#[no_mangle]
pub extern "C" fn blosc2_free_resources() -> c_int {
    guard_code(|| {
        let mut g = globals();
        g.cctx = None;
        g.dctx = None;
        Ok(0)
    })
}

/// The number of threads of the global API.
#[no_mangle]
pub extern "C" fn blosc2_get_nthreads() -> i16 {
    guard(1, || globals().nthreads)
}

/// The job of one worker handed to a threads callback.
#[repr(C)]
struct ThreadJob<'a> {
    job: &'a (dyn Fn(usize) + Sync),
    tid: usize,
}

/// What a threads callback calls for each job.
unsafe extern "C" fn run_thread_job(jobdata: *mut crate::os::c_void) {
    // SAFETY: `jobdata` points at one ThreadJob of the array `CallbackExecutor::run`
    // handed to the callback, alive until the callback returns.
    if let Some(j) = unsafe { jobdata.cast::<ThreadJob>().as_ref() } {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| (j.job)(j.tid)));
    }
}

/// Runs contexts' jobs through the caller's threads callback.
struct CallbackExecutor {
    callback: unsafe extern "C" fn(
        *mut crate::os::c_void,
        Option<unsafe extern "C" fn(*mut crate::os::c_void)>,
        c_int,
        crate::os::size_t,
        *mut crate::os::c_void,
    ),
    data: usize,
}

impl b2nd::chunk::Executor for CallbackExecutor {
    fn run(&self, njobs: usize, job: &(dyn Fn(usize) + Sync)) {
        let mut jobs: Vec<ThreadJob> = (0..njobs).map(|tid| ThreadJob { job, tid }).collect();
        // SAFETY: the caller's callback, given jobs that stay alive until it returns.
        unsafe {
            (self.callback)(
                self.data as *mut crate::os::c_void,
                Some(run_thread_job),
                njobs as c_int,
                std::mem::size_of::<ThreadJob>(),
                jobs.as_mut_ptr().cast(),
            )
        };
    }
}

/// Run the jobs of multi-threaded contexts through `callback` instead of the
/// library's own threads (NULL: back to the library's threads). The callback
/// must call `dojob` on each of the `numjobs` elements of `jobdata` (each
/// `jobdata_elsize` bytes) and return when all have returned.
///
/// # Safety
/// `callback` NULL or a function that does the above, callable from any thread with
/// `callback_data`, until it is replaced.
#[no_mangle]
pub unsafe extern "C" fn blosc2_set_threads_callback(
    callback: blosc_threads_callback,
    callback_data: *mut crate::os::c_void,
) {
    guard((), || {
        let ex = callback.map(|cb| {
            std::sync::Arc::new(CallbackExecutor { callback: cb, data: callback_data as usize })
                as std::sync::Arc<dyn b2nd::chunk::Executor>
        });
        b2nd::chunk::set_executor(ex);
    })
}

/// Set the number of threads of the global API; returns the previous number.
#[no_mangle]
pub extern "C" fn blosc2_set_nthreads(nthreads: i16) -> i16 {
    guard(Error::InvalidParam.code() as i16, || {
        if nthreads <= 0 {
            return Error::InvalidParam.code() as i16;
        }
        let mut g = globals();
        let old = g.nthreads;
        g.nthreads = nthreads;
        if let Some(d) = g.dctx.as_mut() {
            d.set_nthreads(nthreads);
        }
        old
    })
}

static NAMES: OnceLock<Vec<CString>> = OnceLock::new();

fn static_name(codec: Codec) -> *const c_char {
    let names =
        NAMES.get_or_init(|| ALL.iter().map(|c| CString::new(c.name()).unwrap_or_default()).collect());
    let i = ALL.iter().position(|&c| c == codec).unwrap_or(0);
    names[i].as_ptr()
}

/// The name of the global compressor.
#[no_mangle]
pub extern "C" fn blosc1_get_compressor() -> *const c_char {
    guard(std::ptr::null(), || static_name(globals().compressor))
}

/// Select the global compressor by name; returns its compcode or -1.
///
/// # Safety
/// `compname` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc1_set_compressor(compname: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: caller contract.
        match unsafe { c_str(compname) }.and_then(Codec::from_name) {
            Some(c) => {
                globals().compressor = c;
                c_int::from(c.compcode())
            }
            None => -1,
        }
    })
}

/// Turn the delta filter of the global API on (1) or off (0).
#[no_mangle]
pub extern "C" fn blosc2_set_delta(dodelta: c_int) {
    guard((), || globals().delta = dodelta != 0)
}

/// The forced block size of the global API (0 = automatic).
#[no_mangle]
pub extern "C" fn blosc1_get_blocksize() -> c_int {
    guard(0, || globals().blocksize)
}

/// Force a block size for the global API (0 = automatic).
#[no_mangle]
pub extern "C" fn blosc1_set_blocksize(blocksize: crate::os::size_t) {
    guard((), || globals().blocksize = blocksize.min(i32::MAX as usize) as i32)
}

/// Set the split mode of the global API.
#[no_mangle]
pub extern "C" fn blosc1_set_splitmode(splitmode: c_int) {
    guard((), || globals().splitmode = SplitMode::from_code(splitmode))
}

/// The name of the codec with `compcode` (returns the code, or -1 if unknown;
/// `*compname` is set to the name or NULL).
///
/// # Safety
/// `compname` must be NULL or valid for a write.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compcode_to_compname(compcode: c_int, compname: *mut *const c_char) -> c_int {
    guard(-1, || {
        let code = u8::try_from(compcode).ok();
        let name = match code.and_then(Codec::from_compcode) {
            Some(codec) => static_name(codec),
            // a plugin codec (built in, or registered by the user or at start)
            None => code.and_then(plugin_name).unwrap_or(std::ptr::null()),
        };
        // SAFETY: caller contract.
        unsafe { write_opt(compname, name) };
        if name.is_null() {
            -1
        } else {
            compcode
        }
    })
}

/// The name of the plugin codec `id`, as a C string that lives as long as the
/// process (names are kept once per id and name).
fn plugin_name(id: u8) -> Option<*const c_char> {
    static KEPT: Mutex<Vec<(u8, &'static CStr)>> = Mutex::new(Vec::new());
    let codec = b2nd::plugins::codec(id)?;
    let name = codec.name();
    if name.is_empty() {
        return None;
    }
    let mut kept = KEPT.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, c)) = kept.iter().find(|(i, c)| *i == id && c.to_bytes() == name.as_bytes()) {
        return Some(c.as_ptr());
    }
    let c: &'static CStr = Box::leak(CString::new(name).ok()?.into_boxed_c_str());
    kept.push((id, c));
    Some(c.as_ptr())
}

/// The compcode of a codec name, or -1.
///
/// # Safety
/// `compname` must be NULL or a NUL-terminated string.
#[no_mangle]
pub unsafe extern "C" fn blosc2_compname_to_compcode(compname: *const c_char) -> c_int {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(name) = (unsafe { c_str(compname) }) else { return -1 };
        match Codec::from_name(name) {
            Some(c) => c_int::from(c.compcode()),
            None => b2nd::plugins::codec_id(name).map_or(-1, c_int::from),
        }
    })
}

static LIST: OnceLock<CString> = OnceLock::new();
static VERSION: &[u8] = b"3.3.5\0";

/// "blosclz,lz4,lz4hc,zlib,zstd".
#[no_mangle]
pub extern "C" fn blosc2_list_compressors() -> *const c_char {
    guard(std::ptr::null(), || {
        LIST.get_or_init(|| {
            CString::new(ALL.iter().map(|c| c.name()).collect::<Vec<_>>().join(",")).unwrap_or_default()
        })
        .as_ptr()
    })
}

/// The version of the c-blosc2 API implemented ("3.3.5").
#[no_mangle]
pub extern "C" fn blosc2_get_version_string() -> *const c_char {
    VERSION.as_ptr().cast()
}

/// Library name and version of a codec, as newly malloc'ed strings the caller
/// frees. Returns the library code, or -1 for an unknown codec.
///
/// # Safety
/// `compname` must be NULL or a NUL-terminated string; the out pointers NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn blosc2_get_complib_info(
    compname: *const c_char,
    complib: *mut *mut c_char,
    version: *mut *mut c_char,
) -> c_int {
    guard(-1, || {
        // SAFETY: caller contract.
        let Some(name) = (unsafe { c_str(compname) }) else { return -1 };
        let Some(codec) = Codec::from_name(name) else {
            // a plugin codec: its own name, version unknown (as c-blosc2 says)
            let Some(id) = b2nd::plugins::codec_id(name) else { return -1 };
            // SAFETY: caller contract, as below.
            unsafe {
                if !complib.is_null() {
                    write_opt(complib, malloc_str(name));
                }
                if !version.is_null() {
                    write_opt(version, malloc_str("unknown"));
                }
            }
            return c_int::from(id);
        };
        let lib = Library::of(codec);
        // SAFETY: caller contract; strdup'ed strings are the caller's to free
        // (made only for the pointers the caller gave).
        unsafe {
            if !complib.is_null() {
                write_opt(complib, malloc_str(lib.name()));
            }
            if !version.is_null() {
                write_opt(version, malloc_str(&lib.version()));
            }
        }
        c_int::from(codec.format())
    })
}

/// A malloc'ed copy of `s` (NULL on failure).
pub(crate) fn malloc_str(s: &str) -> *mut c_char {
    let c = CString::new(s).unwrap_or_default();
    // SAFETY: strdup copies a valid NUL-terminated string.
    unsafe { crate::os::strdup(c.as_ptr()) }
}

/// The message for an error code (static; "Unknown error" for unknown codes).
#[no_mangle]
pub extern "C" fn blosc2_error_string(error_code: c_int) -> *const c_char {
    static MESSAGES: OnceLock<Vec<(i32, CString)>> = OnceLock::new();
    let table = MESSAGES.get_or_init(|| {
        (-40..=0).map(|c| (c, CString::new(b2nd::error::message(c)).unwrap_or_default())).collect()
    });
    table
        .iter()
        .find(|(c, _)| *c == error_code)
        .or_else(|| table.iter().find(|(c, _)| *c == -40))
        .map_or(std::ptr::null(), |(_, s)| s.as_ptr())
}
