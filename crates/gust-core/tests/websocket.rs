//! WebSockets over real sockets: the upgrade through a handler, echo, publish, the close handshake in both
//! directions, violations closed with their codes, a stop that says 1001, and the bounds on what a client that
//! never reads can make the server hold. permessage-deflate is in `websocket_deflate.rs`.
mod support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;
use std::time::Duration;

use gust_core::ws::WsOptions;
use gust_core::Server;
use support::ws::{client_frame, handshake, read_frame, start, start_configured, start_pausable, wait_for, Heard, KEY};

#[test]
fn a_handshake_becomes_a_socket_that_echoes_publishes_and_closes_cleanly() {
    let (server, heard) = start(WsOptions::default());
    let addr = server.local_addr().unwrap();
    let (mut s, head) = handshake(addr, "sec-websocket-protocol: other, chat\r\n");
    assert!(head.starts_with("http/1.1 101"), "{head}");
    assert!(head.contains("sec-websocket-accept: s3pplmbitxaq9kygzzhzrbk+xoo="), "{head}");
    assert!(head.contains("sec-websocket-protocol: chat") && head.contains("x-hello: 1"), "{head}");
    assert!(wait_for(&heard, "open"));

    s.write_all(&client_frame(1, true, "héllo".as_bytes())).unwrap();
    assert_eq!(read_frame(&mut s), Some((1, "héllo".as_bytes().to_vec())));
    // Fragmented, with a ping between the fragments: the pong comes first, then the whole message.
    s.write_all(&client_frame(2, false, &[0, 1])).unwrap();
    s.write_all(&client_frame(9, true, b"p")).unwrap();
    s.write_all(&client_frame(0, true, &[2, 255])).unwrap();
    assert_eq!(read_frame(&mut s), Some((10, b"p".to_vec())));
    assert_eq!(read_frame(&mut s), Some((2, vec![0, 1, 2, 255])));
    let big = vec![b'z'; 1 << 20];
    s.write_all(&client_frame(1, true, &big)).unwrap();
    assert_eq!(read_frame(&mut s), Some((1, big)));

    let (mut other, _) = handshake(addr, "");
    assert!(wait_for(&heard, "open 2"));
    s.write_all(&client_frame(1, true, b"pub:news")).unwrap();
    assert_eq!(read_frame(&mut s), Some((1, b"news".to_vec())));
    assert_eq!(read_frame(&mut other), Some((1, b"news".to_vec())));
    assert_eq!(server.websockets().subscriber_count("room"), 2);

    // The client closes: the server echoes its code, then closes the connection.
    s.write_all(&client_frame(8, true, &[0x03, 0xE8, b'b', b'y', b'e'])).unwrap();
    assert_eq!(read_frame(&mut s), Some((8, vec![0x03, 0xE8])));
    assert_eq!(read_frame(&mut s), None);
    assert!(wait_for(&heard, "close 1 1000 bye"));
    assert_eq!(server.websockets().subscriber_count("room"), 1, "its subscriptions went with it");

    // The server closes: the client replies and the handler hears the client's code.
    other.write_all(&client_frame(1, true, b"close-me")).unwrap();
    assert_eq!(read_frame(&mut other), Some((8, [&4000u16.to_be_bytes()[..], b"asked"].concat())));
    other.write_all(&client_frame(8, true, &4000u16.to_be_bytes())).unwrap();
    assert_eq!(read_frame(&mut other), None);
    assert!(wait_for(&heard, "close 2 4000"));
    server.stop(true);
}

/// The next whole server frame from an HTTP/2 stream, `buf` keeping what came past it; `None` at its end.
async fn h2_frame(recv: &mut h2::RecvStream, buf: &mut Vec<u8>) -> Option<(u8, Vec<u8>)> {
    loop {
        if buf.len() >= 2 {
            assert_eq!(buf[1] & 0x80, 0, "server frames are not masked");
            let (len, at) = match buf[1] & 0x7F {
                126 if buf.len() >= 4 => (u16::from_be_bytes([buf[2], buf[3]]) as usize, 4),
                127 if buf.len() >= 10 => (u64::from_be_bytes(buf[2..10].try_into().unwrap()) as usize, 10),
                126 | 127 => (usize::MAX, 0),
                n => (n as usize, 2),
            };
            if len != usize::MAX && buf.len() >= at + len {
                let frame = (buf[0] & 0x4F, buf[at..at + len].to_vec());
                buf.drain(..at + len);
                return Some(frame);
            }
        }
        let chunk = recv.data().await?.ok()?;
        let _ = recv.flow_control().release_capacity(chunk.len());
        buf.extend_from_slice(&chunk);
    }
}

