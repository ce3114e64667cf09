//! The relay's connections: one per Redis server it speaks to (the one server, or each primary of a Redis
//! Cluster, by its map: `topology`), each carrying both directions (RESP3 lets a connection publish and run
//! commands while subscribed, and hands what Redis pushes to `pushes`), and which of them owns a channel.
//!
//! How it speaks is read from the server at each connection, so every process on one Redis agrees:
//! - **A server with sharded pub/sub** (Redis 7 or later, Valkey): `SSUBSCRIBE`/`SPUBLISH`, as Socket.IO's
//!   sharded adapter does. On one server it behaves as plain pub/sub; it is what a cluster needs.
//! - **Without** (Redis 6, or a server that disabled those commands): `SUBSCRIBE`/`PUBLISH`.
//! - **A Redis Cluster** (`HELLO` says `mode: cluster`): sharded, each channel's commands sent to the primary that owns
//!   its slot ([`super::slot`]), found with `CLUSTER SLOTS` from the first seed that answers. Messages on a
//!   sharded channel travel only within its shard, so a cluster's pub/sub grows with its shards (plain
//!   `PUBLISH` is copied to every node).

use std::sync::Arc;

use redis::aio::MultiplexedConnection;
use redis::{AsyncConnectionConfig, IntoConnectionInfo, Value};

use super::failures::{describe, within};
use super::join::join;
use super::pushes::{Forward, Pushes};
use super::shared::RelayShared;
use super::slot;
use super::topology::{field, node_info, read_map, Map, NONE};

/// Commands a relay sends, by how it speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Plain,
    Sharded,
    Cluster,
}

impl Mode {
    pub(super) fn subscribe(self) -> &'static str {
        if self == Self::Plain {
            "SUBSCRIBE"
        } else {
            "SSUBSCRIBE"
        }
    }
    pub(super) fn unsubscribe(self) -> &'static str {
        if self == Self::Plain {
            "UNSUBSCRIBE"
        } else {
            "SUNSUBSCRIBE"
        }
    }
    pub(super) fn publish(self) -> &'static str {
        if self == Self::Plain {
            "PUBLISH"
        } else {
            "SPUBLISH"
        }
    }
}

/// The connections of one link (a fresh set after every failure).
pub(super) struct Nodes {
    pub(super) mode: Mode,
    /// One per server: the one, or each primary of the cluster (`None` while that one cannot be reached: the
    /// other shards go on).
    conns: Vec<Option<MultiplexedConnection>>,
    /// A cluster's map, as read when connecting.
    map: Option<Map>,
}

impl Nodes {
    /// The index of the connection that owns `channel`, if it is up.
    pub(super) fn owner(&self, channel: &[u8]) -> Option<usize> {
        let index = match &self.map {
            None => 0,
            Some(map) => usize::from(map.owners[usize::from(slot::of(channel))]),
        };
        self.conns.get(index)?.as_ref().map(|_| index)
    }

    /// The connection at `index` (one [`owner`](Self::owner) returned).
    pub(super) fn conn(&self, index: usize) -> MultiplexedConnection {
        self.conns[index].clone().expect("an owner's connection is up")
    }

    /// Every connection that is up.
    pub(super) fn live(&self) -> impl Iterator<Item = &MultiplexedConnection> {
        self.conns.iter().flatten()
    }

    /// Why some slots have no connection (a primary unreachable, or a slot no primary serves).
    pub(super) fn missing(&self) -> Option<String> {
        let map = self.map.as_ref()?;
        if self.conns.iter().any(Option::is_none) || map.owners.contains(&NONE) {
            return Some(map.why.clone().unwrap_or_else(|| "some slots of the Redis Cluster have no primary".into()));
        }
        None
    }

    /// While some slots have no connection: a job that reads the cluster's map again through a live node and,
    /// if it is the same, connects to the primaries that were down. It runs beside the link (a primary that does
    /// not answer at all takes `timeout` to give up on, and the other shards go on meanwhile); a map that changed
    /// (a failover, a slot served again) fails it, so the link starts over with the new one.
    pub(super) fn repair(
        &self,
        shared: &Arc<RelayShared>,
        pushes: &Arc<Pushes>,
    ) -> Option<impl std::future::Future<Output = Repaired> + Send + 'static> {
        let map = self.map.as_ref()?;
        let mut conn = self.live().next()?.clone();
        let down: Vec<usize> = (0..self.conns.len()).filter(|&i| self.conns[i].is_none()).collect();
        let (seed, addrs, owners) = (map.seed.clone(), map.addrs.clone(), map.owners.clone());
        let (shared, pushes) = (shared.clone(), pushes.clone());
        Some(async move {
            let timeout = shared.options.timeout;
            let slots = within(timeout, redis::cmd("CLUSTER").arg("SLOTS").query_async::<Value>(&mut conn)).await?;
            if read_map(&slots, &seed)? != (addrs.clone(), owners) {
                return Err("the Redis Cluster's map changed".into());
            }
            let opened = join(down.iter().map(|&i| open(&shared, node_info(&seed, &addrs[i]), &pushes))).await;
            let mut up = Vec::new();
            let mut why = None;
            for (i, result) in down.into_iter().zip(opened) {
                match result {
                    Ok(conn) => up.push((i, conn)),
                    Err(e) => why = Some(format!("{}:{}: {e}", addrs[i].0, addrs[i].1)),
                }
            }
            Ok((up, why))
        })
    }

    /// Takes the primaries a [`repair`](Self::repair) reached; their indexes, whose topics are to be subscribed.
    pub(super) fn repaired(&mut self, up: Vec<(usize, MultiplexedConnection)>, why: Option<String>) -> Vec<usize> {
        if let Some(map) = &mut self.map {
            map.why = why;
        }
        up.into_iter()
            .map(|(i, conn)| {
                self.conns[i] = Some(conn);
                i
            })
            .collect()
    }
}

