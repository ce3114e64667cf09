use std::rc::Rc;
use std::sync::{Arc, Mutex, Weak};

use bytes::Bytes;
use gust_core::ws::WebSockets;
use gust_core::{AnswerBatch, LaneId, Locked, Responder, Server};
use napi::bindgen_prelude::{Buffer, FnArgs, Function, Uint32ArraySlice, Uint8ArraySlice};
use napi::JsString;
use napi::{CleanupEnvHook, Env};
use napi_derive::napi;

use crate::binding_connection::{self, BindingConnection};
use crate::binding_local::{LocalHandler, LocalHost};
use crate::binding_options::BindingOptions;
use crate::binding_rate_limit::BindingLimits;
use crate::binding_route::{build_table, BindingMount, BindingRoute};
use crate::js_handler::{Inbox, JsHandler};

/// A running native server, as one JavaScript thread sees it: the thread that started it, or a worker
/// attached to it (a lane of its own).
#[napi]
pub struct BindingServer {
    server: Arc<Server>,
    key: u32,
    /// The lane this thread's dispatcher is; `None` for the thread that started the server (lane 0).
    lane: Option<LaneId>,
    responder: Responder,
    /// Read by the WebSocket pass-throughs (`binding_server_ws`).
    pub(crate) websockets: Arc<WebSockets>,
    host: Host,
    /// Batches handed to this thread's dispatcher and not taken yet.
    inbox: Arc<Inbox>,
    /// Run if the environment is torn down first (a worker terminated): the starting thread's stops the
    /// server, so its port is not left bound; an attached one's detaches its lane and releases its threadsafe
    /// functions. Removed by `close`.
    cleanup: Mutex<Option<CleanupEnvHook<Cleanup>>>,
}

/// Which engine serves this thread, and how this thread takes its requests.
enum Host {
    /// The threaded engine: I/O threads hand batches to this thread's dispatcher through a threadsafe function.
    Threaded(Arc<JsHandler>),
    /// The one-thread engine: its host drives it from this thread's loop (`binding_local`; on a system without it,
    /// a stand-in that cannot be built).
    Local(Rc<LocalHost>),
}

/// What an environment's cleanup hook needs.
struct Cleanup {
    server: Weak<Server>,
    lane: Option<LaneId>,
    host: WeakHost,
}

/// A [`Host`] the cleanup hook does not keep alive.
enum WeakHost {
    Threaded(Weak<JsHandler>),
    Local(std::rc::Weak<LocalHost>),
}

impl Cleanup {
    fn run(self) {
        match (self.host, self.lane) {
            (WeakHost::Local(local), _) => {
                if let Some(local) = local.upgrade() {
                    local.close_now();
                }
            }
            (WeakHost::Threaded(_), None) => {
                if let Some(server) = self.server.upgrade() {
                    server.stop(true);
                    server.wait();
                }
            }
            (WeakHost::Threaded(handler), Some(lane)) => {
                if let Some(handler) = handler.upgrade() {
                    if let Some(server) = self.server.upgrade() {
                        server.detach(lane, || handler.close_inbox());
                    }
                    handler.release_all();
                }
            }
        }
    }
}

/// A lane of a server and its requests waiting for an answer.
#[napi(object)]
pub struct BindingLane {
    pub lane: u32,
    pub in_flight: u32,
}

/// The dispatcher's and the lifecycle listener's threadsafe functions, built on the calling thread.
fn js_handler(
    dispatch: Function<(), ()>,
    events: Function<FnArgs<(String, Option<String>)>, ()>,
    attached: bool,
) -> napi::Result<(Arc<JsHandler>, Arc<Inbox>)> {
    let inbox = Arc::new(Inbox::default());
    let dispatch = dispatch.build_threadsafe_function::<()>().callee_handled::<false>().build_callback(|_| Ok(()))?;
    let events = events
        .build_threadsafe_function::<(String, Option<String>)>()
        .callee_handled::<false>()
        .weak::<true>()
        .build_callback(|ctx| Ok(ctx.value.into()))?;
    Ok((Arc::new(JsHandler::new(dispatch, inbox.clone(), events, attached)), inbox))
}

