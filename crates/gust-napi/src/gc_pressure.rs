//! Telling the JavaScript collector about the bytes behind the buffers the addon lends it.
//!
//! A request batch reaches JavaScript as an external buffer (the engine's bytes, not copied), freed when the
//! collector finalizes it. V8 counts such buffers towards its next collection; JavaScriptCore (Bun) does not, so
//! there the only pressure is the small JavaScript objects made per request or body chunk. An upload read as a
//! stream then leaves its chunks' batches for the collector to find much later: with a few hundred MB of heap,
//! a 1 GiB upload held up to 250 MB of finished batches at once. Reporting each batch's size
//! (`napi_adjust_external_memory`, which Bun passes to `Heap::reportExtraMemory`) brings the collection forward
//! in proportion to the bytes lent. Not on Node: V8 already counts them, and would count them twice.

use std::sync::atomic::{AtomicBool, Ordering};

use napi::Env;
use napi_derive::napi;

static REPORT: AtomicBool = AtomicBool::new(false);

/// Asks the addon to report the size of every buffer it lends to this process's collector: the package calls it
/// once on Bun, whose collector does not count external buffers on its own.
#[napi]
pub fn report_external_buffers() {
    REPORT.store(true, Ordering::Relaxed);
}

/// Reports `len` bytes just lent to JavaScript, where the runtime needs it. Cost: a relaxed load; on Bun one
/// napi call per batch.
pub(crate) fn report(env: &Env, len: usize) {
    if REPORT.load(Ordering::Relaxed) {
        // A failure only leaves the collection where it would have been.
        let _ = env.adjust_external_memory(i64::try_from(len).unwrap_or(i64::MAX));
    }
}
