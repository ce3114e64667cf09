//! A running server, whichever engine serves it: the threaded one (`threaded`: I/O threads of its own) or the
//! one-thread one (`local_engine`: sockets polled from a JavaScript thread's loop). What differs between them is
//! the [`Engine`]; everything else a server does (in-memory connections, route swaps, lanes, stops, TLS reloads)
//! is here once, matching on it where the engines part.

use std::net::SocketAddr;
use std::sync::Arc;

use tokio::io::DuplexStream;
use tokio::sync::{mpsc, watch};

use super::assembly::{Built, Done, Engine};
use super::in_memory::{self, Pipe, PipeEvent};
use super::local_engine::{self, LocalEngine};
use super::tls::{self, Certificates};
use crate::crossing::completions::Completions;
use crate::crossing::handler::Handler;
use crate::crossing::lanes::LaneId;
use crate::crossing::responder::{Responder, Shard};
use crate::protocol::phase::{escalate, Phase};
use crate::responses::response::{self, messages};
use crate::responses::route_table::RouteTable;
use crate::service::config::Config;
use crate::service::shared::Shared;
use crate::service::ws::WebSockets;
use crate::values::error::Error;
use crate::values::ids::{shard_of, MAX_LANES};
use crate::values::tls_options::TlsOptions;
use crate::wire::answer::FileTarget;

/// A listening server. Dropping it closes every connection at once, as a forced [`Server::stop`] would.
pub struct Server {
    addrs: Vec<SocketAddr>,
    engine: Engine,
    /// Server ends of in-memory connections, for the first I/O thread's accept loop to serve.
    in_memory: mpsc::UnboundedSender<DuplexStream>,
    /// The first I/O thread's state (the route table and WebSockets are every thread's).
    shared: Arc<Shared>,
    /// What answers need of every I/O thread.
    shards: Arc<[Shard]>,
    phase: Arc<watch::Sender<Phase>>,
    done: Arc<Done>,
    /// The TLS configuration every I/O thread's handshakes take, swapped by [`Server::reload_tls`].
    tls: Option<Certificates>,
    /// The link to Redis its WebSocket pub/sub goes through, if any.
    relay: Option<Arc<crate::service::relay::Relay>>,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addrs", &self.addrs).finish_non_exhaustive()
    }
}

impl Server {
    /// The server of what an engine built.
    pub(super) fn from_built(built: Built) -> Self {
        let Built { addrs, engine, in_memory, shared, shards, phase, done, tls, relay } = built;
        Self { addrs, engine, in_memory, shared, shards, phase, done, tls, relay }
    }

    /// Binds every address and starts serving on `config.io_threads` new threads (the threaded engine,
    /// `threaded`). Binding happens before this returns, so a taken port is reported here rather than lost on an
    /// I/O thread. With no address, the server serves only in-memory connections ([`Server::connect`]).
    pub fn start(config: Config, routes: RouteTable, handler: Arc<dyn Handler>) -> Result<Self, Error> {
        super::threaded::start(config, routes, handler).map(Self::from_built)
    }

    /// Binds every address and returns the server with the engine that serves it on this thread (the one-thread
    /// engine, `local_engine`): nothing is served until the host calls [`LocalEngine::turn`].
    /// `config.io_threads` is not used. Fails as [`Server::start`] does, and when the address list is empty (a
    /// server for in-memory connections only is the threaded engine's).
    pub fn start_local(
        config: Config,
        routes: RouteTable,
        handler: Arc<dyn Handler>,
    ) -> Result<(Self, LocalEngine), Error> {
        local_engine::start(config, routes, handler).map(|(built, engine)| (Self::from_built(built), engine))
    }

    /// Replaces the certificate and key of a TLS server while it runs: handshakes that start from now on present
    /// the new certificate; connections already open, and handshakes under way, go on with the old one. The new
    /// pair is checked first: on an error (naming the certificate or the key, as at start) nothing changes. A
    /// server started without TLS refuses, since its listeners speak plain HTTP.
    pub fn reload_tls(&self, options: &TlsOptions) -> Result<(), Error> {
        match &self.engine {
            Engine::Local { group: Some(group), .. } => group.reload_tls(options),
            _ => tls::reload(self.tls.as_ref(), options, self.shared.config.http2.enabled),
        }
    }

