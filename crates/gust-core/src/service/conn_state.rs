//! One connection as its requests see it: the client at the other end ([`Peer`]), and what the connection is
//! doing and since when, the state its timers police. Written by the socket wrapper
//! (`transport::activity`) and the service, read by the connection task; shared by all three without a lock.
//! It lives here, below the transport, because the service marks its requests in it and the transport only
//! reads and feeds it.

use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::Arc;

use crate::bodies::files::sendfile::{FileSink, Regions};
use crate::values::clock;

pub(crate) const IDLE: u8 = 0;
pub(crate) const READING_HEAD: u8 = 1;
const BUSY: u8 = 2;

/// The client at the other end of a connection, formatted once per connection, and, over TLS, what its handshake
/// settled (the request record's TLS section, `wire::tls`, copied into each of its requests).
#[derive(Debug, Clone)]
pub(crate) struct Peer {
    pub(crate) ip: Arc<str>,
    pub(crate) port: u16,
    pub(crate) tls: Option<Arc<[u8]>>,
}

impl Peer {
    pub(crate) fn new(addr: SocketAddr, tls: Option<Arc<[u8]>>) -> Self {
        // An IPv4 client of a dual-stack socket shows as `::ffff:a.b.c.d`; users expect `a.b.c.d`.
        Self { ip: addr.ip().to_canonical().to_string().into(), port: addr.port(), tls }
    }
}

/// What a connection is doing and since when; written by the I/O wrapper and the service, read by the timers.
/// Cost per request: four relaxed stores and three coarse clock reads (head starts, request done, response
/// written); on HTTP/2, two relaxed adds per body chunk besides (what it owes, `protocol::owed`).
pub(crate) struct ConnState {
    activity: AtomicU8,
    /// [`clock::now_ms`] at the last change.
    since_ms: AtomicU64,
    /// The client stopped sending (it closed the connection, or shut down its sending side).
    peer_done: AtomicBool,
    /// Requests being served: one at a time on HTTP/1.1, as many as the client's streams on HTTP/2. The
    /// connection is idle again when the last one is done.
    in_flight: AtomicU32,
    /// WebSockets open on the connection's streams (HTTP/2, RFC 8441): a forced stop drives the connection until
    /// they have sent their 1001 (`protocol::police`), since their bytes leave through it.
    sockets: AtomicU32,
    /// [`clock::now_ms`] when a write first found the socket full and nothing has been written since; 0 when
    /// the last write went through.
    blocked_ms: AtomicU64,
    /// HTTP/2 response bytes handed to hyper since the connection opened, and of those the bytes h2 has taken for
    /// DATA frames or dropped unsent (`protocol::owed`): the difference is what the connection owes its client.
    /// Two counters that only grow, not one balance, so that the timers can tell whether any left between two
    /// looks. Both stay 0 on HTTP/1.1.
    handed: AtomicU64,
    settled: AtomicU64,
    /// The connection's task has asked hyper to let go of the connection, idle for a while, so that it waits
    /// for its next request without hyper's state (`transport::connection`): reads report end of stream and
    /// a shutdown leaves the socket open, until the task takes the socket back.
    parking: AtomicBool,
    /// Whether the socket sends files itself (plain TCP, HTTP/1.1, Linux), and the parts of files it has
    /// yet to send ([`crate::bodies::files::sendfile`]).
    sends_files: bool,
    regions: Regions,
    /// A WebSocket handshake the handler accepted: once hyper has written the 101 and let go of the
    /// connection, the connection's task runs the socket.
    pub(crate) upgrade: std::sync::Mutex<Option<crate::service::ws::task::Accepted>>,
}

impl ConnState {
    /// A connection's state; `sends_files`: its socket sends file bodies with `sendfile`.
    pub(crate) fn new(sends_files: bool) -> Self {
        Self {
            parking: AtomicBool::new(false),
            sends_files,
            regions: Regions::default(),
            activity: AtomicU8::new(IDLE),
            since_ms: AtomicU64::new(clock::now_ms()),
            peer_done: AtomicBool::new(false),
            in_flight: AtomicU32::new(0),
            sockets: AtomicU32::new(0),
            blocked_ms: AtomicU64::new(0),
            handed: AtomicU64::new(0),
            settled: AtomicU64::new(0),
            upgrade: std::sync::Mutex::new(None),
        }
    }

    /// Asks hyper to let go of this idle connection (see the field `parking`).
    pub(crate) fn park(&self) {
        self.parking.store(true, Ordering::Relaxed);
    }

    /// Whether hyper is being asked to let go; cost: one relaxed load per read.
    #[inline]
    pub(crate) fn parking(&self) -> bool {
        self.parking.load(Ordering::Relaxed)
    }

    /// The connection's task has the socket back and serves it again.
    pub(crate) fn unpark(&self) {
        self.parking.store(false, Ordering::Relaxed);
    }

    /// Whether the socket sends file bodies itself.
    pub(crate) fn sends_files(&self) -> bool {
        self.sends_files
    }

