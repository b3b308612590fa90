//! Worker threads for contexts (pools shared by thread count, created once),
//! and the per-thread scratch space each context reuses from call to call
//! (no thread and no allocation per call once warm).

use crate::codecs::CodecState;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, OnceLock, RwLock};

/// Something other than the library's own threads that runs a context's jobs
/// (c-blosc2's `blosc2_set_threads_callback`).
pub trait Executor: Send + Sync {
    /// Call `job(i)` for every `i` in `0..njobs` (in any order, on any threads)
    /// and return when all calls have returned.
    fn run(&self, njobs: usize, job: &(dyn Fn(usize) + Sync));
}

static EXECUTOR: RwLock<Option<Arc<dyn Executor>>> = RwLock::new(None);

/// Run multi-threaded contexts' jobs through `executor` instead of the
/// library's worker pools (`None`: back to the pools).
pub fn set_executor(executor: Option<Arc<dyn Executor>>) {
    *EXECUTOR.write().unwrap_or_else(|e| e.into_inner()) = executor;
}

fn executor() -> Option<Arc<dyn Executor>> {
    EXECUTOR.read().unwrap_or_else(|e| e.into_inner()).clone()
}

/// Pools (of `nthreads - 1` helpers) shared by every context with the same
/// number of threads: creating a context (or many) never spawns threads once
/// a pool of that size exists.
fn shared_pool(nthreads: usize) -> Result<Arc<Pool>> {
    let nthreads = nthreads.min(max_threads()).min(cores()).max(2);
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<Pool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&nthreads) {
        return Ok(Arc::clone(p));
    }
    // The caller is one of the context's threads: the pool holds the others.
    let pool = Arc::new(Pool::new(nthreads - 1)?);
    pools.insert(nthreads, Arc::clone(&pool));
    Ok(pool)
}

/// Helper threads that sleep on a condition variable between jobs (after
/// watching for the next one for at most [`WATCH`]: they never yield in a loop,
/// which on a loaded machine hands the core to another process for a whole
/// time slice) and join a call's job only while it is open: the caller never
/// waits for a helper that has not started.
struct Pool {
    shared: Arc<PoolShared>,
}

#[derive(Default)]
struct PoolShared {
    jobs: Mutex<Jobs>,
    /// Jobs posted so far: what a helper that just ran out of work watches for
    /// a short while before it goes to sleep.
    posts: std::sync::atomic::AtomicU64,
    /// Helpers wait here for a job to join.
    posted: Condvar,
    /// Callers wait here for the helpers inside their job to leave it.
    left: Condvar,
    /// Helpers that left a job so far: what a caller done with its share
    /// watches for a short while before it sleeps on `left`.
    leaves: std::sync::atomic::AtomicU64,
}

#[derive(Default)]
struct Jobs {
    next_id: u64,
    open: Vec<Entry>,
    /// Helpers asleep on `posted` (a post wakes them only if there are some).
    sleepers: usize,
}

/// One call's job as the pool sees it.
struct Entry {
    id: u64,
    run: JobRef,
    /// Helpers that took the job and have not left it.
    inside: usize,
    /// Helpers that took it so far (each takes a new number, 1 and up: the
    /// caller is 0).
    joined: usize,
    /// The most helpers the job wants.
    wanted: usize,
    /// No helper may join any more: the caller is done with its share.
    closed: bool,
    panicked: bool,
}

