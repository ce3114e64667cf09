//! One WebSocket's task on the I/O thread: it reads frames (decoded, reassembled and checked by [`super::frame`]
//! and [`super::message`]) and hands messages to JavaScript in the server's batches; it writes what the socket's
//! queue holds, a vectored write per turn; it answers pings, pings a quiet client, and runs the close handshake.
//!
//! Memory per idle socket: this task and the connection's; read bytes go through one buffer per I/O thread, and
//! a socket holds read bytes only while a frame is incomplete. The reading side is in `read`; the life, the
//! writing side, the timers and the close stages are here.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::future::Future;
use std::io::IoSlice;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Buf, Bytes, BytesMut};
use hyper::upgrade::OnUpgrade;
use tokio::io::{AsyncRead, AsyncWrite};

use super::frame::{self, FrameDecoder, OpCode};
use super::hub::WebSockets;
use super::message::{Assembler, Inflation};
use super::socket::{Socket, State};
use crate::values::clock;

/// What a socket tells JavaScript, in the server's batches.
pub(crate) trait WsEvents: Send + Sync {
    /// The 101 was written and the socket is open (or, `failed`, the client left first): `request` is the id of
    /// the request that asked for it.
    fn open(&self, socket: u32, request: u32, failed: bool);
    /// A whole message.
    fn message(&self, socket: u32, binary: bool, data: &[u8]);
    /// The socket is closed: the client's close code and reason, the code the server failed it with, or 1006.
    fn closed(&self, socket: u32, code: u16, reason: &[u8]);
    /// The queue emptied after a send reported backpressure.
    fn drain(&self, socket: u32);
    /// Whether JavaScript keeps up: when it does not, sockets stop reading (and `cx` is woken once it does).
    fn poll_room(&self, cx: &mut Context<'_>) -> bool;
}

/// A handshake the handler accepted: hyper hands the connection over once the 101 is written (the connection's
/// task takes it back from hyper's wrapper, see `server::connection`).
pub(crate) struct Accepted {
    pub(crate) on_upgrade: OnUpgrade,
    pub(crate) socket: Arc<Socket>,
    pub(crate) request: u32,
}

/// How long a socket waits for the client's close frame after sending its own.
const CLOSE_TIMEOUT: u64 = 5_000;
/// How long a closing socket may take to write its last bytes when the server is forced to stop.
const FORCED_CLOSE: u64 = 500;
/// How long reads are drained after the server's FIN, so that closing does not reset the connection (a reset
/// can destroy the close frame before the client reads it).
const LINGER: u64 = 2_000;
/// A stage with no deadline (the socket is open).
const NO_DEADLINE: u64 = u64::MAX;
/// Bytes read per call, into the I/O thread's shared buffer.
const READ_CHUNK: usize = 64 * 1024;
/// Frames per vectored write.
const MAX_SLICES: usize = 64;

mod read;

thread_local! {
    static SCRATCH: RefCell<Box<[u8]>> = RefCell::new(vec![0; READ_CHUNK].into_boxed_slice());
}

/// Runs a socket from the upgrade to its end, then reports its close. `io` is the connection hyper handed over,
/// with the bytes it had read past the handshake; `None` when the client left before the 101 was written.
///
/// What happens before the first wait is done here, synchronously, and the future returned holds the socket's
/// state and stream once: values moved from an `async fn`'s arguments into locals, or into an inner future, each
/// kept a second copy in its future. The socket's task future went from 760 to 528 bytes, and its live heap per
/// idle socket from 1,313 to 1,057 bytes (`tests/idle_memory.rs`, release; tokio rounds a task up to 128 bytes).
/// A field more or less can cross that rounding: permessage-deflate's took it to 1,201 bytes until the frame
/// decoder was made where it is used and a fragmented message's state boxed (1,073); then the close's record
/// boxed, the deadline one word, and this future spawned as a task of its own (the upgrade's task had kept room
/// for its wait and for the values moved in here): 400 -> 384 bytes of future, a 512-byte cell, 945 bytes per
/// idle socket. `guard` is held until the socket ends (the server's stop waits for it).
pub(crate) fn run<S: AsyncRead + AsyncWrite + Unpin, G>(
    io: Option<(S, Bytes)>,
    (socket, request): (Arc<Socket>, u32),
    hub: Arc<WebSockets>,
    events: Arc<dyn WsEvents>,
    guard: G,
) -> impl Future<Output = ()> {
    let mut opened = match io {
        None => {
            hub.remove(&socket);
            events.open(socket.id, request, true);
            None
        }
        Some((io, read_ahead)) => {
            events.open(socket.id, request, false);
            let mut task = Task::new(socket.clone(), events);
            // Opened while the server stops: it says goodbye at once, as the others did.
            if let Some(forced) = hub.stopping() {
                socket.close(super::hub::goodbye(), forced);
            }
            // Frames the client sent right behind its handshake.
            if !read_ahead.is_empty() {
                task.pending.extend_from_slice(&read_ahead);
                task.frames();
            }
            Some((task, io))
        }
    };
    // A block, not an `async fn`: an `async fn` moves each argument into a local of its own at its start, and
    // its future keeps room for both (this one was 728 bytes that way).
    async move {
        // Held until the socket ends (the server's stop waits for it).
        let _guard = guard;
        // Read in place, never moved into another future (which would keep a second copy).
        if let Some((task, io)) = opened.as_mut() {
            task.serve(io).await;
        }
        let Some((task, io)) = opened else { return };
        // The connection closes before JavaScript hears of it, as it always has.
        drop(io);
        hub.remove(&task.socket);
        let (code, reason) = task.closed.map_or((1006, Bytes::new()), |c| *c);
        task.events.closed(task.socket.id, code, &reason);
    }
}

/// Where the close handshake is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    Open,
    /// The server sent its close frame and waits for the client's.
    AwaitReply,
    /// The handshake is over (or failed): write what is queued, then shut down the sending side.
    Flush,
    /// Sending side shut down: read and discard until the client closes too.
    Linger,
}

