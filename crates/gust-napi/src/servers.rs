//! The servers of this process, by key, so that a worker thread can attach to one its main thread started.
//!
//! The addon's image is loaded once per process and its statics are shared by every environment (the main
//! thread's and each worker's), which is what makes one engine serving several JavaScript threads possible.
//! Entries are weak: a server lives as long as a thread's `BindingServer` holds it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use gust_core::{Locked, Server};

static SERVERS: Mutex<Vec<(u32, Weak<Server>)>> = Mutex::new(Vec::new());
static NEXT_KEY: AtomicU32 = AtomicU32::new(1);

/// Registers a server; returns its key.
pub(crate) fn register(server: &Arc<Server>) -> u32 {
    let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
    let mut servers = SERVERS.locked();
    servers.retain(|(_, s)| s.strong_count() > 0);
    servers.push((key, Arc::downgrade(server)));
    key
}

/// The server registered as `key`, while it exists.
pub(crate) fn find(key: u32) -> Option<Arc<Server>> {
    let servers = SERVERS.locked();
    servers.iter().find(|(k, _)| *k == key).and_then(|(_, s)| s.upgrade())
}
