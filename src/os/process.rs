//! What a process inherits through `fork`, and state that must start anew
//! in a child.
//!
//! A child of `fork` has one thread, the one that forked, and a copy of the
//! parent's memory: locks held by the parent's other threads (the pool's
//! helpers, another caller) stay held forever there, and pools count
//! helpers that do not exist. So library-wide state that threads share is
//! kept in a [`PerProcess`] cell: a child gets fresh state on first use and
//! never touches the parent's copy (which is leaked: its locks may be held).

use super::sys;
use std::sync::atomic::{AtomicPtr, AtomicU64, Ordering};

/// Forks this process descends from, since the library was first used: 0 in
/// the first process, 1 in its children, and so on. Bumped by the child's
/// handler that [`fork_generation`] registers.
static GENERATION: AtomicU64 = AtomicU64::new(0);

/// Called in the child right after a fork, on its only thread (it only
/// bumps an atomic: async-signal-safe).
#[cfg_attr(any(not(unix), target_os = "emscripten"), allow(dead_code))]
pub(super) extern "C" fn forked_child() {
    GENERATION.fetch_add(1, Ordering::Relaxed);
}

/// The process's fork generation: 0 in the first process, one more in each
/// child of a fork. The first call
/// registers the fork handler; state made after it is always tagged with the
/// generation of the process that made it.
pub fn fork_generation() -> u64 {
    sys::watch_forks();
    GENERATION.load(Ordering::Relaxed)
}

/// A value of this process alone: made on first use, and made anew in a
/// forked child (the parent's is left as it was, never dropped).
pub struct PerProcess<T: 'static> {
    slot: AtomicPtr<Slot<T>>,
    make: fn() -> T,
}

struct Slot<T> {
    generation: u64,
    value: T,
}

impl<T: Send + Sync + 'static> PerProcess<T> {
    pub const fn new(make: fn() -> T) -> PerProcess<T> {
        PerProcess { slot: AtomicPtr::new(std::ptr::null_mut()), make }
    }

    /// This process's value.
    pub fn get(&'static self) -> &'static T {
        self.get_at(fork_generation())
    }

    /// The value of fork generation `generation`.
    fn get_at(&'static self, generation: u64) -> &'static T {
        let mut seen = self.slot.load(Ordering::Acquire);
        loop {
            // SAFETY: slots are published whole (Release) and never freed.
            if let Some(s) = unsafe { seen.as_ref() } {
                if s.generation == generation {
                    return &s.value;
                }
            }
            let new = Box::into_raw(Box::new(Slot { generation, value: (self.make)() }));
            match self.slot.compare_exchange(seen, new, Ordering::AcqRel, Ordering::Acquire) {
                // The parent's slot (if any) is leaked on purpose.
                // SAFETY: `new` was just published and is never freed.
                Ok(_) => return unsafe { &(*new).value },
                Err(now) => {
                    // Another thread of this process published first.
                    // SAFETY: `new` was never shared.
                    drop(unsafe { Box::from_raw(new) });
                    seen = now;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_made_once_per_process() {
        static N: PerProcess<AtomicU64> = PerProcess::new(|| AtomicU64::new(7));
        let a = N.get();
        a.fetch_add(1, Ordering::Relaxed);
        let b = N.get();
        assert!(std::ptr::eq(a, b));
        assert_eq!(b.load(Ordering::Relaxed), 8);
    }

    #[test]
    fn a_new_generation_gets_a_new_value() {
        // (What a forked child sees, without bumping this process's generation,
        // which the other tests' pools go by.)
        static N: PerProcess<AtomicU64> = PerProcess::new(|| AtomicU64::new(1));
        let a = N.get_at(10);
        a.store(5, Ordering::Relaxed);
        let b = N.get_at(11);
        assert!(!std::ptr::eq(a, b));
        assert_eq!(b.load(Ordering::Relaxed), 1);
        assert_eq!(a.load(Ordering::Relaxed), 5, "the parent's value is left as it was");
        assert!(std::ptr::eq(b, N.get_at(11)));
    }

    #[cfg(unix)]
    #[test]
    #[cfg_attr(miri, ignore = "Miri: child processes (fork)")]
    fn a_forked_child_is_a_new_generation() {
        let before = fork_generation();
        // SAFETY: the child only reads an atomic and leaves with `_exit`.
        let pid = unsafe { libc::fork() };
        assert!(pid >= 0);
        if pid == 0 {
            let code = if fork_generation() == before + 1 { 0 } else { 1 };
            // SAFETY: leaving the child at once.
            unsafe { libc::_exit(code) };
        }
        let mut status = 0;
        // SAFETY: waiting for our child.
        assert_eq!(unsafe { libc::waitpid(pid, &mut status, 0) }, pid);
        assert!(libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0, "status {status}");
        assert_eq!(fork_generation(), before);
    }
}
