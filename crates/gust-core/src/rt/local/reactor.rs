//! The one-thread engine's poller: one `mio::Poll` (epoll on Linux, kqueue on the BSDs and macOS) per engine,
//! whose descriptor the host loop watches, and the readiness of every socket registered with it. Sockets are
//! registered edge-triggered for both directions once; readiness is remembered per socket (a bit per
//! direction) until an operation finds the socket empty or full, as tokio's does, so a poll pass costs one
//! `epoll_wait` and a wake per ready socket.

use std::io;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::task::{Context, Poll, Waker};

use mio::event::Source;
use mio::{Interest, Token};

use super::table::{give_back, Slab};
use crate::values::sync::Locked;

/// Readable (or its peer closed, or it failed).
pub(crate) const READ: u8 = 1;
/// Writable (or it failed).
pub(crate) const WRITE: u8 = 2;
/// The peer closed its side (or the socket failed): reads end at once from now on, so this stays when a short
/// read clears [`READ`] (the data and the FIN often come in one edge).
const READ_CLOSED: u8 = 4;
/// The socket can take no more writes (or failed): kept as [`READ_CLOSED`] is.
const WRITE_CLOSED: u8 = 8;

/// The token of the engine's own waker: other threads (and late wakes on its own) ring it.
pub(crate) const WAKER: Token = Token(usize::MAX);

/// Events taken per poll pass: more wait for the next pass (the turn is bounded, so tail latency is).
const EVENTS: usize = 1024;

/// What sockets share with the engine: the registry they register with, and the table their tokens index.
pub(crate) struct Registrations {
    registry: mio::Registry,
    /// Each registered socket's state, at its token.
    sockets: Mutex<Slab<Weak<IoState>>>,
}

/// One socket's readiness and the tasks waiting on it.
#[derive(Default)]
pub(crate) struct IoState {
    ready: AtomicU8,
    reader: Mutex<Option<Waker>>,
    writer: Mutex<Option<Waker>>,
}

impl IoState {
    fn set(&self, bits: u8) {
        self.ready.fetch_or(bits, Ordering::AcqRel);
        if bits & READ != 0 {
            if let Some(waker) = self.reader.locked().take() {
                waker.wake();
            }
        }
        if bits & WRITE != 0 {
            if let Some(waker) = self.writer.locked().take() {
                waker.wake();
            }
        }
    }
}

/// The poller of one engine.
pub(crate) struct Reactor {
    poll: std::cell::RefCell<mio::Poll>,
    events: std::cell::RefCell<mio::Events>,
    registrations: Arc<Registrations>,
}

impl Reactor {
    pub(crate) fn new() -> io::Result<(Self, mio::Waker)> {
        let poll = mio::Poll::new()?;
        let waker = mio::Waker::new(poll.registry(), WAKER)?;
        let registry = poll.registry().try_clone()?;
        let registrations = Arc::new(Registrations { registry, sockets: Mutex::default() });
        let reactor = Self {
            poll: std::cell::RefCell::new(poll),
            events: std::cell::RefCell::new(mio::Events::with_capacity(EVENTS)),
            registrations,
        };
        Ok((reactor, waker))
    }

    pub(crate) fn registrations(&self) -> &Arc<Registrations> {
        &self.registrations
    }

    /// The descriptor that becomes readable when a registered socket (or the waker) has news.
    #[cfg(unix)]
    pub(crate) fn fd(&self) -> std::os::fd::RawFd {
        use std::os::fd::AsRawFd;
        self.poll.borrow().as_raw_fd()
    }