/// An answer the engine refused (bad status or header); the client got a 500.
#[napi(object)]
pub struct BindingInvalidAnswer {
    pub id: u32,
    pub message: String,
}

/// What became of a batch of answers, when anything needs the caller's attention.
#[napi(object)]
pub struct BindingOutcome {
    /// Answers refused and sent as 500.
    pub invalid: Option<Vec<BindingInvalidAnswer>>,
    /// Streams whose queue is full: their producers wait for a drain event.
    pub full: Option<Vec<u32>>,
}

/// Room past twice a batch's bytes that is left as it is: shrinking costs a copy, and small batches are common.
const SLACK: usize = 4096;

#[napi]
impl BindingServer {
    /// Binds and starts serving. `dispatch()` is called when requests wait (every dynamic request of one turn of
    /// the I/O loop, and events), and takes them with `takeBatch()`;
    /// `events(kind, failure)` hears `'unbound'` once the port is free again and `'stopped'` last, with the
    /// reason when the engine failed. `notFound` and `methodFallback` are handler indexes for unknown paths and
    /// for 405/OPTIONS (the `Allow` value is the request's only parameter); without them Rust answers those.
    /// With no address, nothing is bound: the server answers only `connect()`ed connections, and does not keep
    /// the event loop alive on its own (whoever waits on such a connection does).
    #[napi(factory)]
    #[allow(clippy::too_many_arguments)]
    pub fn start(
        env: &Env,
        options: BindingOptions,
        routes: Vec<BindingRoute>,
        mounts: Vec<BindingMount>,
        not_found: Option<u32>,
        method_fallback: Option<u32>,
        dispatch: Function<(), ()>,
        events: Function<FnArgs<(String, Option<String>)>, ()>,
        limits: Option<BindingLimits>,
    ) -> napi::Result<Self> {
        let one_thread = options.one_thread()?;
        let config = options.into_config()?;
        let table = build_table(routes, mounts, not_found, method_fallback, limits)?;
        // In-memory servers (`app.request`) are the threaded engine's whichever is asked for.
        if one_thread && !config.addrs.is_empty() {
            // Driven from this thread's loop (`binding_local`).
            return Self::local(env, dispatch, events, move |handler| {
                gust_core::Server::start_local(config, table, handler)
            });
        }
        let in_memory = config.addrs.is_empty();
        let (handler, inbox) = js_handler(dispatch, events, false)?;
        if in_memory {
            handler.unref(env)?;
        }
        let server = Arc::new(Server::start(config, table, handler.clone()).map_err(crate::js_error)?);
        Self::new(env, server, None, handler, inbox)
    }

    /// Joins, as worker slot `slot`, the group `key` the main thread bound (`BindingGroup`): this thread serves
    /// the slot's connections on the one-thread engine, with its own routes (the same as every thread's), and
    /// publishes to every worker's WebSockets. Throws when no such group is running, or it is stopping.
    #[napi(factory)]
    #[allow(clippy::too_many_arguments)]
    pub fn join(
        env: &Env,
        key: u32,
        slot: u32,
        options: BindingOptions,
        routes: Vec<BindingRoute>,
        mounts: Vec<BindingMount>,
        not_found: Option<u32>,
        method_fallback: Option<u32>,
        dispatch: Function<(), ()>,
        events: Function<FnArgs<(String, Option<String>)>, ()>,
        limits: Option<BindingLimits>,
    ) -> napi::Result<Self> {
        let group = crate::servers::find_group(key)
            .ok_or_else(|| napi::Error::from_reason(format!("no server with key {key} is running in this process")))?;
        let config = options.into_config()?;
        let table = build_table(routes, mounts, not_found, method_fallback, limits)?;
        Self::local(env, dispatch, events, move |handler| group.join(slot as usize, config, table, handler))
    }

