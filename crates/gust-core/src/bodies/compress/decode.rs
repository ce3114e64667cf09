//! Request bodies sent with `Content-Encoding`, decoded as they arrive when the server opts in
//! ([`crate::Config::decode_request_bodies`]).
//!
//! Each poll yields at most [`OUT_CHUNK`] decoded bytes, so a small coded body that expands enormously (a zip
//! bomb) is never inflated in one go: the body limit, counted on decoded bytes by whoever reads the body, stops
//! it after at most one chunk past the limit.

use std::pin::Pin;
use std::task::{Context, Poll};

use brotli::{BrotliDecompressStream, BrotliResult, BrotliState, HeapAlloc, HuffmanCode};
use bytes::{Bytes, BytesMut};
use hyper::body::{Body as _, Frame, Incoming, SizeHint};

use super::Encoding;

/// Decoded bytes per frame at most.
pub(crate) const OUT_CHUNK: usize = 64 * 1024;

/// The largest zstd window a request may use (8 MiB, what RFC 8878 §3.1.1.1.2 asks HTTP decoders to support):
/// the decoder allocates the window a frame declares, so an unbounded one is a memory attack.
const ZSTD_WINDOW_LOG_MAX: u32 = 23;

type BrState = BrotliState<HeapAlloc<u8>, HeapAlloc<u32>, HeapAlloc<HuffmanCode>>;

/// An incremental decoder with bounded output per call.
pub(crate) enum Decoder {
    Gzip(flate2::Decompress),
    Br(Box<BrState>),
    Zstd(zstd::stream::raw::Decoder<'static>),
}

/// A coded body that is malformed (or uses a zstd window over the limit).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Malformed;

impl Decoder {
    pub(crate) fn new(encoding: Encoding) -> Self {
        match encoding {
            Encoding::Gzip => Decoder::Gzip(flate2::Decompress::new_gzip(15)),
            // Strict: no large-window brotli, whose window can be 1 GiB.
            Encoding::Br => Decoder::Br(Box::new(BrState::new_strict(
                HeapAlloc::default(),
                HeapAlloc::default(),
                HeapAlloc::default(),
            ))),
            Encoding::Zstd => {
                let mut d = zstd::stream::raw::Decoder::new().expect("zstd decoder allocation");
                let _ = d.set_parameter(zstd::stream::raw::DParameter::WindowLogMax(ZSTD_WINDOW_LOG_MAX));
                Decoder::Zstd(d)
            }
        }
    }

    /// Decodes from `input` into `out`: `(bytes of input used, bytes written, whether the coded body ended)`.
    pub(crate) fn run(&mut self, input: &[u8], out: &mut [u8]) -> Result<(usize, usize, bool), Malformed> {
        match self {
            Decoder::Gzip(d) => {
                let (before_in, before_out) = (d.total_in(), d.total_out());
                let status = d.decompress(input, out, flate2::FlushDecompress::None).map_err(|_| Malformed)?;
                let used = (d.total_in() - before_in) as usize;
                let made = (d.total_out() - before_out) as usize;
                Ok((used, made, status == flate2::Status::StreamEnd))
            }
            Decoder::Br(state) => {
                let (mut avail_in, mut in_off, mut avail_out, mut out_off, mut total) =
                    (input.len(), 0, out.len(), 0, 0);
                let result = BrotliDecompressStream(
                    &mut avail_in,
                    &mut in_off,
                    input,
                    &mut avail_out,
                    &mut out_off,
                    out,
                    &mut total,
                    state,
                );
                match result {
                    BrotliResult::ResultFailure => Err(Malformed),
                    BrotliResult::ResultSuccess => Ok((in_off, out_off, true)),
                    _ => Ok((in_off, out_off, false)),
                }
            }
            Decoder::Zstd(d) => {
                use zstd::stream::raw::{InBuffer, Operation, OutBuffer};
                let mut src = InBuffer::around(input);
                let mut dst = OutBuffer::around(out);
                let hint = d.run(&mut src, &mut dst).map_err(|_| Malformed)?;
                Ok((src.pos(), dst.pos(), hint == 0))
            }
        }
    }
}

/// Why a request body could not be read.
#[derive(Debug)]
pub(crate) enum BodyError {
    /// The connection's: malformed framing, or the client left.
    Hyper(hyper::Error),
    /// The content coding is malformed or truncated.
    Malformed,
}

/// A request body as the engine reads it: as sent, or decoded.
#[derive(Debug)]
pub(crate) enum RequestBody {
    Plain(Incoming),
    Decoded(Box<Decoding>),
}

/// A coded body being decoded: the pending coded input and the decoder.
pub(crate) struct Decoding {
    body: Incoming,
    decoder: Decoder,
    input: Bytes,
    /// The coded body ended (its decoder said so).
    done: bool,
    /// The connection's body ended.
    eof: bool,
    /// The decoder's last call filled its output: it may hold more without new input.
    more_out: bool,
}

impl std::fmt::Debug for Decoding {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Decoding").field("done", &self.done).finish_non_exhaustive()
    }
}

