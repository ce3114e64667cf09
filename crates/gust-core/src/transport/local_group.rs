//! Workers on the one-thread engine: one app served by several JavaScript threads, each running a one-thread
//! server of its own on the same port.
//!
//! The main thread binds the port once per worker slot (on Linux `SO_REUSEPORT` sockets, so the kernel spreads
//! connections between the slots; elsewhere duplicates of one socket, whose one queue every slot accepts from)
//! and keeps those sockets while the group serves. A worker joins its slot with [`LocalGroup::join`]: its
//! server accepts from duplicates of the slot's sockets, on its own thread, and nothing of a request crosses
//! threads. What must reach every thread goes through the group: WebSocket publishes ([`Peers`]), stops, TLS
//! reloads, and the end of the whole group, which the main thread's `supervisor` hears.
//!
//! Because the main thread holds the slots' sockets, connections the kernel queued for a worker that died are
//! not lost. While a slot has lost its server (its worker died), the group lends duplicates of its sockets to a
//! member that serves, which accepts from them too until the slot's own server joins: on Linux the kernel keeps
//! queueing a share of new connections on every slot, and they would otherwise wait for the replacement (100 ms
//! to 10 s).

use std::net::SocketAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{mpsc, watch};

use super::assembly::{bound_addrs, Assembly, Done, Group, Membership};
use super::listener::{self, Lend};
use super::local_engine::{self, LocalEngine};
use super::server::Server;
use super::tls::{self, Certificates};
use crate::crossing::handler::Handler;
use crate::crossing::responder::Shard;
use crate::protocol::phase::{escalate, Phase};
use crate::responses::route_table::RouteTable;
use crate::service::config::Config;
use crate::service::ws::Peers;
use crate::values::error::Error;
use crate::values::sync::Locked;
use crate::values::tls_options::TlsOptions;

/// The servers of the workers of one app on the one-thread engine, and the sockets they share.
pub struct LocalGroup {
    addrs: Vec<SocketAddr>,
    /// Every member's handshakes take these: a reload is seen by all, and by members that join later.
    tls: Option<Certificates>,
    http2: bool,
    peers: Arc<Peers>,
    /// The link to Redis every member's pub/sub goes through, when the options ask for one.
    relay: Option<Arc<crate::service::relay::Relay>>,
    /// The group's end, as a lone server's: the last member's end shuts the link to Redis with it.
    done: Done,
    /// The main thread's handler: it takes no request, and hears `unbound` and `stopped` once the group ends.
    supervisor: Arc<dyn Handler>,
    state: Mutex<State>,
}

struct State {
    /// Each slot's listening sockets (members serve duplicates), until the group stops.
    listeners: Vec<Vec<std::net::TcpListener>>,
    /// Each slot's server while a worker serves it (or is starting one).
    members: Vec<WorkerSlot>,
    /// For each slot without a server, the member its sockets are lent to (slot and id), if any.
    lent_to: Vec<Option<(usize, u64)>>,
    /// Slots that have had a server: only those are lent (see `lend_free`).
    served: Vec<bool>,
    /// Tells members apart across a slot's restarts.
    next_id: u64,
    /// Set once a stop was asked for (or a member failed): what members are told.
    stopping: Option<Phase>,
    /// The first member's failure, told to the supervisor at the end.
    failure: Option<Error>,
    ended: bool,
}

impl State {
    /// Stops the group at phase `next` (graceful or forced; a forced stop may follow a graceful one, never the
    /// reverse): the slots' sockets close, nothing is lent any more, and every serving member is told. False
    /// when the group was stopping at `next` or beyond already.
    fn stop_at(&mut self, next: Phase) -> bool {
        if self.stopping.is_some_and(|p| p >= next) {
            return false;
        }
        self.stopping = Some(next);
        self.listeners.clear();
        self.lent_to.fill(None);
        for member in self.members.iter().filter_map(WorkerSlot::serving) {
            escalate(&member.phase, next);
        }
        true
    }
}

/// A slot: free, taken by a worker whose server is being built, or served.
enum WorkerSlot {
    Free,
    Joining(u64),
    Serving(Member),
}

impl WorkerSlot {
    /// The server serving the slot, if one does.
    fn serving(&self) -> Option<&Member> {
        match self {
            WorkerSlot::Serving(member) => Some(member),
            _ => None,
        }
    }

    /// Which member holds the slot (serving it or joining), if one does.
    fn holder(&self) -> Option<u64> {
        match self {
            WorkerSlot::Free => None,
            WorkerSlot::Joining(id) => Some(*id),
            WorkerSlot::Serving(member) => Some(member.id),
        }
    }
}

struct Member {
    id: u64,
    phase: Arc<watch::Sender<Phase>>,
    parts: Arc<[Shard]>,
    /// Lends it other slots' sockets, and takes them back.
    lend: mpsc::UnboundedSender<Lend>,
}

