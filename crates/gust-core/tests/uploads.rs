//! Streamed request bodies over real sockets: a small body still arrives whole with its request; a large one is
//! handed over at once and read from the socket only as the handler asks, within its route's limit and the
//! body timeout; `Expect: 100-continue` is answered only when the handler reads; a handler can echo a body as
//! it arrives; and a large upload holds a bounded amount of memory.

mod support;

use std::io::{Read, Write};
use std::time::{Duration, Instant};

use support::*;

fn post(path: &str, extra: &str, len: usize) -> Vec<u8> {
    format!("POST {path} HTTP/1.1\r\nhost: x\r\ncontent-length: {len}\r\n{extra}\r\n").into_bytes()
}

fn chunked_head(path: &str) -> Vec<u8> {
    format!("POST {path} HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n").into_bytes()
}

fn chunk(data: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", data.len()).into_bytes();
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
    out
}

/// The connection is still good for the next request (nothing of the last one was left unread).
fn still_serves(s: &mut std::net::TcpStream) {
    s.write_all(&post("/upload", "", 2)).unwrap();
    s.write_all(b"ok").unwrap();
    assert_eq!(read_response(s, false).unwrap().text(), "got 2");
}

/// How many requests the handler side has received so far.
fn handed_over(t: &TestServer) -> usize {
    t.batches.lock().unwrap().iter().sum()
}

fn wait_for(what: impl Fn() -> bool) -> bool {
    let start = Instant::now();
    while start.elapsed() < Duration::from_secs(5) {
        if what() {
            return true;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
    false
}

#[test]
fn a_small_body_should_arrive_whole_with_its_request() {
    let t = start(config(|_| {}));
    let mut raw = post("/upload", "", 5);
    raw.extend_from_slice(b"hello");
    let res = roundtrip(t.addr(), &raw).unwrap();
    assert_eq!((res.status, res.text()), (200, "got 5".to_owned()), "answered from the inline body");
}

#[test]
fn a_large_body_should_be_handed_over_before_it_has_arrived() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    let len = 1024 * 1024;
    s.write_all(&post("/upload", "", len)).unwrap();
    s.write_all(&vec![b'a'; 100_000]).unwrap();
    assert!(wait_for(|| handed_over(&t) == 1), "the handler has the request while 90% of its body is unsent");
    s.write_all(&vec![b'b'; len - 100_000]).unwrap();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!((res.status, res.text()), (200, format!("got {len}")));
    still_serves(&mut s);
}

#[test]
fn a_chunked_body_should_stream_within_its_routes_limit() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(&chunked_head("/upload-big")).unwrap();
    let piece = vec![b'x'; 64 * 1024];
    for _ in 0..48 {
        s.write_all(&chunk(&piece)).unwrap();
    }
    s.write_all(b"0\r\n\r\n").unwrap();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.text(), format!("got {}", 48 * 64 * 1024), "3 MiB, over the server's 1 MiB, on a route allowing it");

    // The same body on a route with the server's limit: cut off at the limit, unread past it.
    let mut s = connect(t.addr());
    s.write_all(&chunked_head("/upload")).unwrap();
    let mut sent = 0;
    for _ in 0..48 {
        if s.write_all(&chunk(&piece)).is_err() {
            break;
        }
        sent += 1;
    }
    let _ = s.write_all(b"0\r\n\r\n");
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.text(), "too large");
    assert!(sent > 0);
}

#[test]
fn the_limit_should_count_the_bytes_handed_over_with_the_request() {
    let t = start(config(|_| {}));
    for (len, expected) in [(1024 * 1024, "got 1048576"), (1024 * 1024 + 1, "too large")] {
        let mut s = connect(t.addr());
        let mut raw = chunked_head("/upload");
        raw.extend_from_slice(&chunk(&vec![b'l'; len]));
        raw.extend_from_slice(b"0\r\n\r\n");
        // One write: the first 64 KiB or more go inline, the rest streams; the limit is on the sum.
        let _ = s.write_all(&raw);
        assert_eq!(read_response(&mut s, false).unwrap().text(), expected, "{len} bytes");
    }
}

#[test]
fn a_declared_length_over_the_routes_limit_should_get_413_before_the_handler_sees_it() {
    let t = start(config(|_| {}));
    let res = roundtrip(t.addr(), &post("/upload", "", 2 * 1024 * 1024)).unwrap();
    assert_eq!(res.status, 413);
    assert_eq!(handed_over(&t), 0);
}

#[test]
fn a_refused_body_still_being_sent_should_be_read_before_the_413_so_the_client_sees_it() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    let len = 2 * 1024 * 1024;
    s.write_all(&post("/upload", "", len)).unwrap();
    // Every byte is accepted (a write to a closed connection would fail here), then the 413 comes.
    s.write_all(&vec![b'r'; len]).unwrap();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.status, 413);
    // Nothing was left unread: the connection goes on.
    still_serves(&mut s);
    assert_eq!(handed_over(&t), 1, "only the second request reached the handler");
}