    /// A one-thread server `start` builds around this thread's handler, hosted on this thread's loop.
    fn local(
        env: &Env,
        dispatch: Function<(), ()>,
        events: Function<FnArgs<(String, Option<String>)>, ()>,
        start: impl FnOnce(
            Arc<dyn gust_core::Handler>,
        ) -> Result<(gust_core::Server, gust_core::LocalEngine), gust_core::Error>,
    ) -> napi::Result<Self> {
        use napi::JsValue;
        crate::binding_local::check_supported()?;
        let inbox = Arc::new(Inbox::default());
        let handler = Arc::new(LocalHandler::new(inbox.clone()));
        let (server, engine) = start(handler.clone()).map_err(crate::js_error)?;
        let server = Arc::new(server);
        let local = LocalHost::start(env, engine, handler, dispatch.raw(), events.raw())?;
        let hook =
            Cleanup { server: Arc::downgrade(&server), lane: None, host: WeakHost::Local(Rc::downgrade(&local)) };
        let cleanup = env.add_env_cleanup_hook(hook, Cleanup::run)?;
        Ok(Self {
            responder: server.responder(),
            websockets: server.websockets(),
            key: 0,
            lane: None,
            server,
            host: Host::Local(local),
            inbox,
            cleanup: Mutex::new(Some(cleanup)),
        })
    }

    /// Runs `deliver` (answers, WebSocket sends) so that on the one-thread engine what it woke is written before
    /// this call returns; on the threaded engine the I/O threads write it.
    pub(crate) fn delivering<T>(&self, deliver: impl FnOnce() -> T) -> T {
        match &self.host {
            Host::Local(local) => local.deliver(deliver),
            Host::Threaded(_) => deliver(),
        }
    }

    /// Attaches this thread (a worker) to the server `key` another thread started: from now on it takes its
    /// share of the dynamic requests, through `dispatch`, and hears the server's lifecycle through `events`, as
    /// the starting thread does. The route table is the starting thread's: this thread's handlers must sit at
    /// the same indexes. Throws when no such server is running.
    #[napi(factory)]
    pub fn attach(
        env: &Env,
        key: u32,
        dispatch: Function<(), ()>,
        events: Function<FnArgs<(String, Option<String>)>, ()>,
    ) -> napi::Result<Self> {
        let server = crate::servers::find(key)
            .ok_or_else(|| napi::Error::from_reason(format!("no server with key {key} is running in this process")))?;
        let (handler, inbox) = js_handler(dispatch, events, true)?;
        let lane = server.attach(handler.clone()).map_err(crate::js_error)?;
        Self::new(env, server, Some(lane), handler, inbox)
    }

    fn new(
        env: &Env,
        server: Arc<Server>,
        lane: Option<LaneId>,
        handler: Arc<JsHandler>,
        inbox: Arc<Inbox>,
    ) -> napi::Result<Self> {
        let key = if lane.is_none() { crate::servers::register(&server) } else { 0 };
        // Registered after the threadsafe functions, so it runs before their own cleanup (hooks run in reverse).
        let hook =
            Cleanup { server: Arc::downgrade(&server), lane, host: WeakHost::Threaded(Arc::downgrade(&handler)) };
        let cleanup = env.add_env_cleanup_hook(hook, Cleanup::run)?;
        Ok(Self {
            responder: lane.map_or_else(|| server.responder(), |lane| server.responder_for(lane)),
            websockets: server.websockets(),
            key,
            lane,
            server,
            host: Host::Threaded(handler),
            inbox,
            cleanup: Mutex::new(Some(cleanup)),
        })
    }

    /// What a worker passes to `attach` to join this server (0 on an attached thread).
    #[napi(getter)]
    pub fn key(&self) -> u32 {
        self.key
    }

    /// This thread's lane: 0 for the thread that started the server.
    #[napi(getter)]
    pub fn lane(&self) -> u32 {
        self.lane.map_or(0, LaneId::index)
    }

    /// Whether `respond` writes what it can to the sockets before it returns (the one-thread engine: the
    /// sockets live on this thread), rather than handing the answers to an I/O thread. The package then hands a
    /// large stream chunk over as soon as it is written, so the socket takes it while the producer goes on.
    #[napi(getter)]
    pub fn writes_in_call(&self) -> bool {
        matches!(self.host, Host::Local(_))
    }

    /// On Bun with the one-thread engine, where io_uring is allowed: the descriptor of a socket the package must
    /// watch (`Bun.connect({ fd })`), calling `woken` for each chunk read; it owns the descriptor from then on.
    /// Null otherwise (and after the first call).
    #[napi]
    pub fn take_wake_reader(&self) -> Option<i32> {
        match &self.host {
            Host::Local(local) => local.take_wake_reader(),
            Host::Threaded(_) => None,
        }
    }

