//! Layer 9, **transport**: bytes in and out. Listening sockets and their accept loops ([`listener`]), one
//! connection's task and its hand-over to a WebSocket ([`connection`]), in-memory connections
//! ([`in_memory`]), the socket wrapper that feeds the connection's activity ([`activity`]), and the
//! [`Server`](server::Server) that starts the I/O threads and owns all of it, over what both engines assemble
//! ([`assembly`]); the one-thread engine ([`local_engine`], [`local_socket`]) and its groups of workers
//! ([`local_group`]); TLS ([`tls`]) and the h2c preface ([`preface`]) decide which protocol (`protocol/`) a
//! connection speaks.
//!
//! May import: every layer below.

pub(crate) mod activity;
pub(crate) mod assembly;
pub(crate) mod connection;
pub(crate) mod file_out;
pub(crate) mod in_memory;
pub(crate) mod lifecycle;
pub(crate) mod listener;
pub(crate) mod local_engine;
pub(crate) mod local_group;
pub(crate) mod local_socket;
pub(crate) mod preface;
pub(crate) mod server;
pub(crate) mod threaded;
pub(crate) mod tls;
