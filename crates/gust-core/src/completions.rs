//! Requests handed to JavaScript and waiting for their answer, by id.
//!
//! Answers cross back to the I/O thread as one queue per batch: the JavaScript thread appends a batch and rings
//! once; a task on the I/O thread hands each answer to its request there. Completing each request's channel
//! from the JavaScript thread instead wakes the I/O runtime once per request (an `eventfd` write and the
//! runtime's inject-queue lock each), which measured as one extra syscall per request.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::{Arc, Mutex, MutexGuard};

use bytes::Bytes;
use http::Response;
use tokio::sync::{oneshot, Notify};

use crate::response::{self, messages, Body, InvalidResponse};

type Waiters = HashMap<u32, oneshot::Sender<Response<Body>>, BuildHasherDefault<IdHasher>>;

/// The table of unanswered requests, touched only by the I/O thread (so its lock is never contended), and the
/// queue of answers the JavaScript thread fills a batch at a time.
#[derive(Debug, Default)]
pub(crate) struct Completions {
    inner: Mutex<Inner>,
    answered: Mutex<Vec<(u32, Response<Body>)>>,
    doorbell: Notify,
}

#[derive(Debug, Default)]
struct Inner {
    next_id: u32,
    waiters: Waiters,
}

impl Completions {
    /// Registers a request; `None` when `max_pending` are already waiting.
    pub(crate) fn register(&self, max_pending: usize) -> Option<(u32, oneshot::Receiver<Response<Body>>)> {
        let mut inner = self.lock();
        if inner.waiters.len() >= max_pending {
            return None;
        }
        let (tx, rx) = oneshot::channel();
        loop {
            let id = inner.next_id;
            inner.next_id = inner.next_id.wrapping_add(1);
            if let std::collections::hash_map::Entry::Vacant(slot) = inner.waiters.entry(id) {
                slot.insert(tx);
                return Some((id, rx));
            }
        }
    }

    /// Forgets a request whose client or deadline is gone; a late answer to it is ignored.
    pub(crate) fn cancel(&self, id: u32) {
        self.lock().waiters.remove(&id);
    }

    /// Answers every request of `ids` with the same response (used when a batch cannot be delivered).
    pub(crate) fn fail(&self, ids: &[u32], make: impl Fn() -> Response<Body>) {
        let mut inner = self.lock();
        for id in ids {
            if let Some(tx) = inner.waiters.remove(id) {
                let _ = tx.send(make());
            }
        }
    }

    /// Queues a batch of answers and rings the I/O thread, once for the whole batch.
    fn post(&self, batch: Vec<(u32, Response<Body>)>) {
        let mut answered = self.answered.lock().unwrap_or_else(|e| e.into_inner());
        // A queue that already holds answers has already rung; the delivery task has not taken them yet.
        let ring = answered.is_empty();
        answered.extend(batch);
        drop(answered);
        if ring {
            self.doorbell.notify_one();
        }
    }

    /// Runs on the I/O thread for the server's lifetime, handing queued answers to their requests. Waking a
    /// request task from here is a local schedule: no syscall, no lock.
    pub(crate) async fn deliver(&self) {
        loop {
            self.doorbell.notified().await;
            let batch = std::mem::take(&mut *self.answered.lock().unwrap_or_else(|e| e.into_inner()));
            let mut inner = self.lock();
            for (id, res) in batch {
                // Requests that timed out or whose client left are gone from the table: their answer is dropped.
                if let Some(tx) = inner.waiters.remove(&id) {
                    let _ = tx.send(res);
                }
            }
        }
    }

    fn lock(&self) -> MutexGuard<'_, Inner> {
        // A poisoned lock only means another thread panicked while holding it; the map itself is still sound.
        self.inner.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Sends handlers' answers back to waiting requests. Cheap to clone; usable from any thread.
#[derive(Debug, Clone)]
pub struct Responder {
    completions: Arc<Completions>,
}

/// One handler answer, as the binding received it.
#[derive(Debug)]
pub struct Answer<'a> {
    /// The id the request carried.
    pub id: u32,
    /// HTTP status code.
    pub status: u16,
    /// Header names and values, repeated names allowed.
    pub headers: Vec<(&'a str, &'a str)>,
    /// The whole body.
    pub body: Bytes,
}

impl Responder {
    pub(crate) fn new(completions: Arc<Completions>) -> Self {
        Self { completions }
    }

    /// Sends a batch of answers to their requests, waking the I/O thread once. An invalid answer is replaced by a
    /// 500 and reported back, with its id, so the caller can log it where the developer will see it. Answers to
    /// requests that timed out or whose client left are dropped silently.
    pub fn respond<'a>(&self, answers: impl IntoIterator<Item = Answer<'a>>) -> Vec<(u32, InvalidResponse)> {
        let mut invalid = Vec::new();
        let built: Vec<(u32, Response<Body>)> = answers
            .into_iter()
            .map(|a| {
                let res = response::handler_response(a.status, a.headers, a.body).unwrap_or_else(|err| {
                    invalid.push((a.id, err));
                    response::text(http::StatusCode::INTERNAL_SERVER_ERROR, messages::INTERNAL)
                });
                (a.id, res)
            })
            .collect();
        self.completions.post(built);
        invalid
    }
}

/// Ids are sequential, so they are their own hash. Cost: nothing, unlike SipHash's ~20 ns.
#[derive(Debug, Default)]
struct IdHasher(u64);

impl Hasher for IdHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(*b);
        }
    }

    fn write_u32(&mut self, n: u32) {
        self.0 = u64::from(n);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn registration_should_stop_at_max_pending() {
        let c = Completions::default();
        let (a, _ra) = c.register(2).unwrap();
        let (b, _rb) = c.register(2).unwrap();
        assert_ne!(a, b);
        assert!(c.register(2).is_none());
        c.cancel(a);
        assert!(c.register(2).is_some());
    }

    #[tokio::test]
    async fn answers_should_reach_their_request_and_invalid_ones_become_500() {
        let c = Arc::new(Completions::default());
        let delivery = c.clone();
        tokio::spawn(async move { delivery.deliver().await });
        let (good, rx_good) = c.register(8).unwrap();
        let (bad, rx_bad) = c.register(8).unwrap();
        let responder = Responder::new(c.clone());
        let invalid = responder.respond([
            Answer { id: good, status: 201, headers: vec![], body: Bytes::from_static(b"x") },
            Answer { id: bad, status: 200, headers: vec![("x", "a\r\nb")], body: Bytes::new() },
            Answer { id: 999, status: 200, headers: vec![], body: Bytes::new() },
        ]);
        assert_eq!(invalid.len(), 1);
        assert_eq!(invalid[0].0, bad);
        assert_eq!(rx_good.await.unwrap().status(), 201);
        assert_eq!(rx_bad.await.unwrap().status(), 500);
    }
}
