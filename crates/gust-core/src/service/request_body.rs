//! Receiving a request body before its hand-over: whole when it is small, within its size limit, its time limit
//! and the server's body budget; otherwise only the bytes already in, the rest streaming (see [`crate::bodies::upload`]).

use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::Bytes;
use http::{Response, StatusCode};
use http_body_util::BodyExt;
use hyper::body::Body as _;

use crate::bodies::compress::decode::RequestBody;

use crate::bodies::upload::{take_ready, INLINE_MAX};
use crate::responses::body::Body;
use crate::responses::response::{self, messages};
use crate::service::config::Config;

/// Bytes of request bodies being received at once, across every connection of a server. It bounds the memory
/// slow uploads can hold, separately from `max_pending`, which counts requests handed to JavaScript: clients
/// trickling bodies can exhaust this budget, never the slots of requests that are ready.
#[derive(Debug)]
pub(crate) struct BodyBudget {
    used: AtomicUsize,
    limit: usize,
}

impl BodyBudget {
    pub(crate) fn new(limit: usize) -> Self {
        Self { used: AtomicUsize::new(0), limit }
    }

    /// Cost: one uncontended compare-and-swap loop (only the I/O thread touches it).
    fn take(&self, bytes: usize) -> bool {
        self.used
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |used| {
                used.checked_add(bytes).filter(|&total| total <= self.limit)
            })
            .is_ok()
    }

    fn give(&self, bytes: usize) {
        self.used.fetch_sub(bytes, Ordering::Relaxed);
    }
}

/// A share of the budget, returned when dropped (once the body has been copied into its batch, or abandoned).
pub(crate) struct Held<'a> {
    budget: &'a BodyBudget,
    bytes: usize,
}

impl Held<'_> {
    fn grow(&mut self, bytes: usize) -> bool {
        let ok = self.budget.take(bytes);
        if ok {
            self.bytes += bytes;
        }
        ok
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.budget.give(self.bytes);
    }
}

/// A body as it is handed over.
pub(crate) enum Received<'a> {
    /// The whole body (maybe empty), holding its share of the budget until it is in its batch.
    Whole(Bytes, Held<'a>),
    /// The bytes already in (maybe none); the rest is read as the handler asks for it.
    Streamed(Bytes, RequestBody),
}

impl<'a> Received<'a> {
    /// A request without a body: nothing to receive, nothing held.
    pub(crate) fn nothing(budget: &'a BodyBudget) -> Self {
        Received::Whole(Bytes::new(), Held { budget, bytes: 0 })
    }
}

/// Receives what must come before the hand-over. A body declared over `limit` gets 413 before a byte is read.
/// One declared within [`INLINE_MAX`] is read whole (the common case: one crossing, as before). With
/// `Expect: 100-continue` nothing is read (hyper sends `100 Continue` only when the handler first reads). Any
/// other body hands over what already arrived, up to about [`INLINE_MAX`], and streams the rest; if that was
/// all of it, it goes whole.
///
/// Cost for a small body: what [`read`] costs. For a large one: one copy of its first bytes, no wait.
pub(crate) async fn receive<'a>(
    body: RequestBody,
    config: &Config,
    budget: &'a BodyBudget,
    limit: u64,
    expect_continue: bool,
) -> Result<Received<'a>, Response<Body>> {
    if body.is_end_stream() {
        return Ok(Received::nothing(budget));
    }
    let declared = body.size_hint().exact();
    if let Some(len) = declared.filter(|&len| len > limit) {
        // A client that is still sending when the connection closes gets a reset, which can destroy the 413 before
        // it reads it (EPIPE on its side): a body of modest size is read and dropped first. A client waiting for
        // `100 Continue` has sent nothing, and a huge body is not worth reading.
        if !expect_continue && len <= REFUSED_DRAIN_MAX {
            drain(body, config.body_timeout).await;
        }
        return Err(response::text(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE));
    }
    if expect_continue {
        return Ok(Received::Streamed(Bytes::new(), body));
    }
    let inline = (INLINE_MAX as u64).min(limit).min(config.max_body_size as u64);
    if declared.is_some_and(|len| len <= inline) {
        let (bytes, held) = read(body, config, budget).await?;
        return Ok(Received::Whole(bytes, held));
    }
    let mut body = body;
    let mut frames = Vec::new();
    let complete = take_ready(&mut body, &mut frames, INLINE_MAX)
        .await
        .map_err(|_| response::text(StatusCode::BAD_REQUEST, messages::BAD_REQUEST_BODY))?;
    let size: usize = frames.iter().map(Bytes::len).sum();
    if size as u64 > limit {
        return Err(response::text(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE));
    }
    let first = match frames.len() {
        0 => Bytes::new(),
        1 => frames.pop().unwrap_or_default(),
        _ => Bytes::from(frames.concat()),
    };
    Ok(if complete { Received::Whole(first, Held { budget, bytes: 0 }) } else { Received::Streamed(first, body) })
}

