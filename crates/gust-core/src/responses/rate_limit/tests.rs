//! A limit's decisions, its answers and its options.
use super::*;

fn options() -> RateLimitOptions {
    RateLimitOptions {
        name: "api".into(),
        limit: 1,
        window: Duration::from_secs(60),
        key: LimitKey::Address { ipv6_subnet: 56 },
        trust: TrustedProxies::default(),
        headers: true,
        body: Bytes::from_static(b"Too Many Requests"),
        content_type: Some(HeaderValue::from_static("text/plain; charset=utf-8")),
        max_keys: 1000,
        shared: None,
    }
}

fn limit(limit: u32, key: LimitKey, headers: bool) -> RateLimit {
    RateLimit::new(RateLimitOptions { limit, key, headers, ..options() }).unwrap()
}

#[test]
fn a_refusal_should_carry_retry_after_and_the_fields() {
    let l = limit(2, LimitKey::Address { ipv6_subnet: 56 }, true);
    let h = HeaderMap::new();
    for remaining in [1, 0] {
        let mut a = Applied::default();
        assert!(l.decide("192.0.2.1", &h, None, &mut a));
        let mut out = HeaderMap::new();
        a.add_to(&mut out);
        assert_eq!(out["ratelimit-policy"], "\"api\";q=2;w=60");
        assert_eq!(out["ratelimit"], format!("\"api\";r={remaining};t={}", if remaining == 1 { 30 } else { 60 }));
    }
    let mut a = Applied::default();
    assert!(!l.decide("192.0.2.1", &h, None, &mut a));
    let res = a.refusal().unwrap();
    assert_eq!(res.status(), 429);
    assert_eq!(res.headers()["retry-after"], "30");
    assert_eq!(res.headers()["ratelimit"], "\"api\";r=0;t=60");
    assert!(l.decide("192.0.2.2", &h, None, &mut Applied::default()), "another client");
    let stats = l.stats();
    assert_eq!((stats.allowed, stats.refused, stats.keys), (3, 1, 2));
    assert_eq!(l.policy(), ("api", 2, 60));
}

#[test]
fn ipv6_clients_should_count_by_their_network() {
    let l = limit(1, LimitKey::Address { ipv6_subnet: 56 }, false);
    let h = HeaderMap::new();
    assert!(l.decide("2001:db8:0:100::1", &h, None, &mut Applied::default()));
    assert!(!l.decide("2001:db8:0:1ff::9", &h, None, &mut Applied::default()), "same /56");
    assert!(l.decide("2001:db8:0:200::1", &h, None, &mut Applied::default()), "another /56");
    let whole = limit(1, LimitKey::Address { ipv6_subnet: 128 }, false);
    assert!(whole.decide("2001:db8::1", &h, None, &mut Applied::default()));
    assert!(whole.decide("2001:db8::2", &h, None, &mut Applied::default()));
}

#[test]
fn header_and_param_keys_should_count_apart_and_fall_back_to_the_address() {
    let name = HeaderName::from_static("x-api-key");
    let l = limit(1, LimitKey::Header { name, ipv6_subnet: 56 }, false);
    let mut h = HeaderMap::new();
    h.insert("x-api-key", HeaderValue::from_static("k1"));
    assert!(l.decide("192.0.2.1", &h, None, &mut Applied::default()));
    assert!(!l.decide("192.0.2.9", &h, None, &mut Applied::default()), "the key, not the address");
    assert!(l.decide("192.0.2.1", &HeaderMap::new(), None, &mut Applied::default()), "no header: by address");
    let p = limit(1, LimitKey::Param("tenant".into()), false);
    assert!(p.decide("192.0.2.1", &h, Some("acme"), &mut Applied::default()));
    assert!(!p.decide("192.0.2.2", &h, Some("acme"), &mut Applied::default()));
    assert!(p.decide("192.0.2.1", &h, Some("other"), &mut Applied::default()));
}

#[test]
fn a_long_key_should_be_held_as_its_digest_and_still_counted_apart() {
    let name = HeaderName::from_static("x-api-key");
    let l = limit(1, LimitKey::Header { name, ipv6_subnet: 56 }, false);
    let key = |c: char| {
        let mut h = HeaderMap::new();
        h.insert("x-api-key", HeaderValue::from_str(&c.to_string().repeat(4000)).unwrap());
        h
    };
    assert!(l.decide("192.0.2.1", &key('a'), None, &mut Applied::default()));
    assert!(!l.decide("192.0.2.2", &key('a'), None, &mut Applied::default()), "the same long key");
    assert!(l.decide("192.0.2.1", &key('b'), None, &mut Applied::default()), "another long key");
    assert_eq!(l.stats().keys, 2);
    assert!(l.counters.tat(&long_key("a".repeat(4000).as_bytes())).is_some(), "held as 21 bytes");
}

#[test]
fn options_should_be_checked() {
    let base = || RateLimitOptions {
        name: "n".into(),
        limit: 1,
        window: Duration::from_secs(1),
        key: LimitKey::Address { ipv6_subnet: 56 },
        trust: TrustedProxies::default(),
        headers: true,
        body: Bytes::new(),
        content_type: None,
        max_keys: 10,
        shared: None,
    };
    assert!(RateLimit::new(base()).is_ok());
    let err = |o: RateLimitOptions| RateLimit::new(o).unwrap_err().to_string();
    assert!(err(RateLimitOptions { limit: 0, ..base() }).contains("limit"));
    assert!(err(RateLimitOptions { window: Duration::from_millis(500), ..base() }).contains("window"));
    assert!(err(RateLimitOptions { name: "a\"b".into(), ..base() }).contains("name"));
}

#[test]
fn several_limits_should_join_their_items_in_one_field_each() {
    let a = limit(5, LimitKey::Address { ipv6_subnet: 56 }, true);
    let b = RateLimit::new(RateLimitOptions { name: "burst".into(), limit: 100, ..options() }).unwrap();
    let mut applied = Applied::default();
    assert!(a.decide("192.0.2.1", &HeaderMap::new(), None, &mut applied));
    assert!(b.decide("192.0.2.1", &HeaderMap::new(), None, &mut applied));
    let mut out = HeaderMap::new();
    applied.add_to(&mut out);
    assert_eq!(out["ratelimit-policy"], "\"api\";q=5;w=60, \"burst\";q=100;w=60");
    assert_eq!(out["ratelimit"], "\"api\";r=4;t=12, \"burst\";r=99;t=1");
    assert!(applied.fields().is_none(), "taken");
}
