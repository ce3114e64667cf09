//! Every limit and timeout of a server, in one place, checked before anything starts.

use std::net::SocketAddr;
use std::time::Duration;

use crate::bodies::compress::Compression;
use crate::values::error::Error;
use crate::values::ids::{MAX_IO_THREADS, MAX_LANES, MAX_PENDING};
use crate::values::tls_options::TlsOptions;

/// The smallest header limit hyper can enforce (its minimum read-buffer size).
pub const MIN_HEADER_SIZE: usize = 8192;

/// The largest HTTP/2 header list a server may accept (`Http2::max_header_list_size`): h2 holds a header block
/// whole while it decodes it, and up to four times the limit before it ends the connection, so this bounds what
/// one stream's headers can make a connection hold.
pub const MAX_HEADER_LIST_SIZE: u32 = 1024 * 1024;

/// The longest timeout accepted (about 49 days, `u32::MAX` milliseconds): deadlines must stay representable.
pub const MAX_TIMEOUT: Duration = Duration::from_millis(u32::MAX as u64);

/// Bytes of request bodies being received at once, across all connections, unless configured otherwise (or
/// [`Config::max_body_size`] when that is larger).
pub const DEFAULT_BODY_BUFFER: usize = 64 * 1024 * 1024;

/// How a server listens and what it tolerates from clients and handlers. The one source of every default: the
/// JavaScript package passes only the options a user gave.
///
/// Fields are public and more will come: start from [`Config::default`] and set what you need.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Config {
    /// Addresses to bind, all on the same port (a name like `localhost` resolves to several). Port 0 picks a
    /// free port for the first; the others take the same one. None: the server serves only in-memory
    /// connections ([`crate::Server::connect`]).
    pub addrs: Vec<SocketAddr>,
    /// Largest request body accepted, unless its route sets its own limit
    /// ([`crate::RouteTableBuilder::body_limit`]); larger ones get 413. Default 1 MiB.
    pub max_body_size: usize,
    /// Largest request head (request line and headers) accepted; larger ones get 431. Default 16 KiB.
    pub max_header_size: usize,
    /// Time a client has to send a complete request head once it started one; then the connection is closed.
    pub header_timeout: Duration,
    /// Time a keep-alive connection may sit between requests before it is closed.
    pub idle_timeout: Duration,
    /// Time a client has to send a small body whole once its head arrived (then it gets 408 and is
    /// disconnected), or the next bytes of a streamed body once its handler asked for them (then the handler is
    /// told the body timed out).
    pub body_timeout: Duration,
    /// Time a response may wait for a client that reads nothing (its socket full, as nginx's `send_timeout`), or,
    /// on HTTP/2, for one that grants no flow-control window (response bytes wait and none leave): then the
    /// connection is closed. A response quiet because its handler has nothing to send yet (SSE between events) is
    /// not waiting. Default 60 s.
    pub send_timeout: Duration,
    /// Time a handler has to answer before the client gets 503; `None` waits forever.
    pub handler_timeout: Option<Duration>,
    /// Requests handed to JavaScript and not yet answered; past it new ones get 503 with `Retry-After`. Counted
    /// from the hand-over: a request still sending a small body holds no slot.
    pub max_pending: usize,
    /// Bytes of request bodies being received at once, across all connections; a body that would pass it gets
    /// 503 with `Retry-After`. `None`: [`DEFAULT_BODY_BUFFER`] or `max_body_size`, whichever is larger.
    pub max_body_buffer: Option<usize>,
    /// Response compression; `None` (the default) sends every body as the handler gave it.
    pub compression: Option<Compression>,
    /// Decode request bodies sent with `Content-Encoding: gzip`, `br` or `zstd` before handlers see them (the
    /// body limits then count decoded bytes, so a zip bomb gets 413); another coding gets 415. Off: bodies are
    /// handed over as sent.
    pub decode_request_bodies: bool,
    /// Threads that serve connections, each with its own event loop (from 1 to [`crate::MAX_IO_THREADS`]). A
    /// connection stays on the thread that accepted it; on Linux the kernel spreads new connections between
    /// them. Default 1 ([`ThreadPlan`] for a server without workers).
    pub io_threads: usize,
    /// Serve HTTPS with this certificate and key (checked when the server starts); `None`: plain HTTP.
    pub tls: Option<TlsOptions>,
    /// HTTP/2: whether it is served (chosen by ALPN over TLS, and on a plain port when a connection opens with the
    /// client preface, h2c by prior knowledge), and its settings.
    pub http2: Http2,
    /// Runs on an I/O thread each time it is about to wait for work (tokio's `on_thread_park`): where the
    /// embedder lets its allocator give back what the thread freed, since an allocator that purges on later
    /// calls of the same thread never does on a thread gone quiet (all its connections parked, say). Runs as
    /// often as the thread waits, so it must be cheap (rate-limit the work inside). `None` (the default): nothing.
    pub on_io_wait: Option<fn()>,
    /// WebSocket pub/sub across processes and machines, through Redis ([`crate::service::relay`]); `None` (the
    /// default): publishes reach this process's sockets only.
    pub pubsub: Option<crate::service::relay::RelayOptions>,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            addrs: vec![SocketAddr::from(([0, 0, 0, 0], 3000))],
            max_body_size: 1024 * 1024,
            max_header_size: 16 * 1024,
            header_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(5),
            body_timeout: Duration::from_secs(30),
            send_timeout: Duration::from_secs(60),
            handler_timeout: Some(Duration::from_secs(30)),
            max_pending: 4096,
            max_body_buffer: None,
            compression: None,
            decode_request_bodies: false,
            io_threads: ThreadPlan::for_workers(0, None).io_threads,
            tls: None,
            http2: Http2::default(),
            on_io_wait: None,
            pubsub: None,
        }
    }
}