impl std::fmt::Debug for LocalGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("LocalGroup").field("addrs", &self.addrs).finish_non_exhaustive()
    }
}

impl LocalGroup {
    /// Checks `config` (its certificates are read once here, for every member) and binds its addresses once per
    /// slot, `slots` of them, before any worker runs: a taken port or a bad certificate fails here.
    pub fn bind(config: &Config, slots: usize, supervisor: Arc<dyn Handler>) -> Result<Arc<Self>, Error> {
        config.validate()?;
        super::local_engine::check_addresses(config)?;
        if slots == 0 {
            return Err(Error::config("a group of one-thread servers needs at least one worker"));
        }
        let tls = config.tls.as_ref().map(|t| tls::certificates(t, config.http2.enabled)).transpose()?;
        // One link to Redis for every worker of the process.
        let (peers, relay) = super::assembly::relayed_peers(config)?;
        let listeners = listener::bind_all(&config.addrs, slots)?;
        let addrs = bound_addrs(&listeners[0])?;
        Ok(Arc::new(Self {
            addrs,
            tls,
            http2: config.http2.enabled,
            peers: peers.unwrap_or_else(Peers::new),
            done: Done::new(1, relay.clone()),
            relay,
            supervisor,
            state: Mutex::new(State {
                listeners,
                members: (0..slots).map(|_| WorkerSlot::Free).collect(),
                lent_to: vec![None; slots],
                served: vec![false; slots],
                next_id: 1,
                stopping: None,
                failure: None,
                ended: false,
            }),
        }))
    }

    /// Every bound address, all on the same port.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// The WebSocket hubs of every member: publish, flush and count across the group.
    pub fn peers(&self) -> &Arc<Peers> {
        &self.peers
    }

    /// What the group's pub/sub across processes has done so far (`None`: it stays in the process).
    pub fn pubsub_stats(&self) -> Option<crate::service::relay::RelayStats> {
        self.relay.as_ref().map(|r| r.stats())
    }

    /// Starts the server of slot `slot` on the calling thread (a worker): it accepts from the slot's sockets and
    /// publishes to the whole group. Fails when the group is stopping, the slot does not exist or is served.
    pub fn join(
        self: &Arc<Self>,
        slot: usize,
        config: Config,
        routes: RouteTable,
        handler: Arc<dyn Handler>,
    ) -> Result<(Server, LocalEngine), Error> {
        let (listeners, id) = {
            let mut state = self.state.locked();
            if state.stopping.is_some() || state.ended {
                return Err(Error::engine("the server is stopping: no worker can join it"));
            }
            let count = state.members.len();
            let Some(member) = state.members.get(slot) else {
                return Err(Error::config(format!("the server has {count} worker slots; there is no slot {slot}")));
            };
            if member.holder().is_some() {
                return Err(Error::engine(format!("worker slot {slot} is served already")));
            }
            let listeners = state.listeners[slot]
                .iter()
                .map(std::net::TcpListener::try_clone)
                .collect::<Result<Vec<_>, _>>()
                .map_err(|e| Error::io("cannot share the listening socket with the worker", e))?;
            let id = state.next_id;
            state.next_id += 1;
            // Taken now, so that a second join of the slot fails and the group cannot end while this server is
            // being built (it holds copies of the slot's sockets).
            state.members[slot] = WorkerSlot::Joining(id);
            (listeners, id)
        };
        let (tls, peers) = (self.tls.clone(), self.peers.clone());
        let (lend, lent) = mpsc::unbounded_channel();
        let membership =
            Membership { group: self.clone(), slot, id, tls, peers, relay: self.relay.clone(), lent: Some(lent) };
        let started = Assembly::new(&config, routes, handler, 1, Some(&membership))
            .and_then(|assembly| local_engine::serve(assembly, listeners, Some(membership)))
            .map(|(built, engine)| (Server::from_built(built), engine));
        let (server, engine) = match started {
            Ok(started) => started,
            Err(err) => {
                let end = {
                    let mut state = self.state.locked();
                    state.members[slot] = WorkerSlot::Free;
                    lend_free(&mut state);
                    self.take_end(&mut state)
                };
                self.tell_end(end);
                return Err(err);
            }
        };
        let mut state = self.state.locked();
        let (phase, parts) = server.member_parts();
        // A stop that came while the server was being built applies to it at once.
        if let Some(next) = state.stopping {
            escalate(&phase, next);
        }
        state.members[slot] = WorkerSlot::Serving(Member { id, phase, parts, lend });
        state.served[slot] = true;
        // The slot's own server takes its sockets back from whoever served them meanwhile, and can serve the
        // sockets of slots that had nobody.
        if let Some((adopter, adopter_id)) = state.lent_to[slot].take() {
            if let Some(member) = state.members[adopter].serving().filter(|m| m.id == adopter_id) {
                let _ = member.lend.send(Lend::Release(slot));
            }
        }
        lend_free(&mut state);
        Ok((server, engine))
    }

