//! A running server: one dedicated I/O thread with a current-thread tokio runtime.
//!
//! Why one thread: dynamic requests are answered by the single JavaScript thread anyway, and measurements on
//! this class of machine showed a current-thread runtime on its own thread batching better than a one-worker
//! multi-thread runtime. Several I/O threads will become a `Config` field without changing this API.

mod batcher;
mod connection;
mod service;

use std::net::SocketAddr;
use std::sync::{Arc, Condvar, Mutex};

use arc_swap::ArcSwap;
use tokio::sync::watch;

use crate::completions::{Completions, Responder};
use crate::{Config, Error, Handler, RouteTable};

use batcher::Batcher;

/// What the I/O thread is told to do with its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Serving,
    /// Stop accepting; finish in-flight requests; close idle connections.
    Draining,
    /// Close everything now.
    Closing,
}

/// State shared by every connection of a server.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) routes: ArcSwap<RouteTable>,
    pub(crate) completions: Arc<Completions>,
    pub(crate) batcher: Batcher,
}

/// A listening server. Dropping it closes every connection at once, as a forced [`Server::stop`] would.
pub struct Server {
    addr: SocketAddr,
    shared: Arc<Shared>,
    phase: watch::Sender<Phase>,
    done: Arc<(Mutex<bool>, Condvar)>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addr", &self.addr).finish_non_exhaustive()
    }
}

impl Server {
    /// Binds the address and starts serving on a new thread. Binding happens before this returns, so a taken
    /// port is reported here rather than lost on the I/O thread.
    pub fn start(config: Config, routes: RouteTable, handler: Arc<dyn Handler>) -> Result<Self, Error> {
        config.validate()?;
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .map_err(|e| Error::io("cannot start the I/O runtime", e))?;
        let listener = {
            let _in_runtime = runtime.enter();
            bind(config.addr).map_err(|e| Error::io(format!("cannot listen on {}", config.addr), e))?
        };
        let addr = listener.local_addr().map_err(|e| Error::io("cannot read the bound address", e))?;

        let completions = Arc::new(Completions::default());
        let shared = Arc::new(Shared {
            config,
            routes: ArcSwap::from_pointee(routes),
            batcher: Batcher::new(handler, completions.clone()),
            completions,
        });
        let (phase, phase_rx) = watch::channel(Phase::Serving);
        let done = Arc::new((Mutex::new(false), Condvar::new()));

        let thread_shared = shared.clone();
        let thread_done = done.clone();
        std::thread::Builder::new()
            .name(format!("gust-io-{}", addr.port()))
            .spawn(move || {
                let _finished = Finished(thread_done);
                runtime.block_on(connection::serve(listener, thread_shared, phase_rx));
            })
            .map_err(|e| Error::io("cannot spawn the I/O thread", e))?;
        Ok(Self { addr, shared, phase, done })
    }

    /// The bound address (with the real port when 0 was asked for).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Swaps in a new route table in one atomic store. In-flight requests finish with the table they started with.
    pub fn replace_routes(&self, routes: RouteTable) {
        self.shared.routes.store(Arc::new(routes));
    }

    /// The handle through which handlers' answers are delivered.
    pub fn responder(&self) -> Responder {
        Responder::new(self.shared.completions.clone())
    }

    /// Stops accepting connections. Graceful: in-flight requests finish and idle connections close. Forced:
    /// every connection closes now. A forced stop may follow a graceful one to cut it short.
    pub fn stop(&self, force: bool) {
        let next = if force { Phase::Closing } else { Phase::Draining };
        self.phase.send_if_modified(|phase| {
            let escalate = next > *phase;
            if escalate {
                *phase = next;
            }
            escalate
        });
    }

    /// Blocks until the I/O thread has exited (after [`Server::stop`]). Never call it on the I/O thread.
    pub fn wait(&self) {
        let (lock, cvar) = &*self.done;
        let mut finished = lock.lock().unwrap_or_else(|e| e.into_inner());
        while !*finished {
            finished = cvar.wait(finished).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether the I/O thread has exited.
    pub fn is_finished(&self) -> bool {
        *self.done.0.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// Binds with a backlog deep enough for bursts of thousands of connections (std's default is 128, and a full
/// queue makes the kernel drop or reset new connections).
fn bind(addr: SocketAddr) -> std::io::Result<tokio::net::TcpListener> {
    let socket = if addr.is_ipv4() { tokio::net::TcpSocket::new_v4()? } else { tokio::net::TcpSocket::new_v6()? };
    // On Unix this only allows rebinding over TIME_WAIT; on Windows it would let two servers share a port.
    #[cfg(unix)]
    socket.set_reuseaddr(true)?;
    socket.bind(addr)?;
    socket.listen(LISTEN_BACKLOG)
}

const LISTEN_BACKLOG: u32 = 1024;

/// Marks the server finished when the I/O thread exits, even by a panic, so `wait` can never hang.
struct Finished(Arc<(Mutex<bool>, Condvar)>);

impl Drop for Finished {
    fn drop(&mut self) {
        let (lock, cvar) = &*self.0;
        *lock.lock().unwrap_or_else(|e| e.into_inner()) = true;
        cvar.notify_all();
    }
}
