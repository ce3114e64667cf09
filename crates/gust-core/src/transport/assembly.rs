//! What both engines assemble before serving, and what they do when a shard ends: the [`Assembly`] (the
//! configuration checked, certificates, route table, per shard its completion table and state, the lanes, the
//! phase), the record of which shards are done ([`Done`]), and a server's place in a group of one-thread
//! servers ([`Membership`]), and which [`Engine`] drives it. The threaded engine (`threaded`) and the one-thread
//! engine (`local_engine`) each drive an assembly and hand what they [`Built`] to the server; neither copies the
//! other.

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::{Arc, Condvar, Mutex};

use arc_swap::ArcSwap;
use tokio::io::DuplexStream;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};

use super::in_memory;
use super::lifecycle::{Unbound, UnboundAll};
use super::tls::{self, Certificates};
use crate::crossing::completions::Completions;
use crate::crossing::handler::Handler;
use crate::crossing::lanes::Lanes;
use crate::crossing::responder::Shard;
use crate::protocol::phase::{escalate, Phase};
use crate::responses::route_table::RouteTable;
use crate::service::config::Config;
use crate::service::relay::Relay;
use crate::service::request_body::BodyBudget;
use crate::service::shared::Shared;
use crate::service::ws::{Peers, WebSockets};
use crate::values::error::Error;
use crate::values::sync::{Locked, Waits};
use crate::values::tls_options::TlsOptions;

/// What a server serving in a group (workers on the one-thread engine, `local_group`) asks of it: stops and
/// TLS reloads are the group's, and it is told when a member ends.
pub(super) trait Group: Send + Sync {
    fn stop(&self, force: bool);
    fn reload_tls(&self, options: &TlsOptions) -> Result<(), Error>;
    /// Member `id` of slot `slot` has ended; `failure`: why, when nobody asked it to.
    fn member_ended(&self, slot: usize, id: u64, failure: Option<&Error>);
}

/// A server's place in its group: the slot it serves, and what it takes from the group (the certificates every
/// member's handshakes take, the WebSocket hubs it publishes to, and other slots' sockets lent to it while they
/// have no server, taken by the server when it starts).
pub(super) struct Membership {
    pub(super) group: Arc<dyn Group>,
    pub(super) slot: usize,
    pub(super) id: u64,
    pub(super) tls: Option<Certificates>,
    pub(super) peers: Arc<Peers>,
    /// The group's link to Redis, when its pub/sub reaches other processes (the peers publish through it).
    pub(super) relay: Option<Arc<Relay>>,
    pub(super) lent: Option<tokio::sync::mpsc::UnboundedReceiver<super::listener::Lend>>,
}

/// Whether every I/O thread has exited, and why when nobody asked them to.
#[derive(Default)]
pub(super) struct Done {
    state: Mutex<DoneState>,
    cvar: Condvar,
    /// The link to Redis its owner holds (a lone server's, or a group's: a member's is the group's): shut here,
    /// and only here, once every shard (or member) has ended, so a stopped server neither publishes nor holds
    /// connections.
    relay: Option<Arc<Relay>>,
}

#[derive(Default)]
struct DoneState {
    /// I/O threads still running.
    left: usize,
    /// The first failure among those that ended.
    failure: Option<Error>,
    /// Set once all have ended: why, when one failed.
    finished: Option<Option<String>>,
}

impl Done {
    pub(super) fn new(threads: usize, relay: Option<Arc<Relay>>) -> Self {
        Self { state: Mutex::new(DoneState { left: threads, ..DoneState::default() }), cvar: Condvar::new(), relay }
    }

    /// One I/O thread has ended; for the last one, the server's failure (if any thread failed) is returned,
    /// after waiters were told.
    pub(super) fn finish(&self, failure: Option<Error>) -> Option<Option<Error>> {
        let mut state = self.state.locked();
        if state.failure.is_none() {
            state.failure = failure;
        }
        state.left -= 1;
        if state.left > 0 {
            return None;
        }
        let failure = state.failure.take();
        state.finished = Some(failure.as_ref().map(ToString::to_string));
        self.cvar.notify_all();
        drop(state);
        if let Some(relay) = &self.relay {
            relay.shut();
        }
        Some(failure)
    }
}

impl Done {
    /// Blocks until every shard has ended.
    pub(super) fn wait(&self) {
        let mut state = self.state.locked();
        while state.finished.is_none() {
            state = self.cvar.wait_locked(state);
        }
    }

    /// Whether every shard has ended.
    pub(super) fn is_finished(&self) -> bool {
        self.state.locked().finished.is_some()
    }