/// A call's job, `run(thread_number)`, with its lifetime erased. It is only
/// used while its entry is in `Jobs::open` and not closed, or by a helper
/// counted in `inside`; the caller removes the entry, after every helper has
/// left, before its borrow ends (see [`Pool::run`]).
#[derive(Clone, Copy)]
struct JobRef(*const (dyn Fn(usize) + Sync + 'static));

// SAFETY: the pointee is `Sync` and outlives every use (see `JobRef`).
unsafe impl Send for JobRef {}

impl Pool {
    fn new(helpers: usize) -> Result<Pool> {
        let shared = Arc::new(PoolShared::default());
        // The pool is ready when every helper has started: a thread's own
        // start-up (its name, thread-local state) allocates, and on a loaded
        // machine a new thread may start long after `spawn` returns, in the
        // middle of a later call that should allocate nothing.
        let started = Arc::new((Mutex::new(0usize), Condvar::new()));
        for i in 0..helpers {
            let sh = Arc::clone(&shared);
            let st = Arc::clone(&started);
            std::thread::Builder::new()
                .name(format!("b2nd-worker-{i}"))
                .spawn(move || {
                    *st.0.lock().unwrap_or_else(|e| e.into_inner()) += 1;
                    st.1.notify_all();
                    drop(st);
                    helper(&sh)
                })
                .map_err(|_| Error::ThreadCreate)?;
        }
        let mut n = started.0.lock().unwrap_or_else(|e| e.into_inner());
        while *n < helpers {
            n = started.1.wait(n).unwrap_or_else(|e| e.into_inner());
        }
        Ok(Pool { shared })
    }

    /// Run `job(0)` on the calling thread, and `job(k)` (k = 1, 2, ...) on up to
    /// `helpers` helpers that are free before the caller is done with its own
    /// share; return when every helper that joined has left.
    fn run(&self, helpers: usize, job: &(dyn Fn(usize) + Sync)) {
        // SAFETY: only the lifetime is erased; `Close` below keeps the job from
        // being used after this call returns (also when `job(0)` unwinds).
        let run = JobRef(unsafe { std::mem::transmute::<*const (dyn Fn(usize) + Sync + '_), *const (dyn Fn(usize) + Sync + 'static)>(job) });
        let sh = &*self.shared;
        let (id, sleepers) = {
            let mut jobs = sh.jobs.lock().unwrap_or_else(|e| e.into_inner());
            let id = jobs.next_id;
            jobs.next_id += 1;
            jobs.open.push(Entry { id, run, inside: 0, joined: 0, wanted: helpers, closed: false, panicked: false });
            (id, jobs.sleepers)
        };
        sh.posts.fetch_add(1, Ordering::Release);
        // Wake only as many sleepers as the job wants (a watching helper may
        // take it first; a sleeper woken for nothing goes back to sleep).
        for _ in 0..sleepers.min(helpers) {
            sh.posted.notify_one();
        }
        let close = Close { sh, id };
        job(0);
        if close.finish() {
            // A helper panicked inside the job: so does the caller, as when it
            // runs the blocks itself.
            panic!("a worker thread panicked");
        }
    }
}

/// Closes a job and waits for its helpers to leave (on drop too, so that an
/// unwinding caller never leaves its job reachable).
struct Close<'a> {
    sh: &'a PoolShared,
    id: u64,
}

impl Close<'_> {
    /// Close the job, wait for its helpers, remove it; whether one panicked.
    fn finish(&self) -> bool {
        let mut jobs = self.sh.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = jobs.open.iter_mut().find(|e| e.id == self.id) {
            e.closed = true;
        }
        let inside = |jobs: &Jobs| jobs.open.iter().any(|e| e.id == self.id && e.inside > 0);
        // The helpers still inside are on their last piece of work: watch
        // them leave for a few tens of microseconds, without the lock, before
        // sleeping (a sleeping caller's wake-up adds its latency to the call).
        let deadline = std::time::Instant::now() + WATCH;
        while inside(&jobs) {
            let seen = self.sh.leaves.load(Ordering::Acquire);
            drop(jobs);
            let moved = watch_until(&self.sh.leaves, seen, deadline);
            jobs = self.sh.jobs.lock().unwrap_or_else(|e| e.into_inner());
            if !moved {
                break;
            }
        }
        while inside(&jobs) {
            jobs = self.sh.left.wait(jobs).unwrap_or_else(|e| e.into_inner());
        }
        let at = jobs.open.iter().position(|e| e.id == self.id);
        at.is_some_and(|i| jobs.open.remove(i).panicked)
    }
}

impl Drop for Close<'_> {
    fn drop(&mut self) {
        self.finish();
    }
}