/// HTTP/2's settings. Start from [`Http2::default`].
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Http2 {
    /// Serve HTTP/2 beside HTTP/1.1. Default on.
    pub enabled: bool,
    /// Streams one connection may have open at once (`SETTINGS_MAX_CONCURRENT_STREAMS`); RFC 9113 advises at
    /// least 100. Default 128.
    pub max_concurrent_streams: u32,
    /// Bytes of a request body a stream may receive before its handler reads them (the initial stream window).
    /// Default 256 KiB.
    pub stream_window: u32,
    /// Bytes of request bodies all of a connection's streams together may receive before they are read (the
    /// connection window): what one connection can make the server hold. Default 1 MiB.
    pub connection_window: u32,
    /// Send a PING after this long without a frame from the client, closing the connection when its answer does
    /// not come within `keep_alive_timeout`; `None`: no pings (the idle timeout still applies). Default `None`.
    pub keep_alive_interval: Option<Duration>,
    /// How long an answer to a keep-alive PING may take. Default 20 s.
    pub keep_alive_timeout: Duration,
    /// Largest header list a request may send (`SETTINGS_MAX_HEADER_LIST_SIZE`, counted as RFC 9113 counts it:
    /// each field's name and value plus 32 bytes), from [`MIN_HEADER_SIZE`] to [`MAX_HEADER_LIST_SIZE`]; a larger
    /// one gets 431 on its stream, four times larger ends the connection. `None` (the default): the server's
    /// [`Config::max_header_size`].
    pub max_header_list_size: Option<u32>,
}

/// The smallest flow-control window HTTP/2 allows (RFC 9113 §6.9.2).
pub const MIN_WINDOW: u32 = 65_535;
/// The largest flow-control window HTTP/2 allows, and the most streams a connection may have open at once.
pub const MAX_WINDOW: u32 = (1 << 31) - 1;

impl Default for Http2 {
    fn default() -> Self {
        Self {
            enabled: true,
            max_concurrent_streams: 128,
            stream_window: 256 * 1024,
            connection_window: 1024 * 1024,
            keep_alive_interval: None,
            keep_alive_timeout: Duration::from_secs(20),
            max_header_list_size: None,
        }
    }
}

impl Http2 {
    fn validate(&self) -> Result<(), Error> {
        if self.max_concurrent_streams == 0 || self.max_concurrent_streams > MAX_WINDOW {
            return Err(Error::config(format!("http2.max_concurrent_streams must be from 1 to {MAX_WINDOW}")));
        }
        for (name, value) in [("stream_window", self.stream_window), ("connection_window", self.connection_window)] {
            if !(MIN_WINDOW..=MAX_WINDOW).contains(&value) {
                return Err(Error::config(format!("http2.{name} must be from {MIN_WINDOW} to {MAX_WINDOW} bytes")));
            }
        }
        for (name, value) in
            [("keep_alive_interval", self.keep_alive_interval), ("keep_alive_timeout", Some(self.keep_alive_timeout))]
        {
            if value.is_some_and(|v| v.is_zero() || v > MAX_TIMEOUT) {
                return Err(Error::config(format!("http2.{name} must be from 1 ms to {} s", MAX_TIMEOUT.as_secs())));
            }
        }
        if let Some(size) = self.max_header_list_size.filter(|&size| !header_list_sizes().contains(&size)) {
            return Err(Error::config(format!(
                "http2.max_header_list_size must be from {MIN_HEADER_SIZE} to {MAX_HEADER_LIST_SIZE} bytes, got {size}"
            )));
        }
        Ok(())
    }