    /// The slots whose sockets are lent to another slot's server meanwhile, with that slot: `(slot, served by)`.
    pub fn lent(&self) -> Vec<(usize, usize)> {
        let state = self.state.locked();
        state.lent_to.iter().enumerate().filter_map(|(slot, to)| Some((slot, to.as_ref()?.0))).collect()
    }

    /// Stops every member (graceful or forced, as [`Server::stop`]); the group ends, and the supervisor hears
    /// it, once all of them have. The slots' sockets close now: once the members let go of theirs the port is
    /// free.
    pub fn stop(&self, force: bool) {
        <Self as Group>::stop(self, force);
    }

    /// Replaces the certificate and key of every member's handshakes (and of members that join later); checked
    /// first, as [`Server::reload_tls`] does.
    pub fn reload_tls(&self, options: &TlsOptions) -> Result<(), Error> {
        <Self as Group>::reload_tls(self, options)
    }

    /// Each served slot with its requests waiting for an answer.
    pub fn in_flight(&self) -> Vec<(usize, u32)> {
        let state = self.state.locked();
        let served = state.members.iter().enumerate().filter_map(|(slot, m)| Some((slot, m.serving()?)));
        served.map(|(slot, m)| (slot, m.parts.iter().map(|s| s.completions.in_flight(0)).sum())).collect()
    }

    /// Whether the group has ended (stopped, and every member with it).
    pub fn is_finished(&self) -> bool {
        self.state.locked().ended
    }

    /// Whether the group ends now (stopping, no member left); then its failure, taken.
    fn take_end(&self, state: &mut State) -> Option<Option<Error>> {
        if state.ended || state.stopping.is_none() || state.members.iter().any(|m| m.holder().is_some()) {
            return None;
        }
        state.ended = true;
        Some(state.failure.take())
    }

    /// Tells the supervisor, outside the lock, that the group ended.
    fn tell_end(&self, end: Option<Option<Error>>) {
        if let Some(failure) = end {
            // Every member has ended: the group's link to Redis with them.
            let failure = self.done.finish(failure).flatten();
            self.supervisor.unbound();
            self.supervisor.stopped(failure.as_ref());
        }
    }
}

/// What the group's members ask of it (their own `stop` and `reload_tls` are the group's).
impl Group for LocalGroup {
    fn stop(&self, force: bool) {
        let end = {
            let mut state = self.state.locked();
            if !state.stop_at(Phase::of_stop(force)) {
                return;
            }
            self.take_end(&mut state)
        };
        self.tell_end(end);
    }

    fn reload_tls(&self, options: &TlsOptions) -> Result<(), Error> {
        tls::reload(self.tls.as_ref(), options, self.http2)
    }

    /// A member's server has ended, its sockets closed. Unasked (its thread went away), the slot waits for a
    /// replacement; after a failure the whole group stops; the last one of a stopping group ends it.
    fn member_ended(&self, slot: usize, id: u64, failure: Option<&Error>) {
        let end = {
            let mut state = self.state.locked();
            if state.members.get(slot).is_some_and(|m| m.holder() == Some(id)) {
                state.members[slot] = WorkerSlot::Free;
            }
            // What it served for other slots went with it (its duplicates closed with its sockets).
            for to in &mut state.lent_to {
                if *to == Some((slot, id)) {
                    *to = None;
                }
            }
            if let Some(failure) = failure {
                state.failure.get_or_insert_with(|| Error::engine(failure.to_string()));
                state.stop_at(Phase::Closing);
            }
            lend_free(&mut state);
            self.take_end(&mut state)
        };
        self.tell_end(end);
    }
}

/// Lends the sockets of every slot that has lost its server, and no member serving them yet, to a member that
/// serves: the next serving slot after it, so that several empty slots spread over the members. Nothing once
/// stopping. Slots still waiting for their first server are not lent: their workers join within moments of each
/// other at start-up, and a connection stays with the member that accepted it, so lending them would leave the
/// first member up with more than its share of long-lived connections. Only where each slot has sockets of its
/// own (Linux, `SO_REUSEPORT`): elsewhere every slot accepts from one shared queue, which the others serve anyway.
fn lend_free(state: &mut State) {
    if !cfg!(target_os = "linux") || state.stopping.is_some() || state.ended {
        return;
    }
    let count = state.members.len();
    for slot in 0..count {
        if state.members[slot].holder().is_some() || state.lent_to[slot].is_some() || !state.served[slot] {
            continue;
        }
        for step in 1..count {
            let adopter = (slot + step) % count;
            let Some(member) = state.members[adopter].serving() else { continue };
            let Ok(copies) = state.listeners[slot].iter().map(std::net::TcpListener::try_clone).collect() else {
                return;
            };
            if member.lend.send(Lend::Adopt(slot, copies)).is_ok() {
                state.lent_to[slot] = Some((adopter, member.id));
                break;
            }
        }
    }
}
