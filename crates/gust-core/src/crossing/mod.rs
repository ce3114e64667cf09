//! Layer 6, **crossing**: everything between the I/O threads and the JavaScript threads. The handler contract
//! ([`handler`]: batches out, the backlog they count in), the table of requests waiting for an answer
//! ([`completions`]), the batcher that fills one hand-over per turn of the event loop ([`batcher`]), the lanes
//! (one per JavaScript thread, [`lanes`]), and the responder that turns a batch of answers into the replies their
//! requests wait for ([`responder`]).
//!
//! May import: `values`, `bodies`, `responses`, `wire`. Nothing here knows connections, routing or WebSockets:
//! a WebSocket's events reach the batcher through the `ws` room's own impl, above.

pub(crate) mod backlog;
pub(crate) mod batcher;
pub(crate) mod completions;
pub(crate) mod handler;
pub(crate) mod lanes;
pub(crate) mod responder;