/// What woke the task.
enum Wake {
    Read,
    Eof,
    Broken,
    Terminate,
    Tick,
    Done,
}

struct Task {
    socket: Arc<Socket>,
    events: Arc<dyn WsEvents>,
    assembler: Assembler,
    /// Bytes of an incomplete frame (empty, and unallocated, between frames).
    pending: BytesMut,
    /// Frames taken from the queue and being written.
    writing: VecDeque<Bytes>,
    stage: Stage,
    /// When the current stage gives up ([`clock::now_ms`]); [`NO_DEADLINE`] while open (a word, not two).
    deadline: u64,
    /// What JavaScript is told when the socket ends (boxed: set once, at the end, and five words less in every
    /// idle socket's task).
    closed: Option<Box<(u16, Bytes)>>,
    last_read: u64,
    pinged: bool,
}

impl Task {
    fn new(socket: Arc<Socket>, events: Arc<dyn WsEvents>) -> Self {
        let max = socket.options.max_payload;
        let inflation = match socket.deflate {
            None => Inflation::Off,
            Some(agreed) if agreed.client_takeover => Inflation::Own,
            Some(_) => Inflation::Shared,
        };
        Self {
            assembler: Assembler::new(max, inflation),
            socket,
            events,
            pending: BytesMut::new(),
            writing: VecDeque::new(),
            stage: Stage::Open,
            deadline: NO_DEADLINE,
            closed: None,
            last_read: clock::now_ms(),
            pinged: false,
        }
    }

    async fn serve<S: AsyncRead + AsyncWrite + Unpin>(&mut self, io: &mut S) {
        // The timer is re-armed only when it must fire earlier than it is set to (a stage's deadline) or after it
        // fired: reads only push the idle deadline later, which the next tick finds. Cost per message: nothing.
        let mut armed = self.next_at();
        let sleep = crate::rt::sleep(Duration::from_millis(armed.saturating_sub(clock::now_ms()).max(1)));
        tokio::pin!(sleep);
        loop {
            let wake = std::future::poll_fn(|cx| {
                match self.poll_write(io, cx) {
                    Poll::Ready(Err(())) => return Poll::Ready(Wake::Broken),
                    Poll::Ready(Ok(Some(wake))) => return Poll::Ready(wake),
                    _ => {}
                }
                if let Poll::Ready(read) = self.poll_read(io, cx) {
                    return Poll::Ready(read);
                }
                if sleep.as_mut().poll(cx).is_ready() {
                    return Poll::Ready(Wake::Tick);
                }
                Poll::Pending
            })
            .await;
            let ticked = matches!(wake, Wake::Tick);
            match wake {
                Wake::Read => {}
                Wake::Eof | Wake::Broken | Wake::Done => return,
                Wake::Terminate => {
                    self.closing(1006, Bytes::from_static(b"terminated"));
                    return;
                }
                Wake::Tick => {
                    if self.on_tick() {
                        return;
                    }
                }
            }
            let want = self.next_at();
            if ticked || want < armed {
                armed = want;
                let wait = want.saturating_sub(clock::now_ms()).max(1);
                sleep.as_mut().reset(crate::rt::after(Duration::from_millis(wait)));
            }
        }
    }