    /// Why the shards ended without being asked to, once they have.
    pub(super) fn failure(&self) -> Option<Error> {
        self.state.locked().finished.as_ref().and_then(|f| f.as_ref()).map(|m| Error::engine(m.clone()))
    }
}

/// What both engines assemble before serving: the configuration checked, the certificates read, the route
/// table, and per shard (an I/O thread, or the one thread of a one-thread engine) its completion table and
/// state; the lanes, the phase and the record of which shards have ended.
pub(super) struct Assembly {
    pub(super) tls: Option<Certificates>,
    pub(super) shards: Vec<Arc<Shared>>,
    pub(super) parts: Arc<[Shard]>,
    pub(super) phase: Arc<watch::Sender<Phase>>,
    pub(super) done: Arc<Done>,
    pub(super) unbound: Arc<UnboundAll>,
    /// The link to Redis the WebSocket hub publishes through, when `config.pubsub` asks for one (the group's,
    /// in a group).
    pub(super) relay: Option<Arc<Relay>>,
}

impl Assembly {
    /// Checks `config` and builds everything `count` shards share, before anything is bound. In a `group`,
    /// the certificates are the group's, and the WebSocket hub publishes to its peers.
    pub(super) fn new(
        config: &Config,
        mut routes: RouteTable,
        handler: Arc<dyn Handler>,
        count: usize,
        group: Option<&Membership>,
    ) -> Result<Self, Error> {
        config.validate()?;
        let (tls, peers, relay) = match group {
            Some(member) => (member.tls.clone(), Some(member.peers.clone()), member.relay.clone()),
            // Before anything is bound: a bad certificate or key fails the start, naming which, and so does a
            // Redis that cannot be reached (when the options require it).
            None => {
                let tls = config.tls.as_ref().map(|t| tls::certificates(t, config.http2.enabled)).transpose()?;
                let (peers, relay) = relayed_peers(config)?;
                (tls, peers, relay)
            }
        };
        if let Some(compression) = &config.compression {
            routes.compress_fixed(compression);
        }
        share_limits(&routes, relay.as_ref())?;
        let pending = Arc::new(std::sync::atomic::AtomicUsize::new(0));
        let tables: Vec<Arc<Completions>> =
            (0..count).map(|i| Arc::new(Completions::new(i as u8, pending.clone()))).collect();
        let lanes = Arc::new(Lanes::new(handler, &tables));
        let weak_lanes = Arc::downgrade(&lanes);
        let parts: Arc<[Shard]> = tables
            .iter()
            .map(|completions| {
                completions.set_lanes(weak_lanes.clone());
                Shard { completions: completions.clone(), streams: Arc::default(), uploads: Arc::default() }
            })
            .collect();
        let websockets = WebSockets::new(tables.clone().into_boxed_slice(), peers);
        let routes = Arc::new(ArcSwap::from_pointee(routes));
        let bodies = Arc::new(BodyBudget::new(config.body_buffer()));
        let shards: Vec<Arc<Shared>> = parts
            .iter()
            .enumerate()
            .map(|(i, part)| {
                Arc::new(Shared {
                    config: config.clone(),
                    routes: routes.clone(),
                    completions: part.completions.clone(),
                    lanes: lanes.clone(),
                    uploads: part.uploads.clone(),
                    bodies: bodies.clone(),
                    websockets: websockets.clone(),
                    shard: i as u8,
                })
            })
            .collect();
        let (phase, _) = watch::channel(Phase::Serving);
        let unbound = UnboundAll::new(lanes, count);
        let owned = if group.is_none() { relay.clone() } else { None };
        let done = Arc::new(Done::new(count, owned));
        Ok(Self { tls, shards, parts, phase: Arc::new(phase), done, unbound, relay })
    }
}

/// Which engine serves a server, and what only that engine has.
pub(super) enum Engine {
    /// The threaded engine's I/O runtimes: in-memory connections' client ends are driven on the first, and each
    /// runs an attached lane's batcher for its shard.
    Threaded(Arc<Runtimes>),
    /// The one-thread engine: its door for tasks started from elsewhere (in-memory connections' client ends),
    /// and the group it serves an app with (a worker's server), whose are its stops and TLS reloads.
    Local { tasks: mpsc::UnboundedSender<in_memory::Task>, group: Option<Arc<dyn Group>> },
}

/// The threaded engine's I/O runtimes as the server reaches them, one slot per I/O thread, emptied by that
/// thread when its runtime ends. A `Handle` keeps its runtime's driver alive, and with it an epoll descriptor
/// and an eventfd: held by the server object, they stayed open after a stop until JavaScript's collector took
/// the object, two descriptors per `listen()` and `stop()`. Locked only to start an in-memory connection or
/// attach a lane, never per request.
pub(super) struct Runtimes(Mutex<Vec<Option<Handle>>>);