/// An h2c connection to `addr` once the server has advertised extended CONNECT, and the task driving it.
async fn h2_client(addr: std::net::SocketAddr) -> (h2::client::SendRequest<bytes::Bytes>, tokio::task::JoinHandle<()>) {
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (client, conn) = h2::client::handshake(tcp).await.unwrap();
    let driven = tokio::spawn(async move {
        let _ = conn.await;
    });
    let client = client.ready().await.unwrap();
    for _ in 0..200 {
        if client.is_extended_connect_protocol_enabled() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(client.is_extended_connect_protocol_enabled(), "SETTINGS_ENABLE_CONNECT_PROTOCOL advertised");
    (client, driven)
}

/// An extended CONNECT for a WebSocket at `path` (RFC 8441), with one more header if given.
fn extended_connect(addr: std::net::SocketAddr, path: &str, extra: Option<(&str, &str)>) -> http::Request<()> {
    let mut req = http::Request::builder()
        .method(http::Method::CONNECT)
        .uri(format!("http://{addr}{path}"))
        .header("sec-websocket-version", "13");
    if let Some((name, value)) = extra {
        req = req.header(name, value);
    }
    let mut req = req.body(()).unwrap();
    req.extensions_mut().insert(h2::ext::Protocol::from_static("websocket"));
    req
}

#[test]
fn over_http2_an_extended_connect_becomes_a_socket_beside_the_connections_other_streams() {
    let (server, heard) = start(WsOptions::default());
    let addr = server.local_addr().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (mut client, _driven) = h2_client(addr).await;
        let connect = |path: &str, extra| extended_connect(addr, path, extra);
        let (response, mut send) =
            client.send_request(connect("/ws", Some(("sec-websocket-protocol", "other, chat"))), false).unwrap();
        let res = response.await.unwrap();
        assert_eq!(res.status(), 200, "RFC 8441: a 200, not a 101");
        assert_eq!(res.headers()["sec-websocket-protocol"], "chat");
        assert_eq!(res.headers()["x-hello"], "1");
        assert!(res.headers().get("sec-websocket-accept").is_none() && res.headers().get("upgrade").is_none());
        assert!(wait_for(&heard, "open 1 failed=false"));
        let mut recv = res.into_body();
        let mut buf = Vec::new();
        send.send_data(client_frame(1, true, "héllo".as_bytes()).into(), false).unwrap();
        assert_eq!(h2_frame(&mut recv, &mut buf).await, Some((1, "héllo".as_bytes().to_vec())));
        let big = vec![b'z'; 1 << 20];
        send.send_data(client_frame(1, true, &big).into(), false).unwrap();
        assert_eq!(h2_frame(&mut recv, &mut buf).await, Some((1, big)), "past the stream's flow-control window");

        // The connection goes on serving requests beside the socket, and a socket over HTTP/1.1 shares its topic.
        let (plain, _) = client.send_request(connect("/nothing", None), true).unwrap();
        assert_eq!(plain.await.unwrap().status(), 501, "no WebSocket route at that path");
        let (mut other, _) = handshake(addr, "");
        assert!(wait_for(&heard, "open 2"));
        send.send_data(client_frame(1, true, b"pub:news").into(), false).unwrap();
        assert_eq!(h2_frame(&mut recv, &mut buf).await, Some((1, b"news".to_vec())));
        assert_eq!(read_frame(&mut other), Some((1, b"news".to_vec())));

        // A refusal from the handler side is sent as it is; a 2xx that is not an upgrade would say "open" over
        // HTTP/2, so it is a 500.
        let (refused, _) = client.send_request(connect("/ws", Some(("x-refuse", "1"))), true).unwrap();
        assert_eq!(refused.await.unwrap().status(), 401);
        let (plain, _) = client.send_request(connect("/ws", Some(("x-plain", "1"))), true).unwrap();
        assert_eq!(plain.await.unwrap().status(), 500, "a 200 without the upgrade is not sent");
        // A bad version is refused before any handler; then the client closes its socket cleanly.
        let (refused, _) = client.send_request(connect("/ws", Some(("sec-websocket-version", "8"))), true).unwrap();
        let refused = refused.await.unwrap();
        assert_eq!(refused.status(), 426, "a version other than 13 alone");
        assert_eq!(refused.headers()["sec-websocket-version"], "13");
        send.send_data(client_frame(8, true, &[0x03, 0xE8]).into(), false).unwrap();
        assert_eq!(h2_frame(&mut recv, &mut buf).await, Some((8, vec![0x03, 0xE8])));
        assert_eq!(h2_frame(&mut recv, &mut buf).await, None, "the stream ends");
        assert!(wait_for(&heard, "close 1 1000"));
    });
    server.stop(true);
}

