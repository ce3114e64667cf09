//! The relay against a real `redis-server` (Debian's, which `make test` installs), one started per test on a
//! free port. Without `redis-server` on the PATH these tests say so and pass, unless `GUST_REQUIRE_REDIS` is
//! set (as `make test` sets it).

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{Relay, RelayOptions, RelayTls};

mod cluster;
mod limits;
use crate::service::ws::{Beyond, Payload, Peers};

/// A `redis-server` of this test's own, killed when dropped.
struct RedisServer {
    child: Child,
    port: u16,
    args: Vec<String>,
}

impl RedisServer {
    fn start(extra: &[&str]) -> Option<Self> {
        let port = std::net::TcpListener::bind("127.0.0.1:0").ok()?.local_addr().ok()?.port();
        let mut args: Vec<String> =
            ["--port", &port.to_string(), "--bind", "127.0.0.1", "--save", "", "--appendonly", "no"]
                .iter()
                .map(|s| (*s).to_owned())
                .collect();
        args.extend(extra.iter().map(|s| (*s).to_owned()));
        let child = match Command::new("redis-server").args(&args).stdout(Stdio::null()).spawn() {
            Ok(child) => child,
            Err(_) if std::env::var_os("GUST_REQUIRE_REDIS").is_none() => {
                eprintln!("redis-server is not installed: the relay's tests are skipped (make test installs it)");
                return None;
            }
            Err(e) => panic!("redis-server is needed for these tests (apt-get install redis-server): {e}"),
        };
        let server = Self { child, port, args };
        server.wait_ready();
        Some(server)
    }

    fn wait_ready(&self) {
        // Any answer will do (one with a password answers NOAUTH).
        until(Duration::from_secs(5), "redis-server to accept", || {
            match self.query::<String>(&mut redis::cmd("PING")) {
                Ok(_) => true,
                Err(e) => e.code().is_some(),
            }
        });
    }

    fn url(&self) -> String {
        format!("redis://127.0.0.1:{}", self.port)
    }

    fn query<T: redis::FromRedisValue>(&self, cmd: &mut redis::Cmd) -> redis::RedisResult<T> {
        let client = redis::Client::open(self.url())?;
        let mut conn = client.get_connection_with_timeout(Duration::from_secs(1))?;
        cmd.query(&mut conn)
    }

    /// The channels Redis has subscribers for, under `pattern`: plain and sharded.
    fn channels(&self, pattern: &str) -> Vec<Vec<u8>> {
        let mut all: Vec<Vec<u8>> = self.query(redis::cmd("PUBSUB").arg("CHANNELS").arg(pattern)).unwrap();
        all.extend(self.query::<Vec<Vec<u8>>>(redis::cmd("PUBSUB").arg("SHARDCHANNELS").arg(pattern)).unwrap());
        all
    }

    fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// Starts it again on the same port (after `kill`).
    fn restart(&mut self) {
        self.child = Command::new("redis-server").args(&self.args).stdout(Stdio::null()).spawn().unwrap();
        self.wait_ready();
    }
}

impl Drop for RedisServer {
    fn drop(&mut self) {
        self.kill();
    }
}

