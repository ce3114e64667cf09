//! What an HTTP/2 connection owes its client: response bytes handed to hyper that flow control has not let out
//! yet. A client that grants no window (or stops granting it) never fills the socket, so the send timeout's
//! blocked write never starts; [`police`](super::police) instead closes a connection that owes bytes and has let
//! none out for the send timeout.
//!
//! Counted per chunk, not per body or per socket write: hyper's h2 pipe polls the body *before* it waits for
//! window, then holds the chunk, or hands it whole to h2's send buffer whatever the window, and drops the body
//! once its last chunk is handed over; so a body that is not polled says nothing, and one that has ended may
//! still be owed. The socket carries HEADERS, SETTINGS and PING frames beside the DATA, so bytes written say
//! nothing of bodies either (a small body waiting on a zero window would look paid for by its own HEADERS). A
//! chunk, though, lives exactly as long as its bytes wait: h2 advances it as it frames them and drops it when it
//! is done, or unsent when its stream is reset, so nothing stale is left behind by a cancelled download.
//!
//! Cost, HTTP/2 responses only: two `Arc` clones per response (its future's, its body's); per chunk, an `Arc`
//! clone and a relaxed add when it is handed over and the `Arc`'s release when it is dropped; a relaxed add each
//! time h2 takes bytes from it (once per DATA frame, or per partial write). HTTP/1.1 bodies are not wrapped.

use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll};

use bytes::{Buf, Bytes};
use http::{Request, Response};
use hyper::body::{Frame, Incoming, SizeHint};

use crate::responses::body::Body;
use crate::service::conn_service::{ConnService, ServiceFuture};
use crate::service::conn_state::ConnState;
use crate::values::error::StreamAborted;

/// The connection's service as HTTP/2 serves it: the same [`ConnService`], its response bodies counted in its
/// connection's state.
pub(crate) struct OwedService(ConnService);

impl OwedService {
    pub(crate) fn new(service: ConnService) -> Self {
        Self(service)
    }
}

impl hyper::service::Service<Request<Incoming>> for OwedService {
    type Response = Response<OwedBody>;
    type Error = Infallible;
    type Future = OwedFuture;

    fn call(&self, req: Request<Incoming>) -> OwedFuture {
        OwedFuture { inner: self.0.call(req), conn: self.0.state().clone() }
    }
}

/// The service's future, its response's body wrapped once it is ready.
pub(crate) struct OwedFuture {
    inner: ServiceFuture,
    conn: Arc<ConnState>,
}

impl Future for OwedFuture {
    type Output = Result<Response<OwedBody>, Infallible>;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let Ok(res) = ready!(Pin::new(&mut self.inner).poll(cx));
        Poll::Ready(Ok(res.map(|body| OwedBody { body, conn: self.conn.clone() })))
    }
}

/// A response body whose chunks go to hyper as [`OwedChunk`]s.
pub(crate) struct OwedBody {
    body: Body,
    conn: Arc<ConnState>,
}

impl hyper::body::Body for OwedBody {
    type Data = OwedChunk;
    type Error = StreamAborted;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<OwedChunk>, StreamAborted>>> {
        let this = self.get_mut();
        let frame = ready!(Pin::new(&mut this.body).poll_frame(cx));
        Poll::Ready(frame.map(|frame| frame.map(|frame| frame.map_data(|bytes| OwedChunk::new(bytes, &this.conn)))))
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}

/// Body bytes on their way to the client: counted as owed when made, as settled when h2 takes them for a DATA
/// frame (`advance`) or drops them unsent.
pub(crate) struct OwedChunk {
    bytes: Bytes,
    conn: Arc<ConnState>,
}

impl OwedChunk {
    fn new(bytes: Bytes, conn: &Arc<ConnState>) -> Self {
        conn.bytes_handed(bytes.len());
        Self { bytes, conn: conn.clone() }
    }
}

impl Buf for OwedChunk {
    fn remaining(&self) -> usize {
        self.bytes.len()
    }

    fn chunk(&self) -> &[u8] {
        &self.bytes
    }

    fn advance(&mut self, cnt: usize) {
        self.bytes.advance(cnt);
        self.conn.bytes_settled(cnt);
    }

    fn copy_to_bytes(&mut self, len: usize) -> Bytes {
        let out = self.bytes.split_to(len);
        self.conn.bytes_settled(len);
        out
    }
}

impl Drop for OwedChunk {
    fn drop(&mut self) {
        if !self.bytes.is_empty() {
            self.conn.bytes_settled(self.bytes.len());
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chunk_is_owed_until_taken_or_dropped() {
        let conn = Arc::new(ConnState::new(false));
        let mut chunk = OwedChunk::new(Bytes::from_static(b"0123456789"), &conn);
        assert_eq!(conn.owed(), (10, 0));
        chunk.advance(4);
        assert_eq!(conn.owed(), (6, 4), "taken for a DATA frame");
        assert_eq!(&chunk.copy_to_bytes(2)[..], b"45");
        assert_eq!(conn.owed(), (4, 6));
        drop(chunk);
        assert_eq!(conn.owed(), (0, 10), "dropped unsent: owed no more");
    }
}
