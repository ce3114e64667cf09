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

/// The pattern the large test files hold: no byte is zero, so zeros in what arrives would show a marked frame
/// written as bytes (`bodies::files::sendfile`).
fn pattern(i: usize) -> u8 {
    (i % 251) as u8 + 1
}

#[test]
fn large_files_arrive_exact_when_pipelined_ranged_and_read_slowly() {
    // Over 1 MiB several times, so a body is several marked frames; pipelined, so two responses queue in order.
    let dir = public("sendfile");
    let size = 3_500_000usize;
    std::fs::write(dir.join("large.bin"), (0..size).map(pattern).collect::<Vec<u8>>()).unwrap();
    let server = start_with(Config::default(), routes(&dir, false));
    let mut s = support::connect(server.addr());
    s.set_read_timeout(Some(std::time::Duration::from_secs(10))).unwrap();
    use std::io::{Read, Write};
    s.write_all(
        b"GET /static/large.bin HTTP/1.1\r\nhost: x\r\n\r\nGET /static/large.bin HTTP/1.1\r\nhost: x\r\nrange: bytes=1000000-2100000\r\n\r\nGET /static/hello.txt HTTP/1.1\r\nhost: x\r\n\r\n",
    )
    .unwrap();
    // A slow start: the socket fills, sends come back partial and wait for room.
    let mut first = vec![0u8; 4096];
    std::thread::sleep(std::time::Duration::from_millis(200));
    for _ in 0..20 {
        let n = s.read(&mut first).unwrap();
        assert!(n > 0);
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    drop(first);
    // Read the rest all at once and split it into the three responses.
    let whole_len = size;
    let mut rest = Vec::new();
    let expected_total = {
        // Heads vary in length; read until the small file's body ends the stream of responses.
        let mut buf = vec![0u8; 1 << 16];
        loop {
            let n = s.read(&mut buf).unwrap();
            assert!(n > 0, "closed early");
            rest.extend_from_slice(&buf[..n]);
            if rest.ends_with(b"hello from disk") {
                break rest.len();
            }
        }
    };
    assert!(expected_total > whole_len);
    drop(server);
    std::fs::remove_dir_all(dir).unwrap();
    // The bytes consumed by the slow reads were the first response's head and body start: check the rest by
    // finding the second and third heads and checking each body against the file.
    let second = find(&rest, b"HTTP/1.1 206").expect("the range's head");
    let first_body_tail = &rest[..second];
    let consumed = whole_len - first_body_tail.len();
    assert!(first_body_tail.iter().enumerate().all(|(i, &b)| b == pattern(consumed + i)), "the whole file's bytes");
    let after = &rest[second..];
    let body_at = find(after, b"\r\n\r\n").unwrap() + 4;
    assert!(support::contains(&after[..body_at], b"content-range: bytes 1000000-2100000/3500000"));
    let range = &after[body_at..body_at + 1_100_001];
    assert!(range.iter().enumerate().all(|(i, &b)| b == pattern(1_000_000 + i)), "the range's bytes");
    assert!(after[body_at + 1_100_001..].starts_with(b"HTTP/1.1 200"));
}

#[test]
fn a_file_that_shrinks_while_sent_is_cut_off() {
    let dir = public("shrinks");
    let size = 16_000_000usize;
    let path = dir.join("shrinking.bin");
    std::fs::write(&path, (0..size).map(pattern).collect::<Vec<u8>>()).unwrap();
    let server = start_with(Config::default(), routes(&dir, false));
    let mut s = support::connect(server.addr());
    use std::io::{Read, Write};
    s.write_all(b"GET /static/shrinking.bin HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let head = support::read_head(&mut s);
    assert!(support::contains(&head, b"content-length: 16000000"));
    // Let the socket fill, then cut the file to 1 MB.
    std::thread::sleep(std::time::Duration::from_millis(200));
    std::fs::OpenOptions::new().write(true).open(&path).unwrap().set_len(1_000_000).unwrap();
    let mut got = Vec::new();
    let mut buf = vec![0u8; 1 << 16];
    loop {
        match s.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => got.extend_from_slice(&buf[..n]),
        }
    }
    assert!(got.len() < size, "the response was cut off");
    // What the file still holds arrives as it is. Past its new end, bytes already queued for the socket when it
    // shrank may read as zeros (`sendfile` queues the page cache's pages, and truncation zeroes the tail of the
    // last one, as with nginx or Bun): what the client must see is a body cut short of its content-length.
    let wrong = got[..got.len().min(1_000_000)].iter().enumerate().position(|(i, &b)| b != pattern(i));
    assert_eq!(wrong, None, "the file's own bytes ({} received)", got.len());
    drop(server);
    std::fs::remove_dir_all(dir).unwrap();
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}