fn until(limit: Duration, what: &str, mut done: impl FnMut() -> bool) {
    let start = Instant::now();
    while !done() {
        assert!(start.elapsed() < limit, "waited {limit:?} for {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// `read`'s value once it has not changed for 300 ms (at most 10 s).
fn still(read: impl Fn() -> u64) -> u64 {
    let start = Instant::now();
    let (mut last, mut since) = (read(), Instant::now());
    while since.elapsed() < Duration::from_millis(300) && start.elapsed() < Duration::from_secs(10) {
        std::thread::sleep(Duration::from_millis(10));
        let now = read();
        if now != last {
            (last, since) = (now, Instant::now());
        }
    }
    last
}

/// Connected all along: never lost its link, nothing to report.
fn assert_untroubled(relay: &Relay) {
    let stats = relay.stats();
    assert!(stats.connected && stats.reconnects == 0 && stats.last_error.is_none(), "{stats:?}");
}

/// A relay delivering to a group with no hubs (its counters tell what arrived).
fn relay(options: RelayOptions) -> (Arc<Relay>, Arc<Peers>) {
    let relay = Relay::start(options).unwrap();
    let peers = Peers::beyond(relay.clone());
    relay.attach(&peers);
    (relay, peers)
}

#[test]
fn a_publish_reaches_the_other_process_once_and_never_comes_back_to_its_own() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let (a, _pa) = relay(RelayOptions::new(redis.url()));
    let (b, _pb) = relay(RelayOptions::new(redis.url()));
    a.opened("room");
    b.opened("room");
    until(Duration::from_secs(5), "both subscriptions", || a.stats().topics == 1 && b.stats().topics == 1);
    assert_eq!(redis.channels("gust#*"), [b"gust#room".to_vec()]);
    for i in 0..100 {
        a.published("room", Payload::Text(&format!("m{i}")), None);
    }
    until(Duration::from_secs(5), "100 messages at b", || b.stats().delivered == 100);
    // a counts a publish once Redis has replied, which may come after b has it.
    until(Duration::from_secs(5), "100 publishes answered", || a.stats().published == 100);
    std::thread::sleep(Duration::from_millis(100));
    assert_eq!(a.stats().delivered, 0, "a's own messages, echoed by Redis, are dropped");
    assert_eq!(b.stats().delivered, 100, "once each");
}

#[test]
fn subscriptions_follow_the_local_ones_and_leave_no_channel_behind() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let (a, _pa) = relay(RelayOptions { prefix: "app1".into(), ..RelayOptions::new(redis.url()) });
    let topics: Vec<String> = (0..10_000).map(|i| format!("t{i}")).collect();
    for t in &topics {
        a.opened(t);
        // A second hub's subscriber: one channel still.
        a.opened(t);
    }
    until(Duration::from_secs(20), "10,000 channels", || redis.channels("app1#*").len() == 10_000);
    for t in &topics {
        a.closed(t);
    }
    std::thread::sleep(Duration::from_millis(50));
    assert_eq!(redis.channels("app1#*").len(), 10_000, "each topic still has a subscriber on the other hub");
    for t in &topics {
        a.closed(t);
    }
    until(Duration::from_secs(20), "no channel left", || redis.channels("app1#*").is_empty() && a.stats().topics == 0);
    let stats = a.stats();
    assert!(stats.sharded && stats.nodes == 1, "Redis 7 has sharded pub/sub: {stats:?}");
}

#[test]
fn a_failure_to_connect_at_start_names_its_cause_or_is_reported_later() {
    let Some(redis) = RedisServer::start(&["--requirepass", "right"]) else { return };
    let timeout = Duration::from_millis(500);
    let wrong = format!("redis://:wrong@127.0.0.1:{}", redis.port);
    let err = Relay::start(RelayOptions { timeout, ..RelayOptions::new(&wrong) }).unwrap_err().to_string();
    assert!(err.contains("refused the credentials") && !err.contains("wrong@"), "{err}");
    let closed = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port();
    let err = Relay::start(RelayOptions { timeout, ..RelayOptions::new(format!("redis://127.0.0.1:{closed}")) })
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot reach Redis") && err.contains("refused"), "{err}");
    let err = Relay::start(RelayOptions { timeout, ..RelayOptions::new("redis://no-such-host.invalid:6379") })
        .unwrap_err()
        .to_string();
    assert!(err.contains("cannot reach Redis at redis://no-such-host.invalid:6379"), "{err}");
    // Not required: it starts, and says why it is not connected.
    let (r, _p) = relay(RelayOptions { timeout, required: false, ..RelayOptions::new(&wrong) });
    until(Duration::from_secs(5), "the failure reported", || r.stats().last_error.is_some());
    assert!(!r.stats().connected);
    // Right password: fine.
    let (ok, _p) =
        relay(RelayOptions { timeout, ..RelayOptions::new(format!("redis://:right@127.0.0.1:{}", redis.port)) });
    assert!(ok.stats().connected);
}

#[test]
fn a_redis_restart_resumes_delivery_and_every_message_is_accounted_for() {
    let Some(mut redis) = RedisServer::start(&[]) else { return };
    let small = RelayOptions { buffer: 64 * 1024, ..RelayOptions::new(redis.url()) };
    let (a, _pa) = relay(small.clone());
    let (b, _pb) = relay(small);
    b.opened("feed");
    until(Duration::from_secs(5), "b subscribed", || b.stats().topics == 1);
    a.published("feed", Payload::Text("before"), None);
    until(Duration::from_secs(5), "the first message", || b.stats().delivered == 1);
    redis.kill();
    until(Duration::from_secs(5), "both to notice", || !a.stats().connected && !b.stats().connected);
    // While Redis is down: 100 small publishes wait in the buffer; then 1 KiB ones overflow it.
    for _ in 0..100 {
        a.published("feed", Payload::Text("meanwhile"), None);
    }
    let big = "x".repeat(1024);
    for _ in 0..100 {
        a.published("feed", Payload::Text(&big), None);
    }
    let dropped = a.stats().dropped;
    assert!(dropped > 0, "the buffer is bounded");
    redis.restart();
    // From when Redis answers again.
    let start = Instant::now();
    until(Duration::from_secs(10), "both to reconnect", || a.stats().connected && b.stats().connected);
    until(Duration::from_secs(10), "b resubscribed", || b.stats().topics == 1 && redis.channels("gust#*").len() == 1);
    // What was buffered went out once a's connection was back; it reached b only if b was subscribed by then,
    // so only the counters of a are exact here: published + dropped = every publish.
    // Sent and answered: the queue empties when a batch leaves, its counters move when Redis has replied.
    until(Duration::from_secs(10), "every publish accounted for (published + dropped = 201)", || {
        let stats = a.stats();
        stats.queued == 0 && stats.published + stats.dropped == 201
    });
    // b may still be reading what that batch brought it: its count, once still.
    let delivered = still(|| b.stats().delivered);
    a.published("feed", Payload::Text("after"), None);
    until(Duration::from_secs(2), "delivery resumed", || b.stats().delivered == delivered + 1);
    assert!(start.elapsed() < Duration::from_secs(5), "resumed {:?} after the restart", start.elapsed());
    assert!(a.stats().reconnects >= 1 && b.stats().reconnects >= 1);
}

#[test]
fn a_healthy_link_stays_up_past_its_health_checks_with_topics_subscribed() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    // Checked every two seconds (twice a 1 s timeout, which a loaded machine's PING stays well inside): two checks
    // in 4.5 s.
    let (a, _pa) = relay(RelayOptions { timeout: Duration::from_secs(1), ..RelayOptions::new(redis.url()) });
    a.opened("kept");
    until(Duration::from_secs(5), "a subscribed", || a.stats().topics == 1);
    std::thread::sleep(Duration::from_millis(4500));
    assert_untroubled(&a);
}

