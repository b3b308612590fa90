//! Worker threads for contexts (pools shared by thread count, created once),
//! and the per-thread scratch space each context reuses from call to call
//! (no thread and no allocation per call once warm). The pool itself is in
//! `helpers` (checked by the loom model in `loom/`).

mod helpers;

use crate::codecs::CodecState;
use crate::error::{Error, Result};
use crate::os::{fork_generation, PerProcess};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

use self::helpers::Pool;

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
/// a pool of that size exists. A forked child starts with none: the parent's
/// helpers do not exist there, and one of them may have held a pool's lock at
/// the fork (see `crate::os::process`).
fn shared_pool(nthreads: usize) -> Result<Arc<Pool>> {
    let nthreads = nthreads.min(max_threads()).min(cores()).max(2);
    static POOLS: PerProcess<Pools> = PerProcess::new(Pools::default);
    let shared = POOLS.get();
    let mut pools = shared.pools.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&nthreads) {
        return Ok(Arc::clone(p));
    }
    // The caller is one of the context's threads: the pool holds the others.
    // Only as many helpers watch for work at once as there are cores beside
    // the caller's (see `helpers`).
    let pool = Pool::new(nthreads - 1, Arc::clone(&shared.watchers), cores() - 1)
        .map_err(|_| Error::ThreadCreate)?;
    let pool = Arc::new(pool);
    pools.insert(nthreads, Arc::clone(&pool));
    Ok(pool)
}

/// The pools of this process, and the count of their helpers watching for a
/// job right now.
#[derive(Default)]
struct Pools {
    pools: Mutex<HashMap<usize, Arc<Pool>>>,
    watchers: Arc<AtomicUsize>,
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
pub fn run_jobs(
    nthreads: i16,
    njobs: usize,
    bytes: usize,
    f: &(dyn Fn(usize) -> Result<()> + Sync),
) -> Result<()> {
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
    (nthreads.max(1) as usize)
        .min(max_threads())
        .min(njobs)
        .min(cores())
        .min(bytes / min_bytes_per_thread())
        .max(1)
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
    /// Whether the next split, shuffled block this thread compresses is
    /// written with its byte planes in place (chosen by the one before it:
    /// `chunk::compress`).
    pub planes_in_place: bool,
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
    /// The shared pool, and the fork generation it belongs to.
    pool: Option<(u64, Arc<Pool>)>,
    scratch: Vec<Mutex<Scratch>>,
}

/// The scratch lists of contexts that were dropped, kept warm for the next
/// ones (programs, and the super-chunk reads, often create a context per
/// call): a new context takes a whole list, so making one allocates nothing.
/// (Per process: a forked child may find the parent's locked.)
static SPARE: PerProcess<Mutex<Spare>> =
    PerProcess::new(|| Mutex::new(Spare { lists: Vec::new(), scratches: 0 }));
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
        let mut spare = SPARE.get().lock().unwrap_or_else(|e| e.into_inner());
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
        let mut spare = SPARE.get().lock().unwrap_or_else(|e| e.into_inner());
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

    /// Create the pool if the context is multi-threaded and it does not exist
    /// yet, or belongs to the parent of this forked process. Not where the
    /// process has one core: no helper could run beside the caller (and
    /// where there are no threads at all, WebAssembly without them,
    /// `nthreads` above 1 runs on the caller's, with no error).
    pub fn ready(&mut self) -> Result<()> {
        if self.nthreads > 1 && cores() > 1 {
            let generation = fork_generation();
            match self.pool.take() {
                Some((g, pool)) if g == generation => self.pool = Some((g, pool)),
                stale => {
                    // A parent's pool is never dropped here (its helpers are not
                    // in this process, and its lock may be held).
                    std::mem::forget(stale);
                    self.pool = Some((generation, shared_pool(self.nthreads)?));
                }
            }
        }
        Ok(())
    }

    /// The pool, if the context has one of this process.
    fn pool(&self) -> Option<&Pool> {
        match &self.pool {
            Some((g, pool)) if *g == fork_generation() => Some(pool),
            _ => None,
        }
    }

    /// How many threads a call of `njobs` jobs over `bytes` bytes of data runs
    /// on: no more than the context's, the jobs, the cores, or the work can
    /// feed ([`set_min_bytes_per_thread`]); 1 when the context has no pool.
    pub fn threads_for(&self, njobs: usize, bytes: usize) -> usize {
        if executor().is_some() {
            return self.nthreads.min(njobs).max(1);
        }
        if self.pool().is_none() {
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
    pub fn for_each(
        &self,
        n: usize,
        bytes: usize,
        prepare: &dyn Fn(&mut Scratch),
        f: &(dyn Fn(usize, &mut Scratch) + Sync),
    ) {
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
        match self.pool() {
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

    /// Run `f` on every thread's scratch (on the calling thread): buffers
    /// and codec state made ready ahead of the calls that will use them.
    pub fn prepare_all(&self, f: &dyn Fn(&mut Scratch)) {
        for s in &self.scratch {
            f(&mut s.lock().unwrap_or_else(|e| e.into_inner()));
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
    #[cfg_attr(target_os = "wasi", ignore = "WASI: no threads")]
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
                            assert!(
                                hits.iter().all(|h| h.load(Ordering::Relaxed) == 1 + t as u64),
                                "{nthreads} threads, {n} jobs"
                            );
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
    #[cfg_attr(target_os = "wasi", ignore = "WASI: no threads")]
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
