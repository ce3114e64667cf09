//! Layer 7, **service**: what one request gets. The server's options ([`config`]), the state every connection of
//! a shard shares ([`shared`]) and one connection's activity ([`conn_state`]), the request rules (Host, target),
//! reading a request body within its budget ([`request_body`]), and the service itself ([`conn_service`]):
//! routing, turbo answers, files, the hand-over to JavaScript and back ([`hand_over`]), and upgrades ([`upgrade`]) to a
//! WebSocket ([`ws`], beside the service: a socket is what a request becomes), and the relay ([`relay`]) that
//! carries the WebSocket hubs' publishes to other processes through Redis, on a thread of its own (the one room of
//! this layer that runs a tokio runtime: `scripts/check-layers.mjs` knows it).
//!
//! May import: every layer below. HTTP/1.1 and HTTP/2 (`protocol/`, above) reach it through the same hyper
//! `Service`.

pub(crate) mod config;
pub(crate) mod conn_service;
pub(crate) mod conn_state;
pub(crate) mod hand_over;
pub(crate) mod relay;
pub(crate) mod request_body;
pub(crate) mod request_rules;
pub(crate) mod shared;
pub(crate) mod upgrade;
pub mod ws;
