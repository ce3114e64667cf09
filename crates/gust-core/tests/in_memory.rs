//! In-memory connections: served exactly as TCP ones, without a socket.
mod support;

use std::sync::mpsc;
use std::time::Duration;

use bytes::Bytes;
use gust_core::{Config, PipeEvent};
use support::{contains, dechunk, start_in_memory};

/// Collects a pipe's events on a channel.
fn events() -> (impl Fn(PipeEvent) + Send + Sync + 'static, mpsc::Receiver<PipeEvent>) {
    let (tx, rx) = mpsc::channel();
    let tx = std::sync::Mutex::new(tx);
    (move |e| drop(tx.lock().unwrap().send(e)), rx)
}

/// Reads (one `read()` per event) until `done` holds for what arrived, or the server ends the connection.
fn read(pipe: &gust_core::Pipe, rx: &mpsc::Receiver<PipeEvent>, done: impl Fn(&[u8]) -> bool) -> (Vec<u8>, bool) {
    let mut got = Vec::new();
    loop {
        if done(&got) {
            return (got, false);
        }
        pipe.read();
        loop {
            match rx.recv_timeout(Duration::from_secs(10)).expect("the server answers") {
                PipeEvent::Data(bytes) => {
                    got.extend_from_slice(&bytes);
                    break;
                }
                PipeEvent::End => return (got, true),
                PipeEvent::Written => {}
            }
        }
    }
}

#[test]
fn an_in_memory_connection_should_get_the_same_answers_as_a_socket() {
    let server = start_in_memory(Config::default());
    assert_eq!(server.server.local_addr(), None);
    let (on_event, rx) = events();
    let pipe = server.server.connect(on_event).unwrap();
    // Turbo, dynamic (with the peer the engine reports), 405 and a HEAD, on one keep-alive connection.
    pipe.write(Bytes::from_static(b"GET / HTTP/1.1\r\nhost: x\r\n\r\n"));
    let (res, _) = read(&pipe, &rx, |b| contains(b, b"\r\n\r\nHi"));
    assert!(res.starts_with(b"HTTP/1.1 200 OK\r\n"), "{}", String::from_utf8_lossy(&res));
    pipe.write(Bytes::from_static(b"POST /echo/7 HTTP/1.1\r\nhost: x\r\ncontent-length: 3\r\n\r\nabc"));
    let (res, _) = read(&pipe, &rx, |b| b.ends_with(b"abc"));
    let text = String::from_utf8_lossy(&res);
    assert!(text.starts_with("HTTP/1.1 200 OK\r\n") && text.contains("x-set: a\r\nx-set: b\r\n"), "{text}");
    assert!(text.contains("127.0.0.1"), "the peer is this machine: {text}");
    pipe.write(Bytes::from_static(b"DELETE / HTTP/1.1\r\nhost: x\r\n\r\n"));
    let (res, _) = read(&pipe, &rx, |b| contains(b, b"Method Not Allowed"));
    assert!(String::from_utf8_lossy(&res).contains("allow: GET, HEAD"));
    // The engine's own rules apply too: no Host in HTTP/1.1 is a 400.
    pipe.write(Bytes::from_static(b"GET / HTTP/1.1\r\n\r\n"));
    let (res, _) = read(&pipe, &rx, |b| contains(b, b"\r\n\r\n"));
    assert!(res.starts_with(b"HTTP/1.1 400 Bad Request\r\n"), "{}", String::from_utf8_lossy(&res));
}

#[test]
fn an_in_memory_connection_should_stream_both_ways_and_half_close() {
    let server = start_in_memory(support::config(|c| c.idle_timeout = Duration::from_millis(200)));
    let (on_event, rx) = events();
    let pipe = server.server.connect(on_event).unwrap();
    // A chunked upload, echoed as it is read, ended by a half-close of the request side.
    pipe.write(Bytes::from_static(b"POST /upload?echo HTTP/1.1\r\nhost: x\r\ntransfer-encoding: chunked\r\n\r\n"));
    for _ in 0..64 {
        pipe.write(Bytes::from(format!("{:x}\r\n{}\r\n", 16 * 1024, "y".repeat(16 * 1024))));
    }
    pipe.write(Bytes::from_static(b"0\r\n\r\n"));
    pipe.end();
    let (res, _) = read(&pipe, &rx, |b| b.ends_with(b"0\r\n\r\n"));
    let (head, body) = dechunk(&res);
    assert!(head.starts_with("http/1.1 200 ok"), "{head}");
    assert_eq!(body.expect("a complete chunked body").len(), 64 * 16 * 1024);
    // The connection is policed as a socket is: idle after its answer, it is closed.
    let (_, ended) = read(&pipe, &rx, |_| false);
    assert!(ended);
}

#[test]
fn connect_should_fail_once_the_server_stops() {
    let server = start_in_memory(Config::default());
    server.server.stop(false);
    let (on_event, _rx) = events();
    let err = server.server.connect(on_event).unwrap_err();
    assert!(err.to_string().contains("stopping"), "{err}");
}

#[test]
fn a_closed_pipe_should_look_like_a_client_that_left() {
    let server = start_in_memory(support::config(|c| c.handler_timeout = Some(Duration::from_millis(300))));
    let (on_event, rx) = events();
    let pipe = server.server.connect(on_event).unwrap();
    pipe.write(Bytes::from_static(b"GET /never HTTP/1.1\r\nhost: x\r\n\r\n"));
    std::thread::sleep(Duration::from_millis(50));
    pipe.close();
    drop(pipe);
    // As with a TCP client gone, the request ends at its handler timeout at the latest, and a graceful stop
    // then finishes: the server holds nothing for a pipe nobody reads.
    server.server.stop(false);
    server.server.wait();
    assert!(rx.try_iter().all(|e| e == PipeEvent::Written));
}
