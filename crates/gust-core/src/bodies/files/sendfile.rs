//! A file's bytes from the page cache to the socket without passing through user space: Linux `sendfile(2)`,
//! on plain HTTP/1.1 connections (over TLS the bytes must be encrypted in user space, and h2 frames them itself;
//! both read the file as [`super::body`] does).
//!
//! hyper cannot send a file: a body is frames of bytes it queues and writes with `writev` (hyper#3026). So the
//! file travels beside hyper instead of through it. A body in this mode yields *marked* frames: `Bytes` that
//! point into one static allocation, the [`mark`], as long as the part of the file they stand for, and it
//! queues that part ([`Region`]) on its connection ([`Regions`]). hyper frames and counts them like any body
//! (content length, keep-alive), and hands them to the socket wrapper in order; the wrapper recognises a marked
//! slice by its address and sends the front region's bytes with `sendfile` instead of writing the slice.
//!
//! What this relies on, and what guards it:
//! - hyper never copies a body's bytes on such a connection. With the write strategy `Queue` (writev, which the
//!   connection sets explicitly; `pipeline_flush`, which would flatten, is never set) a body's `Bytes` reach the
//!   socket as they are. The mark's bytes are zeros: a path that copied them would send zeros, so the
//!   end-to-end tests compare every byte of files sent this way.
//! - Only the wrapper of a plain TCP socket says it takes regions, and only for HTTP/1.1; anywhere else
//!   [`super::body::FileBody`] reads the file.
//! - Regions are queued in the order hyper queues their frames, and HTTP/1.1 writes one response at a time
//!   (hyper writes a head only once the previous body is flushed), so the front region is always the one whose
//!   mark is being written; a marked slice whose length is not the front region's is an error, never a guess.
//!
//! Cost per file response: one frame per [`MARK_LEN`] bytes and one `sendfile` per socket buffer's worth, no
//! reads on the blocking pool, no buffer. A file not in the page cache is read by `sendfile` on the I/O thread,
//! as nginx and Bun do by default.

use std::collections::VecDeque;
use std::fs::File;
use std::io;
use std::sync::{Arc, Mutex, OnceLock};

use bytes::Bytes;

use crate::values::sync::Locked;

/// Bytes of file per marked frame: the mark's length. Its pages are never touched (nothing reads them), so the
/// allocation costs address space, not memory.
pub(crate) const MARK_LEN: usize = 1 << 20;

/// The allocation marked frames point into, made with the first of them. Zeroed memory this large comes
/// straight from the OS, mapped lazily.
static MARK: OnceLock<&'static [u8]> = OnceLock::new();

fn mark() -> &'static [u8] {
    MARK.get_or_init(|| Vec::leak(vec![0u8; MARK_LEN]))
}

/// Whether `slice` is (part of) a marked frame: it starts inside the mark. Cost: one load, and two compares
/// once any file has been sent this way.
#[inline]
pub(crate) fn is_marked(slice: &[u8]) -> bool {
    let Some(mark) = MARK.get() else { return false };
    let (at, start) = (slice.as_ptr() as usize, mark.as_ptr() as usize);
    at >= start && at < start + MARK_LEN
}

/// A part of a file waiting to be sent: `len` bytes from `offset`.
#[derive(Debug)]
struct Region {
    file: Arc<File>,
    offset: u64,
    len: u64,
}

/// One connection's regions, in the order their marked frames were handed to hyper. Empty (and unallocated)
/// on every connection that sends no file.
#[derive(Debug, Default)]
pub(crate) struct Regions {
    queue: Mutex<VecDeque<Region>>,
}

/// What a file body in this mode needs of its connection: where its regions queue. Implemented by the
/// connection's state, a room above this one.
pub(crate) trait FileSink: Send + Sync {
    fn regions(&self) -> &Regions;
}

impl std::fmt::Debug for dyn FileSink {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FileSink").field("regions", self.regions()).finish()
    }
}

impl Regions {
    /// Queues `len` bytes (at most [`MARK_LEN`]) of `file` from `offset`, and returns the marked frame that
    /// stands for them.
    pub(crate) fn queue(&self, file: &Arc<File>, offset: u64, len: usize) -> Bytes {
        debug_assert!(len > 0 && len <= MARK_LEN);
        let mark = mark();
        self.queue.locked().push_back(Region { file: file.clone(), offset, len: len as u64 });
        Bytes::from_static(&mark[..len])
    }

    /// Sends the front region's next bytes through `send` (`sendfile` from a file, at an offset, at most so
    /// many bytes), for a marked slice of `marked` bytes at the head of hyper's write queue: what `send` sent
    /// is taken off the region, which hyper takes off the frame.
    pub(crate) fn send<F>(&self, marked: usize, send: F) -> std::task::Poll<io::Result<usize>>
    where
        F: FnOnce(&File, u64, usize) -> std::task::Poll<io::Result<usize>>,
    {
        let mut queue = self.queue.locked();
        let Some(front) = queue.front_mut() else {
            return std::task::Poll::Ready(Err(io::Error::other("a marked frame with no file region queued")));
        };
        if front.len != marked as u64 {
            return std::task::Poll::Ready(Err(io::Error::other("a marked frame out of step with its file region")));
        }
        let polled = send(&front.file, front.offset, marked);
        if let std::task::Poll::Ready(Ok(n)) = polled {
            front.offset += n as u64;
            front.len -= (n as u64).min(front.len);
            if front.len == 0 {
                queue.pop_front();
            }
        }
        polled
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::task::Poll;

    fn file() -> Arc<File> {
        Arc::new(File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap())
    }

    #[test]
    fn a_marked_frame_is_recognised_by_address_and_nothing_else_is() {
        let regions = Regions::default();
        let frame = regions.queue(&file(), 0, 100);
        assert_eq!(frame.len(), 100);
        assert!(is_marked(&frame));
        assert!(is_marked(&frame[40..]));
        assert!(!is_marked(&[0u8; 100]));
        assert!(!is_marked(Bytes::from(vec![0u8; 100]).as_ref()));
    }

    #[test]
    fn regions_are_sent_in_order_partial_sends_included() {
        let regions = Regions::default();
        let f = file();
        let _a = regions.queue(&f, 10, 100);
        let _b = regions.queue(&f, 500, 50);
        let mut calls = Vec::new();
        let mut send = |marked: usize, n: usize| {
            regions.send(marked, |_, offset, len| {
                calls.push((offset, len));
                Poll::Ready(Ok(n))
            })
        };
        assert!(matches!(send(100, 60), Poll::Ready(Ok(60))));
        assert!(matches!(send(40, 40), Poll::Ready(Ok(40))));
        assert!(matches!(send(50, 50), Poll::Ready(Ok(50))));
        assert_eq!(calls, [(10, 100), (70, 40), (500, 50)]);
        // Out of step, or nothing queued: an error, never bytes from the wrong place.
        assert!(matches!(regions.send(10, |_, _, _| Poll::Ready(Ok(10))), Poll::Ready(Err(_))));
        let _c = regions.queue(&f, 0, 30);
        assert!(matches!(regions.send(20, |_, _, _| Poll::Ready(Ok(20))), Poll::Ready(Err(_))));
    }
}