    /// Writes what is queued; `Ok(Some(_))` when the socket must end or the loop must look again.
    fn poll_write<S: AsyncWrite + Unpin>(
        &mut self,
        io: &mut S,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Wake>, ()>> {
        loop {
            if self.writing.is_empty() {
                // A burst's room is not kept for the socket's life (the queue takes this one in exchange).
                if self.writing.capacity() > 16 {
                    self.writing = VecDeque::new();
                }
                let refill = self.socket.refill(&mut self.writing, cx.waker());
                if refill.drain {
                    self.events.drain(self.socket.id);
                }
                match refill.state {
                    State::Terminated | State::Ended => return Poll::Ready(Ok(Some(Wake::Terminate))),
                    State::Closing if refill.forced && matches!(self.stage, Stage::Open | Stage::AwaitReply) => {
                        // The server is forced to stop: the goodbye goes out if it can, and the socket ends.
                        self.closing(1001, Bytes::from_static(b"server shutting down"));
                        self.stage = Stage::Flush;
                        self.deadline = clock::now_ms() + FORCED_CLOSE;
                    }
                    State::Closing if self.stage == Stage::Open => {
                        // JavaScript closed it: its close frame is queued; the client's reply ends the socket.
                        self.stage = Stage::AwaitReply;
                        self.deadline = clock::now_ms() + CLOSE_TIMEOUT;
                    }
                    _ => {}
                }
                if !refill.frames {
                    if self.stage == Stage::Flush {
                        return self.poll_shutdown(io, cx);
                    }
                    return Poll::Pending;
                }
            }
            let mut slices = [IoSlice::new(&[]); MAX_SLICES];
            let n =
                self.writing.iter().take(MAX_SLICES).zip(slices.iter_mut()).map(|(b, s)| *s = IoSlice::new(b)).count();
            match Pin::new(&mut *io).poll_write_vectored(cx, &slices[..n]) {
                Poll::Ready(Ok(0)) | Poll::Ready(Err(_)) => return Poll::Ready(Err(())),
                Poll::Ready(Ok(mut written)) => {
                    self.socket.wrote(written);
                    while written > 0 {
                        let front = self.writing.front_mut().expect("written bytes were queued");
                        if front.len() <= written {
                            written -= front.len();
                            self.writing.pop_front();
                        } else {
                            front.advance(written);
                            written = 0;
                        }
                    }
                }
                Poll::Pending => {
                    self.socket.blocked();
                    return Poll::Pending;
                }
            }
        }
    }

    /// Everything is written after the handshake ended (the stage is `Flush`): send FIN, then linger.
    fn poll_shutdown<S: AsyncWrite + Unpin>(
        &mut self,
        io: &mut S,
        cx: &mut Context<'_>,
    ) -> Poll<Result<Option<Wake>, ()>> {
        match Pin::new(&mut *io).poll_shutdown(cx) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(_)) => Poll::Ready(Ok(Some(Wake::Done))),
            Poll::Ready(Ok(())) => {
                self.stage = Stage::Linger;
                self.deadline = clock::now_ms() + LINGER;
                Poll::Ready(Ok(Some(Wake::Read)))
            }
        }
    }

    /// The timer fired: a stage's deadline, a ping due, or the idle timeout. True when the socket must end.
    fn on_tick(&mut self) -> bool {
        let now = clock::now_ms();
        if now >= self.deadline {
            return true;
        }
        if self.stage != Stage::Open {
            return false;
        }
        if let Some(idle) = self.idle_ms() {
            let quiet = now.saturating_sub(self.last_read);
            if quiet >= idle {
                self.socket.close(frame::close(1001, "idle timeout"), false);
            } else if self.socket.options.send_pings && !self.pinged && quiet >= idle / 2 {
                self.pinged = true;
                self.socket.control(frame::encode(true, OpCode::Ping, b""));
            }
        }
        false
    }

    /// Records what JavaScript will be told, unless something was recorded first.
    fn closing(&mut self, code: u16, reason: Bytes) {
        self.closed.get_or_insert_with(|| Box::new((code, reason)));
    }

    /// The frame decoder for this socket's limit and agreement: made where it is used, so the task does not
    /// carry it (two words per idle socket).
    fn decoder(&self) -> FrameDecoder {
        FrameDecoder::new(self.socket.options.max_payload as u64, self.socket.deflate.is_some())
    }

    fn idle_ms(&self) -> Option<u64> {
        self.socket.options.idle_timeout.map(|d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX).max(1))
    }

    /// When the timer must next look ([`clock::now_ms`]).
    fn next_at(&self) -> u64 {
        let mut at = self.deadline;
        if self.stage == Stage::Open {
            if let Some(idle) = self.idle_ms() {
                let ping = self.socket.options.send_pings && !self.pinged;
                at = at.min(self.last_read.saturating_add(if ping { idle / 2 } else { idle }));
            }
        }
        // Capped, so that a far deadline never overflows the timer; waking once an hour costs nothing.
        at.min(clock::now_ms() + 3_600_000)
    }
}
