//! Rate limits shared through Redis: two relays stand for two processes, each with its own counters for the same
//! limit (as two processes would have), against one `redis-server`.

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use http::HeaderMap;

use super::{relay, until, RedisServer};
use crate::responses::rate_limit::{Applied, LimitKey, RateLimit, RateLimitOptions, StoreDown, TrustedProxies};
use crate::service::relay::RelayOptions;

const S: u64 = 1_000_000_000;

/// 10 requests a minute per address, shared under the name `api`.
fn shared(down: StoreDown) -> Arc<RateLimit> {
    Arc::new(
        RateLimit::new(RateLimitOptions {
            name: "api".into(),
            limit: 10,
            window: Duration::from_secs(60),
            key: LimitKey::Address { ipv6_subnet: 56 },
            trust: TrustedProxies::default(),
            headers: true,
            body: Bytes::from_static(b"slow down"),
            content_type: None,
            max_keys: 1000,
            shared: Some(("api".into(), down)),
        })
        .unwrap(),
    )
}

fn ask(limit: &RateLimit) -> bool {
    limit.decide("192.0.2.7", &HeaderMap::new(), None, &mut Applied::default())
}

const CLIENT: &[u8] = &[192, 0, 2, 7];

#[test]
fn two_processes_should_count_one_limit_through_redis() {
    let Some(redis) = RedisServer::start(&[]) else { return };
    let (a_link, _pa) = relay(RelayOptions::new(redis.url()));
    let (b_link, _pb) = relay(RelayOptions::new(redis.url()));
    let (a, b) = (shared(StoreDown::Open), shared(StoreDown::Open));
    a_link.share([&a]);
    b_link.share([&b]);
    until(Duration::from_secs(5), "both links up", || {
        a.sharing().unwrap().reachable() && b.sharing().unwrap().reachable()
    });
    // a lets 6 through (an interval is 6 s: 36 s of the minute) and Redis hears of them.
    (0..6).for_each(|_| assert!(ask(&a)));
    let key: Vec<u8> = [&b"gust:rl:api:"[..], CLIENT].concat();
    let ttl = || redis.query::<i64>(redis::cmd("PTTL").arg(&key)).unwrap();
    until(Duration::from_secs(5), "a's six in Redis", || ttl() > 30_000);
    // b has heard nothing: its first request passes, and Redis answers with all seven (42 s).
    assert!(ask(&b));
    until(Duration::from_secs(5), "b merged Redis's count", || b.ahead(CLIENT) > 41 * S);
    let b_more = (0..10).filter(|_| ask(&b)).count();
    assert_eq!(b_more, 3, "b lets through what is left of the ten, and no more");
    until(Duration::from_secs(5), "b's three in Redis", || ttl() > 55_000);
    // a hears of b's requests with its next one, which it lets through on what it knew (the documented slack:
    // what a process lets through before it hears), and then refuses.
    assert!(ask(&a), "a lets one more through on what it knew");
    until(Duration::from_secs(5), "a merged Redis's count", || a.ahead(CLIENT) > 55 * S);
    assert!(!ask(&a) && !ask(&b));
    assert_eq!(6 + 1 + b_more + 1, 11, "one past the limit of 10, in all");
    let left = ttl();
    assert!(left > 50_000 && left <= 60_001, "the key lives as long as it limits: {left} ms");
}

#[test]
fn without_redis_a_limit_counts_alone_or_refuses_as_declared() {
    let Some(mut redis) = RedisServer::start(&[]) else { return };
    let (link, _p) = relay(RelayOptions::new(redis.url()));
    let (open, closed) = (shared(StoreDown::Open), shared(StoreDown::Closed));
    link.share([&open, &closed]);
    until(Duration::from_secs(5), "link up", || open.sharing().unwrap().reachable());
    assert!(ask(&open) && ask(&closed));
    redis.kill();
    until(Duration::from_secs(10), "the link to notice", || !open.sharing().unwrap().reachable());
    // Open: counted here alone, the remaining nine of the ten, each let through unheard by Redis.
    let alone = (0..20).filter(|_| ask(&open)).count();
    assert_eq!(alone, 9);
    assert_eq!(open.stats().unsynced, 9);
    // Closed: every request refused (503).
    let mut applied = Applied::default();
    assert!(!closed.decide("192.0.2.7", &HeaderMap::new(), None, &mut applied));
    assert_eq!(applied.refusal().unwrap().status(), 503);
    assert_eq!(closed.take(b"other"), None, "a key JavaScript computed is refused too");
    redis.restart();
    until(Duration::from_secs(10), "the link back", || closed.sharing().unwrap().reachable());
    assert!(ask(&closed), "counting again once Redis is back");
}
