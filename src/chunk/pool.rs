//! Worker threads for contexts (pools shared by thread count, created once),
//! and the per-thread scratch space each context reuses from call to call
//! (no thread and no allocation per call once warm).

use crate::codecs::CodecState;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, RwLock};

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
fn shared_pool(nthreads: usize) -> Result<Arc<rayon::ThreadPool>> {
    let nthreads = nthreads.min(max_threads());
    static POOLS: OnceLock<Mutex<HashMap<usize, Arc<rayon::ThreadPool>>>> = OnceLock::new();
    let mut pools = POOLS.get_or_init(Mutex::default).lock().unwrap_or_else(|e| e.into_inner());
    if let Some(p) = pools.get(&nthreads) {
        return Ok(Arc::clone(p));
    }
    // The caller is one of the context's threads: the pool holds the others.
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(nthreads - 1)
        .thread_name(|i| format!("b2nd-worker-{i}"))
        .build()
        .map_err(|_| Error::ThreadCreate)?;
    let pool = Arc::new(pool);
    pools.insert(nthreads, Arc::clone(&pool));
    Ok(pool)
}

/// The most worker threads a context gets: thread counts come from files and
/// callers, and every distinct count has its own pool, so they are capped.
pub fn max_threads() -> usize {
    static MAX: OnceLock<usize> = OnceLock::new();
    *MAX.get_or_init(|| std::thread::available_parallelism().map_or(8, |n| (2 * n.get()).max(8)))
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

/// A context's workers: a rayon pool when `nthreads > 1`, and one scratch per
/// thread (index 0 is the calling thread's).
pub struct Workers {
    nthreads: usize,
    pool: Option<Arc<rayon::ThreadPool>>,
    scratch: Vec<Mutex<Scratch>>,
}

/// Scratch spaces of contexts that were dropped, kept warm for the next ones
/// (programs often create a context per call).
static SPARE: Mutex<Vec<Scratch>> = Mutex::new(Vec::new());
/// Most scratch spaces kept aside.
const MAX_SPARE: usize = 16;

fn take_spare() -> Scratch {
    SPARE.lock().unwrap_or_else(|e| e.into_inner()).pop().unwrap_or_default()
}

impl Drop for Workers {
    fn drop(&mut self) {
        let mut spare = SPARE.lock().unwrap_or_else(|e| e.into_inner());
        for s in self.scratch.drain(..) {
            if spare.len() < MAX_SPARE {
                spare.push(s.into_inner().unwrap_or_else(|e| e.into_inner()));
            }
        }
    }
}

impl Workers {
    pub fn new(nthreads: i16) -> Workers {
        let n = (nthreads.max(1) as usize).min(max_threads());
        Workers { nthreads: n, pool: None, scratch: (0..=n).map(|_| Mutex::new(take_spare())).collect() }
    }

    /// Change the number of threads; the pool is rebuilt on next use.
    pub fn set_nthreads(&mut self, nthreads: i16) {
        let n = (nthreads.max(1) as usize).min(max_threads());
        if n != self.nthreads {
            self.nthreads = n;
            self.pool = None;
            while self.scratch.len() < n + 1 {
                self.scratch.push(Mutex::new(take_spare()));
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

    /// Whether jobs run on several threads (after [`Workers::ready`]).
    pub fn parallel(&self) -> bool {
        self.nthreads > 1
    }

    /// Run `f(j, scratch)` for every `j` in `0..n`, spread over the context's
    /// threads: the pool, or the executor installed with [`set_executor`].
    pub fn for_each(&self, n: usize, f: &(dyn Fn(usize, &mut Scratch) + Sync)) {
        if let Some(ex) = executor() {
            let next = AtomicUsize::new(0);
            let last = self.scratch.len() - 1;
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
            // The calling thread works too, beside nthreads - 1 helpers, and every
            // thread takes the next job when it is done with one: no thread waits
            // while there is work, and a helper the system does not schedule (a
            // loaded machine) delays at most the job it holds.
            Some(pool) => {
                let next = AtomicUsize::new(0);
                let work = |s: &mut Scratch| loop {
                    let j = next.fetch_add(1, Ordering::Relaxed);
                    if j >= n {
                        break;
                    }
                    f(j, s);
                };
                pool.in_place_scope(|scope| {
                    for _ in 1..self.nthreads.min(n) {
                        scope.spawn(|_| work(&mut self.scratch()));
                    }
                    work(&mut self.scratch());
                });
            }
            None => {
                let mut s = self.scratch();
                for j in 0..n {
                    f(j, &mut s);
                }
            }
        }
    }

    /// The scratch of the current thread (a pool worker, or the caller).
    pub fn scratch(&self) -> MutexGuard<'_, Scratch> {
        let i = rayon::current_thread_index().map_or(0, |i| (i + 1).min(self.scratch.len() - 1));
        self.scratch[i].lock().unwrap_or_else(|e| e.into_inner())
    }
}
