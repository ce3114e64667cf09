use std::net::{IpAddr, SocketAddr};
use std::time::Duration;

use napi::bindgen_prelude::Buffer;
use napi_derive::napi;

/// `listen()` options after the TypeScript facade has checked their types. Only the options a user gave are
/// set: every default lives in `gust_core::Config`.
#[napi(object)]
pub struct BindingOptions {
    /// IP addresses to bind, already resolved from the hostname (off the JavaScript thread, by the facade).
    pub addresses: Vec<String>,
    pub port: u32,
    pub max_body_size: Option<u32>,
    pub max_header_size: Option<u32>,
    /// Milliseconds.
    pub header_timeout: Option<u32>,
    /// Milliseconds.
    pub idle_timeout: Option<u32>,
    /// Milliseconds.
    pub body_timeout: Option<u32>,
    /// Milliseconds.
    pub send_timeout: Option<u32>,
    /// Milliseconds; 0 disables the timeout.
    pub handler_timeout: Option<u32>,
    pub max_pending: Option<u32>,
    /// Bytes.
    pub max_body_buffer: Option<u32>,
    /// Response compression; absent: off.
    pub compression: Option<BindingCompression>,
    pub decompress_requests: Option<bool>,
    /// Threads serving connections (1–16); absent: 1.
    pub io_threads: Option<u32>,
    /// Which engine serves: `'threads'` (I/O threads, the default) or `'one-thread'` (the calling JavaScript
    /// thread's own loop).
    pub engine: Option<String>,
    /// HTTPS; absent: plain HTTP.
    pub tls: Option<BindingTls>,
    /// HTTP/2 (ALPN over TLS, h2c by prior knowledge on a plain port); absent: on, with the engine's settings.
    pub http2: Option<BindingHttp2>,
    /// WebSocket pub/sub across processes through Redis; absent: within the process.
    pub pubsub: Option<crate::binding_pubsub::BindingPubsub>,
}

/// HTTP/2: on or off, and every setting given (milliseconds for times, bytes for windows and sizes).
#[napi(object)]
pub struct BindingHttp2 {
    pub enabled: bool,
    pub max_concurrent_streams: Option<u32>,
    pub initial_stream_window_size: Option<u32>,
    pub initial_connection_window_size: Option<u32>,
    /// 0: no pings.
    pub keep_alive_interval: Option<u32>,
    pub keep_alive_timeout: Option<u32>,
    /// Absent: the server's `max_header_size`.
    pub max_header_list_size: Option<u32>,
}

/// HTTPS settings, PEM as bytes the facade read from strings, buffers or files; names as the facade checked them.
#[napi(object)]
pub struct BindingTls {
    /// At least one; the first is the default certificate.
    pub identities: Vec<BindingIdentity>,
    /// Authorities client certificates must chain to.
    #[napi(ts_type = "Uint8Array")]
    pub ca: Option<Buffer>,
    /// Ask clients for a certificate.
    pub request_cert: bool,
    /// With `request_cert`: refuse the handshake of a client without a valid one.
    pub reject_unauthorized: bool,
    /// `TLSv1.2` or `TLSv1.3`; absent: 1.2.
    pub min_version: Option<String>,
    /// ALPN protocols, most preferred first; absent: the engine's.
    pub alpn: Option<Vec<String>>,
}

/// A certificate chain and its private key.
#[napi(object)]
pub struct BindingIdentity {
    pub server_name: Option<String>,
    /// Any `Uint8Array` (a `Buffer` is one), as are `key` and `ca`: declared so, the package's types need no
    /// `@types/node`.
    #[napi(ts_type = "Uint8Array")]
    pub cert: Buffer,
    #[napi(ts_type = "Uint8Array")]
    pub key: Buffer,
    pub passphrase: Option<String>,
}