#[test]
fn requests_that_are_not_handshakes_are_refused_in_rust_and_middleware_may_refuse_the_rest() {
    let (server, _) = start(WsOptions::default());
    let addr = server.local_addr().unwrap();
    let plain = support::roundtrip(addr, b"GET /ws HTTP/1.1\r\nhost: x\r\n\r\n").unwrap();
    assert_eq!(plain.status, 426);
    assert_eq!(plain.header("upgrade"), Some("websocket"));
    let (_, head) = handshake(addr, "x-refuse: 1\r\n");
    assert!(head.starts_with("http/1.1 401"), "{head}");
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(s, "GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: upgrade\r\nsec-websocket-version: 8\r\nsec-websocket-key: {KEY}\r\n\r\n").unwrap();
    let res = support::read_response(&mut s, false).unwrap();
    assert_eq!((res.status, res.header("sec-websocket-version")), (426, Some("13")));
    server.stop(true);
}

#[test]
fn violations_close_with_their_codes() {
    let (server, heard) = start(WsOptions { max_payload: 1000, ..WsOptions::default() });
    let addr = server.local_addr().unwrap();
    for (frame, code) in [
        (client_frame(1, true, &[b'a'; 1001]), 1009u16),
        (client_frame(1, true, &[0xC3, 0x28]), 1007),
        (client_frame(0, true, b"x"), 1002),
        (
            {
                let mut f = client_frame(1, true, b"x");
                f[1] &= 0x7F;
                f.truncate(2);
                f.push(b'x');
                f
            },
            1002,
        ),
    ] {
        let (mut s, head) = handshake(addr, "");
        assert!(head.starts_with("http/1.1 101"));
        s.write_all(&frame).unwrap();
        let (op, payload) = read_frame(&mut s).unwrap();
        assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, code));
        assert_eq!(read_frame(&mut s), None, "the server closes after failing the connection");
    }
    assert!(wait_for(&heard, "close 4 1002"));
    server.stop(true);
}

#[test]
fn a_message_in_many_tiny_fragments_is_reassembled_whole_and_its_limit_holds() {
    // 128 KiB in one-byte fragments (seven bytes each on the wire, 900 KB in all): one message, echoed whole.
    let (server, heard) = start(WsOptions { max_payload: 128 * 1024, ..WsOptions::default() });
    let addr = server.local_addr().unwrap();
    let tiny = |n: usize| -> Vec<u8> {
        let mut wire = client_frame(1, false, b"a");
        for i in 1..n {
            wire.extend(client_frame(0, i == n - 1, b"a"));
        }
        wire
    };
    let (mut s, _) = handshake(addr, "");
    let started = std::time::Instant::now();
    s.write_all(&tiny(128 * 1024)).unwrap();
    assert_eq!(read_frame(&mut s), Some((1, vec![b'a'; 128 * 1024])));
    eprintln!("131,072 fragments reassembled and echoed in {:?}", started.elapsed());
    assert!(wait_for(&heard, &format!("msg 1 {}", 128 * 1024)));
    // One fragment more than the limit allows: closed with 1009 at that fragment, never a message.
    let (mut s, _) = handshake(addr, "");
    let mut over = tiny(128 * 1024 + 2);
    // Without its final fragment: the limit is crossed at the one before, and the message never ends.
    over.truncate(over.len() - 7);
    s.write_all(&over).unwrap();
    let (op, payload) = read_frame(&mut s).unwrap();
    assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, 1009));
    assert!(!heard.lock().unwrap().iter().any(|l| l.starts_with("msg 2 ")), "no part of the message was delivered");
    server.stop(true);
}

#[test]
fn a_stop_closes_sockets_with_1001() {
    let (server, _) = start(WsOptions::default());
    let (mut s, _) = handshake(server.local_addr().unwrap(), "");
    std::thread::sleep(Duration::from_millis(100));
    server.stop(false);
    let (op, payload) = read_frame(&mut s).unwrap();
    assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, 1001));
    s.write_all(&client_frame(8, true, &1001u16.to_be_bytes())).unwrap();
    assert_eq!(read_frame(&mut s), None);
    server.wait();
}

