//! Binding the listening sockets, the accept loop, and the engine's own tasks, watched so that their death is
//! never silent.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite, DuplexStream};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio_rustls::server::TlsStream;
use tokio_rustls::TlsAcceptor;

use super::connection::{connection, Alive, Speaks};
use super::file_out::FileOut;
use super::lifecycle::Unbound;
use super::tls::{self, Certificates, Tls};
use crate::protocol::phase::Phase;
use crate::rt;
use crate::service::shared::Shared;
use crate::values::debug::{self, Topic};
use crate::values::error::Error;

/// Binds every address on one port, `count` times (once per I/O thread or engine): the first address picks the
/// port when 0 is asked for, the others take the same. An address the machine does not have (`::1` where IPv6
/// is off, say) is skipped as long as one is bound. Returns each one's listeners, non-blocking, for its runtime
/// to register.
///
/// With several I/O threads, on Linux each gets sockets of its own with `SO_REUSEPORT`, and the kernel spreads
/// connections between them; the port is first bound once without it, so that a port another process holds is
/// still an error rather than shared. Elsewhere they share one socket (a duplicate descriptor each) and accept
/// from its one queue.
pub(super) fn bind_all(addrs: &[SocketAddr], count: usize) -> Result<Vec<Vec<std::net::TcpListener>>, Error> {
    let reuse_port = count > 1 && cfg!(target_os = "linux");
    let mut out: Vec<Vec<std::net::TcpListener>> = (0..count).map(|_| Vec::with_capacity(addrs.len())).collect();
    let mut port = None;
    for (i, &addr) in addrs.iter().enumerate() {
        let mut addr = addr;
        if let Some(port) = port {
            if addr.port() == 0 {
                addr.set_port(port);
            }
        }
        let first = if reuse_port {
            // The check that nobody holds the port (and the choice of one for port 0), then given up.
            bind(addr, false).map(|probe| {
                let bound = probe.local_addr();
                drop(probe);
                bound.and_then(|bound| bind(bound, true))
            })
        } else {
            bind(addr, false).map(Ok)
        };
        let first = match first.and_then(|r| r) {
            Ok(listener) => listener,
            Err(e) if i > 0 && matches!(e.kind(), io::ErrorKind::AddrNotAvailable | io::ErrorKind::Unsupported) => {
                continue
            }
            Err(e) if i > 0 && e.raw_os_error() == Some(97) => continue, // EAFNOSUPPORT: no such address family here
            Err(e) => return Err(Error::listen(addr, e)),
        };
        let bound = first.local_addr().map_err(|e| Error::io("cannot read the bound address", e))?;
        port.get_or_insert(bound.port());
        let copies = (1..count).map(|_| {
            if reuse_port { bind(bound, true) } else { first.try_clone() }.map_err(|e| Error::listen(bound, e))
        });
        let copies = copies.collect::<Result<Vec<_>, _>>()?;
        out[0].push(first);
        for (k, copy) in copies.into_iter().enumerate() {
            out[k + 1].push(copy);
        }
    }
    Ok(out)
}

/// Binds with a backlog deep enough for bursts of thousands of connections (std's default is 128, and a full
/// queue makes the kernel drop or reset new connections); non-blocking, as both engines need.
fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<std::net::TcpListener> {
    let socket = socket2::Socket::new(socket2::Domain::for_address(addr), socket2::Type::STREAM, None)?;
    // On Unix this only allows rebinding over TIME_WAIT; on Windows it would let two servers share a port.
    #[cfg(unix)]
    socket.set_reuse_address(true)?;
    #[cfg(all(unix, not(target_os = "solaris"), not(target_os = "illumos")))]
    if reuse_port {
        socket.set_reuse_port(true)?;
    }
    #[cfg(not(all(unix, not(target_os = "solaris"), not(target_os = "illumos"))))]
    let _ = reuse_port;
    socket.set_nonblocking(true)?;
    socket.bind(&addr.into())?;
    socket.listen(LISTEN_BACKLOG)?;
    Ok(socket.into())
}

/// A listening socket, as the accept loop sees it, on whichever engine: its accepted connections' type and how
/// to take the next one (with `TCP_NODELAY` set: answers go out when written).
pub(super) trait Accept: Send + 'static {
    type Stream: AsyncRead + AsyncWrite + Speaks + FileOut + Unpin + Send + Sync + 'static;

    fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(Self::Stream, SocketAddr)>>;
}

impl Accept for TcpListener {
    type Stream = TcpStream;

    fn poll_accept(&self, cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
        TcpListener::poll_accept(self, cx).map_ok(|(stream, peer)| {
            let _ = stream.set_nodelay(true);
            (stream, peer)
        })
    }
}