#[test]
fn a_shut_relay_publishes_nothing_and_counts_what_it_drops() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let (a, _pa) = relay(RelayOptions::new(redis.url()));
    a.shut();
    until(Duration::from_secs(5), "its connections closed", || {
        redis.query::<String>(redis::cmd("CLIENT").arg("LIST")).unwrap().lines().count() == 1
    });
    a.published("t", Payload::Text("late"), None);
    assert_eq!((a.stats().connected, a.stats().published, a.stats().dropped), (false, 0, 1));
}

#[test]
fn a_stalled_redis_is_noticed_and_delivery_resumes_when_it_answers_again() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let quick = RelayOptions { timeout: Duration::from_millis(300), ..RelayOptions::new(redis.url()) };
    let (a, _pa) = relay(quick.clone());
    let (b, _pb) = relay(quick);
    b.opened("t");
    until(Duration::from_secs(5), "b subscribed", || b.stats().topics == 1);
    let pid = redis.child.id().to_string();
    let signal = |sig: &str| assert!(Command::new("kill").args([sig, &pid]).status().unwrap().success());
    // Stopped, not killed: its sockets stay open and say nothing.
    signal("-STOP");
    until(Duration::from_secs(5), "the stall to be noticed", || !a.stats().connected && !b.stats().connected);
    signal("-CONT");
    until(Duration::from_secs(5), "both back", || a.stats().connected && b.stats().connected && b.stats().topics == 1);
    let before = b.stats().delivered;
    a.published("t", Payload::Text("again"), None);
    until(Duration::from_secs(5), "delivery after the stall", || b.stats().delivered == before + 1);
}