impl BindingTls {
    pub(crate) fn into_core(self) -> napi::Result<gust_core::TlsOptions> {
        let identities = self
            .identities
            .into_iter()
            .map(|i| {
                let mut identity = gust_core::Identity::new(i.cert.to_vec(), i.key.to_vec());
                identity.server_name = i.server_name;
                identity.passphrase = i.passphrase;
                identity
            })
            .collect();
        let mut options = gust_core::TlsOptions::with_identities(identities);
        if self.request_cert {
            let ca = self.ca.map(|ca| ca.to_vec());
            options.client_auth = Some(gust_core::ClientAuth::new(ca, self.reject_unauthorized));
        }
        options.min_version = match self.min_version.as_deref() {
            None | Some("TLSv1.2") => gust_core::TlsVersion::Tls12,
            Some("TLSv1.3") => gust_core::TlsVersion::Tls13,
            Some(other) => {
                return Err(napi::Error::new(
                    napi::Status::InvalidArg,
                    format!("tls.minVersion must be \"TLSv1.2\" or \"TLSv1.3\", got {other:?}"),
                ))
            }
        };
        options.alpn = self.alpn;
        Ok(options)
    }
}

/// Response compression settings; every absent field keeps the engine's default.
#[napi(object)]
pub struct BindingCompression {
    /// `zstd`, `br`, `gzip`, in order of preference.
    pub encodings: Option<Vec<String>>,
    /// Bytes.
    pub threshold: Option<u32>,
    /// `type/subtype` or `type/*`.
    pub types: Option<Vec<String>>,
    pub gzip_level: Option<i32>,
    pub brotli_level: Option<i32>,
    pub zstd_level: Option<i32>,
}

impl BindingCompression {
    fn into_core(self) -> napi::Result<gust_core::Compression> {
        let mut c = gust_core::Compression::default();
        if let Some(names) = self.encodings {
            c.encodings = names
                .iter()
                .map(|n| {
                    gust_core::Encoding::parse(n).filter(|_| n == "gzip" || n == "br" || n == "zstd").ok_or_else(|| {
                        napi::Error::new(
                            napi::Status::InvalidArg,
                            format!("compression encoding {n:?} is not one of \"zstd\", \"br\", \"gzip\""),
                        )
                    })
                })
                .collect::<napi::Result<_>>()?;
        }
        if let Some(v) = self.threshold {
            c.threshold = v as usize;
        }
        if self.types.is_some() {
            c.types = self.types;
        }
        if let Some(v) = self.gzip_level {
            c.gzip_level = v;
        }
        if let Some(v) = self.brotli_level {
            c.brotli_level = v;
        }
        if let Some(v) = self.zstd_level {
            c.zstd_level = v;
        }
        Ok(c)
    }
}

impl BindingOptions {
    /// Whether the one-thread engine was asked for; a name that is neither engine's is refused.
    pub(crate) fn one_thread(&self) -> napi::Result<bool> {
        match self.engine.as_deref() {
            None | Some("threads") => Ok(false),
            Some("one-thread") => Ok(true),
            Some(other) => Err(napi::Error::new(
                napi::Status::InvalidArg,
                format!("engine must be 'threads' or 'one-thread' (got '{other}')"),
            )),
        }
    }

