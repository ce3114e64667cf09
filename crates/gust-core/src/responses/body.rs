//! The body of every response: the sum of the kinds of body the layer below defines, each of which knows nothing
//! of this enum.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

use crate::bodies::compress::body::EncodedBody;
use crate::bodies::files::body::FileBody;
use crate::bodies::stream::StreamBody;
use crate::values::error::StreamAborted;

/// The body of every response Gust sends: one whole buffer (sent with `content-length`), or a stream a handler
/// writes as it goes (see [`crate::bodies::stream`]). One enum, not a boxed trait object: the whole-body path costs
/// nothing more than hyper's own `Full`.
#[derive(Debug)]
pub enum Body {
    /// The whole body; `None` once taken, or when empty.
    Full(Option<Bytes>),
    /// A streamed body.
    Stream(StreamBody),
    /// A file, or part of one, read as hyper sends it.
    File(FileBody),
    /// A streamed body compressed as it goes (see [`crate::bodies::compress`]).
    Encoded(Box<EncodedBody<Body>>),
}

impl Body {
    /// A whole body.
    pub fn full(bytes: Bytes) -> Self {
        Body::Full((!bytes.is_empty()).then_some(bytes))
    }
}

impl Default for Body {
    fn default() -> Self {
        Body::Full(None)
    }
}

impl hyper::body::Body for Body {
    type Data = Bytes;
    type Error = StreamAborted;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamAborted>>> {
        match self.get_mut() {
            Body::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Body::Stream(stream) => stream.poll_frame(cx),
            Body::File(file) => file.poll_frame(cx),
            Body::Encoded(coded) => coded.poll_frame(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Body::Full(None) => true,
            Body::Encoded(coded) => coded.is_end_stream(),
            _ => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Body::Full(bytes) => SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len() as u64)),
            Body::Stream(stream) => stream.size_hint(),
            Body::File(file) => file.size_hint(),
            Body::Encoded(coded) => coded.size_hint(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn whole_bodies_should_be_exactly_sized_and_empty_ones_ended() {
        use hyper::body::Body as _;
        assert_eq!(Body::full(Bytes::from_static(b"abc")).size_hint().exact(), Some(3));
        assert!(Body::full(Bytes::new()).is_end_stream());
        assert!(!Body::full(Bytes::from_static(b"a")).is_end_stream());
    }
}