#[test]
fn binary_payloads_and_the_compress_flag_travel_unchanged() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let (a, _pa) = relay(RelayOptions::new(redis.url()));
    // b's channel is subscribed through a raw client (sharded, as Redis 7 is): the envelope is what it reads.
    let client = redis::Client::open(redis.url()).unwrap();
    let mut conn = client.get_connection().unwrap();
    redis::cmd("SSUBSCRIBE").arg("gust#bin").exec(&mut conn).unwrap();
    conn.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    a.published("bin", Payload::Binary(&[0, 1, 255]), Some(true));
    let (kind, channel, payload): (String, String, Vec<u8>) =
        redis::from_redis_value(conn.recv_response().unwrap()).unwrap();
    assert_eq!((kind.as_str(), channel.as_str()), ("smessage", "gust#bin"));
    let got = super::envelope::decode(&payload).unwrap();
    assert_eq!(got.payload, Payload::Binary(&[0, 1, 255]));
    assert_eq!(got.compress, Some(true));
}

#[test]
fn rediss_with_an_authority_and_a_client_certificate_of_ones_own() {
    let fixtures = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tls");
    let path = |name: &str| fixtures.join(name).to_string_lossy().into_owned();
    let read = |name: &str| Some(std::fs::read(fixtures.join(name)).unwrap());
    let tls_port = std::net::TcpListener::bind("127.0.0.1:0").unwrap().local_addr().unwrap().port().to_string();
    // Clients must show a certificate that the client authority signed.
    let Some(redis) = RedisServer::start(&[
        "--tls-port",
        &tls_port,
        "--tls-cert-file",
        &path("cert.pem"),
        "--tls-key-file",
        &path("key.pem"),
        "--tls-ca-cert-file",
        &path("client-ca.pem"),
        "--tls-auth-clients",
        "yes",
    ]) else {
        return;
    };
    let url = format!("rediss://127.0.0.1:{tls_port}");
    let timeout = Duration::from_millis(1000);
    let err = Relay::start(RelayOptions { timeout, ..RelayOptions::new(&url) }).unwrap_err().to_string();
    assert!(err.contains("its TLS certificate could not be verified"), "no system authority signed it: {err}");
    let ca_only = RelayTls { ca: read("ca.pem"), ..RelayTls::default() };
    let err = Relay::start(RelayOptions { timeout, tls: ca_only.clone(), ..RelayOptions::new(&url) }).unwrap_err();
    assert!(err.to_string().contains("cannot reach Redis"), "Redis asks for a client certificate: {err}");
    let full = RelayTls { cert: read("client-cert.pem"), key: read("client-key.pem"), ..ca_only };
    let (a, _pa) = relay(RelayOptions { tls: full.clone(), ..RelayOptions::new(&url) });
    let (b, _pb) = relay(RelayOptions { tls: full, ..RelayOptions::new(&url) });
    b.opened("secure");
    until(Duration::from_secs(5), "b subscribed", || b.stats().topics == 1);
    a.published("secure", Payload::Text("over TLS"), None);
    until(Duration::from_secs(5), "the message at b", || b.stats().delivered == 1);
    drop(redis);
}

