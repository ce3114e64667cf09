//! The pool that runs the one-thread engines' blocking work (file reads and lookups, big compressions), shared
//! by every such engine of the process: a JavaScript thread must never wait on a disk. Threads start on demand,
//! up to [`BLOCKING_THREADS`] (more work queues), and leave after [`IDLE`] without work, so a server that serves no
//! files keeps none. A result travels back through a oneshot channel, whose send wakes the waiting task on its
//! engine's thread.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Duration;

use crate::values::sync::{Locked, Waits};

/// Threads of a blocking pool, this one's and the threaded engine's (tokio's, per I/O runtime) alike: work past
/// them queues.
pub(crate) const BLOCKING_THREADS: usize = 32;

/// How long a thread waits for work before it leaves.
const IDLE: Duration = Duration::from_secs(10);

type Job = Box<dyn FnOnce() + Send>;

#[derive(Default)]
struct Pool {
    state: Mutex<State>,
    work: Condvar,
}

#[derive(Default)]
struct State {
    queue: VecDeque<Job>,
    threads: usize,
    idle: usize,
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<Pool> = OnceLock::new();
    POOL.get_or_init(Pool::default)
}

/// Queues `work`; its result (none if it panicked) comes out of the receiver.
pub(crate) fn run<T: Send + 'static>(work: impl FnOnce() -> T + Send + 'static) -> tokio::sync::oneshot::Receiver<T> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        if let Ok(out) = std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)) {
            let _ = tx.send(out);
        }
    });
    let pool = pool();
    let mut state = pool.state.locked();
    state.queue.push_back(job);
    if state.idle > 0 {
        drop(state);
        pool.work.notify_one();
        return rx;
    }
    if state.threads < BLOCKING_THREADS {
        state.threads += 1;
        drop(state);
        let spawned = std::thread::Builder::new().name("gust-blocking".to_owned()).spawn(|| worker(pool));
        if spawned.is_err() {
            // No thread now: the work waits for one that exists, or for the next that starts.
            pool.state.locked().threads -= 1;
        }
    }
    rx
}

fn worker(pool: &'static Pool) {
    let mut state = pool.state.locked();
    loop {
        if let Some(job) = state.queue.pop_front() {
            drop(state);
            job();
            state = pool.state.locked();
            continue;
        }
        state.idle += 1;
        let (next, timed_out) = pool.work.wait_timeout_locked(state, IDLE);
        state = next;
        state.idle -= 1;
        if timed_out && state.queue.is_empty() {
            state.threads -= 1;
            return;
        }
    }
}
