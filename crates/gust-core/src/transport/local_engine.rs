//! The one-thread engine: a server whose sockets live on the thread that started it (a JavaScript thread),
//! polled from that thread's own loop. The host (the binding) watches [`LocalEngine::fd`] and the next timer
//! and calls [`LocalEngine::turn`] when either is due; each turn reads what is ready, runs the tasks it woke
//! (hyper parses, routes answer, dynamic requests queue in the batcher), and hands the batch to the handler in
//! the same turn. Answers handed back through the [`Responder`](crate::Responder) inside
//! [`LocalEngine::deliver`] are written before that call returns.
//!
//! Everything above the transport is the threaded engine's, unchanged: the assembly ([`Assembly`]), the accept
//! loop ([`listener::serve`]), connections, protocols and the crossing. Only who polls and which sockets differ.

use std::cell::RefCell;
use std::rc::Rc;
use std::sync::Arc;
use std::time::Instant;

use tokio::sync::mpsc;

use super::assembly::{bound_addrs, shard_ended, Assembly, Built, Engine, Membership};
use super::in_memory::Task;
use super::lifecycle::Unbound;
use super::listener;
use super::local_socket::LocalListener;
use crate::crossing::handler::Handler;
use crate::protocol::phase::{escalate, Phase};
use crate::responses::route_table::RouteTable;
use crate::rt::local::{Core, Turn};
use crate::service::config::Config;
use crate::service::shared::Shared;
use crate::values::error::Error;

/// The driving side of a one-thread server: not `Send`, it stays on the thread that started it.
pub struct LocalEngine {
    core: Rc<Core>,
    /// Set by the serving task when it returns: the failure, if any.
    outcome: Rc<RefCell<Option<Option<Error>>>>,
    /// What ending needs, taken once it has ended.
    ending: RefCell<Option<Ending>>,
}

struct Ending {
    shared: Arc<Shared>,
    once: Arc<Unbound>,
    assembly: Assembly,
    /// The group of workers this server serves in, told when it ends.
    membership: Option<Membership>,
}

impl std::fmt::Debug for LocalEngine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalEngine").field("finished", &self.is_finished()).finish_non_exhaustive()
    }
}

/// The one-thread engine needs sockets of its own: a server for in-memory connections only is the threaded
/// engine's. Checked by a lone server and by a group of workers alike.
pub(super) fn check_addresses(config: &Config) -> Result<(), Error> {
    if config.addrs.is_empty() {
        return Err(Error::config("the one-thread engine needs an address to listen on"));
    }
    Ok(())
}

/// `Server::start_local`: a lone one-thread server. Everything is checked (the options, the certificate and key:
/// a bad one names which, rather than a port that happens to be taken) before anything is bound, as the threaded
/// engine does.
pub(super) fn start(
    config: Config,
    routes: RouteTable,
    handler: Arc<dyn Handler>,
) -> Result<(Built, LocalEngine), Error> {
    check_addresses(&config)?;
    let assembly = Assembly::new(&config, routes, handler, 1, None)?;
    let bound = listener::bind_all(&config.addrs, 1)?.into_iter().next().unwrap_or_default();
    serve(assembly, bound, None)
}

/// The one-thread server of `assembly` on `bound` (listening sockets, non-blocking): alone, or as a member of a
/// group of workers ([`LocalGroup::join`](super::local_group::LocalGroup::join)).
pub(super) fn serve(
    assembly: Assembly,
    bound: Vec<std::net::TcpListener>,
    mut membership: Option<Membership>,
) -> Result<(Built, LocalEngine), Error> {
    let core = Core::new().map_err(|e| Error::io("cannot start the one-thread engine's poller", e))?;
    let addrs = bound_addrs(&bound)?;
    let listeners = bound
        .into_iter()
        .map(|l| LocalListener::new(l, core.registrations()).map_err(|e| Error::io("cannot register the listener", e)))
        .collect::<Result<Vec<_>, _>>()?;
    // In-memory connections (`app.request()` while listening): their server ends join the accept loop, their
    // client ends' tasks come in through `tasks` and are started here.
    let (in_memory, in_memory_rx) = mpsc::unbounded_channel();
    let (tasks, mut task_rx) = mpsc::unbounded_channel::<Task>();
    core.spawn(Box::pin(async move {
        while let Some(task) = task_rx.recv().await {
            crate::rt::spawn(task);
        }
    }));
    let group = membership.as_ref().map(|m| m.group.clone());
    let registrations = core.registrations().clone();
    let lent = membership
        .as_mut()
        .and_then(|m| m.lent.take())
        .map(|rx| listener::Lent { rx, listener: Box::new(move |l| LocalListener::new(l, &registrations)) });
    let built = assembly.built(addrs, in_memory, Engine::Local { tasks, group });
    let shared = assembly.shards[0].clone();
    let once = Arc::new(Unbound::new(&assembly.unbound));
    let outcome = Rc::new(RefCell::new(None));
    let serving = listener::serve(
        listeners,
        assembly.tls.clone(),
        Some(in_memory_rx),
        lent,
        shared.clone(),
        assembly.phase.subscribe(),
        once.clone(),
    );
    let told = outcome.clone();
    core.spawn(Box::pin(async move {
        let failure = serving.await;
        *told.borrow_mut() = Some(failure);
    }));
    let ending = Ending { shared, once, assembly, membership };
    let engine = LocalEngine { core, outcome, ending: RefCell::new(Some(ending)) };
    Ok((built, engine))
}

