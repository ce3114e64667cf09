//! Streamed responses over real sockets: each chunk leaves when it is written, framing follows the client and the
//! handler's declared length, a failure cuts the body off, a slow reader pauses the producer, and a client that
//! leaves cancels it.

mod support;

use std::io::Write;
use std::time::Duration;

use gust_core::wire::Kind;
use support::*;

/// Whether a cancel event reaches the handler side within a second.
fn cancel_seen(t: &TestServer) -> bool {
    (0..50).any(|_| {
        let seen = t.events.lock().unwrap().iter().any(|(kind, _, _)| *kind == Kind::Cancel as u8);
        seen || {
            std::thread::sleep(Duration::from_millis(20));
            false
        }
    })
}

#[test]
fn each_chunk_should_leave_when_written_and_the_body_end_cleanly() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let early = read_until(&mut s, |got| contains(got, b"first\n"));
    assert!(!contains(&early, b"second"), "the first chunk arrived without waiting for the second");
    let mut all = early;
    all.extend(read_until(&mut s, |got| got.ends_with(b"0\r\n\r\n")));
    let (head, body) = dechunk(&all);
    assert!(head.starts_with("http/1.1 200"), "{head}");
    assert!(head.contains("transfer-encoding: chunked"), "{head}");
    assert_eq!(body.as_deref(), Some(&b"first\nsecond\n"[..]));
    // The connection stays usable.
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "Hi");
}

#[test]
fn a_declared_length_should_frame_the_stream_instead_of_chunks() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(b"GET /stream?length HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let res = read_response(&mut s, false).unwrap();
    assert_eq!(res.header("content-length"), Some("13"));
    assert_eq!(res.header("transfer-encoding"), None);
    assert_eq!(res.text(), "first\nsecond\n");
    s.write_all(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(read_response(&mut s, false).unwrap().text(), "Hi");
}

#[test]
fn an_http_10_client_should_get_the_stream_until_the_connection_closes() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(b"GET /stream HTTP/1.0\r\n\r\n").unwrap();
    let all = read_until(&mut s, |_| false);
    let split = all.windows(4).position(|w| w == b"\r\n\r\n").unwrap() + 4;
    let head = String::from_utf8_lossy(&all[..split]).to_lowercase();
    assert!(!head.contains("chunked"), "{head}");
    assert_eq!(&all[split..], b"first\nsecond\n");
}

#[test]
fn a_failed_stream_should_be_cut_off_without_its_terminator() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(b"GET /stream?abort HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let all = read_until(&mut s, |_| false);
    assert!(contains(&all, b"second\n"), "what was written before the failure was sent");
    assert_eq!(dechunk(&all).1, None, "the client can tell the body is incomplete");
    assert!(roundtrip(t.addr(), b"GET / HTTP/1.1\r\nhost: x\r\n\r\n").is_some(), "the server goes on");
}

#[test]
fn a_client_leaving_mid_stream_should_cancel_it() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    // A long stream: the server is still writing when the client goes, so a write fails.
    s.write_all(b"GET /stream?big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    read_until(&mut s, |got| got.len() > 64 * 1024);
    drop(s);
    assert!(cancel_seen(&t), "a cancel event reached the handler side: {:?}", t.events.lock().unwrap());
}

#[test]
fn a_head_request_should_cancel_the_unsent_stream() {
    let t = start(config(|_| {}));
    let res = roundtrip(t.addr(), b"HEAD /stream HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 200);
    assert!(cancel_seen(&t), "the producer is told to stop");
}

#[test]
fn a_slow_reader_should_pause_the_producer_until_the_queue_drains() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"GET /stream?big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    // Read nothing: the socket buffers and hyper's fill up, then the engine's queue, and the producer is paused.
    let paused = (0..250).any(|_| {
        std::thread::sleep(Duration::from_millis(20));
        t.big.lock().unwrap().0 >= 1
    });
    assert!(paused, "the producer was told to wait");
    let all = read_until(&mut s, |got| got.ends_with(b"0\r\n\r\n"));
    let body = dechunk(&all).1.expect("a whole chunked body");
    assert_eq!(body.len(), BIG_CHUNKS * 16 * 1024);
    let (paused, resumed) = *t.big.lock().unwrap();
    assert_eq!(paused, resumed, "every pause ended with a drain event");
}

#[test]
fn a_client_that_stops_sending_should_cancel_its_waiting_request_yet_still_get_the_answer() {
    let t = start(config(|_| {}));
    let mut s = connect(t.addr());
    s.write_all(b"GET /slow HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    s.shutdown(std::net::Shutdown::Write).unwrap();
    let res = read_response(&mut s, false).expect("a half-closing client still gets its answer");
    assert_eq!(res.text(), "slow");
    assert!(cancel_seen(&t), "the handler was told its client stopped sending");
}

#[test]
fn a_request_answered_by_the_handler_timeout_should_be_cancelled_for_its_handler() {
    let t = start(config(|c| {
        c.handler_timeout = Some(Duration::from_millis(200));
    }));
    let res = roundtrip(t.addr(), b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(res.status, 503);
    assert!(cancel_seen(&t), "the handler still working on it is told");
}

#[test]
fn a_stream_quiet_for_longer_than_the_idle_timeout_is_not_cut() {
    // The second chunk comes 150 ms after the first: three idle timeouts of silence on a response in progress.
    let t = start(config(|c| c.idle_timeout = Duration::from_millis(50)));
    let mut s = connect(t.addr());
    s.write_all(b"GET /stream HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    let all = read_until(&mut s, |got| got.ends_with(b"0\r\n\r\n"));
    let (_, body) = dechunk(&all);
    assert_eq!(body.as_deref(), Some(&b"first\nsecond\n"[..]));
}

#[test]
fn a_client_that_reads_nothing_is_closed_after_the_send_timeout() {
    let t = start(config(|c| c.send_timeout = Duration::from_millis(300)));
    let mut s = connect(t.addr());
    s.write_all(b"GET /stream?big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    // The 32 MiB stream fills the socket buffers and the producer pauses; the client reads nothing.
    std::thread::sleep(Duration::from_millis(1500));
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut got = 0;
    let mut buf = vec![0; 1 << 16];
    let ended = loop {
        match std::io::Read::read(&mut s, &mut buf) {
            Ok(0) => break true,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => break true,
            Err(_) => break false,
        }
    };
    assert!(ended, "the server closed the connection");
    assert!(got < BIG_CHUNKS * 16 * 1024, "the stream was cut short: {got} bytes");
    assert!(cancel_seen(&t), "its producer was told");
}

#[test]
fn a_client_that_pauses_a_whole_body_longer_than_the_idle_timeout_is_not_cut() {
    // A 24 MiB turbo answer: nothing is in flight (no handler), while most of it waits for a client that reads
    // nothing for ten idle timeouts; the send timeout, not the idle one, decides.
    let size = 24 << 20;
    let t = start_with(config(|c| c.idle_timeout = Duration::from_millis(100)), routes_with_big(size));
    let mut s = connect(t.addr());
    s.write_all(b"GET /big HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    std::thread::sleep(Duration::from_millis(1000));
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let all = read_until(&mut s, |got| got.len() >= size && got.ends_with(b"zzzz"));
    assert!(all.starts_with(b"HTTP/1.1 200"), "{:?}", String::from_utf8_lossy(&all[..40.min(all.len())]));
    assert!(all.len() > size, "the whole body arrived: {} bytes", all.len());
}
