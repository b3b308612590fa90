//! Run-time plugins: a codec, filter or tuner registered by name without
//! callbacks lives in a shared library `libblosc2_<name>.so`, found the way
//! c-blosc2 3.3 finds it: first by the dynamic loader's own search
//! (`LD_LIBRARY_PATH`, the system directories), then by asking Python where
//! the package `blosc2_<name>` keeps it (`python -c "import blosc2_<name>;
//! blosc2_<name>.print_libpath()"`, then `python3`). The library's exported
//! `info` record holds the names of the functions to call (two for a codec:
//! encoder, decoder; two for a filter: forward, backward). Loaded libraries
//! stay loaded for the life of the process, as in c-blosc2.

use crate::os::Library;
use crate::os::{c_char, c_void};
use b2nd::error::{Error, Result};
use std::ffi::CStr;
use std::sync::Mutex;

/// Libraries loaded so far, by plugin name (handles as addresses).
static LOADED: Mutex<Vec<(String, Library)>> = Mutex::new(Vec::new());

/// Plugin names are letters, digits and underscores (they go into a file
/// name and a Python statement).
pub(crate) fn valid_name(name: &str) -> bool {
    !name.is_empty() && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
}

fn dl_error() -> String {
    Library::last_error()
}

fn dlopen(path: &str) -> Option<Library> {
    Library::open(path).ok()
}

/// Where the Python package `blosc2_<name>` says its library is.
fn python_libpath(name: &str) -> Option<String> {
    let code = format!("import blosc2_{name}; blosc2_{name}.print_libpath()");
    for python in ["python", "python3"] {
        b2nd::info!("looking for the plugin `{name}` with {python}");
        let Ok(out) = std::process::Command::new(python)
            .args(["-c", &code])
            .stderr(std::process::Stdio::null())
            .output()
        else {
            continue;
        };
        let text = String::from_utf8_lossy(&out.stdout);
        let path = text.lines().next().unwrap_or("").trim();
        if out.status.success() && !path.is_empty() {
            return Some(path.to_string());
        }
    }
    None
}

/// The library of plugin `name`, loaded once.
fn library(name: &str) -> Result<Library> {
    if !valid_name(name) {
        b2nd::trace!("invalid plugin name `{name}`");
        return Err(Error::InvalidParam);
    }
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&(_, h)) = loaded.iter().find(|(n, _)| n == name) {
        return Ok(h);
    }
    let file = format!("{}{name}{}", crate::os::PLUGIN_PREFIX, crate::os::PLUGIN_SUFFIX);
    let handle = match dlopen(&file) {
        Some(h) => {
            b2nd::info!("loaded {file}");
            h
        }
        None => {
            b2nd::info!("could not load {file} directly: {}", dl_error());
            let Some(path) = python_libpath(name) else {
                b2nd::trace!("the plugin `{name}` is not installed ({file} not found, and Python has no package blosc2_{name})");
                return Err(Error::Failure);
            };
            dlopen(&path).ok_or_else(|| {
                b2nd::trace!("loading the plugin `{name}` from {path} failed: {}", dl_error());
                Error::Failure
            })?
        }
    };
    loaded.push((name.to_string(), handle));
    Ok(handle)
}

fn symbol(handle: Library, name: &CStr) -> *mut c_void {
    handle.symbol(name)
}

/// The `N` functions plugin `name` names in its `info` record (a struct of
/// `N` C-string pointers), looked up in its library. All must be there.
pub(crate) fn functions<const N: usize>(name: &str) -> Result<[*mut c_void; N]> {
    let handle = library(name)?;
    let info = symbol(handle, c"info") as *const *const c_char;
    if info.is_null() {
        b2nd::trace!("the plugin `{name}` has no `info` symbol");
        return Err(Error::Failure);
    }
    let mut out = [std::ptr::null_mut(); N];
    for (k, slot) in out.iter_mut().enumerate() {
        // SAFETY: `info` is the plugin's record of N string pointers (the
        // plugin interface c-blosc2 defines); each is NULL or a C string.
        let fname = unsafe { *info.add(k) };
        if fname.is_null() {
            b2nd::trace!("the plugin `{name}` names no function {k} in its `info`");
            return Err(Error::Failure);
        }
        // SAFETY: non-NULL C string from the plugin.
        *slot = symbol(handle, unsafe { CStr::from_ptr(fname) });
        if slot.is_null() {
            b2nd::trace!("the plugin `{name}` lacks the function its `info` names: {}", dl_error());
            return Err(Error::Failure);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_checked_and_missing_plugins_fail_cleanly() {
        assert!(valid_name("openzl") && valid_name("my_codec2"));
        assert!(!valid_name("") && !valid_name("a;rm") && !valid_name("../x") && !valid_name("a b"));
        assert_eq!(functions::<2>("a;b").err(), Some(Error::InvalidParam));
        assert_eq!(functions::<2>("b2nd_no_such_plugin_here").err(), Some(Error::Failure));
    }
}