impl LocalEngine {
    /// The descriptor to watch for readability: it becomes readable when a socket has news or a task was woken
    /// from elsewhere (then call [`LocalEngine::turn`]).
    #[cfg(unix)]
    pub fn fd(&self) -> std::os::fd::RawFd {
        self.core.fd()
    }

    /// One turn: a poll pass of the sockets (without waiting), the timers that are due, and every task that
    /// is ready, bounded. Cheap when nothing is ready.
    pub fn turn(&self) -> Turn {
        if self.is_finished() {
            return Turn::FINISHED;
        }
        self.after(self.core.turn())
    }

    /// Runs `deliver` (answers handed to the responder, sends to WebSockets), then polls the tasks it woke, so
    /// that what it handed over is written before this returns. Nothing of the sockets is polled.
    pub fn deliver<T>(&self, deliver: impl FnOnce() -> T) -> (T, Turn) {
        if self.is_finished() {
            return (deliver(), Turn::FINISHED);
        }
        let (out, turn) = self.core.defer(deliver);
        (out, self.after(turn))
    }

    /// `turn` as the executor left it, or the end once the serving task has returned.
    fn after(&self, turn: Turn) -> Turn {
        let ended = self.outcome.borrow_mut().take();
        if let Some(failure) = ended {
            self.end(failure);
            return Turn::FINISHED;
        }
        turn
    }

    /// The serving task has returned: what is left of the connections is dropped (their sockets close), then
    /// the shard ends as an I/O thread does.
    fn end(&self, failure: Option<Error>) {
        self.core.shutdown();
        let Some(Ending { shared, once, assembly, membership }) = self.ending.borrow_mut().take() else { return };
        let told = membership.as_ref().map(|_| failure.as_ref().map(|f| Error::engine(f.to_string())));
        shard_ended(failure, &shared, &once, &assembly.done, &assembly.phase);
        if let (Some(membership), Some(failure)) = (membership, told) {
            membership.group.member_ended(membership.slot, membership.id, failure.as_ref());
        }
    }

    /// Makes the descriptor readable, so that the host runs a turn soon (from its loop, not from the caller's
    /// stack): for work found while the host could not run it then.
    pub fn wake_soon(&self) {
        self.core.ring();
    }

    /// When the earliest timer is due, if one is armed.
    pub fn next_timer(&self) -> Option<Instant> {
        self.core.next_timer()
    }

    /// Whether the server has stopped and let go of everything.
    pub fn is_finished(&self) -> bool {
        self.ending.borrow().is_none()
    }

    /// Stops at once, without returning to the loop (the thread is going away): every connection is dropped,
    /// and the handler hears `stopped`.
    pub fn close_now(&self) {
        if self.is_finished() {
            return;
        }
        if let Some(ending) = self.ending.borrow().as_ref() {
            escalate(&ending.assembly.phase, Phase::Closing);
        }
        // One turn lets the serving task see the phase; whatever it does not finish is dropped.
        let _ = self.core.turn();
        let failure = self.outcome.borrow_mut().take().flatten();
        self.end(failure);
    }
}

impl Drop for LocalEngine {
    fn drop(&mut self) {
        self.close_now();
    }
}