#[test]
fn certificates_are_checked_before_anything_starts() {
    let tls = |ca: &[u8]| RelayTls { ca: Some(ca.to_vec()), ..RelayTls::default() };
    let err = |o: RelayOptions| o.validate().unwrap_err().to_string();
    assert!(err(RelayOptions { tls: tls(b"not a pem"), ..RelayOptions::new("rediss://h") }).contains("pubsub.tls.ca"));
    assert!(err(RelayOptions { tls: tls(b"x"), ..RelayOptions::new("redis://h") }).contains("needs rediss://"));
    let half = RelayTls { cert: Some(b"x".to_vec()), ..RelayTls::default() };
    assert!(err(RelayOptions { tls: half, ..RelayOptions::new("rediss://h") }).contains("go together"));
    let mixed = RelayOptions { urls: vec!["redis://a".into(), "rediss://b".into()], ..RelayOptions::new("") };
    assert!(err(mixed).contains("all redis:// or all rediss://"));
    assert!(err(RelayOptions { urls: vec![], ..RelayOptions::new("") }).contains("at least one"));
}

#[test]
fn a_server_without_sharded_pub_sub_is_spoken_to_with_plain_commands() {
    // As Redis 6 is: no SSUBSCRIBE, SUNSUBSCRIBE or SPUBLISH.
    let Some(redis) = RedisServer::start(&[
        "--rename-command",
        "SSUBSCRIBE",
        "",
        "--rename-command",
        "SUNSUBSCRIBE",
        "",
        "--rename-command",
        "SPUBLISH",
        "",
    ]) else {
        return;
    };
    let (a, _pa) = relay(RelayOptions::new(redis.url()));
    let (b, _pb) = relay(RelayOptions::new(redis.url()));
    b.opened("old");
    until(Duration::from_secs(5), "b subscribed", || b.stats().topics == 1);
    assert!(!b.stats().sharded);
    let plain: Vec<Vec<u8>> = redis.query(redis::cmd("PUBSUB").arg("CHANNELS").arg("gust#*")).unwrap();
    assert_eq!(plain, [b"gust#old".to_vec()]);
    a.published("old", Payload::Text("plain"), None);
    until(Duration::from_secs(5), "the message at b", || b.stats().delivered == 1);
    b.closed("old");
    until(Duration::from_secs(5), "no channel left", || redis.channels("*").is_empty());
}

#[test]
fn a_topic_left_and_joined_again_between_two_passes_costs_no_reconnect() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let (a, _pa) = relay(RelayOptions::new(redis.url()));
    a.opened("tab");
    until(Duration::from_secs(5), "a subscribed", || a.stats().topics == 1);
    // A browser tab that reconnects: its socket leaves, joins, and leaves again, back to back.
    for _ in 0..50 {
        a.closed("tab");
        a.opened("tab");
    }
    a.closed("tab");
    until(Duration::from_secs(5), "the channel gone", || a.stats().topics == 0 && redis.channels("*").is_empty());
    std::thread::sleep(Duration::from_millis(100));
    assert_untroubled(&a);
}

#[test]
fn an_acl_that_forbids_subscribing_or_publishing_fails_the_check_by_name() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let user = |name: &str, rules: &[&str]| {
        let mut cmd = redis::cmd("ACL");
        cmd.arg("SETUSER").arg(name).arg("on").arg(">pw").arg("&gust#*");
        for rule in rules {
            cmd.arg(*rule);
        }
        redis.query::<()>(&mut cmd).unwrap();
        RelayOptions {
            timeout: Duration::from_secs(1),
            ..RelayOptions::new(format!("redis://{name}:pw@127.0.0.1:{}", redis.port))
        }
    };
    let everything = ["+@all"];
    assert!(super::check(&user("fine", &everything)).is_ok());
    for (name, rules) in [("nosub", ["+@all", "-ssubscribe"]), ("nopub", ["+@all", "-spublish"])] {
        let err = super::check(&user(name, &rules)).unwrap_err().to_string();
        assert!(err.contains("Redis's ACL does not allow it"), "{name}: {err}");
    }
    // Channels of another prefix only.
    let mut other = redis::cmd("ACL");
    other.arg("SETUSER").arg("elsewhere").arg("on").arg(">pw").arg("resetchannels").arg("&other#*").arg("+@all");
    redis.query::<()>(&mut other).unwrap();
    let err = super::check(&RelayOptions::new(format!("redis://elsewhere:pw@127.0.0.1:{}", redis.port))).unwrap_err();
    assert!(err.to_string().contains("ACL"), "{err}");
}
