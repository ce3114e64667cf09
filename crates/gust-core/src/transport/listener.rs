//! Binding the listening sockets, the accept loop, and the engine's own tasks, watched so that their death is
//! never silent.

use std::io;
use std::net::SocketAddr;
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::Duration;

use tokio::io::DuplexStream;
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};
use tokio::task::{JoinError, JoinSet};
use tokio_rustls::TlsAcceptor;

use super::connection::{connection, Alive};
use super::lifecycle::Unbound;
use super::tls::{self, Certificates, Tls};
use crate::protocol::phase::Phase;
use crate::service::shared::Shared;
use crate::values::debug::{self, Topic};
use crate::values::error::Error;

/// Binds every address on one port, for each I/O thread (runtime): the first address picks the port when 0 is
/// asked for, the others take the same. An address the machine does not have (`::1` where IPv6 is off, say) is
/// skipped as long as one is bound. Returns each runtime's listeners, registered with it.
///
/// With several I/O threads, on Linux each gets sockets of its own with `SO_REUSEPORT`, and the kernel spreads
/// connections between them; the port is first bound once without it, so that a port another process holds is
/// still an error rather than shared. Elsewhere they share one socket (a duplicate descriptor each) and accept
/// from its one queue.
pub(super) fn bind_all(
    addrs: &[SocketAddr],
    runtimes: &[tokio::runtime::Runtime],
) -> Result<Vec<Vec<TcpListener>>, Error> {
    let reuse_port = runtimes.len() > 1 && cfg!(target_os = "linux");
    let mut out: Vec<Vec<TcpListener>> = runtimes.iter().map(|_| Vec::with_capacity(addrs.len())).collect();
    let mut port = None;
    for (i, &addr) in addrs.iter().enumerate() {
        let mut addr = addr;
        if let Some(port) = port {
            if addr.port() == 0 {
                addr.set_port(port);
            }
        }
        let first = {
            let _in_runtime = runtimes[0].enter();
            if reuse_port {
                // The check that nobody holds the port (and the choice of one for port 0), then given up.
                bind(addr, false).map(|probe| {
                    let bound = probe.local_addr();
                    drop(probe);
                    bound.and_then(|bound| bind(bound, true))
                })
            } else {
                bind(addr, false).map(Ok)
            }
        };
        let first = match first.and_then(|r| r) {
            Ok(listener) => listener,
            Err(e) if i > 0 && matches!(e.kind(), io::ErrorKind::AddrNotAvailable | io::ErrorKind::Unsupported) => {
                continue
            }
            Err(e) if i > 0 && e.raw_os_error() == Some(97) => continue, // EAFNOSUPPORT: no such address family here
            Err(e) => return Err(Error::io(format!("cannot listen on {addr}"), e)),
        };
        let bound = first.local_addr().map_err(|e| Error::io("cannot read the bound address", e))?;
        port.get_or_insert(bound.port());
        if reuse_port || runtimes.len() == 1 {
            out[0].push(first);
            for (k, runtime) in runtimes.iter().enumerate().skip(1) {
                let _in_runtime = runtime.enter();
                let listener = bind(bound, true)
                    .map_err(|e| Error::io(format!("cannot listen on {bound} from I/O thread {k}"), e))?;
                out[k].push(listener);
            }
        } else {
            let shared = first.into_std().map_err(|e| Error::io("cannot share the listening socket", e))?;
            for (k, runtime) in runtimes.iter().enumerate() {
                let _in_runtime = runtime.enter();
                let listener = shared
                    .try_clone()
                    .and_then(TcpListener::from_std)
                    .map_err(|e| Error::io(format!("cannot listen on {bound} from I/O thread {k}"), e))?;
                out[k].push(listener);
            }
        }
    }
    Ok(out)
}

/// Binds with a backlog deep enough for bursts of thousands of connections (std's default is 128, and a full
/// queue makes the kernel drop or reset new connections). Must run inside the runtime that will serve it.
fn bind(addr: SocketAddr, reuse_port: bool) -> io::Result<TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // On Unix this only allows rebinding over TIME_WAIT; on Windows it would let two servers share a port.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    #[cfg(all(unix, not(target_os = "solaris"), not(target_os = "illumos")))]
    if reuse_port {
        socket.set_reuseport(true)?;
    }
    #[cfg(not(all(unix, not(target_os = "solaris"), not(target_os = "illumos"))))]
    let _ = reuse_port;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

const LISTEN_BACKLOG: u32 = 1024;

/// How long a forced stop lets connections finish on their own before they are dropped.
const FORCED_GRACE: Duration = Duration::from_secs(1);

