//! `listen({ workers, engine: 'one-thread' })` on the main thread: the port bound once per worker, and the
//! group its workers' one-thread servers join (`BindingServer.join`). The main thread serves nothing itself; it
//! publishes to every worker's WebSockets, stops and reloads the group, and hears when it has ended.

use std::sync::{Arc, Mutex, Weak};

use gust_core::ws::Payload;
use gust_core::{Closed, Handler, LocalGroup, Locked, RequestBatch};
use napi::bindgen_prelude::{FnArgs, Function, Uint8ArraySlice};
use napi::threadsafe_function::ThreadsafeFunctionCallMode;
use napi::{CleanupEnvHook, Env};
use napi_derive::napi;

use crate::binding_options::BindingOptions;
use crate::binding_server::BindingLane;

/// The main thread of a group of one-thread servers.
#[napi]
pub struct BindingGroup {
    group: Arc<LocalGroup>,
    key: u32,
    watch: Arc<Watch>,
    /// Stops the group at once if the main thread's environment is torn down first.
    cleanup: Mutex<Option<CleanupEnvHook<Weak<LocalGroup>>>>,
}

/// The lifecycle listener: `(event: 'unbound' | 'stopped', failure: string | null) => void`. Not weak, unlike a
/// server's: it keeps the main thread's loop alive until the group has ended and `close` let go of it. The workers
/// end on their own once their servers have stopped, and the main thread must still be there to hear it.
type GroupEvents = napi::threadsafe_function::ThreadsafeFunction<
    (String, Option<String>),
    (),
    FnArgs<(String, Option<String>)>,
    napi::Status,
    false,
>;

/// What the main thread hears of its group: `unbound` and `stopped` once every member has ended.
struct Watch(Mutex<Option<GroupEvents>>);

impl Watch {
    fn emit(&self, event: &str, failure: Option<String>) {
        if let Some(events) = self.0.locked().as_ref() {
            // Fails only while the environment is being torn down, when nobody is left to tell.
            let _ = events.call((event.to_owned(), failure), ThreadsafeFunctionCallMode::NonBlocking);
        }
    }
}

impl Handler for Watch {
    /// The main thread takes no request: every one is served by the worker whose socket accepted it.
    fn handle(&self, _batch: RequestBatch) -> Result<(), Closed> {
        Err(Closed)
    }

    fn unbound(&self) {
        self.emit("unbound", None);
    }

    fn stopped(&self, failure: Option<&gust_core::Error>) {
        self.emit("stopped", failure.map(ToString::to_string));
    }
}

#[napi]
impl BindingGroup {
    /// Binds the options' addresses once for each of `workers` slots (checking every option and certificate
    /// first) and returns the group their servers join. `events(kind, failure)` hears `'unbound'` and then
    /// `'stopped'` once the group has stopped and every worker's server with it.
    #[napi(factory)]
    pub fn start(
        env: &Env,
        options: BindingOptions,
        workers: u32,
        events: Function<FnArgs<(String, Option<String>)>, ()>,
    ) -> napi::Result<Self> {
        crate::binding_local::check_supported()?;
        let config = options.into_config()?;
        let events = events
            .build_threadsafe_function::<(String, Option<String>)>()
            .callee_handled::<false>()
            .build_callback(|ctx| Ok(ctx.value.into()))?;
        let watch = Arc::new(Watch(Mutex::new(Some(events))));
        let group = LocalGroup::bind(&config, workers as usize, watch.clone()).map_err(crate::js_error)?;
        let key = crate::servers::register_group(&group);
        let cleanup = env.add_env_cleanup_hook(Arc::downgrade(&group), |group| {
            if let Some(group) = group.upgrade() {
                group.stop(true);
            }
        })?;
        Ok(Self { group, key, watch, cleanup: Mutex::new(Some(cleanup)) })
    }

    /// What the group's pub/sub across processes has done so far; null without `pubsub`.
    #[napi]
    pub fn pubsub_stats(&self) -> Option<crate::binding_pubsub::BindingPubsubStats> {
        self.group.pubsub_stats().map(Into::into)
    }

    /// What a worker passes to `BindingServer.join`.
    #[napi(getter)]
    pub fn key(&self) -> u32 {
        self.key
    }

    /// Every bound address, without the port.
    #[napi(getter)]
    pub fn addresses(&self) -> Vec<String> {
        self.group.local_addrs().iter().map(|a| a.ip().to_string()).collect()
    }

    /// The bound port (the real one when 0 was asked for).
    #[napi(getter)]
    pub fn port(&self) -> u32 {
        self.group.local_addrs().first().map_or(0, |a| u32::from(a.port()))
    }

    /// Each worker slot served now (`lane` is the slot) and its requests waiting for an answer.
    #[napi]
    pub fn lanes(&self) -> Vec<BindingLane> {
        let slots = self.group.in_flight().into_iter();
        slots.map(|(slot, in_flight)| BindingLane { lane: slot as u32, in_flight }).collect()
    }

    /// No batch ever crosses to the main thread of a group.
    #[napi(getter)]
    pub fn batches_sent(&self) -> u32 {
        0
    }

    /// Stops every worker's server (see `BindingServer.stop`).
    #[napi]
    pub fn stop(&self, force: bool) {
        self.group.stop(force);
    }

    /// Replaces the TLS settings of every worker's handshakes from now on (and of workers that join later).
    #[napi]
    pub fn reload_tls(&self, tls: crate::binding_options::BindingTls) -> napi::Result<()> {
        self.group.reload_tls(&tls.into_core()?).map_err(crate::js_error)
    }

    /// Sends a text message to every subscriber of `topic` on every worker; how many took it.
    #[napi]
    pub fn publish_text(&self, topic: String, text: String, _exclude: Option<u32>, compress: Option<bool>) -> u32 {
        self.group.peers().publish(&topic, Payload::Text(&text), compress) as u32
    }

    /// Sends a binary message to every subscriber of `topic` on every worker; how many took it.
    #[napi]
    pub fn publish_binary(
        &self,
        topic: String,
        data: Uint8ArraySlice<'_>,
        _exclude: Option<u32>,
        compress: Option<bool>,
    ) -> u32 {
        self.group.peers().publish(&topic, Payload::Binary(&data), compress) as u32
    }

    /// Wakes, on every worker, the WebSockets published to since the last flush.
    #[napi]
    pub fn ws_flush(&self) {
        self.group.peers().flush();
    }

    /// How many WebSockets subscribe to `topic`, on every worker.
    #[napi]
    pub fn subscriber_count(&self, topic: String) -> u32 {
        self.group.peers().subscriber_count(&topic) as u32
    }

    /// How many WebSockets are open, on every worker.
    #[napi(getter)]
    pub fn websocket_count(&self) -> u32 {
        self.group.peers().len() as u32
    }

    /// Lets go of the lifecycle listener (which kept the loop alive) and the cleanup hook once the group has
    /// ended. Idempotent.
    #[napi]
    pub fn close(&self, env: &Env) -> napi::Result<()> {
        self.watch.0.locked().take();
        if let Some(hook) = self.cleanup.locked().take() {
            env.remove_env_cleanup_hook(hook)?;
        }
        Ok(())
    }
}
