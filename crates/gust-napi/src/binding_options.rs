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
    /// HTTPS; absent: plain HTTP.
    pub tls: Option<BindingTls>,
    /// HTTP/2 (ALPN over TLS, h2c by prior knowledge on a plain port); absent: on, with the engine's settings.
    pub http2: Option<BindingHttp2>,
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
    pub cert: Buffer,
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
        config.validate().map_err(crate::js_error)?;
        Ok(config)
    }
}

/// What the engine knows that the facade must not restate: method names in wire order, and the defaults of
/// every option (milliseconds and bytes), so documentation and errors can quote them.
#[napi(object)]
pub struct BindingEngineInfo {
    pub methods: Vec<String>,
    pub wire_version: u32,
    pub max_body_size: u32,
    pub max_header_size: u32,
    pub min_header_size: u32,
    /// The largest `http2.max_header_list_size` the engine takes.
    pub max_header_list_size_limit: u32,
    pub header_timeout: u32,
    pub idle_timeout: u32,
    pub body_timeout: u32,
    pub send_timeout: u32,
    pub handler_timeout: u32,
    pub max_pending: u32,
    /// The largest `max_pending` the engine takes.
    pub max_pending_limit: u32,
    /// How many worker threads can attach to one server.
    pub max_workers: u32,
    /// The most I/O threads a server can have.
    pub max_io_threads: u32,
    pub max_body_buffer: u32,
}

/// The engine's constants and defaults.
#[napi]
pub fn engine_info() -> BindingEngineInfo {
    let c = gust_core::Config::default();
    let ms = |d: Duration| u32::try_from(d.as_millis()).unwrap_or(u32::MAX);
    let n = |v: usize| u32::try_from(v).unwrap_or(u32::MAX);
    BindingEngineInfo {
        methods: gust_core::method::METHODS.iter().map(|m| (*m).to_owned()).collect(),
        wire_version: gust_core::wire::VERSION.into(),
        max_body_size: n(c.max_body_size),
        max_header_size: n(c.max_header_size),
        min_header_size: n(gust_core::MIN_HEADER_SIZE),
        max_header_list_size_limit: gust_core::MAX_HEADER_LIST_SIZE,
        header_timeout: ms(c.header_timeout),
        idle_timeout: ms(c.idle_timeout),
        body_timeout: ms(c.body_timeout),
        send_timeout: ms(c.send_timeout),
        handler_timeout: c.handler_timeout.map_or(0, ms),
        max_pending: n(c.max_pending),
        max_pending_limit: n(gust_core::MAX_PENDING),
        max_workers: n(gust_core::MAX_LANES - 1),
        max_io_threads: n(gust_core::MAX_IO_THREADS),
        max_body_buffer: n(gust_core::DEFAULT_BODY_BUFFER),
    }
}
