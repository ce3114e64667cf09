//! Rate limits decided in the engine, over real sockets: refusals without the handler, the fields on every
//! counted answer, limits on paths and on single routes, and exact counts under concurrent clients.

mod support;

use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use gust_core::{FixedResponse, LimitKey, RateLimit, RateLimitOptions, RouteTable, Target, TrustedProxies};
use http::HeaderValue;
use support::*;

fn limit(name: &str, limit: u32, key: LimitKey) -> Arc<RateLimit> {
    Arc::new(
        RateLimit::new(RateLimitOptions {
            name: name.into(),
            limit,
            window: Duration::from_secs(60),
            key,
            trust: TrustedProxies::parse(["127.0.0.1"]).unwrap(),
            headers: true,
            body: Bytes::from_static(b"{\"error\":\"slow down\"}"),
            content_type: Some(HeaderValue::from_static("application/json")),
            max_keys: 10_000,
            shared: None,
        })
        .unwrap(),
    )
}

fn table(build: impl FnOnce(&mut gust_core::RouteTableBuilder)) -> RouteTable {
    let mut b = RouteTable::builder();
    let hi = FixedResponse::new(200, [("content-type", "text/plain")], Bytes::from_static(b"Hi")).unwrap();
    b.add("GET", "/", Target::Fixed(Arc::new(hi))).unwrap();
    b.add("GET", "/echo/:id", Target::Dynamic(ECHO)).unwrap();
    b.add("POST", "/echo/:id", Target::Dynamic(ECHO)).unwrap();
    b.add("GET", "/never", Target::Dynamic(NEVER)).unwrap();
    build(&mut b);
    b.build()
}

fn get(t: &TestServer, path: &str, extra: &str) -> Res {
    roundtrip(t.addr(), format!("GET {path} HTTP/1.1\r\nhost: x\r\n{extra}\r\n").as_bytes()).unwrap()
}

#[test]
fn a_limit_on_every_request_should_refuse_with_429_and_the_fields_without_the_handler() {
    let t = start_with(
        config(|_| {}),
        table(|b| {
            b.limit_path(None, limit("all", 3, LimitKey::Address { ipv6_subnet: 56 })).unwrap();
        }),
    );
    for remaining in [2, 1, 0] {
        let res = get(&t, "/", "");
        assert_eq!(res.status, 200);
        assert_eq!(res.header("ratelimit-policy"), Some("\"all\";q=3;w=60"));
        assert_eq!(res.header("ratelimit").unwrap(), format!("\"all\";r={remaining};t={}", 20 * (3 - remaining)));
    }
    // The handler of /never would never answer: a refusal must come from the engine.
    let res = get(&t, "/never", "");
    assert_eq!(res.status, 429);
    assert_eq!(res.text(), "{\"error\":\"slow down\"}");
    assert_eq!(res.header("content-type"), Some("application/json"));
    assert_eq!(res.header("retry-after"), Some("20"));
    assert_eq!(res.header("ratelimit"), Some("\"all\";r=0;t=60"));
    // Another client, as a trusted proxy says.
    assert_eq!(get(&t, "/", "x-forwarded-for: 203.0.113.7\r\n").status, 200);
    // Unknown paths count too.
    assert_eq!(get(&t, "/nothing-here", "x-forwarded-for: 203.0.113.8\r\n").status, 404);
}

#[test]
fn a_dynamic_answer_should_carry_the_fields_and_a_pattern_should_limit_only_its_paths() {
    let t = start_with(
        config(|_| {}),
        table(|b| {
            b.limit_path(Some("/echo/:id"), limit("per-id", 1, LimitKey::Param("id".into()))).unwrap();
        }),
    );
    let res = get(&t, "/echo/1", "");
    assert_eq!(res.status, 200);
    assert_eq!(res.header("ratelimit"), Some("\"per-id\";r=0;t=60"), "the handler's answer has them");
    assert_eq!(get(&t, "/echo/1", "").status, 429);
    assert_eq!(get(&t, "/echo/2", "").status, 200, "another id, its own quota");
    let free = get(&t, "/", "");
    assert_eq!(free.status, 200);
    assert_eq!(free.header("ratelimit"), None, "outside the pattern, nothing counted");
}

#[test]
fn a_route_limit_should_count_that_route_and_method_only() {
    let t = start_with(
        config(|_| {}),
        table(|b| {
            b.limit_route("POST", "/echo/:id", limit("writes", 2, LimitKey::Address { ipv6_subnet: 56 })).unwrap();
        }),
    );
    let post = |t: &TestServer| {
        roundtrip(t.addr(), b"POST /echo/1 HTTP/1.1\r\nhost: x\r\ncontent-length: 2\r\n\r\nhi").unwrap()
    };
    assert_eq!(post(&t).status, 200);
    assert_eq!(post(&t).status, 200);
    let refused = post(&t);
    assert_eq!(refused.status, 429);
    assert_eq!(get(&t, "/echo/1", "").status, 200, "GET on the same path is another route");
    assert_eq!(get(&t, "/echo/1", "").header("ratelimit"), None);
}

#[test]
fn concurrent_clients_should_be_admitted_exactly_the_limit() {
    let t = start_with(
        config(|_| {}),
        table(|b| {
            b.limit_path(None, limit("exact", 50, LimitKey::Address { ipv6_subnet: 56 })).unwrap();
        }),
    );
    let addr = t.addr();
    let statuses: Vec<u16> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| {
                s.spawn(move || {
                    (0..25)
                        .map(|_| roundtrip(addr, b"GET /echo/1 HTTP/1.1\r\nhost: x\r\n\r\n").unwrap().status)
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles.into_iter().flat_map(|h| h.join().unwrap()).collect()
    });
    assert_eq!(statuses.iter().filter(|&&s| s == 200).count(), 50);
    assert_eq!(statuses.iter().filter(|&&s| s == 429).count(), 150);
}

#[test]
fn a_key_naming_a_missing_parameter_should_be_refused_at_build() {
    let mut b = RouteTable::builder();
    b.add("GET", "/a/:id", Target::Dynamic(ECHO)).unwrap();
    let err = b.limit_route("GET", "/a/:id", limit("x", 1, LimitKey::Param("user".into()))).unwrap_err();
    assert!(err.to_string().contains("\"user\""), "{err}");
    let err = b.limit_path(Some("/a/*"), limit("x", 1, LimitKey::Param("id".into()))).unwrap_err();
    assert!(err.to_string().contains("\"id\""), "{err}");
    assert!(b.limit_route("GET", "/b", limit("x", 1, LimitKey::Param("id".into()))).is_err());
}
