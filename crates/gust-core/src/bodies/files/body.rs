//! A file's bytes as a response body: read in large chunks on tokio's blocking pool, one chunk at a time, only as
//! hyper asks for more. Memory per response is one chunk plus hyper's write queue, whatever the file's size, and
//! the I/O thread never blocks on the disk. On a connection that sends files itself (plain HTTP/1.1 on Linux),
//! an uncompressed body is not read at all: its frames stand for parts of the file ([`super::sendfile`]).

use std::fs::File;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use bytes::Bytes;
use hyper::body::{Frame, SizeHint};

use super::sendfile::{FileSink, MARK_LEN};
use crate::bodies::compress::encoder::Encoder;
use crate::values::error::StreamAborted;

/// Bytes read per chunk: large enough that a big file costs few trips to the blocking pool (8 KiB reads measured
/// 7× slower than 1 MiB ones in hyper-staticfile#25), small enough to bound memory per response.
pub const CHUNK: u64 = 256 * 1024;

/// The bytes `start..end` of a file, streamed, maybe through a compressor.
#[derive(Debug)]
pub struct FileBody {
    file: Arc<File>,
    pos: u64,
    end: u64,
    /// The compressor the bytes go through (see [`crate::bodies::compress`]); it travels to the blocking pool with each
    /// read, so compressing never runs on the I/O thread.
    encoder: Option<Box<Encoder>>,
    coded: bool,
    reading: Option<crate::rt::Blocking<Read>>,
    /// The connection that sends the file's bytes itself, if it does (see [`super::sendfile`]).
    sink: Option<Arc<dyn FileSink>>,
}

/// One trip to the blocking pool: the bytes to send (maybe coded), where the file was read up to, and the
/// compressor back.
#[derive(Debug)]
struct Read {
    bytes: io::Result<Bytes>,
    pos: u64,
    encoder: Option<Box<Encoder>>,
}

impl FileBody {
    /// Streams `start..end` of `file` (the caller checked the range against the file's length).
    pub fn new(file: File, start: u64, end: u64) -> Self {
        Self { file: Arc::new(file), pos: start, end, encoder: None, coded: false, reading: None, sink: None }
    }

    /// The same bytes, compressed by `encoder` (the coded length is unknown until the end).
    pub(crate) fn encoded(mut self, encoder: Encoder) -> Self {
        self.encoder = Some(Box::new(encoder));
        self.coded = true;
        self
    }

    /// The same bytes, sent by `sink`'s connection straight from the file (`sendfile`) instead of read here;
    /// a compressed body is still read (its bytes are the compressor's).
    pub(crate) fn sent_by(mut self, sink: Arc<dyn FileSink>) -> Self {
        if !self.coded {
            self.sink = Some(sink);
        }
        self
    }

    /// Bytes of the file left to send.
    pub(crate) fn remaining(&self) -> u64 {
        self.end.saturating_sub(self.pos)
    }

    pub(crate) fn poll_frame(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, StreamAborted>>> {
        if self.pos >= self.end && self.encoder.is_none() && self.reading.is_none() {
            return Poll::Ready(None);
        }
        if let Some(sink) = &self.sink {
            let len = (self.end - self.pos).min(MARK_LEN as u64) as usize;
            let frame = sink.regions().queue(&self.file, self.pos, len);
            self.pos += len as u64;
            return Poll::Ready(Some(Ok(Frame::data(frame))));
        }
        let reading = self.reading.get_or_insert_with(|| {
            let (file, pos, end, encoder) = (self.file.clone(), self.pos, self.end, self.encoder.take());
            // The buffer is allocated here, on the I/O thread, where hyper frees it once sent: allocated on a
            // pool thread and freed here, each pool thread's allocator kept megabytes of freed chunks (8 MB per
            // response measured at 10 concurrent 14 MiB downloads).
            let buf = Vec::with_capacity(usize::try_from((end - pos).min(CHUNK)).unwrap_or(0));
            crate::rt::spawn_blocking(move || read(&file, pos, end, encoder, buf))
        });
        let read = std::task::ready!(Pin::new(reading).poll(cx));
        self.reading = None;
        match read {
            Ok(Read { bytes: Ok(bytes), pos, encoder }) => {
                self.pos = pos;
                self.encoder = encoder;
                if bytes.is_empty() {
                    return Poll::Ready(None);
                }
                Poll::Ready(Some(Ok(Frame::data(bytes))))
            }
            // A file that shrank or failed under us: cut the response off (the length was promised).
            _ => {
                self.pos = self.end;
                self.encoder = None;
                Poll::Ready(Some(Err(StreamAborted)))
            }
        }
    }

    pub(crate) fn size_hint(&self) -> SizeHint {
        if self.coded {
            return SizeHint::default();
        }
        SizeHint::with_exact(self.end.saturating_sub(self.pos))
    }
}

/// On the blocking pool: the next chunk from `pos`; through `encoder`, as many chunks as it takes for coded
/// bytes to come out, and the coded body's end after the last one.
fn read(file: &File, mut pos: u64, end: u64, encoder: Option<Box<Encoder>>, buf: Vec<u8>) -> Read {
    let Some(mut encoder) = encoder else {
        let bytes = read_at(file, pos, (end - pos).min(CHUNK), buf);
        let pos = pos + bytes.as_ref().map_or(0, |b| b.len() as u64);
        return Read { bytes, pos, encoder: None };
    };
    loop {
        if pos >= end {
            return Read { bytes: (*encoder).finish(), pos, encoder: None };
        }
        let chunk = match read_at(file, pos, (end - pos).min(CHUNK), Vec::new()) {
            Ok(chunk) => chunk,
            Err(e) => return Read { bytes: Err(e), pos, encoder: None },
        };
        pos += chunk.len() as u64;
        match encoder.push(&chunk, false) {
            Ok(out) if out.is_empty() => continue,
            Ok(out) => return Read { bytes: Ok(out), pos, encoder: Some(encoder) },
            Err(e) => return Read { bytes: Err(e), pos, encoder: None },
        }
    }
}

/// Reads exactly `len` bytes at `pos`. The buffer is filled by the reads themselves (`read_to_end` never zeroes
/// it first: for a 14 MiB file that memset was a tenth of the CPU), from this body's own cursor.
fn read_at(file: &File, pos: u64, len: u64, mut buf: Vec<u8>) -> io::Result<Bytes> {
    use std::io::{Read, Seek, SeekFrom};
    let mut reader = file;
    reader.seek(SeekFrom::Start(pos))?;
    buf.clear();
    buf.reserve_exact(usize::try_from(len).unwrap_or(usize::MAX));
    reader.take(len).read_to_end(&mut buf)?;
    if (buf.len() as u64) < len {
        return Err(io::Error::new(io::ErrorKind::UnexpectedEof, "the file is shorter than when it was opened"));
    }
    Ok(Bytes::from(buf))
}
