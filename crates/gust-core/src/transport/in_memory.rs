//! Connections without a socket: the client end of an in-memory pipe whose server end is served like any
//! accepted TCP connection (same hyper connection, same policing, same service). This is what lets an app answer
//! a request in process (`app.request()` in tests) with exactly the bytes a client over TCP would get.
//!
//! The client end is driven on the I/O thread by two tasks: a writer fed by [`Pipe`]'s calls, and a reader that
//! reads only when asked ([`Pipe::read`]), so a slow consumer holds at most one chunk plus the pipe's buffer.

use std::sync::Arc;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncReadExt, AsyncWriteExt, DuplexStream};
use tokio::sync::{mpsc, watch, Notify};

/// A task started on the engine that serves the pipe's server end.
pub(super) type Task = std::pin::Pin<Box<dyn std::future::Future<Output = ()> + Send>>;

/// Bytes in flight in each direction of the pipe: the size of a socket buffer, so large bodies stream.
pub(super) const PIPE_BUFFER: usize = 64 * 1024;

/// What the client end of an in-memory connection reports, on the I/O thread.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PipeEvent {
    /// Bytes the server wrote, after a [`Pipe::read`].
    Data(Bytes),
    /// The server closed its end (after a [`Pipe::read`]); nothing more will come.
    End,
    /// One [`Pipe::write`] was taken by the server's end, so the caller may write more.
    Written,
}

enum Op {
    Write(Bytes),
    /// Half-close: the request is complete, the response may still be read.
    End,
}

/// The client end of an in-memory connection. Dropping it closes the connection, as [`Pipe::close`] does.
#[derive(Debug)]
pub struct Pipe {
    ops: mpsc::UnboundedSender<Op>,
    reads: Arc<Notify>,
    closed: watch::Sender<bool>,
}

/// Resolves once the pipe is closed (or its handle is gone).
async fn closed(mut rx: watch::Receiver<bool>) {
    let _ = rx.wait_for(|closed| *closed).await;
}

impl Pipe {
    /// Starts driving `client` with tasks `spawn` starts where the server runs; `on_event` hears what the server
    /// sends and when writes are taken.
    pub(super) fn drive(
        client: DuplexStream,
        spawn: &dyn Fn(Task),
        on_event: Arc<dyn Fn(PipeEvent) + Send + Sync>,
    ) -> Self {
        let (mut reader, mut writer) = tokio::io::split(client);
        let (ops, mut op_rx) = mpsc::unbounded_channel::<Op>();
        let reads = Arc::new(Notify::new());
        let (close, closed_rx) = watch::channel(false);

        let events = on_event.clone();
        let gone = closed(closed_rx.clone());
        spawn(Box::pin(async move {
            tokio::pin!(gone);
            loop {
                let op = tokio::select! {
                    op = op_rx.recv() => op,
                    () = &mut gone => None,
                };
                let Some(op) = op else { return };
                let written = tokio::select! {
                    written = async {
                        match op {
                            Op::Write(bytes) => writer.write_all(&bytes).await.map(|()| true),
                            Op::End => writer.shutdown().await.map(|()| false),
                        }
                    } => written,
                    () = &mut gone => return,
                };
                match written {
                    Ok(true) => events(PipeEvent::Written),
                    Ok(false) => {}
                    // The server closed the connection (it answered without reading the whole body, say); what
                    // it sent is still read by the reader.
                    Err(_) => return,
                }
            }
        }));

        let wanted = reads.clone();
        let gone = closed(closed_rx);
        spawn(Box::pin(async move {
            tokio::pin!(gone);
            let mut buf = BytesMut::new();
            loop {
                tokio::select! {
                    () = wanted.notified() => {}
                    () = &mut gone => return,
                }
                buf.reserve(PIPE_BUFFER);
                let read = tokio::select! {
                    read = reader.read_buf(&mut buf) => read,
                    () = &mut gone => return,
                };
                match read {
                    Ok(n) if n > 0 => on_event(PipeEvent::Data(buf.split().freeze())),
                    _ => {
                        on_event(PipeEvent::End);
                        return;
                    }
                }
            }
        }));
        Self { ops, reads, closed: close }
    }

    /// Sends request bytes; [`PipeEvent::Written`] follows once the server's end has taken them.
    pub fn write(&self, bytes: Bytes) {
        let _ = self.ops.send(Op::Write(bytes));
    }

    /// Ends the request side (a half-close); the response can still be read.
    pub fn end(&self) {
        let _ = self.ops.send(Op::End);
    }

    /// Asks for the next bytes of the response: one [`PipeEvent::Data`] or [`PipeEvent::End`] follows.
    pub fn read(&self) {
        // `notify_one` keeps a permit when the reader is not waiting yet, so a read is never lost.
        self.reads.notify_one();
    }

    /// Closes the connection now, as a client that goes away does; no event follows.
    pub fn close(&self) {
        self.closed.send_replace(true);
    }
}

impl Drop for Pipe {
    fn drop(&mut self) {
        self.close();
    }
}