    /// One-thread engine: drops every connection now, as the environment's teardown does, for a worker whose
    /// thread is ending (its `exit` listeners run). Bun runs a dead worker's teardown only later: until then its
    /// connections stayed open unserved, and a client that reused one 600 ms after the crash saw it hang up.
    /// Nothing on the threaded engine, whose connections belong to the I/O threads.
    #[napi]
    pub fn close_now(&self) {
        if let Host::Local(local) = &self.host {
            local.close_now();
        }
    }

    /// The socket from `take_wake_reader` was readable: the engine takes a turn.
    #[napi]
    pub fn woken(&self) {
        if let Host::Local(local) = &self.host {
            local.on_woken();
        }
    }

    /// What the server's pub/sub across processes has done so far; null without `pubsub`.
    #[napi]
    pub fn pubsub_stats(&self) -> Option<crate::binding_pubsub::BindingPubsubStats> {
        self.server.pubsub_stats().map(Into::into)
    }

    /// Every lane attached now (lane 0 first) and its requests waiting for an answer.
    #[napi]
    pub fn lanes(&self) -> Vec<BindingLane> {
        self.server.lanes().into_iter().map(|(lane, in_flight)| BindingLane { lane: lane.index(), in_flight }).collect()
    }

    /// Every bound address, without the port (one per address a hostname resolved to).
    #[napi(getter)]
    pub fn addresses(&self) -> Vec<String> {
        self.server.local_addrs().iter().map(|a| a.ip().to_string()).collect()
    }

