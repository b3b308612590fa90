//! Diagnostics as c-blosc2 prints them, to stderr:
//! - under `BLOSC_TRACE` (set to anything), each refusal the library explains,
//!   as `[error] - message (file:line)` ([`trace!`](macro@crate::trace));
//! - under `BLOSC_INFO`, what it did, as `[INFO] - message` ([`info!`](crate::info)).
//!
//! The variables are read at each message, as c-blosc2 does, so a program may
//! set them while it runs.

/// Whether the environment variable `name` is set now.
pub fn enabled(name: &str) -> bool {
    std::env::var_os(name).is_some()
}

/// Write one trace line (see [`trace!`](macro@crate::trace)).
pub fn emit_trace(args: std::fmt::Arguments<'_>, file: &str, line: u32) {
    eprintln!("[error] - {args} ({file}:{line})");
}

/// Write one information line (see [`info!`](crate::info)).
pub fn emit_info(args: std::fmt::Arguments<'_>) {
    eprintln!("[INFO] - {args}");
}

/// Explain an error under `BLOSC_TRACE`: `trace!("chunk {i} is {n} bytes")`.
#[macro_export]
macro_rules! trace {
    ($($arg:tt)*) => {
        if $crate::trace::enabled("BLOSC_TRACE") {
            $crate::trace::emit_trace(format_args!($($arg)*), file!(), line!());
        }
    };
}

/// Report what was done under `BLOSC_INFO`: `info!("opened {path}")`.
#[macro_export]
macro_rules! info {
    ($($arg:tt)*) => {
        if $crate::trace::enabled("BLOSC_INFO") {
            $crate::trace::emit_info(format_args!($($arg)*));
        }
    };
}