#[test]
fn a_socket_over_http2_outlives_its_connections_idle_timeout_and_a_stop_closes_it_with_1001() {
    for forced in [false, true] {
        socket_over_http2_then_stop(forced);
    }
}

fn socket_over_http2_then_stop(forced: bool) {
    let (server, heard, _) = start_configured(WsOptions::default(), |c| c.idle_timeout = Duration::from_millis(300));
    let addr = server.local_addr().unwrap();
    let rt = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    rt.block_on(async {
        let (mut client, driven) = h2_client(addr).await;
        let (response, mut send) = client.send_request(extended_connect(addr, "/ws", None), false).unwrap();
        let mut recv = response.await.unwrap().into_body();
        let mut buf = Vec::new();
        // Quiet for longer than the idle timeout, which ends a connection with no request open: the socket
        // keeps its connection busy.
        tokio::time::sleep(Duration::from_millis(900)).await;
        send.send_data(client_frame(1, true, b"still here").into(), false).unwrap();
        assert_eq!(h2_frame(&mut recv, &mut buf).await, Some((1, b"still here".to_vec())));
        // Forced or not, the socket says 1001 before its connection goes: its bytes leave through it.
        server.stop(forced);
        let (op, payload) = h2_frame(&mut recv, &mut buf).await.unwrap();
        assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, 1001), "forced: {forced}");
        if !forced {
            send.send_data(client_frame(8, true, &1001u16.to_be_bytes()).into(), true).unwrap();
            assert_eq!(h2_frame(&mut recv, &mut buf).await, None);
        }
        drop(client);
        let _ = tokio::time::timeout(Duration::from_secs(5), driven).await;
    });
    server.wait();
    assert!(wait_for(&heard, "close 1"), "the close was told, forced: {forced}");
}

#[test]
fn a_quiet_client_is_pinged_then_closed() {
    let options = WsOptions { idle_timeout: Some(Duration::from_millis(400)), ..WsOptions::default() };
    let (server, heard) = start(options);
    let (mut s, _) = handshake(server.local_addr().unwrap(), "");
    assert_eq!(read_frame(&mut s), Some((9, vec![])), "a ping half-way");
    let (op, payload) = read_frame(&mut s).unwrap();
    assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, 1001));
    drop(s);
    assert!(wait_for(&heard, "close 1"));
    server.stop(true);
}