    /// One pass: takes what is ready now, without waiting, and wakes the tasks waiting on it. Returns how many
    /// socket events it took (the waker's ring is not one): while a client is active (its next request, or the
    /// acknowledgement that frees room after an answer), a pass finds some.
    pub(crate) fn pass(&self) -> usize {
        let mut events = self.events.borrow_mut();
        let polled = self.poll.borrow_mut().poll(&mut events, Some(std::time::Duration::ZERO));
        if polled.is_err() {
            // EINTR: the next pass takes them.
            return 0;
        }
        let mut taken = 0;
        for event in events.iter() {
            if event.token() == WAKER {
                continue;
            }
            taken += 1;
            let state = self.registrations.sockets.locked().get(event.token().0).and_then(Weak::upgrade);
            let Some(state) = state else { continue };
            let mut bits = 0;
            if event.is_readable() || event.is_read_closed() || event.is_error() {
                bits |= READ;
            }
            if event.is_read_closed() || event.is_error() {
                bits |= READ_CLOSED;
            }
            if event.is_writable() || event.is_write_closed() || event.is_error() {
                bits |= WRITE;
            }
            if event.is_write_closed() || event.is_error() {
                bits |= WRITE_CLOSED;
            }
            state.set(bits);
        }
        taken
    }
}

/// A socket registered with an engine: its readiness is followed from the engine's passes.
pub(crate) struct Registered<S: Source> {
    io: S,
    state: Arc<IoState>,
    token: usize,
    registrations: Arc<Registrations>,
}

impl<S: Source> Registered<S> {
    /// Registers `io` for both directions, and takes it as ready for both until an operation says otherwise.
    pub(crate) fn new(mut io: S, registrations: &Arc<Registrations>) -> io::Result<Self> {
        let state = Arc::new(IoState { ready: AtomicU8::new(READ | WRITE), ..IoState::default() });
        let token = registrations.sockets.locked().insert(Arc::downgrade(&state));
        if let Err(err) =
            registrations.registry.register(&mut io, Token(token), Interest::READABLE | Interest::WRITABLE)
        {
            registrations.sockets.locked().remove(token);
            return Err(err);
        }
        Ok(Self { io, state, token, registrations: registrations.clone() })
    }

    pub(crate) fn io(&self) -> &S {
        &self.io
    }

    /// The engine this socket is registered with, for the sockets it accepts.
    pub(crate) fn registrations(&self) -> &Arc<Registrations> {
        &self.registrations
    }

    /// Ready when the socket may be ready for `direction` ([`READ`] or [`WRITE`]); otherwise the task is woken
    /// when it becomes so.
    pub(crate) fn poll_ready(&self, cx: &mut Context<'_>, direction: u8) -> Poll<()> {
        let direction = direction | if direction == READ { READ_CLOSED } else { WRITE_CLOSED };
        if self.state.ready.load(Ordering::Acquire) & direction != 0 {
            return Poll::Ready(());
        }
        let slot = if direction & READ != 0 { &self.state.reader } else { &self.state.writer };
        let mut waiting = slot.locked();
        if !waiting.as_ref().is_some_and(|w| w.will_wake(cx.waker())) {
            *waiting = Some(cx.waker().clone());
        }
        drop(waiting);
        // Set between the load and the store (by another thread: never on one engine, but cheap to be sure).
        if self.state.ready.load(Ordering::Acquire) & direction != 0 {
            return Poll::Ready(());
        }
        Poll::Pending
    }

    /// The socket said `WouldBlock` for `direction`: wait for its next edge.
    pub(crate) fn clear(&self, direction: u8) {
        self.state.ready.fetch_and(!direction, Ordering::AcqRel);
    }

    /// Runs `op` when the socket may be ready for `direction`, until it does not say `WouldBlock`.
    pub(crate) fn poll_io<T>(
        &self,
        cx: &mut Context<'_>,
        direction: u8,
        mut op: impl FnMut(&S) -> io::Result<T>,
    ) -> Poll<io::Result<T>> {
        std::task::ready!(super::budget::consume(cx));
        loop {
            std::task::ready!(self.poll_ready(cx, direction));
            match op(&self.io) {
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.clear(direction),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => return Poll::Ready(other),
            }
        }
    }
}

impl<S: Source> Drop for Registered<S> {
    fn drop(&mut self) {
        let _ = self.registrations.registry.deregister(&mut self.io);
        let mut sockets = self.registrations.sockets.locked();
        if sockets.try_remove(self.token).is_some() {
            give_back(&mut sockets);
        }
    }
}