/// What a repair found: the primaries that answer now, and why the others do not; or that the map changed.
pub(super) type Repaired = Result<(Vec<(usize, MultiplexedConnection)>, Option<String>), String>;

/// Connects to the first seed that answers, reads how to speak, and (for a cluster) to every primary. Each
/// step within `timeout`. `pushes` hears every connection's messages.
pub(super) async fn connect(shared: &RelayShared, pushes: &Arc<Pushes>) -> Result<Nodes, String> {
    let mut why = String::new();
    for url in &shared.options.urls {
        match through(shared, url, pushes).await {
            Ok(nodes) => return Ok(nodes),
            // The next seed may answer.
            Err(e) => why = e,
        }
    }
    Err(why)
}

/// [`connect`] through one seed.
async fn through(shared: &RelayShared, url: &str, pushes: &Arc<Pushes>) -> Result<Nodes, String> {
    let options = &shared.options;
    let info = url.into_connection_info().map_err(|e| describe(&e))?;
    let mut seed = open(shared, info.clone(), pushes).await?;
    // HELLO says whether the server is a cluster node (redis-rs sent one to connect, so any user may): then its
    // map, with CLUSTER SLOTS.
    let hello = within(options.timeout, redis::cmd("HELLO").arg(3).query_async::<Value>(&mut seed)).await?;
    if field(&hello, "mode").as_deref() == Some("cluster") {
        let slots = within(options.timeout, redis::cmd("CLUSTER").arg("SLOTS").query_async::<Value>(&mut seed)).await?;
        drop(seed);
        return cluster(shared, &info, &slots, pushes).await;
    }
    if options.urls.len() > 1 {
        return Err(format!(
            "{} is not a Redis Cluster node: several URLs are a cluster's seed list (for one server, give one URL)",
            super::options::redact(url)
        ));
    }
    // The commands' presence, not a version number: Valkey reports Redis's, and a server can disable commands.
    let sharded = within(
        options.timeout,
        redis::cmd("COMMAND")
            .arg("INFO")
            .arg("SSUBSCRIBE")
            .arg("SUNSUBSCRIBE")
            .arg("SPUBLISH")
            .query_async::<Vec<Value>>(&mut seed),
    )
    .await?
    .iter()
    .all(|info| !matches!(info, Value::Nil));
    let mode = if sharded { Mode::Sharded } else { Mode::Plain };
    Ok(Nodes { mode, conns: vec![Some(seed)], map: None })
}

/// A cluster's primaries from its `CLUSTER SLOTS`, connected (those that answer: the others' shards wait, and
/// are tried again); the map of which owns each slot.
async fn cluster(
    shared: &RelayShared,
    seed: &redis::ConnectionInfo,
    slots: &Value,
    pushes: &Arc<Pushes>,
) -> Result<Nodes, String> {
    let (addrs, owners) = read_map(slots, seed)?;
    // All at once: a primary that does not answer costs one `timeout`, not one each.
    let opened = join(addrs.iter().map(|addr| open(shared, node_info(seed, addr), pushes))).await;
    let mut why = None;
    let conns: Vec<Option<MultiplexedConnection>> = opened
        .into_iter()
        .zip(&addrs)
        .map(|(result, addr)| result.map_err(|e| why = Some(format!("{}:{}: {e}", addr.0, addr.1))).ok())
        .collect();
    if conns.iter().all(Option::is_none) {
        return Err(why.unwrap_or_else(|| "the Redis Cluster has no primary".into()));
    }
    Ok(Nodes { mode: Mode::Cluster, conns, map: Some(Map { owners, addrs, seed: seed.clone(), why }) })
}

/// One connection, within the timeout, its pushes to `pushes`.
async fn open(
    shared: &RelayShared,
    info: redis::ConnectionInfo,
    pushes: &Arc<Pushes>,
) -> Result<MultiplexedConnection, String> {
    let timeout = shared.options.timeout;
    let client = shared.options.client(info).map_err(|e| describe(&e))?;
    let config = AsyncConnectionConfig::new()
        .set_connection_timeout(Some(timeout))
        .set_response_timeout(Some(timeout))
        .set_push_sender(Forward(pushes.clone()));
    tokio::time::timeout(timeout, client.get_multiplexed_async_connection_with_config(&config))
        .await
        .map_err(|_| format!("no answer within {} ms", timeout.as_millis()))?
        .map_err(|e| describe(&e))
}
