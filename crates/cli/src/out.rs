//! The tool's standard output. When its reader has gone (`b2nd dump
//! big.b2nd | head -1`), the tool stops there, quietly and with status 0, as
//! ripgrep and the classic Unix tools do; any other write error ends it with
//! a message and status 1.

use std::io::{self, Write};

/// `println!` for the tool's results.
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out::line(format_args!($($arg)*))
    };
}

/// Write one line of output.
pub fn line(args: std::fmt::Arguments<'_>) {
    let mut o = io::stdout().lock();
    let r = o.write_fmt(args).and_then(|()| o.write_all(b"\n"));
    done(r);
}

/// Write `b` as it is, then flush it.
pub fn bytes(b: &[u8]) {
    let mut o = io::stdout().lock();
    let r = o.write_all(b).and_then(|()| o.flush());
    done(r);
}

fn done(r: io::Result<()>) {
    match r {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => std::process::exit(0),
        Err(e) => {
            eprintln!("b2nd: cannot write the output: {e}");
            std::process::exit(1);
        }
    }
}
