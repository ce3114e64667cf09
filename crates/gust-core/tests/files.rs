//! A directory served from the route table, over real sockets.
mod support;

use std::path::PathBuf;
use std::sync::Arc;

use gust_core::{Config, RouteTable, Target};
use gust_core::{StaticDir, StaticOptions};
use support::{roundtrip, start_with, ECHO};

fn public(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("gust-files-{name}-{}", std::process::id()));
    std::fs::create_dir_all(dir.join("css")).unwrap();
    std::fs::write(dir.join("hello.txt"), "hello from disk").unwrap();
    std::fs::write(dir.join("css/site.css"), "body{}").unwrap();
    let big: Vec<u8> = (0..2_000_000u32).map(|i| (i % 253) as u8).collect();
    std::fs::write(dir.join("big.bin"), big).unwrap();
    dir
}

fn routes(dir: &PathBuf, miss_to_js: bool) -> RouteTable {
    let mut b = RouteTable::builder();
    let served = Arc::new(StaticDir::new(dir, StaticOptions::default()).unwrap());
    b.add("GET", "/static/*", Target::Static(served)).unwrap();
    b.add("GET", "/echo/:id", Target::Dynamic(ECHO)).unwrap();
    if miss_to_js {
        b.not_found(Target::Dynamic(ECHO));
    }
    b.build()
}

#[test]
fn files_are_served_from_rust_with_their_semantics() {
    let dir = public("semantics");
    let server = start_with(Config::default(), routes(&dir, false));
    let addr = server.addr();
    let res = roundtrip(addr, b"GET /static/hello.txt HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 200);
    assert_eq!(res.text(), "hello from disk");
    assert_eq!(res.header("content-type"), Some("text/plain; charset=utf-8"));
    let etag = res.header("etag").unwrap().to_owned();
    let not_modified = roundtrip(
        addr,
        format!("GET /static/hello.txt HTTP/1.1\r\nhost: x\r\nif-none-match: {etag}\r\n\r\n").as_bytes(),
    )
    .unwrap();
    assert_eq!(not_modified.status, 304);
    let head = roundtrip(addr, b"HEAD /static/big.bin HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!((head.status, head.header("content-length")), (200, Some("2000000")));
    let range = roundtrip(addr, b"GET /static/big.bin HTTP/1.1\r\nhost: x\r\nrange: bytes=1999990-\r\n\r\n").unwrap();
    assert_eq!(range.status, 206);
    assert_eq!(range.header("content-range"), Some("bytes 1999990-1999999/2000000"));
    let expected: Vec<u8> = (1_999_990..2_000_000u32).map(|i| (i % 253) as u8).collect();
    assert_eq!(range.body, expected);
    let whole = roundtrip(addr, b"GET /static/big.bin HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(whole.body.len(), 2_000_000);
    assert!(whole.body.iter().enumerate().all(|(i, &b)| b == (i % 253) as u8));
    let redirect = roundtrip(addr, b"GET /static/css HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!((redirect.status, redirect.header("location")), (301, Some("/static/css/")));
    for escape in [
        "/static/..%2f..%2fetc%2fpasswd",
        "/static/%2e%2e/%2e%2e/etc/passwd",
        "/static/..%5c..%5cetc",
        "/static/missing",
    ] {
        let res = roundtrip(addr, format!("GET {escape} HTTP/1.1\r\nhost: x\r\n\r\n").as_bytes()).unwrap();
        assert_eq!((res.status, res.text().as_str()), (404, "Not Found"), "{escape}");
    }
    let post = roundtrip(addr, b"POST /static/hello.txt HTTP/1.1\r\nhost: x\r\ncontent-length: 0\r\n\r\n").unwrap();
    assert_eq!(post.status, 405);
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn a_miss_goes_to_the_apps_not_found_handler() {
    let dir = public("miss");
    let server = start_with(Config::default(), routes(&dir, true));
    let res = roundtrip(server.addr(), b"GET /static/nothing-here HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 200, "the handler answered");
    assert!(res.text().starts_with("GET /static/nothing-here"), "{}", res.text());
    let hit = roundtrip(server.addr(), b"GET /static/hello.txt HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(hit.text(), "hello from disk");
    std::fs::remove_dir_all(dir).unwrap();
}
