//! WebSocket pub/sub across processes through Redis: the options as the package checked them, the check that
//! Redis can be reached (off the JavaScript thread, before `listen` starts anything), and the counters.

use std::time::Duration;

use napi::bindgen_prelude::{AsyncTask, Buffer, Env, Task};
use napi_derive::napi;

/// `listen({ pubsub })`, as the package checked it.
#[napi(object)]
pub struct BindingPubsub {
    /// `redis://` or `rediss://` URLs: one server, or the seed list of a cluster.
    pub redis: Vec<String>,
    pub prefix: Option<String>,
    /// Bytes of publishes kept while Redis cannot take them.
    pub buffer: Option<u32>,
    /// Milliseconds to connect, and for each command.
    pub timeout: Option<u32>,
    /// Whether `listen()` fails when Redis cannot be reached (default true).
    pub required: Option<bool>,
    /// Certificates for `rediss://`, PEM.
    pub tls: Option<BindingPubsubTls>,
}

/// `pubsub.tls`, read into bytes by the package.
#[napi(object)]
pub struct BindingPubsubTls {
    /// Any `Uint8Array` (a `Buffer` is one), as are `cert` and `key`: declared so, the package's types need no
    /// `@types/node`.
    #[napi(ts_type = "Uint8Array")]
    pub ca: Option<Buffer>,
    #[napi(ts_type = "Uint8Array")]
    pub cert: Option<Buffer>,
    #[napi(ts_type = "Uint8Array")]
    pub key: Option<Buffer>,
}

impl BindingPubsub {
    pub(crate) fn to_core(&self) -> gust_core::RelayOptions {
        let mut options = gust_core::RelayOptions::new("");
        options.urls.clone_from(&self.redis);
        if let Some(prefix) = &self.prefix {
            options.prefix.clone_from(prefix);
        }
        if let Some(buffer) = self.buffer {
            options.buffer = buffer as usize;
        }
        if let Some(ms) = self.timeout {
            options.timeout = Duration::from_millis(ms.into());
        }
        if let Some(required) = self.required {
            options.required = required;
        }
        if let Some(tls) = &self.tls {
            let bytes = |b: &Option<Buffer>| b.as_ref().map(|b| b.to_vec());
            options.tls = gust_core::RelayTls { ca: bytes(&tls.ca), cert: bytes(&tls.cert), key: bytes(&tls.key) };
        }
        options
    }
}

/// What a server's pub/sub across processes has done so far.
#[napi(object)]
pub struct BindingPubsubStats {
    pub connected: bool,
    pub sharded: bool,
    pub nodes: u32,
    pub published: f64,
    pub delivered: f64,
    pub dropped: f64,
    pub reconnects: f64,
    pub queued: f64,
    pub topics: f64,
    pub last_error: Option<String>,
}

impl From<gust_core::RelayStats> for BindingPubsubStats {
    fn from(s: gust_core::RelayStats) -> Self {
        Self {
            connected: s.connected,
            sharded: s.sharded,
            nodes: u32::try_from(s.nodes).unwrap_or(u32::MAX),
            published: s.published as f64,
            delivered: s.delivered as f64,
            dropped: s.dropped as f64,
            reconnects: s.reconnects as f64,
            queued: s.queued as f64,
            topics: s.topics as f64,
            last_error: s.last_error,
        }
    }
}

/// Connects to Redis and lets go, on libuv's thread pool.
pub struct CheckPubsub(gust_core::RelayOptions);

impl Task for CheckPubsub {
    type Output = ();
    type JsValue = ();

    fn compute(&mut self) -> napi::Result<()> {
        gust_core::check_pubsub(&self.0).map_err(crate::js_error)
    }

    fn resolve(&mut self, _env: Env, _output: ()) -> napi::Result<()> {
        Ok(())
    }
}

/// Settles once Redis was reached with `options` (its connections made, subscribing and publishing on the
/// prefix's channels allowed, then closed); rejects with the cause otherwise (wrong password, unknown host,
/// refused, a certificate that cannot be verified, an ACL that forbids it, no answer within the timeout). Runs
/// off the JavaScript thread.
#[napi]
pub fn check_pubsub(options: BindingPubsub) -> AsyncTask<CheckPubsub> {
    AsyncTask::new(CheckPubsub(options.to_core()))
}
