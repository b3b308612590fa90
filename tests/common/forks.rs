//! Forking a process many times while it works on another thread, with each
//! child's fate counted (shared by the fork tests of the core and of the C API).
#![allow(dead_code)] // shared by several test crates, each using only some of it

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Longer than any child needs on a loaded machine (a child takes a few
/// milliseconds of CPU).
const HANG: Duration = Duration::from_secs(60);
/// Children alive at once, at most.
const LIVE: usize = 8;

/// How the children ended.
#[derive(Debug, Default)]
pub struct Tally {
    pub ok: usize,
    pub failed: usize,
    pub hung: usize,
}

/// The forks to make: `B2ND_FORK_TRIALS`, else `default`.
pub fn trials(default: usize) -> usize {
    std::env::var("B2ND_FORK_TRIALS").ok().and_then(|s| s.parse().ok()).unwrap_or(default)
}

/// Reap the children that finished; kill and count those past `HANG`.
fn reap(live: &mut Vec<(libc::pid_t, Instant)>, t: &mut Tally) {
    live.retain(|&(pid, born)| {
        let mut status = 0;
        // SAFETY: waiting for a child of ours.
        let r = unsafe { libc::waitpid(pid, &mut status, libc::WNOHANG) };
        if r == pid {
            if libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0 {
                t.ok += 1;
            } else {
                t.failed += 1;
            }
            return false;
        }
        if born.elapsed() > HANG {
            eprintln!("child {pid} hung");
            // SAFETY: killing and reaping a child of ours.
            unsafe {
                libc::kill(pid, libc::SIGKILL);
                libc::waitpid(pid, &mut status, 0);
            }
            t.hung += 1;
            return false;
        }
        true
    });
}

/// Fork `trials` times, 1 to 3 ms apart, with at most `LIVE` children at
/// once; each child runs `child` (its exit status: 0 for success) and leaves.
pub fn fork_children(trials: usize, child: &dyn Fn() -> i32) -> Tally {
    let mut live = Vec::new();
    let mut t = Tally::default();
    let mut seed = 0x2545_f491_u32;
    for _ in 0..trials {
        while live.len() >= LIVE {
            reap(&mut live, &mut t);
            std::thread::sleep(Duration::from_micros(200));
        }
        // SAFETY: the child only runs library code and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0, "fork failed");
        if pid == 0 {
            let code = std::panic::catch_unwind(std::panic::AssertUnwindSafe(child)).unwrap_or(2);
            // SAFETY: leaving the child without running the parent's exit handlers.
            unsafe { libc::_exit(code) };
        }
        live.push((pid, Instant::now()));
        reap(&mut live, &mut t);
        seed ^= seed << 13;
        seed ^= seed >> 17;
        seed ^= seed << 5;
        std::thread::sleep(Duration::from_micros(1000 + u64::from(seed % 2000)));
    }
    while !live.is_empty() {
        reap(&mut live, &mut t);
        std::thread::sleep(Duration::from_millis(1));
    }
    t
}

/// Run `round` over and over on a thread of its own while `body` runs (from
/// the end of the first round on): `body`'s result, and the rounds run.
pub fn while_busy<T>(mut round: impl FnMut() + Send + 'static, body: impl FnOnce() -> T) -> (T, usize) {
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let busy = {
        let (stop, rounds) = (Arc::clone(&stop), Arc::clone(&rounds));
        std::thread::spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                round();
                rounds.fetch_add(1, Ordering::Relaxed);
            }
        })
    };
    while rounds.load(Ordering::Relaxed) == 0 {
        std::thread::yield_now();
    }
    let out = body();
    stop.store(true, Ordering::Relaxed);
    busy.join().expect("the busy thread");
    (out, rounds.load(Ordering::Relaxed))
}