/// A helper's life: sleep until a job wants help, join it, run its share, leave.
fn helper(sh: &PoolShared) {
    let mut jobs = sh.jobs.lock().unwrap_or_else(|e| e.into_inner());
    let mut watched = false;
    loop {
        let Some(e) = jobs.open.iter_mut().find(|e| !e.closed && e.joined < e.wanted) else {
            if !watched && WATCHERS.fetch_add(1, Ordering::AcqRel) < max_watchers() {
                // Calls often come in runs (a chunk after another): watch for the
                // next one for a few tens of microseconds, without taking the
                // lock or yielding, before sleeping; a wake-up from sleep costs
                // more than a small call's work. Only as many helpers watch as
                // there are cores beside the caller's: more would spin on cores
                // the caller and the other helpers need.
                let seen = sh.posts.load(Ordering::Acquire);
                drop(jobs);
                watch_until(&sh.posts, seen, std::time::Instant::now() + WATCH);
                WATCHERS.fetch_sub(1, Ordering::AcqRel);
                watched = true;
                jobs = sh.jobs.lock().unwrap_or_else(|e| e.into_inner());
                continue;
            }
            if !watched {
                WATCHERS.fetch_sub(1, Ordering::AcqRel);
            }
            jobs.sleepers += 1;
            jobs = sh.posted.wait(jobs).unwrap_or_else(|e| e.into_inner());
            jobs.sleepers -= 1;
            watched = false;
            continue;
        };
        watched = false;
        e.joined += 1;
        e.inside += 1;
        let (id, run, k) = (e.id, e.run, e.joined);
        drop(jobs);
        // SAFETY: the job stays alive while this helper is counted in `inside`.
        let job = unsafe { &*run.0 };
        let ok = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| job(k))).is_ok();
        jobs = sh.jobs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(e) = jobs.open.iter_mut().find(|e| e.id == id) {
            e.inside -= 1;
            e.panicked |= !ok;
            // Only the last helper out of a closed job has a caller to wake
            // (a caller waits only once it has closed its job, and then for
            // `inside` to reach 0): one wake-up per call, not one per helper,
            // each a system call and a round of the caller on the lock.
            if e.inside == 0 && e.closed {
                sh.left.notify_all();
            }
        }
        sh.leaves.fetch_add(1, Ordering::Release);
    }
}

/// Helpers watching for a job right now, over all pools.
static WATCHERS: AtomicUsize = AtomicUsize::new(0);

/// The most helpers that watch at once: one per core beside the caller's.
fn max_watchers() -> usize {
    cores() - 1
}

/// How long a helper out of work watches for the next job before sleeping
/// (and a caller done with its share, for its helpers to leave).
const WATCH: std::time::Duration = std::time::Duration::from_micros(50);

/// Return `true` when `count` moves past `seen`, `false` at `deadline`.
fn watch_until(count: &std::sync::atomic::AtomicU64, seen: u64, deadline: std::time::Instant) -> bool {
    loop {
        for _ in 0..64 {
            if count.load(Ordering::Acquire) != seen {
                return true;
            }
            std::hint::spin_loop();
        }
        if std::time::Instant::now() >= deadline {
            return false;
        }
    }
}

/// The cores this process may run on (its affinity mask and CPU quota).
pub fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
}

/// The least work (uncompressed bytes) worth another thread by default:
/// below about this much, waking a helper and handing the work over costs as
/// much as doing it.
pub const MIN_BYTES_PER_THREAD: usize = 64 << 10;

static MIN_BYTES: AtomicUsize = AtomicUsize::new(MIN_BYTES_PER_THREAD);

/// Set the least work (uncompressed bytes) a call gives each thread it uses
/// (default [`MIN_BYTES_PER_THREAD`]; 0: every thread the jobs can feed, as
/// tests of the multi-threaded paths on small data want). Returns the old value.
pub fn set_min_bytes_per_thread(bytes: usize) -> usize {
    MIN_BYTES.swap(bytes, Ordering::Relaxed)
}