/// Refused bodies declared up to this size are read and dropped before the 413 goes out (see [`receive`]).
const REFUSED_DRAIN_MAX: u64 = 4 * 1024 * 1024;
/// How long draining a refused body waits for each next piece before giving up and answering.
const DRAIN_IDLE: std::time::Duration = std::time::Duration::from_secs(1);

/// Reads and drops a refused body, while the client keeps sending it (each piece within [`DRAIN_IDLE`]) and
/// within `total`.
async fn drain(mut body: RequestBody, total: std::time::Duration) {
    let reading = async { while let Ok(Some(Ok(_))) = crate::rt::timeout(DRAIN_IDLE, body.frame()).await {} };
    let _ = crate::rt::timeout(total, reading).await;
}

/// Bytes of an HTTP/2 request body nobody reads (a turbo or file route answered before it ended) that are read
/// and dropped while the stream finishes; past them the stream is reset, as h2 does when a body is dropped.
const UNREAD_MAX: usize = 64 * 1024;

/// Keeps reading an HTTP/2 request body that its route answered without reading, until the client ends the
/// stream (within [`UNREAD_MAX`] bytes, each piece within [`DRAIN_IDLE`], all within `total`). Dropped at once,
/// the body would make h2 reset the stream (`NO_ERROR`) and ignore what the client sends after: trailers that
/// are malformed (without END_STREAM, or with a pseudo-header) would then go unnoticed, where RFC 9113 §8.1
/// makes them a stream error (`PROTOCOL_ERROR`), which h2 raises while it still follows the stream.
pub(crate) async fn finish_unread(mut body: hyper::body::Incoming, total: std::time::Duration) {
    let reading = async {
        let mut read = 0;
        while read <= UNREAD_MAX {
            match crate::rt::timeout(DRAIN_IDLE, body.frame()).await {
                Ok(Some(Ok(frame))) => read += frame.data_ref().map_or(0, Bytes::len),
                _ => return,
            }
        }
    };
    let _ = crate::rt::timeout(total, reading).await;
}

/// Reads the whole body. A declared length is checked against the limit and reserved in the budget before a
/// byte is read; a chunked body reserves as it arrives. Every refusal is an answer: 413 past the size limit,
/// 503 with `Retry-After` when the budget is spent, 408 past the body timeout, 400 for a malformed body.
///
/// Cost: one copy of the body (frames into one buffer) and one timer per body.
async fn read<'a>(
    body: RequestBody,
    config: &Config,
    budget: &'a BodyBudget,
) -> Result<(Bytes, Held<'a>), Response<Body>> {
    let mut held = Held { budget, bytes: 0 };
    if body.is_end_stream() {
        return Ok((Bytes::new(), held));
    }
    let max = config.max_body_size;
    let declared = body.size_hint().exact();
    if let Some(len) = declared {
        if len > max as u64 {
            return Err(response::text(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE));
        }
        if !held.grow(len as usize) {
            return Err(response::unavailable(messages::BODIES_FULL));
        }
    }
    let collect = async {
        let mut body = body;
        let mut buf = Vec::with_capacity(declared.unwrap_or(0) as usize);
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|_| response::text(StatusCode::BAD_REQUEST, messages::BAD_REQUEST_BODY))?;
            let Ok(data) = frame.into_data() else { continue };
            if buf.len() + data.len() > max {
                return Err(response::text(StatusCode::PAYLOAD_TOO_LARGE, messages::PAYLOAD_TOO_LARGE));
            }
            if declared.is_none() && !held.grow(data.len()) {
                return Err(response::unavailable(messages::BODIES_FULL));
            }
            buf.extend_from_slice(&data);
        }
        Ok(Bytes::from(buf))
    };
    // A client trickling its body would otherwise hold the connection forever: the header timeout is over and
    // the handler timeout has not started.
    match crate::rt::timeout(config.body_timeout, collect).await {
        Ok(Ok(bytes)) => Ok((bytes, held)),
        Ok(Err(res)) => Err(res),
        Err(_) => Err(response::text(StatusCode::REQUEST_TIMEOUT, messages::BODY_TIMEOUT)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_budget_should_refuse_past_its_limit_and_refill_when_released() {
        let budget = BodyBudget::new(10);
        let mut a = Held { budget: &budget, bytes: 0 };
        assert!(a.grow(6));
        let mut b = Held { budget: &budget, bytes: 0 };
        assert!(!b.grow(5), "6 + 5 is over 10");
        assert!(b.grow(4));
        drop(a);
        assert!(b.grow(6));
        drop(b);
        assert_eq!(budget.used.load(Ordering::Relaxed), 0);
    }
}
