//! The worker pool's helper threads, as the library compiles them, for the
//! loom model in `tests/model.rs` (built with `--cfg loom`: see
//! scripts/loom.sh).

#[path = "../../src/chunk/pool/helpers.rs"]
mod helpers;

use loom::sync::atomic::AtomicUsize;
use loom::sync::Arc;

/// The library's pool (`helpers::Pool`), with its methods made public here.
pub struct Pool(helpers::Pool);

impl Pool {
    pub fn new(helpers: usize, watchers: Arc<AtomicUsize>, max_watchers: usize) -> std::io::Result<Pool> {
        helpers::Pool::new(helpers, watchers, max_watchers).map(Pool)
    }

    pub fn run(&self, helpers: usize, job: &(dyn Fn(usize) + Sync)) {
        self.0.run(helpers, job)
    }
}