#[test]
fn while_the_handler_side_is_behind_sockets_stop_reading_and_tcp_pushes_back() {
    let (server, heard, paused) = start_pausable(WsOptions::default());
    let (s, _) = handshake(server.local_addr().unwrap(), "");
    assert!(wait_for(&heard, "open"));
    paused.store(true, std::sync::atomic::Ordering::SeqCst);
    // 1 MiB text messages, as fast as the server takes them; without a bound it would take all 300 within the
    // write timeout, and hold them for the handler side.
    let mut writer = s.try_clone().unwrap();
    writer.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let frame = client_frame(1, true, &vec![b'a'; 1 << 20]);
    let mut sent = 0;
    while sent < 300 && writer.write_all(&frame).is_ok() {
        sent += 1;
    }
    assert!(sent < 150, "reading went on: {sent} MiB went in while the handler side took nothing");
    assert!(sent >= 32, "reading stopped too early: {sent} MiB");
    // Once it catches up, the messages that went in all arrive.
    paused.store(false, std::sync::atomic::Ordering::SeqCst);
    let got = |heard: &Heard| heard.lock().unwrap().iter().filter(|l| l.starts_with("msg ")).count();
    for _ in 0..500 {
        if got(&heard) >= sent - 1 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(got(&heard) >= sent - 1, "{} of {sent} messages arrived", got(&heard));
    drop(s);
    server.stop(true);
}

#[test]
fn frames_sent_right_behind_the_handshake_are_not_lost() {
    let (server, _) = start(WsOptions::default());
    let mut s = TcpStream::connect(server.local_addr().unwrap()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut raw = format!(
        "GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: {KEY}\r\n\r\n"
    )
    .into_bytes();
    raw.extend(client_frame(1, true, b"early"));
    s.write_all(&raw).unwrap();
    assert!(support::read_head(&mut s).starts_with(b"HTTP/1.1 101"));
    assert_eq!(read_frame(&mut s), Some((1, b"early".to_vec())));
    server.stop(true);
}

/// Samples socket `id`'s send queue every millisecond until `done`; returns the most it held. (The queue, not
/// the process's memory: the other tests of this file run beside it.)
fn most_queued(
    server: &Arc<Server>,
    id: u32,
    done: Arc<std::sync::atomic::AtomicBool>,
) -> std::thread::JoinHandle<usize> {
    let server = server.clone();
    std::thread::spawn(move || {
        let mut most = 0;
        while !done.load(std::sync::atomic::Ordering::SeqCst) {
            most = most.max(server.websockets().buffered(id));
            std::thread::sleep(Duration::from_millis(1));
        }
        most
    })
}

#[test]
fn a_ping_flood_from_a_client_that_never_reads_costs_one_pong_not_one_per_ping() {
    // Each ping asks for a pong. A client that never reads must not make the server queue pongs without end (it
    // did: 256 MiB of pings grew the process by 400 MB): once its socket is full, a waiting pong is replaced by
    // the next one. (A client that reads gets every pong: Autobahn 2.10.)
    let (server, heard) = start(WsOptions::default());
    let addr = server.local_addr().unwrap();
    let (s, _) = handshake(addr, "");
    assert!(wait_for(&heard, "open"));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = most_queued(&server, 1, done.clone());
    let mut writer = s.try_clone().unwrap();
    writer.set_write_timeout(Some(Duration::from_secs(2))).unwrap();
    let ping = client_frame(9, true, &[b'p'; 125]);
    let burst: Vec<u8> = ping.iter().copied().cycle().take(ping.len() * 512).collect();
    let mut sent = 0usize;
    let started = std::time::Instant::now();
    while sent < 96 << 20 && started.elapsed() < Duration::from_secs(10) && writer.write_all(&burst).is_ok() {
        sent += burst.len();
    }
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let most = sampler.join().unwrap();
    eprintln!("{} MiB of pings went in; the socket's queue held at most {most} bytes", sent >> 20);
    assert!(sent >= 64 << 20, "only {} MiB of pings went in", sent >> 20);
    // Before the client's socket filled, a pong per ping (what one read of pings asks for, ~64 KiB); after it,
    // one waiting pong replaced by the next. Before the fix, a pong per ping without end: 400 MB.
    assert!(most <= 128 * 1024, "the socket's queue held {most} bytes");
    // Another client is still served.
    let (mut other, _) = handshake(addr, "");
    other.write_all(&client_frame(1, true, b"hello")).unwrap();
    assert_eq!(read_frame(&mut other), Some((1, b"hello".to_vec())));
    drop(s);
    server.stop(true);
}

#[test]
fn a_subscriber_that_never_reads_costs_its_backpressure_limit_while_the_topic_floods() {
    // Messages published to a subscriber that stopped reading are dropped past its limit: its queue never holds
    // more than the limit plus one message, and the other subscribers get every message, in order.
    let options = WsOptions { backpressure_limit: 256 * 1024, ..WsOptions::default() };
    let (server, heard) = start(options);
    let addr = server.local_addr().unwrap();
    let (lazy, _) = handshake(addr, "");
    let (mut publisher, _) = handshake(addr, "");
    assert!(wait_for(&heard, "open 2"));
    let done = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let sampler = most_queued(&server, 1, done.clone());
    // 12 MiB: more than the kernel buffers of the idle connection hold, so the limit is what bounds it.
    const MESSAGES: usize = 12_000;
    let mut reader = publisher.try_clone().unwrap();
    let got = std::thread::spawn(move || {
        (0..MESSAGES)
            .map_while(|_| read_frame(&mut reader))
            .enumerate()
            .all(|(i, (op, data))| op == 1 && data.len() == 1024 && data.starts_with(format!("{i:08}").as_bytes()))
    });
    for i in 0..MESSAGES {
        let message = format!("pub:{i:08}{}", "x".repeat(1016));
        publisher.write_all(&client_frame(1, true, message.as_bytes())).unwrap();
    }
    assert!(got.join().unwrap(), "the reading subscriber got every message, in order");
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    let most = sampler.join().unwrap();
    eprintln!("12 MiB published past a subscriber that never reads: its queue held at most {most} bytes");
    // The limit, plus the one message that passed it.
    assert!(most <= 256 * 1024 + 1024 + 4, "the idle subscriber's queue held {most} bytes past a 256 KiB limit");
    assert!(most > 128 * 1024, "the limit was never approached ({most} bytes): the test did not flood");
    drop(lazy);
    server.stop(true);
}