    /// The bound port (the real one when 0 was asked for).
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        self.server.local_addr().map_or(0, |a| u32::from(a.port()))
    }

    /// Every batch waiting for this thread's dispatcher, as one buffer (the format of `gust_core::wire`), or
    /// `null` when none waits: the dispatcher calls it when the engine rings. Cost: a lock; the bytes are not
    /// copied when one batch waits.
    /// The buffer keeps its allocation until collected, and a batch starts with room for one like the last
    /// (`Batcher::run`): one with far more room than bytes (a few requests after a large upload chunk) is shrunk
    /// first, so what JavaScript holds stays within twice what it sees. On a runtime whose collector does not
    /// count external buffers (see [`crate::gc_pressure`]), the allocation's size is reported to it, one call
    /// per batch.
    /// Declared as `Uint8Array` (it is a `Buffer`) so the package's types need no `@types/node`.
    #[napi(ts_return_type = "Uint8Array | null")]
    pub fn take_batch(&self, env: &Env) -> Option<Buffer> {
        let mut bytes = self.inbox.take();
        if bytes.is_empty() {
            return None;
        }
        if bytes.capacity() > 2 * bytes.len() + SLACK {
            bytes.shrink_to_fit();
        }
        crate::gc_pressure::report(env, bytes.capacity());
        Some(Buffer::from(bytes))
    }

    /// Batches handed to the dispatcher so far (wrapping at 2^32): one not yet received is still on its way.
    #[napi(getter)]
    pub fn batches_sent(&self) -> u32 {
        match &self.host {
            Host::Local(local) => local.handler().sent(),
            Host::Threaded(handler) => handler.sent(),
        }
    }

    /// Opens a connection without a socket, served as an accepted TCP connection from `127.0.0.1` is.
    /// `onEvent(kind, bytes)` hears the server's bytes (kind 0, after each `read()`), its end (1), and each
    /// write it took (2). Throws once the server is stopping.
    #[napi(ts_args_type = "onEvent: (kind: number, bytes?: Uint8Array | undefined | null) => void")]
    pub fn connect(&self, on_event: Function<FnArgs<(u32, Option<Buffer>)>, ()>) -> napi::Result<BindingConnection> {
        let forward = binding_connection::forward(binding_connection::on_event(on_event)?);
        let pipe = self.delivering(|| self.server.connect(forward)).map_err(crate::js_error)?;
        Ok(BindingConnection::new(pipe))
    }

    /// Whether a `FILE` answer naming `target` would find something to serve (the package sends the app's
    /// not-found answer instead when it would not). Blocking: a `stat` or a few.
    #[napi]
    pub fn serves_file(&self, target: String) -> bool {
        self.server.serves_file(target.as_bytes())
    }

    /// Replaces the TLS settings new handshakes use (certificates, client certificates, versions, ALPN); open
    /// connections keep theirs. Throws, changing nothing, on a bad setting or a server started without TLS.
    #[napi]
    pub fn reload_tls(&self, tls: crate::binding_options::BindingTls) -> napi::Result<()> {
        self.server.reload_tls(&tls.into_core()?).map_err(crate::js_error)
    }

    /// Swaps the whole route table atomically; requests in flight keep the old one.
    #[napi]
    pub fn set_routes(
        &self,
        routes: Vec<BindingRoute>,
        mounts: Vec<BindingMount>,
        not_found: Option<u32>,
        method_fallback: Option<u32>,
        limits: Option<BindingLimits>,
    ) -> napi::Result<()> {
        self.server
            .replace_routes(build_table(routes, mounts, not_found, method_fallback, limits)?)
            .map_err(crate::js_error)?;
        Ok(())
    }

    /// Answers a batch of requests in one call, in the format of `gust_core::wire::answer`: `meta` per record
    /// (whole answers, streamed heads, body chunks), every header and text body of the batch in `text`, the byte
    /// bodies in `binary`. Returns nothing when all went well, otherwise the answers the engine refused (sent as
    /// 500) and the streams that are full. Throws when the batch itself is malformed; then nothing of it was sent,
    /// and the caller may answer its requests one by one.
    ///
    /// Cost: one string read for the whole batch (one copy when it is ASCII), one copy per byte body.
    #[napi]
    pub fn respond(
        &self,
        meta: Uint32ArraySlice<'_>,
        text: JsString<'_>,
        binary: Vec<Uint8ArraySlice<'_>>,
    ) -> napi::Result<Option<BindingOutcome>> {
        let text = crate::batch_text::read(&text)?;
        let binary = binary.iter().map(|b| Bytes::copy_from_slice(b)).collect();
        let batch = AnswerBatch::decode(&meta, text, binary).map_err(|e| napi::Error::from_reason(e.to_string()))?;
        let outcome = self.answer(&batch);
        if outcome.invalid.is_empty() && outcome.full.is_empty() {
            return Ok(None);
        }
        let invalid = (!outcome.invalid.is_empty()).then(|| {
            outcome.invalid.into_iter().map(|(id, err)| BindingInvalidAnswer { id, message: err.to_string() }).collect()
        });
        Ok(Some(BindingOutcome { invalid, full: (!outcome.full.is_empty()).then_some(outcome.full) }))
    }

    /// Hands `batch` to the engine. On the one-thread engine its writes happen before this returns, and only the
    /// streams still over their high-water mark after them are reported full.
    fn answer(&self, batch: &AnswerBatch) -> gust_core::Outcome {
        match &self.host {
            Host::Local(local) => {
                let mut outcome = local.deliver(|| self.responder.respond_before_writing(batch.records()));
                self.responder.pause_full(&mut outcome);
                outcome
            }
            Host::Threaded(_) => self.responder.respond(batch.records()),
        }
    }

    /// Stops the server: the `events` callback hears `'unbound'` once the port is free and `'stopped'` once every
    /// connection is closed. `force` closes in-flight requests too, and may follow a graceful stop to cut it
    /// short.
    #[napi]
    pub fn stop(&self, force: bool) {
        self.delivering(|| self.server.stop(force));
    }

    /// Lets go of the JavaScript side once the server has stopped: the dispatcher (which keeps the event loop
    /// alive) and the environment cleanup hook. On an attached thread, before the server stopped, it leaves the
    /// server instead: its lane takes no more requests, and those it had not answered get 503. Idempotent.
    #[napi]
    pub fn close(&self, env: &Env) -> napi::Result<()> {
        match &self.host {
            Host::Threaded(handler) => {
                if let Some(lane) = self.lane {
                    self.server.detach(lane, || handler.close_inbox());
                }
                handler.release();
            }
            Host::Local(local) => local.close(),
        }
        if let Some(hook) = self.cleanup.locked().take() {
            env.remove_env_cleanup_hook(hook)?;
        }
        Ok(())
    }
}