const LISTEN_BACKLOG: i32 = 1024;

/// Another slot's listening sockets lent to a server of a group of one-thread servers, while that slot has no
/// server of its own (its worker died and the replacement has not joined yet), so that the connections the
/// kernel keeps queueing there are served meanwhile rather than left waiting.
pub(super) enum Lend {
    /// Accept from slot `.0`'s sockets (duplicates) too.
    Adopt(usize, Vec<std::net::TcpListener>),
    /// Slot `.0` has its own server again: stop accepting from its sockets.
    Release(usize),
}

/// Where a group member hears of lent sockets, and how its engine makes listeners of them.
pub(super) struct Lent<L> {
    pub(super) rx: mpsc::UnboundedReceiver<Lend>,
    pub(super) listener: Box<dyn Fn(std::net::TcpListener) -> io::Result<L> + Send>,
}

/// How long a forced stop lets connections finish on their own before they are dropped.
const FORCED_GRACE: Duration = Duration::from_secs(1);

/// Serves until stopped or until the engine fails; returns the failure, if any. The same on both engines: what
/// differs is the listeners' type and who polls.
///
/// The batcher and the answer delivery run as tasks of their own, watched here: if either ends (a panic), no
/// dynamic request could ever be answered again, so the server logs it, stops at once, and reports it rather
/// than keep a port open that only times out. Connections are tasks of their own too, counted by `alive`; when
/// this returns, whatever is left of them is dropped with the engine.
pub(super) async fn serve<L: Accept>(
    listeners: Vec<L>,
    tls: Option<Certificates>,
    mut in_memory: Option<mpsc::UnboundedReceiver<DuplexStream>>,
    lent: Option<Lent<L>>,
    shared: Arc<Shared>,
    mut phase: watch::Receiver<Phase>,
    handler: Arc<Unbound>,
) -> Option<Error>
where
    TlsStream<L::Stream>: Speaks + FileOut,
{
    let batcher = shared.lanes.batcher(0, usize::from(shared.shard));
    let mut batching = std::pin::pin!(rt::spawn_watched(async move {
        batcher.run().await;
        "batcher"
    }));
    let completions = shared.completions.clone();
    let handler_timeout = shared.config.handler_timeout;
    let mut delivering = std::pin::pin!(rt::spawn_watched(async move {
        completions.deliver(handler_timeout).await;
        "answer delivery"
    }));

    // Every connection task holds a clone, and hands it to its WebSocket's task if it becomes one: once all are
    // gone, `all_gone` yields nothing more.
    let (alive, mut all_gone) = mpsc::channel::<()>(1);
    let (mut lent_rx, make_listener) = match lent {
        Some(Lent { rx, listener }) => (Some(rx), Some(listener)),
        None => (None, None),
    };
    // Other slots' sockets this server accepts from meanwhile, by slot; taken in turn with its own, so that a
    // busy server does not leave a lent queue waiting.
    let mut adopted: Vec<(usize, Vec<L>)> = Vec::new();
    let mut adopted_first = false;
    let mut failure = None;
    loop {
        tokio::select! {
            accepted = std::future::poll_fn(|cx| {
                if adopted.is_empty() {
                    return poll_accept(&listeners, cx);
                }
                adopted_first = !adopted_first;
                if adopted_first {
                    match poll_adopted(&adopted, cx) {
                        Poll::Pending => poll_accept(&listeners, cx),
                        ready => ready,
                    }
                } else {
                    match poll_accept(&listeners, cx) {
                        Poll::Pending => poll_adopted(&adopted, cx),
                        ready => ready,
                    }
                }
            }) => match accepted {
                Ok((stream, peer)) => match &tls {
                    None => rt::spawn(connection(stream, peer, None, shared.clone(), phase.clone(), alive.clone())),
                    Some(tls) => rt::spawn(secure(tls::acceptor(tls), stream, peer, shared.clone(), phase.clone(), alive.clone())),
                },
                // Out of file descriptors and the like: back off instead of spinning, keep serving the others.
                Err(_) => rt::sleep(Duration::from_millis(10)).await,
            },
            Some(stream) = async { match &mut in_memory { Some(rx) => rx.recv().await, None => std::future::pending().await } } => {
                rt::spawn(connection(stream, IN_MEMORY_PEER, None, shared.clone(), phase.clone(), alive.clone()));
            }
            Some(lend) = async { match &mut lent_rx { Some(rx) => rx.recv().await, None => std::future::pending().await } } => match lend {
                Lend::Adopt(slot, sockets) => {
                    let Some(make) = &make_listener else { continue };
                    // A socket that cannot be registered leaves the slot to its replacement, as before lending.
                    if let Ok(listeners) = sockets.into_iter().map(make).collect::<io::Result<Vec<L>>>() {
                        adopted.retain(|(s, _)| *s != slot);
                        adopted.push((slot, listeners));
                    }
                }
                Lend::Release(slot) => adopted.retain(|(s, _)| *s != slot),
            },
            changed = phase.changed() => {
                if changed.is_err() || *phase.borrow() != Phase::Serving {
                    break;
                }
            }
            ended = &mut batching => {
                failure = Some(engine_failure(ended));
                break;
            }
            ended = &mut delivering => {
                failure = Some(engine_failure(ended));
                break;
            }
        }
    }
    drop(listeners);
    // Lent sockets too, those still on their way included: a socket of the port left open would keep taking
    // connections that nobody accepts.
    drop(adopted);
    drop(lent_rx);
    drop(make_listener);
    handler.unbound();
    // WebSockets are told here, all at once, rather than each watching the phase.
    shared.websockets.shutdown(*phase.borrow() == Phase::Closing || failure.is_some(), shared.shard);

    drop(alive);
    loop {
        if failure.is_some() || *phase.borrow() == Phase::Closing {
            // Connections end at once when told to close; WebSockets first try to write their 1001 close. What
            // is left after the grace is dropped with the engine.
            shared.websockets.shutdown(true, shared.shard);
            let _ = rt::timeout(FORCED_GRACE, async { while all_gone.recv().await.is_some() {} }).await;
            return failure;
        }
        tokio::select! {
            // Every connection, and every WebSocket one became, has ended.
            gone = all_gone.recv() => { gone?; }
            changed = phase.changed() => if changed.is_err() {
                return None;
            },
            ended = &mut batching => failure = Some(engine_failure(ended)),
            ended = &mut delivering => failure = Some(engine_failure(ended)),
        }
    }
}

