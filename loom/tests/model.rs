//! The pool's core under loom: every interleaving of the caller and the
//! helpers (up to loom's preemption bound), with the weak memory orderings
//! of the C++ model. Each job writes its share into a cell that loom tracks;
//! the caller reads every cell once `run` returns, so a helper whose work is
//! not handed over (a missing Release or Acquire) is a data race loom
//! reports, and a lost wake-up is a deadlock it reports.

use b2nd_pool_model::Pool;
use loom::cell::UnsafeCell;
use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;

/// One cell per thread number of a call: what each wrote.
struct Shares([UnsafeCell<usize>; 3]);

// SAFETY: thread k writes only cell k, during the call; the caller reads the
// cells after `run` returns (what the model checks).
unsafe impl Sync for Shares {}

impl Shares {
    fn new() -> Shares {
        Shares([UnsafeCell::new(0), UnsafeCell::new(0), UnsafeCell::new(0)])
    }
    fn job(&self, call: usize) -> impl Fn(usize) + Sync + '_ {
        move |k| self.0[k].with_mut(|p| unsafe { *p += call })
    }
    /// What each thread number wrote, read by the caller.
    fn read(&self) -> Vec<usize> {
        self.0.iter().map(|c| c.with(|p| unsafe { *p })).collect()
    }
}

fn model(f: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(f);
}

#[test]
fn a_helpers_share_is_handed_over_to_the_caller() {
    model(|| {
        let pool = Pool::new(1, Arc::new(AtomicUsize::new(0)), 1).unwrap();
        let shares = Shares::new();
        pool.run(1, &shares.job(1));
        let got = shares.read();
        assert_eq!(got[0], 1, "the caller always runs its share");
        assert!(got[1] <= 1 && got[2] == 0, "{got:?}");
        drop(pool);
    });
}

#[test]
fn calls_in_a_row_reuse_the_helper() {
    model(|| {
        let pool = Pool::new(1, Arc::new(AtomicUsize::new(0)), 1).unwrap();
        let shares = Shares::new();
        pool.run(1, &shares.job(1));
        pool.run(1, &shares.job(10));
        let got = shares.read();
        assert_eq!(got[0], 11);
        assert!([0, 1, 10, 11].contains(&got[1]), "{got:?}");
        drop(pool);
    });
}

#[test]
fn two_helpers_join_one_call() {
    model(|| {
        let pool = Pool::new(2, Arc::new(AtomicUsize::new(0)), 0).unwrap();
        let shares = Shares::new();
        pool.run(2, &shares.job(1));
        let got = shares.read();
        assert_eq!(got[0], 1);
        assert!(got[1] <= 1 && got[2] <= 1, "{got:?}");
        drop(pool);
    });
}

#[test]
fn two_callers_share_one_helper() {
    model(|| {
        let pool = Arc::new(Pool::new(1, Arc::new(AtomicUsize::new(0)), 0).unwrap());
        let other = {
            let pool = Arc::clone(&pool);
            loom::thread::spawn(move || {
                let shares = Shares::new();
                pool.run(1, &shares.job(2));
                shares.read()
            })
        };
        let shares = Shares::new();
        pool.run(1, &shares.job(1));
        let mine = shares.read();
        let theirs = other.join().unwrap();
        assert_eq!((mine[0], theirs[0]), (1, 2));
        assert!(mine[1] <= 1 && theirs[1] <= 2);
        drop(pool);
    });
}

#[test]
fn a_panic_on_a_helper_reaches_the_caller() {
    // (the helpers' panics are expected: keep them off the output)
    std::panic::set_hook(Box::new(|_| {}));
    model(|| {
        let pool = Pool::new(1, Arc::new(AtomicUsize::new(0)), 0).unwrap();
        let shares = Shares::new();
        let job = shares.job(1);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pool.run(1, &|k| {
                job(k);
                if k == 1 {
                    panic!("helper");
                }
            })
        }));
        let got = shares.read();
        assert_eq!(r.is_err(), got[1] == 1, "the call panics exactly when the helper did");
        drop(pool);
    });
    let _ = std::panic::take_hook();
}
