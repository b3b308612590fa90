//! Starting a child process in a test, again where wine failed to start it
//! (shared by the test crates that start processes).
#![allow(dead_code)] // shared by several test crates, each using only some of it

use std::io;
use std::time::Duration;

/// `start()` (a `Command`'s `output`, `status` or `spawn`), tried again up to
/// five times where it failed with ERROR_INTERNAL_ERROR. Wine (not Windows)
/// now and then fails so while other threads start processes: the child never
/// ran, so starting it again changes nothing the test checks. Any other error,
/// or one on another system, is returned at once.
pub fn start<T>(mut start: impl FnMut() -> io::Result<T>) -> io::Result<T> {
    let mut tries = 0;
    loop {
        match start() {
            Err(e) if cfg!(windows) && e.raw_os_error() == Some(1359) && tries < 5 => {
                tries += 1;
                eprintln!("the process did not start ({e}); starting it again");
                std::thread::sleep(Duration::from_millis(200));
            }
            r => return r,
        }
    }
}
