//! The one error type of the core: opaque, with `is_*` questions (hyper's shape).

use std::fmt;

/// An error raised while configuring or starting a server, or the reason a running one died.
///
/// Per-request failures never become an `Error`: they are answered with a status code. An `Error` is always a
/// developer's mistake (a bad route, a bad option) or an environment failure (the port is taken).
pub struct Error {
    kind: Kind,
    message: String,
    source: Option<Box<dyn std::error::Error + Send + Sync>>,
    /// The address a listening socket could not be bound to, for a failure to listen.
    addr: Option<std::net::SocketAddr>,
    /// What failed, as a code programs test (`ECONNREFUSED`, `ERR_GUST_REDIS_AUTH`…), where the engine names one.
    code: Option<&'static str>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    Route,
    Config,
    Io,
    Engine,
}

impl Error {
    pub(crate) fn route(message: impl Into<String>) -> Self {
        Self::new(Kind::Route, message.into(), None)
    }

    pub(crate) fn config(message: impl Into<String>) -> Self {
        Self::new(Kind::Config, message.into(), None)
    }

    pub(crate) fn io(message: impl Into<String>, source: std::io::Error) -> Self {
        Self::new(Kind::Io, message.into(), Some(Box::new(source)))
    }

    pub(crate) fn engine(message: impl Into<String>) -> Self {
        Self::new(Kind::Engine, message.into(), None)
    }

    /// The operating system refused a listening socket on `addr` (taken, not allowed, not this machine's).
    pub(crate) fn listen(addr: std::net::SocketAddr, source: std::io::Error) -> Self {
        Self { addr: Some(addr), ..Self::io(format!("cannot listen on {addr}"), source) }
    }

    fn new(kind: Kind, message: String, source: Option<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self { kind, message, source, addr: None, code: None }
    }

    /// The same error, carrying `code`.
    pub(crate) fn with_code(self, code: &'static str) -> Self {
        Self { code: Some(code), ..self }
    }

    /// What failed, as a stable code, where the engine names one: for a Redis that `pubsub` cannot reach,
    /// `ECONNREFUSED`, `ENOTFOUND`, `ETIMEDOUT`, or `ERR_GUST_REDIS_AUTH`, `ERR_GUST_REDIS_ACL`,
    /// `ERR_GUST_REDIS_TLS`, `ERR_GUST_REDIS_RESP3` and `ERR_GUST_REDIS` (anything else). A failure to listen is
    /// told by [`os_error`](Self::os_error) instead.
    pub fn code(&self) -> Option<&'static str> {
        self.code
    }

    /// The operating system's error behind an [`is_io`](Self::is_io) failure, when there is one: its kind and
    /// number say what happened (`AddrInUse`, `PermissionDenied`, …).
    pub fn os_error(&self) -> Option<&std::io::Error> {
        self.source.as_deref().and_then(|s| s.downcast_ref::<std::io::Error>())
    }

    /// For a failure to listen: the address that could not be bound.
    pub fn listen_addr(&self) -> Option<std::net::SocketAddr> {
        self.addr
    }

    /// The route was malformed or conflicts with one already registered.
    pub fn is_route(&self) -> bool {
        self.kind == Kind::Route
    }

    /// A server option was unknown, out of range or inconsistent.
    pub fn is_config(&self) -> bool {
        self.kind == Kind::Config
    }

    /// The operating system refused something (binding the port, spawning the I/O thread).
    pub fn is_io(&self) -> bool {
        self.kind == Kind::Io
    }

    /// The engine itself failed while serving (a task of its own panicked): the server stopped.
    pub fn is_engine(&self) -> bool {
        self.kind == Kind::Engine
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("gust_core::Error")
            .field("kind", &self.kind)
            .field("message", &self.message)
            .field("source", &self.source)
            .field("addr", &self.addr)
            .field("code", &self.code)
            .finish()
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.source {
            Some(source) => write!(f, "{}: {}", self.message, source),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for Error {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        self.source.as_deref().map(|e| e as &(dyn std::error::Error + 'static))
    }
}

/// The error every response body ends with when it cannot go on (its handler failed after the head was sent, a
/// compressor or a file read failed): hyper then closes the
/// connection without the chunked terminator, so the client sees a truncated body, not a clean end.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StreamAborted;

impl std::fmt::Display for StreamAborted {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the response stream was aborted by its handler")
    }
}

impl std::error::Error for StreamAborted {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn io_errors_should_name_the_cause() {
        let addr: std::net::SocketAddr = "127.0.0.1:1".parse().unwrap();
        let err = Error::listen(addr, std::io::Error::from(std::io::ErrorKind::AddrInUse));
        assert!(err.is_io() && !err.is_route() && !err.is_config());
        assert!(err.to_string().starts_with("cannot listen on 127.0.0.1:1: "));
        assert!(std::error::Error::source(&err).is_some());
        assert_eq!(err.os_error().map(std::io::Error::kind), Some(std::io::ErrorKind::AddrInUse));
        assert_eq!(err.listen_addr(), Some(addr));
        let other = Error::config("no");
        assert!(other.os_error().is_none() && other.listen_addr().is_none() && other.code().is_none());
        assert_eq!(Error::config("no").with_code("ECONNREFUSED").code(), Some("ECONNREFUSED"));
    }
}
