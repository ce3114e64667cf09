//! The contract between the engine and whoever runs dynamic handlers (the napi binding, or a Rust test).
//!
//! Dynamic requests are handed over in batches: the engine wakes the handler side at most once per turn of its
//! event loop, after it has drained every ready connection, with every request that arrived meanwhile encoded
//! in one flat buffer (see [`crate::wire`]). Answers come back through [`crate::Responder`], in any order.

/// Every dynamic request that arrived since the last hand-over.
#[derive(Debug, Default)]
pub struct RequestBatch {
    pub(crate) bytes: Vec<u8>,
    pub(crate) len: usize,
    /// Counts the batch in the server's backlog until the handler side takes its bytes (or drops it).
    pub(crate) _queued: Option<super::backlog::Queued>,
}

impl RequestBatch {
    /// How many requests the batch holds.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the batch holds no request.
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// The encoded requests, in the layout described in [`crate::wire`]. Taking them is what tells the engine the
    /// handler side has the batch: until then it counts in the backlog that pauses reading WebSocket messages.
    pub fn into_bytes(self) -> Vec<u8> {
        self.bytes
    }
}

/// The handler side is gone (its runtime is shutting down); the batch was not delivered.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Closed;

/// Runs dynamic handlers, and hears when the server it serves stops. Called on the engine's I/O thread: it must
/// only queue work, never block.
pub trait Handler: Send + Sync + 'static {
    /// Takes a batch. `Err(Closed)` means it could not be delivered: its requests are answered 503 at once
    /// instead of waiting for the handler timeout.
    fn handle(&self, batch: RequestBatch) -> Result<(), Closed>;

    /// Every listening socket of the server is closed, so its port can be bound again; connections may still be
    /// draining. Called once.
    fn unbound(&self) {}

    /// The server has stopped and every connection is closed. `failure` says why when nobody asked it to stop
    /// (the engine failed; it was logged already). Called once, last.
    fn stopped(&self, failure: Option<&crate::values::error::Error>) {
        let _ = failure;
    }
}
