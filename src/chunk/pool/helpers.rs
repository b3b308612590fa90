//! The worker pool's helper threads: helper threads that sleep between calls and
//! join a call's job while it is open, and the hand-over of their work to
//! the caller.
//!
//! It depends on nothing else in the crate, so that the loom model
//! (`loom/`, run by `scripts/loom.sh`) compiles this very file against loom's
//! threads, locks and atomics, and checks it under every interleaving and
//! the weak memory orderings of the C++ model (which x86, and an emulator
//! running on it, never show).
//!
//! What the pool's correctness rests on:
//! * the mutex: a job is posted, joined and closed under it;
//! * a helper's leave (`Call::inside`, a Release decrement) paired with the
//!   caller's Acquire load that sees it reach 0: this is what makes the
//!   helper's writes (its share of the output) visible to the caller when
//!   `run` returns. The model fails if either side is weakened to Relaxed
//!   (`--cfg b2nd_weak_leave` weakens the helper's side: scripts/loom.sh
//!   checks that the model then fails);
//! * `left`: a caller that sleeps is woken by the last helper out, which
//!   takes the mutex first (no lost wake-up).
//!
//! `posts` and the watcher count are hints: they decide how long a thread
//! spins before it sleeps, never what it sees.

#[cfg(loom)]
use loom::{
    sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread,
};
#[cfg(not(loom))]
use std::{
    sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering},
    sync::{Arc, Condvar, Mutex, MutexGuard},
    thread,
};

/// The ordering of a helper's leave (see the module documentation).
#[cfg(not(b2nd_weak_leave))]
const LEAVE: Ordering = Ordering::Release;
#[cfg(b2nd_weak_leave)]
const LEAVE: Ordering = Ordering::Relaxed;

/// How long a helper out of work watches for the next job before sleeping
/// (and a caller done with its share, for its helpers to leave).
const WATCH: std::time::Duration = std::time::Duration::from_micros(50);

/// Helper threads that sleep on a condition variable between jobs (after
/// watching for the next one for at most [`WATCH`]: they never yield in a loop,
/// which on a loaded machine hands the core to another process for a whole
/// time slice) and join a call's job only while it is open: the caller never
/// waits for a helper that has not started.
pub(crate) struct Pool {
    shared: Arc<PoolShared>,
    threads: Vec<thread::JoinHandle<()>>,
}

struct PoolShared {
    jobs: Mutex<Jobs>,
    /// Jobs posted so far: what a helper that just ran out of work watches for
    /// a short while before it goes to sleep.
    posts: AtomicU64,
    /// Helpers wait here for a job to join.
    posted: Condvar,
    /// Callers wait here for the helpers inside their job to leave it.
    left: Condvar,
    /// Helpers watching for a job right now, over every pool that shares it.
    watchers: Arc<AtomicUsize>,
    /// The most helpers that watch at once.
    max_watchers: usize,
}

#[derive(Default)]
struct Jobs {
    next_id: u64,
    open: Vec<Entry>,
    /// Helpers asleep on `posted` (a post wakes them only if there are some).
    sleepers: usize,
    /// The pool is being dropped: helpers return.
    closing: bool,
}

/// One call's job as the pool sees it, while it is open.
struct Entry {
    id: u64,
    run: JobRef,
    call: CallRef,
    /// Helpers that took it so far (each takes a new number, 1 and up: the
    /// caller is 0).
    joined: usize,
    /// The most helpers the job wants.
    wanted: usize,
}

/// What the helpers of one call share with its caller (on the caller's stack).
struct Call {
    /// Helpers that joined the job and have not left it.
    inside: AtomicUsize,
    panicked: AtomicBool,
}