impl RequestBody {
    /// Decodes `body` as `encoding`.
    pub(crate) fn decoded(body: Incoming, encoding: Encoding) -> Self {
        RequestBody::Decoded(Box::new(Decoding {
            body,
            decoder: Decoder::new(encoding),
            input: Bytes::new(),
            done: false,
            eof: false,
            more_out: false,
        }))
    }
}

impl hyper::body::Body for RequestBody {
    type Data = Bytes;
    type Error = BodyError;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        match self.get_mut() {
            RequestBody::Plain(body) => Pin::new(body).poll_frame(cx).map_err(BodyError::Hyper),
            RequestBody::Decoded(d) => d.poll_decoded(cx),
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            RequestBody::Plain(body) => body.is_end_stream(),
            RequestBody::Decoded(d) => d.done && d.input.is_empty(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            RequestBody::Plain(body) => body.size_hint(),
            // The decoded size is known only at the end.
            RequestBody::Decoded(_) => SizeHint::default(),
        }
    }
}

impl Decoding {
    /// Cost: one decoder call per coded frame at least; decoded output in pieces of at most [`OUT_CHUNK`].
    fn poll_decoded(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, BodyError>>> {
        loop {
            if self.done {
                // Bytes after the end of the coded body are a malformed body, not a second body.
                return Poll::Ready(if self.input.is_empty() { None } else { Some(Err(BodyError::Malformed)) });
            }
            // The decoder runs when there is input, when its last call filled the output (it may hold more), and
            // at the connection's end (to tell a complete body from a truncated one).
            if !self.input.is_empty() || self.more_out || self.eof {
                let mut out = BytesMut::zeroed(OUT_CHUNK);
                let (used, made, done) = match self.decoder.run(&self.input, &mut out) {
                    Ok(r) => r,
                    Err(Malformed) => return Poll::Ready(Some(Err(BodyError::Malformed))),
                };
                let _ = self.input.split_to(used);
                self.done = done;
                self.more_out = made == OUT_CHUNK;
                if made > 0 {
                    out.truncate(made);
                    return Poll::Ready(Some(Ok(Frame::data(out.freeze()))));
                }
                if done || (used > 0 && !self.input.is_empty()) {
                    continue;
                }
                if self.eof {
                    // The connection's body ended inside the coded one.
                    return Poll::Ready(Some(Err(BodyError::Malformed)));
                }
            }
            match std::task::ready!(Pin::new(&mut self.body).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        if self.input.is_empty() {
                            self.input = data;
                        } else {
                            let mut joined = BytesMut::with_capacity(self.input.len() + data.len());
                            joined.extend_from_slice(&self.input);
                            joined.extend_from_slice(&data);
                            self.input = joined.freeze();
                        }
                    }
                }
                Some(Err(e)) => return Poll::Ready(Some(Err(BodyError::Hyper(e)))),
                None => self.eof = true,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::bodies::compress::encoder::compress;

    #[test]
    fn malformed_and_truncated_bodies_are_refused() {
        for encoding in Encoding::ALL {
            let mut d = Decoder::new(encoding);
            let mut out = [0u8; 1024];
            assert!(d.run(b"definitely not a coded body at all, no", &mut out).is_err(), "{encoding:?}");
            let coded = compress(encoding, 3, &[7u8; 10_000]).unwrap();
            let mut d = Decoder::new(encoding);
            let (_, _, done) = d.run(&coded[..coded.len() - 4], &mut vec![0u8; 20_000]).unwrap();
            assert!(!done, "{encoding:?}: a truncated body has not ended");
        }
    }

    #[test]
    fn output_is_bounded_per_call_whatever_the_ratio() {
        let bomb = vec![0u8; 4 << 20];
        for encoding in Encoding::ALL {
            let coded = compress(encoding, 6, &bomb).unwrap();
            assert!(coded.len() < 64 * 1024, "{encoding:?} {}", coded.len());
            let mut d = Decoder::new(encoding);
            let mut out = vec![0u8; OUT_CHUNK];
            let (_, made, _) = d.run(&coded, &mut out).unwrap();
            assert!(made <= OUT_CHUNK);
        }
    }
}