fn min_bytes_per_thread() -> usize {
    MIN_BYTES.load(Ordering::Relaxed).max(1)
}

/// The most worker threads a context gets: thread counts come from files and
/// callers, and every distinct count has its own pool, so they are capped.
pub fn max_threads() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(8, |n| (2 * n.get()).max(8)))
}

/// Run `f(j)` for every `j` in `0..njobs` on up to `nthreads` threads (the
/// caller's and helpers of the shared pool, or the installed executor): as
/// many as the jobs, the cores and `bytes` of work can feed. For callers
/// that spread whole chunks over threads (each job then works on one
/// thread); jobs run in any order, and the first error is returned.
pub fn run_jobs(nthreads: i16, njobs: usize, bytes: usize, f: &(dyn Fn(usize) -> Result<()> + Sync)) -> Result<()> {
    let nthreads = (nthreads.max(1) as usize).min(max_threads());
    let error: Mutex<Option<Error>> = Mutex::new(None);
    let next = AtomicUsize::new(0);
    let work = |_: usize| loop {
        let j = next.fetch_add(1, Ordering::Relaxed);
        if j >= njobs {
            break;
        }
        if let Err(e) = f(j) {
            error.lock().unwrap_or_else(|e| e.into_inner()).get_or_insert(e);
            // The other jobs are not started: the call fails anyway.
            next.store(njobs, Ordering::Relaxed);
        }
    };
    if let Some(ex) = executor() {
        ex.run(nthreads.min(njobs), &work);
        work(0);
    } else {
        let threads = jobs_threads(nthreads as i16, njobs, bytes);
        if threads > 1 {
            shared_pool(threads)?.run(threads - 1, &work);
        } else {
            work(0);
        }
    }
    error.into_inner().unwrap_or_else(|e| e.into_inner()).map_or(Ok(()), Err)
}

/// Threads a call of [`run_jobs`] with these arguments would use.
pub fn jobs_threads(nthreads: i16, njobs: usize, bytes: usize) -> usize {
    if executor().is_some() {
        return (nthreads.max(1) as usize).min(njobs).max(1);
    }
    (nthreads.max(1) as usize).min(max_threads()).min(njobs).min(cores()).min(bytes / min_bytes_per_thread()).max(1)
}

/// Temporary buffers of one worker: two for the filter pipeline, two for
/// partial reads (getitem, delta reference) and the codec state.
#[derive(Default)]
pub struct Scratch {
    pub tmp1: Vec<u8>,
    pub tmp2: Vec<u8>,
    pub tmp3: Vec<u8>,
    pub tmp4: Vec<u8>,
    /// A block of a lazy chunk, as read from its frame.
    pub lazy: Vec<u8>,
    pub codec: CodecState,
}

impl Scratch {
    /// Make every buffer at least `n` bytes long.
    pub fn reserve(&mut self, n: usize) {
        for b in [&mut self.tmp1, &mut self.tmp2, &mut self.tmp3, &mut self.tmp4] {
            if b.len() < n {
                // A fresh zeroed allocation (calloc): no pass over the memory,
                // unlike growing the old one with zeros.
                *b = vec![0u8; n];
            }
        }
    }
}

/// A context's workers: a pool of helpers when `nthreads > 1`, and one
/// scratch per thread (index 0 is the calling thread's).
pub struct Workers {
    nthreads: usize,
    pool: Option<Arc<Pool>>,
    scratch: Vec<Mutex<Scratch>>,
}

/// The scratch lists of contexts that were dropped, kept warm for the next
/// ones (programs, and the super-chunk reads, often create a context per
/// call): a new context takes a whole list, so making one allocates nothing.
static SPARE: Mutex<Spare> = Mutex::new(Spare { lists: Vec::new(), scratches: 0 });
/// Most scratch spaces kept aside, over all lists: enough for a few contexts
/// of every thread count the cores can run at once.
fn max_spare() -> usize {
    (4 * (cores() + 1)).max(16)
}

struct Spare {
    lists: Vec<Vec<Mutex<Scratch>>>,
    /// The scratch spaces in `lists`.
    scratches: usize,
}

