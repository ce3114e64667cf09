//! A streamed body compressed as it goes: each chunk is compressed and flushed as it comes, so the client can
//! decode it at once (an SSE event arrives as an event, not when a compressor's buffer fills).
//!
//! Cost per chunk: one compression with a flush on the I/O thread; chunks of a stream are at most 64 KiB (the
//! stream's high-water mark), which bounds the time one takes.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

use super::encoder::Encoder;
use crate::values::error::StreamAborted;

/// A body and the compressor its bytes go through. Any `http_body` body of bytes fits: the response layer wraps
/// its own `Body` in it, so this room never names that type.
#[derive(Debug)]
pub struct EncodedBody<B> {
    inner: B,
    encoder: Option<Encoder>,
}

impl<B> EncodedBody<B>
where
    B: hyper::body::Body<Data = Bytes, Error = StreamAborted> + Unpin,
{
    pub(crate) fn new(inner: B, encoder: Encoder) -> Self {
        Self { inner, encoder: Some(encoder) }
    }

    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamAborted>>> {
        loop {
            let Some(encoder) = self.encoder.as_mut() else { return Poll::Ready(None) };
            match std::task::ready!(Pin::new(&mut self.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    let Ok(data) = frame.into_data() else { continue };
                    match encoder.push(&data, true) {
                        Ok(out) if out.is_empty() => continue,
                        Ok(out) => return Poll::Ready(Some(Ok(Frame::data(out)))),
                        Err(_) => {
                            self.encoder = None;
                            return Poll::Ready(Some(Err(StreamAborted)));
                        }
                    }
                }
                Some(Err(e)) => {
                    self.encoder = None;
                    return Poll::Ready(Some(Err(e)));
                }
                None => {
                    let tail = self.encoder.take().map(Encoder::finish);
                    return Poll::Ready(match tail {
                        Some(Ok(out)) if !out.is_empty() => Some(Ok(Frame::data(out))),
                        Some(Err(_)) => Some(Err(StreamAborted)),
                        _ => None,
                    });
                }
            }
        }
    }

    pub(crate) fn is_end_stream(&self) -> bool {
        self.encoder.is_none()
    }

    /// The coded length is unknown until the end: hyper chunks the body.
    pub(crate) fn size_hint(&self) -> SizeHint {
        SizeHint::default()
    }
}
