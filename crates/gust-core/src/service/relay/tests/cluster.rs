//! The relay on a three-node Redis Cluster started here (three primaries, slots split evenly): sharded pub/sub,
//! each channel on the node that owns its slot, found from a seed list.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use super::{relay, until, RedisServer};
use crate::service::relay::{slot, RelayOptions};
use crate::service::ws::{Beyond, Payload};

/// Three `redis-server`s in cluster mode, each owning a third of the slots; killed and their files removed
/// when dropped.
struct RedisCluster {
    nodes: Vec<RedisServer>,
    dirs: Vec<std::path::PathBuf>,
    buses: Vec<u16>,
}

impl RedisCluster {
    fn start() -> Option<Self> {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let mut nodes = Vec::new();
        let mut dirs = Vec::new();
        let mut buses = Vec::new();
        for _ in 0..3 {
            let dir = std::env::temp_dir().join(format!(
                "gust-relay-cluster-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ));
            std::fs::create_dir_all(&dir).unwrap();
            // The cluster bus on a free port of its own (the default, port + 10000, may not exist).
            let bus = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
            let dir_arg = dir.to_string_lossy().into_owned();
            let node = RedisServer::start(&[
                "--cluster-enabled",
                "yes",
                "--cluster-port",
                &bus.to_string(),
                "--dir",
                &dir_arg,
            ])?;
            nodes.push(node);
            dirs.push(dir);
            buses.push(bus);
        }
        let cluster = Self { nodes, dirs, buses };
        let third = slot::SLOTS / 3;
        for (i, node) in cluster.nodes.iter().enumerate() {
            let (start, end) = (i * third, if i == 2 { slot::SLOTS - 1 } else { (i + 1) * third - 1 });
            node.query::<()>(redis::cmd("CLUSTER").arg("ADDSLOTSRANGE").arg(start).arg(end)).unwrap();
        }
        for (node, bus) in cluster.nodes.iter().zip(&cluster.buses).skip(1) {
            let meet = redis::cmd("CLUSTER").arg("MEET").arg("127.0.0.1").arg(node.port).arg(*bus).clone();
            cluster.nodes[0].query::<()>(&mut meet.clone()).unwrap();
        }
        cluster.wait_ok();
        Some(cluster)
    }

    /// Until every node says the cluster is whole and knows all three primaries.
    fn wait_ok(&self) {
        until(Duration::from_secs(20), "the cluster to form", || {
            self.nodes.iter().all(|node| {
                let info: String = node.query(redis::cmd("CLUSTER").arg("INFO")).unwrap_or_default();
                info.contains("cluster_state:ok") && info.contains("cluster_known_nodes:3")
            })
        });
    }

    fn urls(&self) -> Vec<String> {
        self.nodes.iter().map(RedisServer::url).collect()
    }

    /// A relay's options with every node as a seed.
    fn options(&self) -> RelayOptions {
        RelayOptions { urls: self.urls(), ..RelayOptions::new("") }
    }

    /// The first topic (`t0`, `t1`, …) whose channel lives on `node`.
    fn topic_on(&self, node: usize) -> String {
        self.named_on("t", node)
    }

    /// The first topic `{stem}0`, `{stem}1`, … whose channel lives on `node`.
    fn named_on(&self, stem: &str, node: usize) -> String {
        (0..).map(|i| format!("{stem}{i}")).find(|t| self.owner(format!("gust#{t}").as_bytes()) == node).unwrap()
    }

    /// Sharded channels under `pattern`, per node.
    fn shard_channels(&self, pattern: &str) -> Vec<Vec<Vec<u8>>> {
        self.nodes
            .iter()
            .map(|node| node.query(redis::cmd("PUBSUB").arg("SHARDCHANNELS").arg(pattern)).unwrap())
            .collect()
    }

    /// The node that owns `channel`'s slot.
    fn owner(&self, channel: &[u8]) -> usize {
        (usize::from(slot::of(channel)) / (slot::SLOTS / 3)).min(2)
    }
}

impl Drop for RedisCluster {
    fn drop(&mut self) {
        for node in &mut self.nodes {
            node.kill();
        }
        for dir in &self.dirs {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

#[test]
fn a_cluster_relays_on_sharded_channels_each_on_its_slots_owner_and_leaves_none_behind() {
    let Some(cluster) = RedisCluster::start() else { return };
    for key in ["room", "t1", "{tag}a", "gust#chat"] {
        let theirs: u16 = cluster.nodes[0].query(redis::cmd("CLUSTER").arg("KEYSLOT").arg(key)).unwrap();
        assert_eq!(slot::of(key.as_bytes()), theirs, "the slot of {key:?}");
    }
    // a knows every node; b only the second: the rest it learns from it.
    let (a, _pa) = relay(cluster.options());
    let (b, _pb) = relay(RelayOptions::new(cluster.nodes[1].url()));
    let topics: Vec<String> = (0..60).map(|i| format!("room{i}")).collect();
    for t in &topics {
        b.opened(t);
    }
    until(Duration::from_secs(10), "b's 60 topics", || b.stats().topics == 60);
    let (sa, sb) = (a.stats(), b.stats());
    assert!(sa.sharded && sa.nodes == 3 && sb.sharded && sb.nodes == 3, "{sa:?} {sb:?}");
    let per_node = cluster.shard_channels("gust#*");
    assert_eq!(per_node.iter().map(Vec::len).sum::<usize>(), 60);
    for (i, channels) in per_node.iter().enumerate() {
        assert!(!channels.is_empty(), "60 topics reach every node");
        assert!(channels.iter().all(|c| cluster.owner(c) == i), "each channel on its slot's owner");
    }
    for round in 0..10 {
        for t in &topics {
            a.published(t, Payload::Text(&format!("{t}:{round}")), None);
        }
    }
    until(Duration::from_secs(10), "600 messages at b", || b.stats().delivered == 600);
    // a counts a publish once Redis has replied, which may come after b has it.
    until(Duration::from_secs(5), "600 publishes answered", || a.stats().published == 600);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!((a.stats().delivered, b.stats().delivered), (0, 600), "once each, none echoed");

    // 10,000 topics, thousands of slots: subscribed on their owners, and gone after their last subscriber.
    let many: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
    for t in &many {
        a.opened(t);
    }
    until(Duration::from_secs(30), "10,000 channels", || {
        cluster.shard_channels("gust#t*").iter().map(Vec::len).sum::<usize>() == 10_000
    });
    for t in many.iter().chain(&topics) {
        a.closed(t);
        b.closed(t);
    }
    until(Duration::from_secs(30), "no channel left", || {
        cluster.shard_channels("*").iter().all(Vec::is_empty) && a.stats().topics == 0 && b.stats().topics == 0
    });
    assert!(cluster.nodes.iter().all(|n| n.channels("*").is_empty()), "no plain channel either");
}

#[test]
fn a_restarted_node_and_a_moved_slot_each_resume_delivery() {
    let Some(mut cluster) = RedisCluster::start() else { return };
    let (a, _pa) = relay(cluster.options());
    let (b, _pb) = relay(cluster.options());
    // A topic on the second node, one on the third.
    let (t1, t2) = (cluster.topic_on(1), cluster.topic_on(2));
    b.opened(&t1);
    b.opened(&t2);
    until(Duration::from_secs(10), "b subscribed", || b.stats().topics == 2);

    // The second node killed and started again: both relays notice, come back, and b subscribes again.
    cluster.nodes[1].kill();
    until(Duration::from_secs(5), "both to notice", || !a.stats().connected && !b.stats().connected);
    cluster.nodes[1].restart();
    cluster.wait_ok();
    until(Duration::from_secs(10), "both back", || a.stats().connected && b.stats().connected && b.stats().topics == 2);
    let before = b.stats().delivered;
    a.published(&t1, Payload::Text("after the restart"), None);
    a.published(&t2, Payload::Text("on the other node"), None);
    until(Duration::from_secs(2), "delivery resumed", || b.stats().delivered == before + 2);

    // t2's slot moved to the first node: Redis ends b's subscription there, and b subscribes on the new owner.
    let slot = slot::of(format!("gust#{t2}").as_bytes());
    let id: String = cluster.nodes[0].query(redis::cmd("CLUSTER").arg("MYID")).unwrap();
    for node in [0, 2, 1] {
        cluster.nodes[node].query::<()>(redis::cmd("CLUSTER").arg("SETSLOT").arg(slot).arg("NODE").arg(&id)).unwrap();
    }
    let channel = format!("gust#{t2}").into_bytes();
    until(Duration::from_secs(10), "b subscribed on the new owner", || {
        cluster.shard_channels("gust#*")[0].contains(&channel) && b.stats().connected
    });
    until(Duration::from_secs(10), "a to know the new owner", || {
        a.published(&t2, Payload::Text("moved"), None);
        std::thread::sleep(Duration::from_millis(50));
        b.stats().delivered > before + 2
    });
}

#[test]
fn while_a_primary_is_down_the_other_shards_go_on_and_its_own_comes_back() {
    let Some(mut cluster) = RedisCluster::start() else { return };
    let (a, _pa) = relay(cluster.options());
    let (b, _pb) = relay(cluster.options());
    let topics = [cluster.topic_on(0), cluster.topic_on(1), cluster.topic_on(2)];
    for t in &topics {
        b.opened(t);
    }
    until(Duration::from_secs(10), "b subscribed", || b.stats().topics == 3);

    cluster.nodes[1].kill();
    until(Duration::from_secs(5), "both on the two shards left", || a.stats().nodes == 2 && b.stats().nodes == 2);
    let (sa, sb) = (a.stats(), b.stats());
    assert!(!sb.connected && sb.topics == 2, "{sb:?}");
    let port = cluster.nodes[1].port.to_string();
    assert!(sb.last_error.as_deref().is_some_and(|e| e.contains(&port)), "names the primary: {sb:?}");
    let before = b.stats().delivered;
    a.published(&topics[0], Payload::Text("shard 0"), None);
    a.published(&topics[2], Payload::Text("shard 2"), None);
    a.published(&topics[1], Payload::Text("nowhere to go"), None);
    until(Duration::from_secs(2), "the other shards' messages", || b.stats().delivered == before + 2);
    until(Duration::from_secs(2), "the down shard's publish dropped", || a.stats().dropped == sa.dropped + 1);
    // A topic of the down shard, first wanted now: it waits for its primary.
    let late = cluster.named_on("late", 1);
    b.opened(&late);

    cluster.nodes[1].restart();
    until(Duration::from_secs(10), "its shard back", || {
        let (sa, sb) = (a.stats(), b.stats());
        sa.connected && sb.connected && sb.topics == 4 && sb.nodes == 3 && sb.last_error.is_none()
    });
    a.published(&topics[1], Payload::Text("back"), None);
    until(Duration::from_secs(2), "its messages again", || b.stats().delivered == before + 3);
    let wanted = format!("gust#{late}").into_bytes();
    let on_node = cluster.shard_channels("gust#*")[cluster.owner(&wanted)].contains(&wanted);
    assert!(
        on_node && b.stats().topics == 4,
        "a topic wanted while its primary was down is subscribed once it is back"
    );
}

#[test]
fn a_primary_that_stops_answering_does_not_hold_up_the_other_shards() {
    let Some(cluster) = RedisCluster::start() else { return };
    // A timeout a loaded machine's healthy PING stays well inside (a late one would start the link over).
    let quick = || RelayOptions { timeout: Duration::from_secs(1), ..cluster.options() };
    let (a, _pa) = relay(quick());
    let (b, _pb) = relay(quick());
    let topics = [cluster.topic_on(0), cluster.topic_on(1), cluster.topic_on(2)];
    for t in &topics {
        b.opened(t);
    }
    until(Duration::from_secs(10), "b subscribed", || b.stats().topics == 3);
    // Stopped, not killed: its sockets accept and say nothing, so every attempt to reach it waits out `timeout`.
    let pid = cluster.nodes[1].child.id().to_string();
    let signal = |sig: &str| assert!(std::process::Command::new("kill").args([sig, &pid]).status().unwrap().success());
    signal("-STOP");
    until(Duration::from_secs(10), "both on the two shards left", || a.stats().nodes == 2 && b.stats().nodes == 2);
    // For three seconds (repairs, each waiting out the stopped primary): the other shards' messages flow. Held up
    // for a repair's timeout they would fall 100 behind; 40 leaves room for a loaded machine's pauses.
    let before = b.stats().delivered;
    let start = std::time::Instant::now();
    let mut sent = 0;
    while start.elapsed() < Duration::from_secs(3) {
        a.published(&topics[0], Payload::Text("on"), None);
        a.published(&topics[2], Payload::Text("on"), None);
        sent += 2;
        std::thread::sleep(Duration::from_millis(20));
        let late = sent - (b.stats().delivered - before);
        assert!(late <= 40, "{late} messages behind after {:?}: the other shards are held up", start.elapsed());
    }
    until(Duration::from_secs(5), "every message of the other shards", || b.stats().delivered == before + sent);
    signal("-CONT");
    until(Duration::from_secs(10), "its shard back", || {
        a.stats().connected && b.stats().connected && b.stats().nodes == 3
    });
}
