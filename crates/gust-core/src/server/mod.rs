//! A running server: one dedicated I/O thread with a current-thread tokio runtime.
//!
//! Why one thread: dynamic requests are answered by the single JavaScript thread anyway, and measurements on
//! this class of machine showed a current-thread runtime on its own thread batching better than a one-worker
//! multi-thread runtime. Several I/O threads will become a `Config` field without changing this API.

mod activity;
mod batcher;
mod body;
mod connection;
mod in_memory;
pub(crate) mod lanes;
mod listener;
mod request_rules;
mod service;
mod upgrade;

use std::net::SocketAddr;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Condvar, Mutex};

use arc_swap::ArcSwap;
use tokio::io::DuplexStream;
use tokio::runtime::Handle;
use tokio::sync::{mpsc, watch};

use crate::completions::{Completions, Responder};
use crate::response::{self, messages};
use crate::stream::Streams;
use crate::{Config, Error, Handler, RouteTable};

pub(crate) use batcher::Queued;
use lanes::Lanes;
pub use lanes::{LaneId, MAX_LANES, MAX_PENDING};
use body::BodyBudget;
pub use in_memory::{Pipe, PipeEvent};

/// What the I/O thread is told to do with its connections.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Phase {
    Serving,
    /// Stop accepting; finish in-flight requests; close idle connections; WebSockets close with 1001 and wait
    /// for the client's reply.
    Draining,
    /// Close everything now.
    Closing,
}

/// State shared by every connection of a server.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) routes: ArcSwap<RouteTable>,
    pub(crate) completions: Arc<Completions>,
    /// The JavaScript threads requests are handed to.
    pub(crate) lanes: Arc<Lanes>,
    pub(crate) streams: Arc<Streams>,
    pub(crate) uploads: Arc<crate::upload::Uploads>,
    pub(crate) bodies: BodyBudget,
    pub(crate) websockets: Arc<crate::ws::WebSockets>,
}

/// A listening server. Dropping it closes every connection at once, as a forced [`Server::stop`] would.
pub struct Server {
    addrs: Vec<SocketAddr>,
    /// The I/O runtime, where in-memory connections' client ends are driven.
    runtime: Handle,
    /// Server ends of in-memory connections, for the accept loop to serve.
    in_memory: mpsc::UnboundedSender<DuplexStream>,
    shared: Arc<Shared>,
    phase: watch::Sender<Phase>,
    done: Arc<Done>,
}

/// Whether the I/O thread has exited, and why when nobody asked it to.
#[derive(Default)]
struct Done {
    finished: Mutex<Option<Option<String>>>,
    cvar: Condvar,
}

impl std::fmt::Debug for Server {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Server").field("addrs", &self.addrs).finish_non_exhaustive()
    }
}

/// Threads of the blocking pool (file reads and lookups, big compressions): requests past it queue.
const BLOCKING_THREADS: usize = 32;

impl Server {
    /// Binds every address and starts serving on a new thread. Binding happens before this returns, so a taken
    /// port is reported here rather than lost on the I/O thread. With no address, the server serves only
    /// in-memory connections ([`Server::connect`]).
    pub fn start(config: Config, mut routes: RouteTable, handler: Arc<dyn Handler>) -> Result<Self, Error> {
        config.validate()?;
        if let Some(compression) = &config.compression {
            routes.compress_fixed(compression);
        }
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            // Files are read on the blocking pool. Unbounded (tokio's default is 512), a burst of small-file
            // requests grew it to hundreds of threads, each with its stack, for work a few threads do as fast.
            .max_blocking_threads(BLOCKING_THREADS)
            .build()
            .map_err(|e| Error::io("cannot start the I/O runtime", e))?;
        let listeners = {
            let _in_runtime = runtime.enter();
            listener::bind_all(&config.addrs)?
        };
        let addrs = listeners
            .iter()
            .map(|l| l.local_addr().map_err(|e| Error::io("cannot read the bound address", e)))
            .collect::<Result<Vec<_>, _>>()?;

        let completions = Arc::new(Completions::default());
        let lanes = Arc::new(Lanes::new(handler, &completions));
        let events: std::sync::Weak<dyn crate::stream::Events> = Arc::downgrade(&lanes) as _;
        completions.set_events(events);
        let shared = Arc::new(Shared {
            bodies: BodyBudget::new(config.body_buffer()),
            config,
            routes: ArcSwap::from_pointee(routes),
            streams: Arc::new(Streams::new(lanes.clone())),
            uploads: Arc::default(),
            websockets: Arc::new(crate::ws::WebSockets::new(completions.clone())),
            lanes,
            completions,
        });
        let (phase, phase_rx) = watch::channel(Phase::Serving);
        let (in_memory, in_memory_rx) = mpsc::unbounded_channel();
        let handle = runtime.handle().clone();
        let done = Arc::new(Done::default());

        let thread_shared = shared.clone();
        let thread_done = done.clone();
        std::thread::Builder::new()
            .name(addrs.first().map_or_else(|| "gust-io-memory".to_owned(), |a| format!("gust-io-{}", a.port())))
            .spawn(move || {
                let once = Arc::new(Unbound { lanes: thread_shared.lanes.clone(), sent: AtomicBool::new(false) });
                let lanes = thread_shared.lanes.clone();
                let serving = listener::serve(listeners, in_memory_rx, thread_shared, phase_rx, once.clone());
                let failure = match std::panic::catch_unwind(AssertUnwindSafe(|| runtime.block_on(serving))) {
                    Ok(failure) => failure,
                    Err(panic) => {
                        let err = Error::engine(format!("the I/O thread panicked: {}", listener::panic_message(panic)));
                        eprintln!("gust: the server stopped because {err}");
                        Some(err)
                    }
                };
                // Dropping the runtime closes every socket it still owns, the listeners included.
                drop(runtime);
                // The last events (closes of WebSockets that ended with the server) go out; not after a failure,
                // when the handler side may be what failed.
                if failure.is_none() {
                    for (_, lane) in lanes.all() {
                        let _ = std::panic::catch_unwind(AssertUnwindSafe(|| lane.batcher.flush_now()));
                    }
                }
                once.unbound();
                *thread_done.finished.lock().unwrap_or_else(|e| e.into_inner()) =
                    Some(failure.as_ref().map(ToString::to_string));
                thread_done.cvar.notify_all();
                for (_, lane) in lanes.all() {
                    lane.handler.stopped(failure.as_ref());
                }
            })
            .map_err(|e| Error::io("cannot spawn the I/O thread", e))?;
        Ok(Self { addrs, runtime: handle, in_memory, shared, phase, done })
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
        Ok(Pipe::drive(client, &self.runtime, Arc::new(on_event)))
    }