/// A TLS connection: its handshake, within the header timeout (a client that stalls in it is dropped like one
/// that stalls in its head), then HTTP over the decrypted stream. A failed handshake ends the connection and
/// nothing else; with `GUST_DEBUG=tls` it is told on stderr (a few a second at most).
async fn secure<S: AsyncRead + AsyncWrite + Unpin + Send + Sync + 'static>(
    (acceptor, tls): (TlsAcceptor, Arc<Tls>),
    stream: S,
    peer: SocketAddr,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    alive: Alive,
) where
    TlsStream<S>: Speaks + FileOut,
{
    let limit = shared.config.header_timeout;
    match rt::timeout(limit, acceptor.accept(stream)).await {
        Ok(Ok(stream)) => {
            let described = tls::describe(&tls, stream.get_ref().1);
            drop(tls);
            connection(stream, peer, Some(described), shared, phase, alive).await;
        }
        Ok(Err(err)) if debug::enabled(Topic::Tls) => {
            debug::log(Topic::Tls, format_args!("handshake from {peer} failed: {err}"));
        }
        Err(_) if debug::enabled(Topic::Tls) => {
            debug::log(
                Topic::Tls,
                format_args!("handshake from {peer} not done within {} ms: dropped", limit.as_millis()),
            );
        }
        _ => {}
    }
}

/// The peer an in-memory connection reports: this machine, with no port.
const IN_MEMORY_PEER: SocketAddr = SocketAddr::new(std::net::IpAddr::V4(std::net::Ipv4Addr::LOCALHOST), 0);

fn poll_accept<L: Accept>(listeners: &[L], cx: &mut Context<'_>) -> Poll<io::Result<(L::Stream, SocketAddr)>> {
    for listener in listeners {
        if let Poll::Ready(accepted) = listener.poll_accept(cx) {
            return Poll::Ready(accepted);
        }
    }
    Poll::Pending
}

/// `poll_accept` over the sockets lent by other slots (none, nearly always).
fn poll_adopted<L: Accept>(
    adopted: &[(usize, Vec<L>)],
    cx: &mut Context<'_>,
) -> Poll<io::Result<(L::Stream, SocketAddr)>> {
    for (_, listeners) in adopted {
        if let Poll::Ready(accepted) = poll_accept(listeners, cx) {
            return Poll::Ready(accepted);
        }
    }
    Poll::Pending
}

fn engine_failure(ended: Result<&'static str, String>) -> Error {
    let err = match ended {
        Ok(task) => Error::engine(format!("the engine's {task} task ended unexpectedly")),
        Err(panic) => Error::engine(format!("an engine task panicked: {panic}")),
    };
    eprintln!("gust: the server stopped because {err}");
    err
}