#[test]
fn expect_continue_should_be_answered_only_when_the_handler_reads() {
    let t = start(config(|_| {}));
    // Refused without reading: the final answer comes first, and no 100 Continue before it.
    let mut s = connect(t.addr());
    s.write_all(&post("/upload?refuse", "expect: 100-continue\r\n", 10)).unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 413");

    // Read: 100 Continue, then the body, then the answer.
    let mut s = connect(t.addr());
    s.write_all(&post("/upload", "expect: 100-continue\r\n", 100_000)).unwrap();
    let mut cont = [0u8; 25];
    s.read_exact(&mut cont).unwrap();
    assert_eq!(&cont, b"HTTP/1.1 100 Continue\r\n\r\n");
    s.write_all(&vec![b'z'; 100_000]).unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "got 100000");

    // A client that sent its body without waiting (RFC 9110 §10.1.1): no 100 Continue, only the answer.
    let mut s = connect(t.addr());
    let mut both = post("/upload", "expect: 100-continue\r\n", 5);
    both.extend_from_slice(b"hello");
    s.write_all(&both).unwrap();
    let mut head = [0u8; 12];
    s.read_exact(&mut head).unwrap();
    assert_eq!(&head, b"HTTP/1.1 200");
}

#[test]
fn a_handler_should_echo_a_body_as_it_arrives() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(&chunked_head("/upload-big?echo")).unwrap();
    s.write_all(&chunk(b"first ")).unwrap();
    // The first piece comes back before the rest is sent.
    let early = read_until(&mut s, |got| contains(got, b"first "));
    assert!(contains(&early, b"first "), "closed early");
    let tail: Vec<u8> = (0..200_000u32).map(|i| b'a' + (i % 26) as u8).collect();
    s.write_all(&chunk(&tail)).unwrap();
    s.write_all(b"0\r\n\r\n").unwrap();
    let mut got = early;
    got.extend(read_until(&mut s, |got| got.ends_with(b"0\r\n\r\n")));
    let body = dechunk(&got).1.expect("a complete chunked body");
    let mut expected = b"first ".to_vec();
    expected.extend_from_slice(&tail);
    assert!(body == expected, "the echoed body differs ({} bytes, expected {})", body.len(), expected.len());
}

#[test]
fn a_client_stalling_mid_body_should_time_out_per_read() {
    let t = start(config(|c| c.body_timeout = Duration::from_millis(300)));
    let mut s = connect(t.addr());
    s.write_all(&chunked_head("/upload")).unwrap();
    // Each piece comes within the timeout: the whole upload takes longer than it, and still succeeds.
    for _ in 0..5 {
        s.write_all(&chunk(b"0123456789")).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    s.write_all(b"0\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "got 50");

    let mut s = connect(t.addr());
    s.write_all(&chunked_head("/upload")).unwrap();
    s.write_all(&chunk(b"0123456789")).unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "timeout");
}

#[test]
fn a_body_still_arriving_should_keep_the_handler_timeout_from_running_out() {
    let t = start(config(|c| c.handler_timeout = Some(Duration::from_millis(400))));
    let mut s = connect(t.addr());
    s.write_all(&chunked_head("/upload")).unwrap();
    for _ in 0..12 {
        s.write_all(&chunk(b"abcd")).unwrap();
        std::thread::sleep(Duration::from_millis(100));
    }
    s.write_all(b"0\r\n\r\n").unwrap();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!((res.status, res.text()), (200, "got 48".to_owned()), "1.2 s of upload under a 0.4 s handler timeout");
}

/// Resident memory of this process, in bytes.
fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmRSS:")).unwrap();
    line.split_whitespace().nth(1).unwrap().parse::<usize>().unwrap() * 1024
}

#[test]
fn a_large_upload_should_hold_a_bounded_amount_of_memory() {
    let t = start(config(|_| {}));
    let len: usize = 256 * 1024 * 1024;
    let before = rss();
    let mut s = connect(t.addr());
    s.set_read_timeout(Some(Duration::from_secs(120))).unwrap();
    s.write_all(&post("/upload-big", "", len)).unwrap();
    let piece = vec![b'u'; 256 * 1024];
    for _ in 0..len / piece.len() {
        s.write_all(&piece).unwrap();
    }
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.text(), format!("got {len}"));
    let grown = rss().saturating_sub(before);
    assert!(grown < 64 * 1024 * 1024, "RSS grew by {} MiB for a 256 MiB upload", grown >> 20);
}