impl Runtimes {
    pub(super) fn new(handles: Vec<Handle>) -> Arc<Self> {
        Arc::new(Self(Mutex::new(handles.into_iter().map(Some).collect())))
    }

    /// I/O thread `shard`'s runtime, while it runs.
    pub(super) fn get(&self, shard: usize) -> Option<Handle> {
        self.0.locked().get(shard).cloned().flatten()
    }

    /// Drops the server's handle on I/O thread `shard`'s runtime: called by that thread as its runtime ends.
    pub(super) fn release(&self, shard: usize) {
        if let Some(slot) = self.0.locked().get_mut(shard) {
            *slot = None;
        }
    }
}

/// What a [`Server`](super::server::Server) is made of once its engine has started: the assembly's shared
/// parts, the bound addresses, the door for in-memory connections, and the engine.
pub(super) struct Built {
    pub(super) addrs: Vec<SocketAddr>,
    pub(super) engine: Engine,
    pub(super) in_memory: mpsc::UnboundedSender<DuplexStream>,
    pub(super) shared: Arc<Shared>,
    pub(super) shards: Arc<[Shard]>,
    pub(super) phase: Arc<watch::Sender<Phase>>,
    pub(super) done: Arc<Done>,
    pub(super) tls: Option<Certificates>,
    pub(super) relay: Option<Arc<Relay>>,
}

impl Assembly {
    /// The server over this assembly, once its listeners are bound (`addrs`), served by `engine`.
    pub(super) fn built(
        &self,
        addrs: Vec<SocketAddr>,
        in_memory: mpsc::UnboundedSender<DuplexStream>,
        engine: Engine,
    ) -> Built {
        Built {
            addrs,
            engine,
            in_memory,
            shared: self.shards[0].clone(),
            shards: self.parts.clone(),
            phase: self.phase.clone(),
            done: self.done.clone(),
            tls: self.tls.clone(),
            relay: self.relay.clone(),
        }
    }
}

/// With `config.pubsub`, the link to Redis and the group of hubs that publishes through it (connected before
/// anything is bound); otherwise neither.
pub(super) fn relayed_peers(config: &Config) -> Result<(Option<Arc<Peers>>, Option<Arc<Relay>>), Error> {
    let Some(options) = &config.pubsub else { return Ok((None, None)) };
    let relay = Relay::start(options.clone())?;
    let peers = Peers::beyond(relay.clone());
    relay.attach(&peers);
    Ok((Some(peers), Some(relay)))
}

/// Hands the table's shared rate limits to the link to Redis that counts them; without one (no `pubsub`), a
/// shared limit is an error naming it.
pub(super) fn share_limits(routes: &RouteTable, relay: Option<&Arc<Relay>>) -> Result<(), Error> {
    match relay {
        Some(relay) => relay.share(routes.all_limits()),
        None => {
            if let Some(limit) = routes.all_limits().find(|l| l.is_shared()) {
                return Err(Error::config(format!(
                    "rateLimit {:?} is shared across processes through Redis: listen() needs the pubsub option naming that Redis",
                    limit.policy().0
                )));
            }
        }
    }
    Ok(())
}

/// The addresses `listeners` are bound to (every shard's are the same).
pub(super) fn bound_addrs(listeners: &[std::net::TcpListener]) -> Result<Vec<SocketAddr>, Error> {
    listeners.iter().map(|l| l.local_addr().map_err(|e| Error::io("cannot read the bound address", e))).collect()
}

/// A shard has stopped serving (`failure`: why, when nobody asked), and its sockets are closed: the last events
/// of its connections go out, its part of the port is released, and the last shard tells the handlers.
pub(super) fn shard_ended(
    failure: Option<Error>,
    shared: &Shared,
    once: &Unbound,
    done: &Done,
    phase: &watch::Sender<Phase>,
) {
    // One shard failing brings the others down: the server is one.
    if failure.is_some() {
        escalate(phase, Phase::Closing);
    }
    let lanes = shared.lanes.clone();
    let shard = usize::from(shared.shard);
    // The last events (closes of WebSockets that ended with the server) go out; not after a failure, when the
    // handler side may be what failed.
    if failure.is_none() {
        for (_, lane) in lanes.all() {
            let _ = std::panic::catch_unwind(AssertUnwindSafe(|| lane.batchers[shard].flush_now()));
        }
    }
    once.unbound();
    if let Some(failure) = done.finish(failure) {
        for (_, lane) in lanes.all() {
            lane.handler.stopped(failure.as_ref());
        }
    }
}