    /// Whether the client has stopped sending: read as gone by a request still waiting for its handler (whose
    /// answer is still sent, should a half-closing client be waiting for it).
    pub(crate) fn peer_done(&self) -> bool {
        self.peer_done.load(Ordering::Relaxed)
    }

    pub(crate) fn get(&self) -> (u8, u64) {
        (self.activity.load(Ordering::Relaxed), self.since_ms.load(Ordering::Relaxed))
    }

    /// Bytes of a request arrived: on an idle connection, a new head starts (and with it the header timeout).
    /// Cost: one relaxed load, and a clock read only when the head starts.
    #[inline]
    pub(crate) fn bytes_arrived(&self) {
        if self.activity.load(Ordering::Relaxed) == IDLE {
            self.set(READING_HEAD);
        }
    }

    /// The client closed its sending side.
    pub(crate) fn peer_finished(&self) {
        self.peer_done.store(true, Ordering::Relaxed);
    }

    fn set(&self, activity: u8) {
        self.touch();
        self.activity.store(activity, Ordering::Relaxed);
    }

    /// Restarts the current timer: the connection made progress.
    #[inline]
    pub(crate) fn touch(&self) {
        self.since_ms.store(clock::now_ms(), Ordering::Relaxed);
    }

    /// Response bytes left: the socket is not blocked. Cost: a relaxed load, and a store only after a block.
    #[inline]
    pub(crate) fn wrote(&self) {
        self.touch();
        if self.blocked_ms.load(Ordering::Relaxed) != 0 {
            self.blocked_ms.store(0, Ordering::Relaxed);
        }
    }

    /// A write found the socket full (the client is not reading): the send timeout runs from the first such
    /// write. Cost: a relaxed load, and a clock read on the first.
    #[inline]
    pub(crate) fn write_blocked(&self) {
        if self.blocked_ms.load(Ordering::Relaxed) == 0 {
            self.blocked_ms.store(clock::now_ms().max(1), Ordering::Relaxed);
        }
    }

    /// Since when the socket has been full with nothing written, if it is.
    pub(crate) fn blocked_since(&self) -> Option<u64> {
        Some(self.blocked_ms.load(Ordering::Relaxed)).filter(|&ms| ms != 0)
    }

    /// Response bytes handed to hyper (HTTP/2). Cost: one relaxed add per chunk.
    #[inline]
    pub(crate) fn bytes_handed(&self, bytes: usize) {
        self.handed.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// Handed bytes that h2 took for a DATA frame, or dropped unsent. Cost: one relaxed add per DATA frame.
    #[inline]
    pub(crate) fn bytes_settled(&self, bytes: usize) {
        self.settled.fetch_add(bytes as u64, Ordering::Relaxed);
    }

    /// `(owed, settled)`: the bytes handed and not yet settled, and all the bytes settled so far (a count that
    /// does not move while what is owed waits on the client). Settled is read first: it never passes handed.
    pub(crate) fn owed(&self) -> (u64, u64) {
        let settled = self.settled.load(Ordering::Relaxed);
        (self.handed.load(Ordering::Relaxed).saturating_sub(settled), settled)
    }

    /// Marks a request as being served until the returned guard is dropped. No clock read: nothing times a busy
    /// connection (the handler and body timeouts do that). Cost: a relaxed add and store (the connection's
    /// requests all run on its I/O thread).
    pub(crate) fn busy(self: &Arc<Self>) -> BusyGuard {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.activity.store(BUSY, Ordering::Relaxed);
        BusyGuard(self.clone())
    }
}

impl FileSink for ConnState {
    fn regions(&self) -> &Regions {
        &self.regions
    }
}

/// Returns the connection to idle when its last request in flight has been answered (or abandoned).
pub(crate) struct BusyGuard(Arc<ConnState>);

/// Held by a WebSocket on one of the connection's HTTP/2 streams for its life: it keeps the connection busy (its
/// idle timeout spares it) and counted among its sockets.
pub(crate) struct SocketGuard(BusyGuard);

impl ConnState {
    /// A WebSocket opens on one of this connection's streams (see [`SocketGuard`]).
    pub(crate) fn socket(self: &Arc<Self>) -> SocketGuard {
        self.sockets.fetch_add(1, Ordering::Relaxed);
        SocketGuard(self.busy())
    }

    /// How many WebSockets are open on this connection's streams.
    pub(crate) fn sockets(&self) -> u32 {
        self.sockets.load(Ordering::Relaxed)
    }
}

impl Drop for SocketGuard {
    fn drop(&mut self) {
        self.0 .0.sockets.fetch_sub(1, Ordering::Relaxed);
    }
}

impl BusyGuard {
    /// The connection it keeps busy.
    pub(crate) fn conn(&self) -> &Arc<ConnState> {
        &self.0
    }
}

impl Drop for BusyGuard {
    fn drop(&mut self) {
        if self.0.in_flight.fetch_sub(1, Ordering::Relaxed) == 1 {
            self.0.set(IDLE);
        }
    }
}
