//! What every connection of one I/O thread (a shard) sees: the server's options and routes, the crossing to
//! JavaScript, request bodies and WebSockets.

use std::sync::Arc;

use arc_swap::ArcSwap;

use super::config::Config;
use super::request_body::BodyBudget;
use super::ws::WebSockets;
use crate::bodies::upload::Uploads;
use crate::crossing::completions::Completions;
use crate::crossing::lanes::Lanes;
use crate::responses::route_table::RouteTable;

/// State shared by every connection of one I/O thread (a shard) of a server: what is the server's is behind an
/// `Arc` shared by every shard; the waiting requests, streams and request bodies are the shard's own.
pub(crate) struct Shared {
    pub(crate) config: Config,
    pub(crate) routes: Arc<ArcSwap<RouteTable>>,
    pub(crate) completions: Arc<Completions>,
    /// The JavaScript threads requests are handed to.
    pub(crate) lanes: Arc<Lanes>,
    pub(crate) uploads: Arc<Uploads>,
    pub(crate) bodies: Arc<BodyBudget>,
    pub(crate) websockets: Arc<WebSockets>,
    /// Which I/O thread this is.
    pub(crate) shard: u8,
}