    /// The header list limit in effect: the one set, or the server's `max_header_size`.
    pub(crate) fn header_list_size(&self, max_header_size: usize) -> u32 {
        self.max_header_list_size.unwrap_or_else(|| u32::try_from(max_header_size).unwrap_or(u32::MAX))
    }
}

fn header_list_sizes() -> std::ops::RangeInclusive<u32> {
    MIN_HEADER_SIZE as u32..=MAX_HEADER_LIST_SIZE
}

impl Config {
    /// Rejects values the engine cannot honour, naming the field.
    pub fn validate(&self) -> Result<(), Error> {
        self.http2.validate()?;
        if let Some(pubsub) = &self.pubsub {
            pubsub.validate()?;
        }
        if self.max_header_size < MIN_HEADER_SIZE {
            return Err(Error::config(format!(
                "max_header_size must be at least {MIN_HEADER_SIZE} bytes, got {}",
                self.max_header_size
            )));
        }
        if u32::try_from(self.max_body_size).is_err() {
            return Err(Error::config("max_body_size must be below 4 GiB"));
        }
        for (name, value) in [
            ("header_timeout", Some(self.header_timeout)),
            ("idle_timeout", Some(self.idle_timeout)),
            ("body_timeout", Some(self.body_timeout)),
            ("send_timeout", Some(self.send_timeout)),
            ("handler_timeout", self.handler_timeout),
        ] {
            if value == Some(Duration::ZERO) {
                return Err(Error::config(format!("{name} must be greater than zero")));
            }
            if value.is_some_and(|v| v > MAX_TIMEOUT) {
                return Err(Error::config(format!("{name} must be at most {} ms", MAX_TIMEOUT.as_millis())));
            }
        }
        if self.io_threads == 0 || self.io_threads > MAX_IO_THREADS {
            return Err(Error::config(format!("io_threads must be from 1 to {MAX_IO_THREADS}")));
        }
        if self.max_pending == 0 || self.max_pending > MAX_PENDING {
            return Err(Error::config(format!("max_pending must be from 1 to {MAX_PENDING}")));
        }
        if self.max_body_buffer.is_some_and(|b| b < self.max_body_size) {
            return Err(Error::config(format!(
                "max_body_buffer ({}) must be at least max_body_size ({}): a body of the largest size could never be read",
                self.max_body_buffer.unwrap_or(0),
                self.max_body_size
            )));
        }
        if let Some(compression) = &self.compression {
            compression.validate()?;
        }
        Ok(())
    }

    /// The body buffer in effect.
    pub fn body_buffer(&self) -> usize {
        self.max_body_buffer.unwrap_or(DEFAULT_BODY_BUFFER.max(self.max_body_size))
    }
}

/// The most JavaScript worker threads one server feeds: every lane but the one of the thread that started it.
pub const MAX_WORKERS: usize = MAX_LANES - 1;

/// Worker threads one I/O thread serves when the I/O threads are not given: one per four, at least one.
pub const WORKERS_PER_IO_THREAD: usize = 4;

/// Cores one I/O thread is planned for when the workers take the rest of the cores (`workers: 'auto'`).
pub const CORES_PER_IO_THREAD: usize = 5;

/// How a server's threads are split between serving connections (I/O threads) and running JavaScript handlers
/// (worker threads, beside the thread that started the server): the one policy, which the package asks for
/// through the binding. Counts given are kept as they are, for the caller to check; counts planned stay within
/// [`MAX_WORKERS`] and [`crate::MAX_IO_THREADS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ThreadPlan {
    /// JavaScript worker threads; 0: handlers run on the starting thread only.
    pub workers: usize,
    /// Threads serving connections ([`Config::io_threads`]).
    pub io_threads: usize,
}