    pub(crate) fn into_config(self) -> napi::Result<gust_core::Config> {
        let invalid = |message: String| napi::Error::new(napi::Status::InvalidArg, message);
        let port = u16::try_from(self.port).map_err(|_| invalid(format!("port {} is out of range", self.port)))?;
        let mut config = gust_core::Config::default();
        config.on_io_wait = Some(crate::give_back_freed_memory);
        config.addrs = self
            .addresses
            .iter()
            .map(|a| {
                a.parse::<IpAddr>()
                    .map(|ip| SocketAddr::new(ip, port))
                    .map_err(|_| invalid(format!("{a:?} is not an IP address")))
            })
            .collect::<napi::Result<_>>()?;
        let ms = |v: u32| Duration::from_millis(v.into());
        if let Some(v) = self.max_body_size {
            config.max_body_size = v as usize;
        }
        if let Some(v) = self.max_header_size {
            config.max_header_size = v as usize;
        }
        if let Some(v) = self.header_timeout {
            config.header_timeout = ms(v);
        }
        if let Some(v) = self.idle_timeout {
            config.idle_timeout = ms(v);
        }
        if let Some(v) = self.body_timeout {
            config.body_timeout = ms(v);
        }
        if let Some(v) = self.send_timeout {
            config.send_timeout = ms(v);
        }
        if let Some(v) = self.handler_timeout {
            config.handler_timeout = (v > 0).then(|| ms(v));
        }
        if let Some(v) = self.max_pending {
            config.max_pending = v as usize;
        }
        if let Some(v) = self.max_body_buffer {
            config.max_body_buffer = Some(v as usize);
        }
        if let Some(c) = self.compression {
            config.compression = Some(c.into_core()?);
        }
        config.decode_request_bodies = self.decompress_requests.unwrap_or(false);
        if let Some(n) = self.io_threads {
            config.io_threads = n as usize;
        }
        if let Some(h2) = self.http2 {
            let settings = &mut config.http2;
            settings.enabled = h2.enabled;
            if let Some(v) = h2.max_concurrent_streams {
                settings.max_concurrent_streams = v;
            }
            if let Some(v) = h2.initial_stream_window_size {
                settings.stream_window = v;
            }
            if let Some(v) = h2.initial_connection_window_size {
                settings.connection_window = v;
            }
            if let Some(v) = h2.keep_alive_interval {
                settings.keep_alive_interval = (v > 0).then(|| ms(v));
            }
            if let Some(v) = h2.keep_alive_timeout {
                settings.keep_alive_timeout = ms(v);
            }
            if let Some(v) = h2.max_header_list_size {
                settings.max_header_list_size = Some(v);
            }
        }
        if let Some(tls) = self.tls {
            config.tls = Some(tls.into_core()?);
        }
        config.pubsub = self.pubsub.as_ref().map(crate::binding_pubsub::BindingPubsub::to_core);
        config.validate().map_err(crate::js_error)?;
        Ok(config)
    }
}

/// What the engine knows that the package must not restate: method names in wire order, the statuses a response
/// may have, the texts of the engine's own answers, every option with its range and default, and the static-file
/// options. The package reads it once, at load (`packages/gust/src/native/engine.ts`).
#[napi(object)]
pub struct BindingEngineInfo {
    pub methods: Vec<String>,
    /// The least status a response may have.
    pub min_status: u32,
    /// The greatest status a response may have.
    pub max_status: u32,
    /// The texts of the engine's own answers, for the package to answer the same way.
    pub messages: BindingMessages,
    /// Every option of `listen()` the engine takes, in the order of `BindingOptions`, then every integer setting
    /// inside one (dotted: `http2.keepAliveTimeout`, `compression.level.gzip`).
    pub options: Vec<BindingOptionInfo>,
    /// How many worker threads can attach to one server.
    pub max_workers: u32,
    /// `app.static()`'s options and their defaults.
    pub static_options: crate::binding_route::BindingStaticDefaults,
    /// The codings `compression.encodings` may list, in the engine's default order of preference.
    pub compression_encodings: Vec<String>,
}

/// An option as `listen()` takes it: an integer's least and greatest value and the engine's default (in
/// milliseconds and bytes), or only the name for an option of another kind (an object, a boolean).
#[napi(object)]
pub struct BindingOptionInfo {
    pub name: String,
    pub min: Option<u32>,
    pub max: Option<u32>,
    /// What the engine uses when the option is not given, when that is a number (0 where 0 turns a timeout off).
    pub default: Option<u32>,
}