    /// Every bound address, all on the same port.
    pub fn local_addrs(&self) -> &[SocketAddr] {
        &self.addrs
    }

    /// Swaps in a new route table in one atomic store. In-flight requests finish with the table they started with.
    /// With compression on, its fixed responses are compressed first, on the calling thread.
    pub fn replace_routes(&self, mut routes: RouteTable) {
        if let Some(compression) = &self.shared.config.compression {
            routes.compress_fixed(compression);
        }
        self.shared.routes.store(Arc::new(routes));
    }

    /// The handle through which handlers' answers are delivered.
    pub fn responder(&self) -> Responder {
        Responder::new(self.shared.completions.clone(), self.shared.streams.clone(), self.shared.uploads.clone())
    }

    /// The server's WebSockets: send, close, subscribe and publish, from any thread.
    pub fn websockets(&self) -> Arc<crate::ws::WebSockets> {
        self.shared.websockets.clone()
    }

    /// Adds a JavaScript thread (a worker) that takes dynamic requests from now on, as the starting thread's
    /// handler does: requests are spread over the attached lanes per request, to the least busy one, and the
    /// starting thread's handler takes requests only while no lane is attached. The handler hears `unbound` and
    /// `stopped` as the first one does. Fails when the server has stopped or every lane is taken.
    pub fn attach(&self, handler: Arc<dyn Handler>) -> Result<LaneId, Error> {
        if self.is_finished() || *self.phase.borrow() != Phase::Serving {
            return Err(Error::engine("the server is stopping: no handler can be attached"));
        }
        let runtime = self.runtime.clone();
        self.shared
            .lanes
            .attach(handler, &self.shared.completions, |batcher| {
                runtime.spawn(async move { batcher.run().await }).abort_handle()
            })
            .ok_or_else(|| Error::engine(format!("a server takes at most {} attached handlers", MAX_LANES - 1)))
    }

    /// Removes an attached lane (its thread exited or is stopping): it gets no more requests or events, its
    /// requests still waiting for an answer get 503, its streamed responses are cut off and its WebSockets
    /// closed with 1001. Idempotent; lane 0 cannot be detached.
    pub fn detach(&self, lane: LaneId) {
        if self.shared.lanes.detach(lane).is_none() {
            return;
        }
        let index = usize::from(lane.0);
        self.shared.completions.fail_lane(index, || response::unavailable(messages::WORKER_GONE));
        self.shared.streams.abort_lane(index);
        self.shared.websockets.close_lane(lane.0);
    }

    /// Every lane now attached (lane 0 first), with its requests waiting for an answer.
    pub fn lanes(&self) -> Vec<(LaneId, u32)> {
        self.shared.lanes.all().into_iter().map(|(id, _)| (id, self.shared.completions.in_flight(id.0.into()))).collect()
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

    /// Blocks until the I/O thread has exited (after [`Server::stop`], or when the engine failed). Never call it
    /// on the I/O thread.
    pub fn wait(&self) {
        let mut finished = self.done.finished.lock().unwrap_or_else(|e| e.into_inner());
        while finished.is_none() {
            finished = self.done.cvar.wait(finished).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Whether the I/O thread has exited.
    pub fn is_finished(&self) -> bool {
        self.done.finished.lock().unwrap_or_else(|e| e.into_inner()).is_some()
    }

    /// Why the server stopped without being asked to, once it has: the engine failed.
    pub fn failure(&self) -> Option<Error> {
        let finished = self.done.finished.lock().unwrap_or_else(|e| e.into_inner());
        finished.as_ref().and_then(|f| f.as_ref()).map(|m| Error::engine(m.clone()))
    }
}

/// Tells every lane's handler `unbound` at most once, whichever way the I/O thread ends.
struct Unbound {
    lanes: Arc<Lanes>,
    sent: AtomicBool,
}

impl Unbound {
    fn unbound(&self) {
        if !self.sent.swap(true, Ordering::AcqRel) {
            for (_, lane) in self.lanes.all() {
                lane.handler.unbound();
            }
        }
    }
}