/// Serves until stopped or until the engine fails; returns the failure, if any.
///
/// The batcher and the answer delivery run as tasks of their own, watched here: if either ends (a panic), no
/// dynamic request could ever be answered again, so the server logs it, stops at once, and reports it rather
/// than keep a port open that only times out.
pub(super) async fn serve(
    listeners: Vec<TcpListener>,
    tls: Option<Certificates>,
    mut in_memory: Option<mpsc::UnboundedReceiver<DuplexStream>>,
    shared: Arc<Shared>,
    mut phase: watch::Receiver<Phase>,
    handler: Arc<Unbound>,
) -> Option<Error> {
    let mut engine = JoinSet::new();
    let batcher = shared.lanes.batcher(0, usize::from(shared.shard));
    engine.spawn(async move {
        batcher.run().await;
        "batcher"
    });
    let completions = shared.completions.clone();
    let handler_timeout = shared.config.handler_timeout;
    engine.spawn(async move {
        completions.deliver(handler_timeout).await;
        "answer delivery"
    });

    let mut conns = JoinSet::new();
    // Every connection task holds a clone, and hands it to its WebSocket's task if it becomes one: once all are
    // gone, `all_gone` yields nothing more.
    let (alive, mut all_gone) = mpsc::channel::<()>(1);
    let mut failure = None;
    loop {
        tokio::select! {
            accepted = std::future::poll_fn(|cx| poll_accept(&listeners, cx)) => match accepted {
                Ok((stream, peer)) => {
                    let _ = stream.set_nodelay(true);
                    match &tls {
                        None => conns.spawn(connection(stream, peer, None, shared.clone(), phase.clone(), alive.clone())),
                        Some(tls) => conns.spawn(secure(tls::acceptor(tls), stream, peer, shared.clone(), phase.clone(), alive.clone())),
                    };
                }
                // Out of file descriptors and the like: back off instead of spinning, keep serving the others.
                Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
            },
            Some(stream) = async { match &mut in_memory { Some(rx) => rx.recv().await, None => std::future::pending().await } } => {
                conns.spawn(connection(stream, IN_MEMORY_PEER, None, shared.clone(), phase.clone(), alive.clone()));
            }
            changed = phase.changed() => {
                if changed.is_err() || *phase.borrow() != Phase::Serving {
                    break;
                }
            }
            Some(_) = conns.join_next(), if !conns.is_empty() => {}
            Some(ended) = engine.join_next() => {
                failure = Some(engine_failure(ended));
                break;
            }
        }
    }
    drop(listeners);
    handler.unbound();
    // WebSockets are told here, all at once, rather than each watching the phase.
    shared.websockets.shutdown(*phase.borrow() == Phase::Closing || failure.is_some(), shared.shard);

    drop(alive);
    loop {
        if failure.is_some() || *phase.borrow() == Phase::Closing {
            // Connections end at once when told to close; WebSockets first try to write their 1001 close. What
            // is left after the grace is dropped with the runtime.
            shared.websockets.shutdown(true, shared.shard);
            let _ = tokio::time::timeout(FORCED_GRACE, async {
                while conns.join_next().await.is_some() {}
                while all_gone.recv().await.is_some() {}
            })
            .await;
            conns.abort_all();
            while conns.join_next().await.is_some() {}
            return failure;
        }
        tokio::select! {
            // Connections first, then the WebSockets they became.
            next = conns.join_next(), if !conns.is_empty() => { next.as_ref()?; }
            gone = all_gone.recv(), if conns.is_empty() => { gone?; }
            changed = phase.changed() => if changed.is_err() {
                conns.abort_all();
                while conns.join_next().await.is_some() {}
                return None;
            },
            Some(ended) = engine.join_next() => failure = Some(engine_failure(ended)),
        }
    }
}

/// A TLS connection: its handshake, within the header timeout (a client that stalls in it is dropped like one
/// that stalls in its head), then HTTP over the decrypted stream. A failed handshake ends the connection and
/// nothing else; with `GUST_DEBUG=tls` it is told on stderr (a few a second at most).
async fn secure(
    (acceptor, tls): (TlsAcceptor, Arc<Tls>),
    stream: TcpStream,
    peer: SocketAddr,
    shared: Arc<Shared>,
    phase: watch::Receiver<Phase>,
    alive: Alive,
) {
    let limit = shared.config.header_timeout;
    match tokio::time::timeout(limit, acceptor.accept(stream)).await {
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

fn poll_accept(listeners: &[TcpListener], cx: &mut Context<'_>) -> Poll<io::Result<(TcpStream, SocketAddr)>> {
    for listener in listeners {
        if let Poll::Ready(accepted) = listener.poll_accept(cx) {
            return Poll::Ready(accepted);
        }
    }
    Poll::Pending
}

fn engine_failure(ended: Result<&'static str, JoinError>) -> Error {
    let err = match ended {
        Ok(task) => Error::engine(format!("the engine's {task} task ended unexpectedly")),
        Err(err) if err.is_panic() => {
            Error::engine(format!("an engine task panicked: {}", panic_message(err.into_panic())))
        }
        Err(err) => Error::engine(format!("an engine task was cancelled: {err}")),
    };
    eprintln!("gust: the server stopped because {err}");
    err
}

/// The text of a panic payload, when it has one.
pub(super) fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_owned())
}