/// The engine's stable answer texts (`gust_core::messages`), by what they answer.
#[napi(object)]
pub struct BindingMessages {
    pub not_found: String,
    pub method_not_allowed: String,
    pub payload_too_large: String,
    pub bad_request_body: String,
    pub body_timeout: String,
    pub bad_path_encoding: String,
    pub queue_full: String,
    pub handler_timeout: String,
    pub shutting_down: String,
    pub worker_gone: String,
    pub internal: String,
    pub bad_host: String,
    pub bad_target: String,
    pub not_implemented: String,
    pub unsupported_coding: String,
    pub bodies_full: String,
    pub rate_limit_unreachable: String,
}

impl BindingMessages {
    fn new() -> Self {
        use gust_core::messages as m;
        Self {
            not_found: m::NOT_FOUND.into(),
            method_not_allowed: m::METHOD_NOT_ALLOWED.into(),
            payload_too_large: m::PAYLOAD_TOO_LARGE.into(),
            bad_request_body: m::BAD_REQUEST_BODY.into(),
            body_timeout: m::BODY_TIMEOUT.into(),
            bad_path_encoding: m::BAD_PATH_ENCODING.into(),
            queue_full: m::QUEUE_FULL.into(),
            handler_timeout: m::HANDLER_TIMEOUT.into(),
            shutting_down: m::SHUTTING_DOWN.into(),
            worker_gone: m::WORKER_GONE.into(),
            internal: m::INTERNAL.into(),
            bad_host: m::BAD_HOST.into(),
            bad_target: m::BAD_TARGET.into(),
            not_implemented: m::NOT_IMPLEMENTED.into(),
            unsupported_coding: m::UNSUPPORTED_CODING.into(),
            bodies_full: m::BODIES_FULL.into(),
            rate_limit_unreachable: m::RATE_LIMIT_UNREACHABLE.into(),
        }
    }
}

/// The engine's constants and defaults.
#[napi]
pub fn engine_info() -> BindingEngineInfo {
    BindingEngineInfo {
        methods: gust_core::method::METHODS.iter().map(|m| (*m).to_owned()).collect(),
        min_status: gust_core::MIN_STATUS.into(),
        max_status: gust_core::MAX_STATUS.into(),
        messages: BindingMessages::new(),
        options: options(),
        max_workers: count(gust_core::MAX_WORKERS),
        static_options: crate::binding_route::BindingStaticDefaults::new(),
        compression_encodings: gust_core::Compression::default()
            .encodings
            .iter()
            .map(|e| e.token().to_owned())
            .collect(),
    }
}

/// Whether `compression.types` may list `t` (`application/json`, `text/*`): the engine's rule, asked by the
/// package when it checks `listen()` options.
#[napi]
pub fn compression_type_accepts(t: String) -> bool {
    gust_core::Compression::is_type_pattern(&t)
}

fn count(v: usize) -> u32 {
    u32::try_from(v).unwrap_or(u32::MAX)
}

fn millis(d: Duration) -> u32 {
    u32::try_from(d.as_millis()).unwrap_or(u32::MAX)
}