impl ThreadPlan {
    /// `workers` worker threads, with `io_threads` I/O threads or, when not given, one per
    /// [`WORKERS_PER_IO_THREAD`] workers (at least one).
    pub fn for_workers(workers: usize, io_threads: Option<usize>) -> Self {
        let io_threads = io_threads.unwrap_or_else(|| workers.div_ceil(WORKERS_PER_IO_THREAD).clamp(1, MAX_IO_THREADS));
        Self { workers, io_threads }
    }

    /// As many workers as `cores` allow: the I/O threads are planned first (`io_threads`, or one per
    /// [`CORES_PER_IO_THREAD`] cores, at least one), and the workers take every other core, at least one.
    pub fn for_cores(cores: usize, io_threads: Option<usize>) -> Self {
        let io_threads = io_threads.unwrap_or_else(|| (cores / CORES_PER_IO_THREAD).clamp(1, MAX_IO_THREADS));
        Self { workers: cores.saturating_sub(io_threads).clamp(1, MAX_WORKERS), io_threads }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thread_plans_should_give_io_threads_their_share_and_workers_the_rest() {
        let plan = |workers, io| ThreadPlan::for_workers(workers, io);
        assert_eq!(plan(0, None), ThreadPlan { workers: 0, io_threads: 1 }, "no workers: one I/O thread");
        assert_eq!(Config::default().io_threads, 1, "the default is the plan without workers");
        assert_eq!(plan(4, None).io_threads, 1);
        assert_eq!(plan(5, None).io_threads, 2, "one per four workers, rounded up");
        assert_eq!(plan(MAX_WORKERS, None).io_threads, MAX_IO_THREADS, "never more than the engine takes");
        assert_eq!(plan(8, Some(3)), ThreadPlan { workers: 8, io_threads: 3 }, "a count given is kept");
        let auto = |cores, io| ThreadPlan::for_cores(cores, io);
        assert_eq!(auto(1, None), ThreadPlan { workers: 1, io_threads: 1 }, "at least one of each");
        assert_eq!(auto(9, None), ThreadPlan { workers: 8, io_threads: 1 });
        assert_eq!(auto(10, None), ThreadPlan { workers: 8, io_threads: 2 }, "one I/O thread per five cores");
        assert_eq!(auto(16, Some(4)), ThreadPlan { workers: 12, io_threads: 4 }, "the workers take the rest");
        assert_eq!(auto(2, Some(4)).workers, 1, "at least one worker");
        assert_eq!(auto(1024, None), ThreadPlan { workers: MAX_WORKERS, io_threads: MAX_IO_THREADS });
    }

    #[test]
    fn defaults_should_be_valid_and_bad_values_named() {
        assert!(Config::default().validate().is_ok());
        let err = Config { max_header_size: 100, ..Config::default() }.validate().unwrap_err();
        assert!(err.is_config() && err.to_string().contains("max_header_size"));
        let err = Config { idle_timeout: Duration::ZERO, ..Config::default() }.validate().unwrap_err();
        assert!(err.to_string().contains("idle_timeout"));
        let err = Config { header_timeout: Duration::MAX, ..Config::default() }.validate().unwrap_err();
        assert!(err.to_string().contains("header_timeout"));
        let err = Config { max_body_buffer: Some(10), ..Config::default() }.validate().unwrap_err();
        assert!(err.to_string().contains("max_body_buffer"));
        for size in [MIN_HEADER_SIZE as u32 - 1, MAX_HEADER_LIST_SIZE + 1] {
            let mut c = Config::default();
            c.http2.max_header_list_size = Some(size);
            let err = c.validate().unwrap_err();
            assert!(err.is_config() && err.to_string().contains("http2.max_header_list_size"), "{err}");
        }
        let mut c = Config::default();
        assert_eq!(c.http2.header_list_size(c.max_header_size), 16 * 1024, "the header limit by default");
        c.http2.max_header_list_size = Some(MAX_HEADER_LIST_SIZE);
        assert!(c.validate().is_ok());
        assert_eq!(c.http2.header_list_size(c.max_header_size), MAX_HEADER_LIST_SIZE);
        let big = Config { max_body_size: 100 << 20, ..Config::default() };
        assert_eq!(big.body_buffer(), 100 << 20, "the default buffer grows to hold one body of the largest size");
    }
}