    /// The first bound address (with the real port when 0 was asked for); none for an in-memory server.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.addrs.first().copied()
    }

    /// Opens a connection without a socket: its server end is served exactly as an accepted TCP connection
    /// (from `127.0.0.1`, port 0), and `on_event`, called on the I/O thread, hears what the server sends. Fails
    /// once the server has stopped accepting.
    pub fn connect(&self, on_event: impl Fn(PipeEvent) + Send + Sync + 'static) -> Result<Pipe, Error> {
        if *self.phase.borrow() != Phase::Serving {
            return Err(Error::engine("the server is stopping: it accepts no new connection"));
        }
        let (client, server) = tokio::io::duplex(in_memory::PIPE_BUFFER);
        self.in_memory.send(server).map_err(|_| Error::engine("the server has stopped"))?;
        let on_event = Arc::new(on_event);
        match &self.engine {
            Engine::Local { tasks, .. } => Ok(Pipe::drive(client, &|task| drop(tasks.send(task)), on_event)),
            Engine::Threaded(runtimes) => match runtimes.get(0) {
                Some(first) => Ok(Pipe::drive(client, &|task| drop(first.spawn(task)), on_event)),
                None => Err(Error::engine("the server has stopped")),
            },
        }
    }

    /// Every bound address, all on the same port.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Swaps in a new route table in one atomic store. In-flight requests finish with the table they started with.
    /// With compression on, its fixed responses are compressed first, on the calling thread. Fails, changing
    /// nothing, when the table has a rate limit shared through Redis and the server has no link to one.
    pub fn replace_routes(&self, mut routes: RouteTable) -> Result<(), Error> {
        if let Some(compression) = &self.shared.config.compression {
            routes.compress_fixed(compression);
        }
        super::assembly::share_limits(&routes, self.relay.as_ref())?;
        self.shared.routes.store(Arc::new(routes));
        Ok(())
    }

    /// Whether a handler's `FILE` answer naming `target` (`path:…` or `mount:…:…`, as the answer's body) would
    /// find something to serve: checked by the package before it sends one, so that a missing file reaches the
    /// app's not-found handler, with the middleware that ran told of that answer. A target that does not parse
    /// counts as found: sending it gets the invalid answer's 500 and its reason. Blocking (a `stat` or a few,
    /// never a read).
    pub fn serves_file(&self, target: &[u8]) -> bool {
        match FileTarget::parse(target) {
            Ok(FileTarget::Path(path)) => crate::bodies::files::dir::is_file(&path),
            Ok(FileTarget::Mount { index, tail }) => {
                self.shared.routes.load().mount(index).is_some_and(|d| d.serves(&tail))
            }
            Err(_) => true,
        }
    }

    /// The handle through which handlers' answers are delivered.
    pub fn responder(&self) -> Responder {
        Responder::new(self.shards.clone(), self.shared.lanes.clone(), 0)
    }

    /// The handle through which lane `lane`'s handlers' answers are delivered: what follows an answer (a
    /// streamed body's drains and cancels, a WebSocket's events) goes to that lane.
    pub fn responder_for(&self, lane: LaneId) -> Responder {
        Responder::new(self.shards.clone(), self.shared.lanes.clone(), lane.0)
    }

    /// What its pub/sub across processes has done so far (`None`: its pub/sub stays in the process).
    pub fn pubsub_stats(&self) -> Option<crate::service::relay::RelayStats> {
        self.relay.as_ref().map(|r| r.stats())
    }

    /// The server's WebSockets: send, close, subscribe and publish, from any thread.
    pub fn websockets(&self) -> Arc<WebSockets> {
        self.shared.websockets.clone()
    }

    /// Adds a JavaScript thread (a worker) that takes dynamic requests from now on, as the starting thread's
    /// handler does: requests are spread over the attached lanes per request, to the least busy one, and the
    /// starting thread's handler takes requests only while no lane is attached. The handler hears `unbound` and
    /// `stopped` as the first one does. Fails when the server has stopped or every lane is taken.
    pub fn attach(&self, handler: Arc<dyn Handler>) -> Result<LaneId, Error> {
        let Engine::Threaded(runtimes) = &self.engine else {
            return Err(Error::config(
                "a one-thread server takes no other thread's handlers: each thread runs its own server",
            ));
        };
        let stopping = || Error::engine("the server is stopping: no handler can be attached");
        if self.is_finished() || *self.phase.borrow() != Phase::Serving {
            return Err(stopping());
        }
        // Taken together first: an I/O thread that ends meanwhile empties its slot.
        let runtimes =
            (0..self.shards.len()).map(|i| runtimes.get(i)).collect::<Option<Vec<_>>>().ok_or_else(stopping)?;
        let tables: Vec<Arc<Completions>> = self.shards.iter().map(|s| s.completions.clone()).collect();
        self.shared
            .lanes
            .attach(handler, &tables, |shard, batcher| {
                runtimes[shard].spawn(async move { batcher.run().await }).abort_handle()
            })
            .ok_or_else(|| Error::engine(format!("a server takes at most {} attached handlers", MAX_LANES - 1)))
    }

    /// Removes an attached lane (its thread exited or is stopping): it gets no more requests or events.
    /// Requests it never took (still in its batchers, or in the batches its side was handed and did not take,
    /// which `undelivered` returns once no more can come) go to other lanes, except those whose body streams
    /// (their first bytes may have been in a batch it took); its other requests still waiting for an answer get
    /// 503, its streamed responses are cut off and its WebSockets closed with 1001. Idempotent; lane 0 cannot be
    /// detached.
    pub fn detach(&self, lane: LaneId, undelivered: impl FnOnce() -> Vec<Vec<u8>>) {
        let Some(pending) = self.shared.lanes.detach(lane) else { return };
        let undelivered = undelivered();
        let lanes = &self.shared.lanes;
        for batch in pending.iter().chain(&undelivered) {
            for (kind, flags, id, record) in crate::wire::records(batch) {
                if kind != crate::wire::Kind::Request as u8 || flags & crate::wire::request::BODY_STREAM != 0 {
                    continue;
                }
                let shard = shard_of(id);
                let Some(part) = self.shards.get(shard) else { continue };
                if let Some(to) = part.completions.reassign(id, lane.0, |n, turn| lanes.pick(n, turn)) {
                    lanes.batcher(to, shard).push_record(record, id);
                }
            }
        }
        let index = usize::from(lane.0);
        for shard in self.shards.iter() {
            shard.completions.fail_lane(index, || response::unavailable(messages::WORKER_GONE));
            shard.streams.abort_lane(index);
        }
        self.shared.websockets.close_lane(lane.0);
    }

    /// Every lane now attached (lane 0 first), with its requests waiting for an answer.
    pub fn lanes(&self) -> Vec<(LaneId, u32)> {
        let in_flight = |lane: usize| self.shards.iter().map(|s| s.completions.in_flight(lane)).sum();
        self.shared.lanes.all().into_iter().map(|(id, _)| (id, in_flight(id.0.into()))).collect()
    }

    /// Stops accepting connections. Graceful: in-flight requests finish and idle connections close. Forced:
    /// every connection closes now. A forced stop may follow a graceful one to cut it short. A worker's server
    /// on the one-thread engine stops its whole group.
    pub fn stop(&self, force: bool) {
        match &self.engine {
            Engine::Local { group: Some(group), .. } => group.stop(force),
            _ => {
                escalate(&self.phase, Phase::of_stop(force));
            }
        }
    }

    /// What its group keeps of a member: its phase (to stop it) and shards (to count its requests in flight).
    pub(super) fn member_parts(&self) -> (Arc<watch::Sender<Phase>>, Arc<[Shard]>) {
        (self.phase.clone(), self.shards.clone())
    }

    /// Blocks until every I/O thread has exited (after [`Server::stop`], or when the engine failed). Never call
    /// it on an I/O thread.
    pub fn wait(&self) {
        self.done.wait();
    }

    /// Whether every I/O thread has exited.
    pub fn is_finished(&self) -> bool {
        self.done.is_finished()
    }

    /// Why the server stopped without being asked to, once it has: the engine failed.
    pub fn failure(&self) -> Option<Error> {
        self.done.failure()
    }
}