/// The rows of [`BindingEngineInfo::options`]. A new integer option of `listen()` is a field of
/// [`BindingOptions`], its line in [`BindingOptions::into_config`], and its row here: the package checks it and
/// names it in its errors from this table.
fn options() -> Vec<BindingOptionInfo> {
    use gust_core::{Compression, Encoding};
    let c = gust_core::Config::default();
    let h = &c.http2;
    let z = Compression::default();
    let max_ms = millis(gust_core::MAX_TIMEOUT);
    let int = |name: &str, min: u32, max: u32, default: Option<u32>| BindingOptionInfo {
        name: name.into(),
        min: Some(min),
        max: Some(max),
        default,
    };
    let other = |name: &str| BindingOptionInfo { name: name.into(), min: None, max: None, default: None };
    let timeout = |name: &str, default: Duration| int(name, 1, max_ms, Some(millis(default)));
    let level = |name: &str, encoding: Encoding, default: i32| {
        let levels = Compression::levels(encoding);
        let u = |v: i32| u32::try_from(v).unwrap_or(0);
        int(name, u(*levels.start()), u(*levels.end()), Some(u(default)))
    };
    let port = c.addrs.first().map_or(0, |a| a.port());
    let pubsub = gust_core::RelayOptions::new("");
    vec![
        int("port", 0, u16::MAX.into(), Some(port.into())),
        int("maxBodySize", 0, u32::MAX, Some(count(c.max_body_size))),
        int("maxHeaderSize", count(gust_core::MIN_HEADER_SIZE), u32::MAX, Some(count(c.max_header_size))),
        timeout("headerTimeout", c.header_timeout),
        timeout("idleTimeout", c.idle_timeout),
        timeout("bodyTimeout", c.body_timeout),
        timeout("sendTimeout", c.send_timeout),
        int("handlerTimeout", 0, max_ms, Some(c.handler_timeout.map_or(0, millis))),
        int("maxPending", 1, count(gust_core::MAX_PENDING), Some(count(c.max_pending))),
        int("maxBodyBuffer", 0, u32::MAX, Some(count(c.body_buffer()))),
        other("compression"),
        other("decompressRequests"),
        int("ioThreads", 1, count(gust_core::MAX_IO_THREADS), Some(count(c.io_threads))),
        other("engine"),
        other("tls"),
        other("http2"),
        int("http2.maxConcurrentStreams", 1, gust_core::MAX_WINDOW, Some(h.max_concurrent_streams)),
        int("http2.initialStreamWindowSize", gust_core::MIN_WINDOW, gust_core::MAX_WINDOW, Some(h.stream_window)),
        int(
            "http2.initialConnectionWindowSize",
            gust_core::MIN_WINDOW,
            gust_core::MAX_WINDOW,
            Some(h.connection_window),
        ),
        int("http2.keepAliveInterval", 0, max_ms, Some(h.keep_alive_interval.map_or(0, millis))),
        int("http2.keepAliveTimeout", 1, max_ms, Some(millis(h.keep_alive_timeout))),
        int(
            "http2.maxHeaderListSize",
            count(gust_core::MIN_HEADER_SIZE),
            gust_core::MAX_HEADER_LIST_SIZE,
            h.max_header_list_size,
        ),
        int("compression.threshold", 0, u32::MAX, Some(count(z.threshold))),
        level("compression.level.gzip", Encoding::Gzip, z.gzip_level),
        level("compression.level.br", Encoding::Br, z.brotli_level),
        level("compression.level.zstd", Encoding::Zstd, z.zstd_level),
        other("pubsub"),
        other("pubsub.redis"),
        other("pubsub.prefix"),
        int("pubsub.buffer", 0, u32::MAX, Some(count(pubsub.buffer))),
        timeout("pubsub.timeout", pubsub.timeout),
        other("pubsub.required"),
        other("pubsub.tls"),
    ]
}

/// How many worker threads and I/O threads a server gets (`gust_core::ThreadPlan`, the one policy).
#[napi(object)]
pub struct BindingThreadPlan {
    pub workers: u32,
    pub io_threads: u32,
}

/// Splits a server's threads: `workers` worker threads (absent: `'auto'`, as many as `cores` leave beside the
/// I/O threads), and the I/O threads asked for (absent: the engine's share). The package checks both counts first.
#[napi]
pub fn thread_plan(cores: u32, workers: Option<u32>, io_threads: Option<u32>) -> BindingThreadPlan {
    let io_threads = io_threads.map(|n| n as usize);
    let plan = match workers {
        Some(n) => gust_core::ThreadPlan::for_workers(n as usize, io_threads),
        None => gust_core::ThreadPlan::for_cores(cores as usize, io_threads),
    };
    BindingThreadPlan { workers: count(plan.workers), io_threads: count(plan.io_threads) }
}