/// A list of at least `n` scratch spaces, warm ones if a dropped context left
/// some: the shortest list that is long enough, else the longest.
fn take_spare(n: usize) -> Vec<Mutex<Scratch>> {
    let mut list = {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        let lens = spare.lists.iter().map(Vec::len);
        let fit = lens.clone().enumerate().filter(|&(_, l)| l >= n).min_by_key(|&(_, l)| l);
        let pick = fit.or_else(|| lens.enumerate().max_by_key(|&(_, l)| l)).map(|(i, _)| i);
        let list = pick.map(|i| spare.lists.swap_remove(i)).unwrap_or_default();
        spare.scratches -= list.len();
        list
    };
    while list.len() < n {
        list.push(Mutex::new(Scratch::default()));
    }
    list
}

/// The scratch spaces a context of `nthreads` threads needs: one per thread
/// that can run its calls at once (the pool's threads run on at most one per
/// core; an executor may run `nthreads` jobs beside the caller).
fn slots(nthreads: usize) -> usize {
    if executor().is_some() {
        nthreads + 1
    } else {
        nthreads.min(cores()) + 1
    }
}

impl Drop for Workers {
    fn drop(&mut self) {
        let list = std::mem::take(&mut self.scratch);
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        if spare.scratches + list.len() <= max_spare() {
            spare.scratches += list.len();
            spare.lists.push(list);
        }
    }
}

impl Workers {
    pub fn new(nthreads: i16) -> Workers {
        let n = (nthreads.max(1) as usize).min(max_threads());
        Workers { nthreads: n, pool: None, scratch: take_spare(slots(n)) }
    }

    /// Change the number of threads; the pool is rebuilt on next use.
    pub fn set_nthreads(&mut self, nthreads: i16) {
        let n = (nthreads.max(1) as usize).min(max_threads());
        if n != self.nthreads {
            self.nthreads = n;
            self.pool = None;
            while self.scratch.len() < slots(n) {
                self.scratch.push(Mutex::new(Scratch::default()));
            }
        }
    }

    /// Create the pool if the context is multi-threaded and it does not exist yet.
    pub fn ready(&mut self) -> Result<()> {
        if self.nthreads > 1 && self.pool.is_none() {
            self.pool = Some(shared_pool(self.nthreads)?);
        }
        Ok(())
    }


    /// How many threads a call of `njobs` jobs over `bytes` bytes of data runs
    /// on: no more than the context's, the jobs, the cores, or the work can
    /// feed ([`set_min_bytes_per_thread`]); 1 when the context has no pool.
    pub fn threads_for(&self, njobs: usize, bytes: usize) -> usize {
        if executor().is_some() {
            return self.nthreads.min(njobs).max(1);
        }
        if self.pool.is_none() {
            return 1;
        }
        self.nthreads.min(njobs).min(cores()).min(bytes / min_bytes_per_thread()).max(1)
    }

