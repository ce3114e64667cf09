//! The one-thread engine's runtime: what polls its tasks on a JavaScript thread, from that runtime's own loop,
//! since tokio cannot be driven from a foreign loop (its runtime has no tick and hides its poller). The executor
//! (tasks in a table, a ready queue, wakers that work from any thread, one bounded turn at a time), its `mio`
//! poller (`reactor`), its timer map (`timers`), the cooperative budget of its tasks (`budget`), the table both
//! keep their entries in (`table`), and the blocking pool every one-thread engine of the process shares
//! (`blocking`). The seam above (`rt`) hands each call here when an engine polls on the calling thread.

pub(crate) mod blocking;
mod budget;
mod executor;
pub(crate) mod reactor;
mod table;
pub(crate) mod timers;

pub(crate) use blocking::BLOCKING_THREADS;
/// Public: the binding's host reads it (re-exported by lib.rs).
pub use executor::Turn;
pub(crate) use executor::{is_polling, spawn, timers, Core};