/// A call's job, `run(thread_number)`, with its lifetime erased. It is only
/// used while its entry is open, or by a helper counted in `Call::inside`;
/// the caller closes the entry and waits for `inside` to reach 0 before its
/// borrow ends (see [`Pool::run`]).
#[derive(Clone, Copy)]
struct JobRef(*const (dyn Fn(usize) + Sync + 'static));
/// The caller's [`Call`], under the same rule as [`JobRef`].
#[derive(Clone, Copy)]
struct CallRef(*const Call);

// SAFETY: the pointees are `Sync` and outlive every use (see `JobRef`).
unsafe impl Send for JobRef {}
// SAFETY: as for `JobRef`.
unsafe impl Send for CallRef {}

fn lock(m: &Mutex<Jobs>) -> MutexGuard<'_, Jobs> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Pool {
    /// A pool of `helpers` threads. `watchers` counts the helpers watching
    /// for work, over every pool given the same counter; at most
    /// `max_watchers` watch at once (the others sleep right away).
    pub(crate) fn new(
        helpers: usize,
        watchers: Arc<AtomicUsize>,
        max_watchers: usize,
    ) -> std::io::Result<Pool> {
        let shared = Arc::new(PoolShared {
            jobs: Mutex::new(Jobs::default()),
            posts: AtomicU64::new(0),
            posted: Condvar::new(),
            left: Condvar::new(),
            watchers,
            max_watchers,
        });
        // The pool is ready when every helper has started: a thread's own
        // start-up (its name, thread-local state) allocates, and on a loaded
        // machine a new thread may start long after `spawn` returns, in the
        // middle of a later call that should allocate nothing.
        let started = Arc::new((Mutex::new(0usize), Condvar::new()));
        let mut pool = Pool { shared, threads: Vec::with_capacity(helpers) };
        for i in 0..helpers {
            let sh = Arc::clone(&pool.shared);
            let st = Arc::clone(&started);
            let t = thread::Builder::new().name(format!("b2nd-worker-{i}")).spawn(move || {
                *st.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                st.1.notify_all();
                drop(st);
                helper(&sh)
            })?;
            pool.threads.push(t);
        }
        let mut n = started.0.lock().unwrap_or_else(|e| e.into_inner());
        while *n < helpers {
            n = started.1.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        Ok(pool)
    }

    /// Run `job(0)` on the calling thread, and `job(k)` (k = 1, 2, ...) on up to
    /// `helpers` helpers that are free before the caller is done with its own
    /// share; return when every helper that joined has left, with everything
    /// they wrote visible. Panics if `job` panicked on a helper.
    pub(crate) fn run(&self, helpers: usize, job: &(dyn Fn(usize) + Sync)) {
        // SAFETY: only the lifetime is erased; `Close` below keeps the job from
        // being used after this call returns (also when `job(0)` unwinds).
        let run = JobRef(unsafe {
            std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync + 'static)>(
                job,
            )
        });
        let call = Call { inside: AtomicUsize::new(0), panicked: AtomicBool::new(false) };
        let sh = &*self.shared;
        let (id, sleepers) = {
            let mut jobs = lock(&sh.jobs);
            let id = jobs.next_id;
            jobs.next_id += 1;
            jobs.open.push(Entry { id, run, call: CallRef(&call), joined: 0, wanted: helpers });
            (id, jobs.sleepers)
        };
        sh.posts.fetch_add(1, Ordering::Relaxed);
        // Wake only as many sleepers as the job wants (a watching helper may
        // take it first; a sleeper woken for nothing goes back to sleep).
        for _ in 0..sleepers.min(helpers) {
            sh.posted.notify_one();
        }
        let close = Close { sh, id, call: &call };
        job(0);
        let panicked = close.finish();
        std::mem::forget(close);
        if panicked {
            // A helper panicked inside the job: so does the caller, as when it
            // runs the blocks itself.
            panic!("a worker thread panicked");
        }
    }
}

impl Drop for Pool {
    /// Stops and joins the helpers (the library's own pools live as long as
    /// the process; tests and the model drop theirs).
    fn drop(&mut self) {
        lock(&self.shared.jobs).closing = true;
        self.shared.posted.notify_all();
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Closes a job and waits for its helpers to leave (on drop too, so that an
/// unwinding caller never leaves its job reachable).
struct Close<'a> {
    sh: &'a PoolShared,
    id: u64,
    call: &'a Call,
}

impl Close<'_> {
    /// Close the job (no helper joins any more), wait for the helpers inside
    /// to leave; whether one panicked.
    fn finish(&self) -> bool {
        let out = |c: &Call| c.inside.load(Ordering::Acquire) == 0;
        let mut jobs = lock(&self.sh.jobs);
        if let Some(i) = jobs.open.iter().position(|e| e.id == self.id) {
            jobs.open.remove(i);
        }
        if !out(self.call) {
            // The helpers still inside are on their last piece of work: watch
            // them leave for a few tens of microseconds, without the lock,
            // before sleeping (a sleeping caller's wake-up adds its latency
            // to the call).
            drop(jobs);
            if watch_until(|| out(self.call), std::time::Instant::now() + WATCH) {
                return self.call.panicked.load(Ordering::Relaxed);
            }
            jobs = lock(&self.sh.jobs);
            while !out(self.call) {
                jobs = self.sh.left.wait(jobs).unwrap_or_else(|e| e.into_inner());
            }
        }
        drop(jobs);
        self.call.panicked.load(Ordering::Relaxed)
    }
}

impl Drop for Close<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A helper's life: sleep until a job wants help, join it, run its share, leave.
fn helper(sh: &PoolShared) {
    let mut jobs = lock(&sh.jobs);
    let mut watched = false;
    loop {
        if jobs.closing {
            return;
        }
        let Some(e) = jobs.open.iter_mut().find(|e| e.joined < e.wanted) else {
            if !watched && sh.watchers.fetch_add(1, Ordering::Relaxed) < sh.max_watchers {
                // Calls often come in runs (a chunk after another): watch for the
                // next one for a few tens of microseconds, without taking the
                // lock or yielding, before sleeping; a wake-up from sleep costs
                // more than a small call's work. Only as many helpers watch as
                // there are cores beside the caller's: more would spin on cores
                // the caller and the other helpers need.
                let seen = sh.posts.load(Ordering::Relaxed);
                drop(jobs);
                watch_until(|| sh.posts.load(Ordering::Relaxed) != seen, std::time::Instant::now() + WATCH);
                sh.watchers.fetch_sub(1, Ordering::Relaxed);
                watched = true;
                jobs = lock(&sh.jobs);
                continue;
            }
            if !watched {
                sh.watchers.fetch_sub(1, Ordering::Relaxed);
            }
            jobs.sleepers += 1;
            jobs = sh.posted.wait(jobs).unwrap_or_else(|e| e.into_inner());
            jobs.sleepers -= 1;
            watched = false;
            continue;
        };
        watched = false;
        e.joined += 1;
        let (id, run, call, k) = (e.id, e.run, e.call, e.joined);
        // SAFETY: the entry is open, so its caller has not returned; it waits
        // for `inside` to come back to 0 before it does.
        let call = unsafe { &*call.0 };
        call.inside.fetch_add(1, Ordering::Relaxed); // (seen by the caller through the mutex)
        drop(jobs);
        // SAFETY: the job stays alive while this helper is counted in `inside`.
        let job = unsafe { &*run.0 };
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(k))).is_ok();
        if !ok {
            call.panicked.store(true, Ordering::Relaxed);
        }
        // Leaving hands this helper's work over to the caller (LEAVE is
        // Release; the caller's load is Acquire). After it the caller may
        // return: neither `call` nor the job is touched again.
        let last = call.inside.fetch_sub(1, LEAVE) == 1;
        jobs = lock(&sh.jobs);
        // A caller that closed its job may be asleep on `left`: the last helper
        // out wakes it (taking the lock first, so that the wake-up cannot fall
        // between the caller's check and its sleep). A job still open has a
        // caller that checks for itself once it closes.
        if last && !jobs.open.iter().any(|e| e.id == id) {
            sh.left.notify_all();
        }
    }
}

/// Return `true` when `done()` holds, `false` at `deadline` (under the model:
/// after a couple of looks, as time does not pass there).
fn watch_until(done: impl Fn() -> bool, deadline: std::time::Instant) -> bool {
    #[cfg(loom)]
    {
        let _ = deadline;
        for _ in 0..2 {
            if done() {
                return true;
            }
            thread::yield_now();
        }
        false
    }
    #[cfg(not(loom))]
    loop {
        for _ in 0..64 {
            if done() {
                return true;
            }
            std::hint::spin_loop();
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
    }
}