    /// Run `f(j, scratch)` for every `j` in `0..n` (jobs over `bytes` bytes of
    /// data in all), spread over [`Workers::threads_for`] threads: the pool, or
    /// the executor installed with [`set_executor`]. `prepare` first runs on
    /// the scratch of every thread the call may use, on the calling thread: a
    /// helper that joins a call for the first time finds its buffers and codec
    /// state ready, so warm calls allocate nothing whichever threads happen to
    /// take part (on a loaded machine a helper may miss the first calls).
    pub fn for_each(&self, n: usize, bytes: usize, prepare: &dyn Fn(&mut Scratch), f: &(dyn Fn(usize, &mut Scratch) + Sync)) {
        let threads = self.threads_for(n, bytes);
        let last = self.scratch.len() - 1;
        if let Some(ex) = executor() {
            for s in &self.scratch {
                prepare(&mut s.lock().unwrap_or_else(|e| e.into_inner()));
            }
            let next = AtomicUsize::new(0);
            let work = |tid: usize| {
                let mut s = self.scratch[tid.min(last)].lock().unwrap_or_else(|e| e.into_inner());
                loop {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    if j >= n {
                        break;
                    }
                    f(j, &mut s);
                }
            };
            ex.run(self.nthreads, &|tid| work(tid + 1));
            // Whatever the executor did not run (it should run every job) runs here.
            work(0);
            return;
        }
        match self.pool.as_deref() {
            // The calling thread works too, beside the helpers, and every thread
            // takes the next job when it is done with one: no thread waits while
            // there is work, a helper the system does not schedule (a loaded
            // machine) delays at most the job it holds, and one that has not
            // started when the work is done is not waited for.
            Some(pool) if threads > 1 => {
                for s in &self.scratch[..threads.min(last + 1)] {
                    prepare(&mut s.lock().unwrap_or_else(|e| e.into_inner()));
                }
                let next = AtomicUsize::new(0);
                let work = |k: usize| {
                    let mut s = self.scratch[k.min(last)].lock().unwrap_or_else(|e| e.into_inner());
                    loop {
                        let j = next.fetch_add(1, Ordering::Relaxed);
                        if j >= n {
                            break;
                        }
                        f(j, &mut s);
                    }
                };
                pool.run(threads - 1, &work);
            }
            _ => {
                let mut s = self.scratch();
                prepare(&mut s);
                for j in 0..n {
                    f(j, &mut s);
                }
            }
        }
    }

    /// The scratch of the calling thread.
    pub fn scratch(&self) -> MutexGuard<'_, Scratch> {
        self.scratch[0].lock().unwrap_or_else(|e| e.into_inner())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU64;

    /// Every job runs once, from callers on several threads sharing the pools.
    #[test]
    fn every_job_runs_once_with_concurrent_callers() {
        std::thread::scope(|scope| {
            for t in 0..4usize {
                scope.spawn(move || {
                    for nthreads in [1i16, 2, 3, 4] {
                        let mut w = Workers::new(nthreads);
                        w.ready().unwrap();
                        for n in [0usize, 1, 2, 7, 100] {
                            let hits: Vec<AtomicU64> = (0..n).map(|_| AtomicU64::new(0)).collect();
                            w.for_each(n, usize::MAX, &|s| s.reserve(16), &|j, s| {
                                assert!(s.tmp1.len() >= 16);
                                hits[j].fetch_add(1 + t as u64, Ordering::Relaxed);
                            });
                            assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1 + t as u64), "{nthreads} threads, {n} jobs");
                        }
                    }
                });
            }
        });
    }

    /// A job that panics on a helper makes the call panic, and the pool keeps working.
    #[test]
    fn a_panic_on_a_helper_reaches_the_caller() {
        let mut w = Workers::new(2);
        w.ready().unwrap();
        let caller = std::thread::current().id();
        let helper_ran = std::sync::atomic::AtomicBool::new(false);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            w.for_each(64, usize::MAX, &|_| {}, &|_, _| {
                std::thread::sleep(std::time::Duration::from_millis(1));
                if std::thread::current().id() != caller {
                    helper_ran.store(true, Ordering::Relaxed);
                    panic!("helper");
                }
            })
        }));
        // (The helper may not have joined at all: the caller can do every job.)
        assert_eq!(r.is_err(), helper_ran.load(Ordering::Relaxed));
        let count = AtomicU64::new(0);
        w.for_each(50, usize::MAX, &|_| {}, &|_, _| {
            count.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(count.load(Ordering::Relaxed), 50);
    }

    /// Jobs run on more than one thread when there are helpers.
    #[test]
    fn helpers_take_part() {
        let mut w = Workers::new(2);
        w.ready().unwrap();
        let seen = Mutex::new(std::collections::HashSet::new());
        for _ in 0..50 {
            w.for_each(16, usize::MAX, &|_| {}, &|_, _| {
                std::thread::sleep(std::time::Duration::from_micros(200));
                seen.lock().unwrap().insert(std::thread::current().id());
            });
            if seen.lock().unwrap().len() > 1 {
                return;
            }
        }
        panic!("every job ran on the calling thread");
    }
}
