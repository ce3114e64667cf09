//! The servers of this process, by key, so that a worker thread can attach to one its main thread started (the
//! threaded engine) or join a group of one-thread servers it bound.
//!
//! The addon's image is loaded once per process and its statics are shared by every environment (the main
//! thread's and each worker's), which is what makes one engine serving several JavaScript threads possible.
//! Entries are weak: a server lives as long as a thread's `BindingServer` (or `BindingGroup`) holds it.

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, Weak};

use gust_core::{LocalGroup, Locked, Server};

static SERVERS: Mutex<Vec<(u32, Weak<Server>)>> = Mutex::new(Vec::new());
static GROUPS: Mutex<Vec<(u32, Weak<LocalGroup>)>> = Mutex::new(Vec::new());
static NEXT_KEY: AtomicU32 = AtomicU32::new(1);

fn add<T>(list: &Mutex<Vec<(u32, Weak<T>)>>, item: &Arc<T>) -> u32 {
    let key = NEXT_KEY.fetch_add(1, Ordering::Relaxed);
    let mut list = list.locked();
    list.retain(|(_, s)| s.strong_count() > 0);
    list.push((key, Arc::downgrade(item)));
    key
}

fn get<T>(list: &Mutex<Vec<(u32, Weak<T>)>>, key: u32) -> Option<Arc<T>> {
    list.locked().iter().find(|(k, _)| *k == key).and_then(|(_, s)| s.upgrade())
}

/// Registers a server; returns its key.
pub(crate) fn register(server: &Arc<Server>) -> u32 {
    add(&SERVERS, server)
}

/// The server registered as `key`, while it exists.
pub(crate) fn find(key: u32) -> Option<Arc<Server>> {
    get(&SERVERS, key)
}

/// Registers a group of one-thread servers; returns its key.
pub(crate) fn register_group(group: &Arc<LocalGroup>) -> u32 {
    add(&GROUPS, group)
}

/// The group registered as `key`, while it exists.
pub(crate) fn find_group(key: u32) -> Option<Arc<LocalGroup>> {
    get(&GROUPS, key)
}
