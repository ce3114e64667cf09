//! WebSockets over real sockets: the upgrade through a handler, echo, publish, the close handshake in both
//! directions, violations closed with their codes, and a stop that says 1001.
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use gust_core::wire::{self, answer::Text};
use gust_core::ws::frame::OpCode;
use gust_core::ws::{Compressor, DeflateOptions, Payload, WsOptions};
use gust_core::{AnswerBatch, Handler, RequestBatch, RouteTable, Server, Target};

const WS: u32 = 7;

/// What the handler side heard: `open <socket>`, `msg <socket> <text>`, `close <socket> <code> <reason>`.
type Heard = Arc<Mutex<Vec<String>>>;

struct Forward(Mutex<mpsc::Sender<RequestBatch>>);

impl Handler for Forward {
    fn handle(&self, batch: RequestBatch) -> Result<(), gust_core::Closed> {
        self.0.lock().unwrap().send(batch).map_err(|_| gust_core::Closed)
    }
}

/// One answer: an upgrade (flag 8) with `headers`, or a plain `status`.
fn answer(id: u32, upgrade: bool, status: u32, headers: &[(&str, &str)]) -> AnswerBatch {
    let flags: u32 = if upgrade { 8 } else { 0 };
    let mut meta = vec![2 | u32::from(wire::VERSION) << 8 | (flags | 1) << 16, id, status, headers.len() as u32, 0];
    let mut text = Vec::new();
    for (name, value) in headers {
        meta.extend([name.len() as u32, value.len() as u32]);
        text.extend_from_slice(name.as_bytes());
        text.extend_from_slice(value.as_bytes());
    }
    AnswerBatch::decode(&meta, Text::Ascii(text.into()), vec![Bytes::new()]).unwrap()
}

fn start(options: WsOptions) -> (Arc<Server>, Heard) {
    let (server, heard, _) = start_pausable(options);
    (server, heard)
}

/// A server whose handler side takes no batch while the flag is set (JavaScript busy elsewhere).
fn start_pausable(options: WsOptions) -> (Arc<Server>, Heard, Arc<std::sync::atomic::AtomicBool>) {
    let mut b = RouteTable::builder();
    b.add("GET", "/ws", Target::Dynamic(WS)).unwrap();
    b.websocket(WS, options);
    let mut config = support::config(|_| {});
    config.addrs = vec!["127.0.0.1:0".parse().unwrap()];
    let (tx, rx) = mpsc::channel::<RequestBatch>();
    let server = Arc::new(Server::start(config, b.build(), Arc::new(Forward(Mutex::new(tx)))).unwrap());
    let heard: Heard = Arc::default();
    let (responder, sockets, log) = (server.responder(), server.websockets(), heard.clone());
    let paused = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let pause = paused.clone();
    std::thread::spawn(move || {
        for batch in rx {
            while pause.load(std::sync::atomic::Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5));
            }
            let bytes = batch.into_bytes();
            let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap());
            let mut at = 0;
            while at < bytes.len() {
                let (tag, len) = (word(at), word(at + 4) as usize);
                let (kind, flags) = (tag & 0xff, tag >> 16);
                match kind {
                    1 => {
                        let id = word(at + 8);
                        let record = String::from_utf8_lossy(&bytes[at..at + len]).into_owned();
                        let res = if record.contains("x-refuse") {
                            answer(id, false, 401, &[])
                        } else if record.contains("chat") {
                            answer(id, true, 101, &[("sec-websocket-protocol", "chat"), ("x-hello", "1")])
                        } else {
                            answer(id, true, 101, &[])
                        };
                        responder.respond(res.records());
                    }
                    8 => {
                        let socket = word(at + 8);
                        sockets.subscribe(socket, "room");
                        log.lock().unwrap().push(format!("open {socket} failed={}", flags != 0));
                    }
                    9 | 10 => {
                        let socket = word(at + 8);
                        let n = word(at + 12) as usize;
                        let data = &bytes[at + 16..at + 16 + n];
                        if kind == 10 {
                            let reason = String::from_utf8_lossy(data);
                            log.lock().unwrap().push(format!("close {socket} {flags} {reason}"));
                        } else if flags & 1 != 0 {
                            sockets.send(socket, Payload::Binary(data), None);
                        } else {
                            let text = std::str::from_utf8(data).unwrap();
                            log.lock().unwrap().push(format!("msg {socket} {}", text.len()));
                            if let Some(topic_text) = text.strip_prefix("pub:") {
                                sockets.publish("room", Payload::Text(topic_text), None, None);
                            } else if text == "close-me" {
                                sockets.close(socket, 4000, "asked").unwrap();
                            } else {
                                sockets.send(socket, Payload::Text(text), None);
                            }
                        }
                    }
                    _ => {}
                }
                at += len;
            }
            sockets.flush();
        }
    });
    (server, heard, paused)
}

const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

fn handshake(addr: std::net::SocketAddr, extra: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: {KEY}\r\n{extra}\r\n"
    )
    .unwrap();
    let head = support::read_head(&mut s);
    (s, String::from_utf8(head).unwrap().to_ascii_lowercase())
}

fn client_frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
    let opcode = match opcode {
        0 => OpCode::Continuation,
        1 => OpCode::Text,
        2 => OpCode::Binary,
        8 => OpCode::Close,
        9 => OpCode::Ping,
        _ => OpCode::Pong,
    };
    gust_core::ws::frame::encode_masked(fin, opcode, payload, [1, 2, 3, 4]).to_vec()
}

/// Reads one server frame: `(opcode, payload)`, the opcode with RSV1 (0x40) when the frame has it; `None` at the
/// end of the stream.
fn read_frame(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
    let mut head = [0u8; 2];
    s.read_exact(&mut head).ok()?;
    assert_eq!(head[1] & 0x80, 0, "server frames are not masked");
    let len = match head[1] & 0x7F {
        126 => {
            let mut b = [0u8; 2];
            s.read_exact(&mut b).ok()?;
            u16::from_be_bytes(b) as usize
        }
        127 => {
            let mut b = [0u8; 8];
            s.read_exact(&mut b).ok()?;
            u64::from_be_bytes(b) as usize
        }
        n => n as usize,
    };
    let mut payload = vec![0; len];
    s.read_exact(&mut payload).ok()?;
    Some((head[0] & 0x4F, payload))
}

fn wait_for(heard: &Heard, what: &str) -> bool {
    for _ in 0..200 {
        if heard.lock().unwrap().iter().any(|l| l.contains(what)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}

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

/// What a client compresses (RFC 7692): a sync flush, its 4-byte tail dropped; `c` keeps its context or not.
fn client_deflate(c: &mut flate2::Compress, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(payload.len() + 64);
    c.compress_vec(payload, &mut out, flate2::FlushCompress::Sync).unwrap();
    assert!(out.ends_with(&[0, 0, 0xFF, 0xFF]));
    out.truncate(out.len() - 4);
    out
}

/// A client's inflater over a server's messages (the tail put back).
fn client_inflate(d: &mut flate2::Decompress, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(1 << 21);
    let input = [payload, &[0, 0, 0xFF, 0xFF]].concat();
    d.decompress_vec(&input, &mut out, flate2::FlushDecompress::Sync).unwrap();
    out
}

fn compressed_frame(opcode: u8, payload: &[u8]) -> Vec<u8> {
    let mut frame = client_frame(opcode, true, payload);
    frame[0] |= 0x40;
    frame
}

const SHARED: DeflateOptions =
    DeflateOptions { compress: Compressor::Shared, dedicated_decompressor: false, threshold: 64 };
const DEDICATED: DeflateOptions =
    DeflateOptions { compress: Compressor::Dedicated, dedicated_decompressor: true, threshold: 0 };

/// A server whose route keeps a compression context per socket both ways, and a client that agreed to it.
fn dedicated() -> (Arc<Server>, Heard, TcpStream, String) {
    let (server, heard) = start(WsOptions { deflate: Some(DEDICATED), ..WsOptions::default() });
    let (s, head) = handshake(server.local_addr().unwrap(), "sec-websocket-extensions: permessage-deflate\r\n");
    (server, heard, s, head)
}

#[test]
fn permessage_deflate_is_agreed_and_messages_go_compressed_both_ways() {
    let (server, heard) = start(WsOptions { max_payload: 1 << 20, deflate: Some(SHARED), ..WsOptions::default() });
    let addr = server.local_addr().unwrap();
    let (mut s, head) = handshake(addr, "sec-websocket-extensions: permessage-deflate; client_max_window_bits\r\n");
    assert!(
        head.contains(
            "sec-websocket-extensions: permessage-deflate; server_no_context_takeover; client_no_context_takeover"
        ),
        "{head}"
    );
    let mut inflater = flate2::Decompress::new(false);
    let text = "a message long enough to be worth compressing, ".repeat(40);
    let mut c = flate2::Compress::new_with_window_bits(flate2::Compression::fast(), false, 15);
    s.write_all(&compressed_frame(1, &client_deflate(&mut c, text.as_bytes()))).unwrap();
    let (op, body) = read_frame(&mut s).unwrap();
    assert_eq!(op, 0x41, "the echo comes back compressed");
    assert!(body.len() < text.len() / 4);
    inflater.reset(false);
    assert_eq!(client_inflate(&mut inflater, &body), text.as_bytes());
    // Plain frames still go, and short messages come back plain.
    s.write_all(&client_frame(1, true, b"short")).unwrap();
    assert_eq!(read_frame(&mut s), Some((1, b"short".to_vec())));
    // A compressed message in fragments (RSV1 on the first only), with a ping between.
    c.reset();
    let body = client_deflate(&mut c, text.as_bytes());
    let (first, rest) = body.split_at(body.len() / 2);
    let mut start_frame = client_frame(1, false, first);
    start_frame[0] |= 0x40;
    s.write_all(&start_frame).unwrap();
    s.write_all(&client_frame(9, true, b"p")).unwrap();
    s.write_all(&client_frame(0, true, rest)).unwrap();
    assert_eq!(read_frame(&mut s), Some((10, b"p".to_vec())));
    let (op, body) = read_frame(&mut s).unwrap();
    inflater.reset(false);
    assert_eq!((op, client_inflate(&mut inflater, &body)), (0x41, text.as_bytes().to_vec()));

    // A publish reaches a client that agreed compressed, and one that did not plain.
    let (mut plain, head) = handshake(addr, "");
    assert!(!head.contains("sec-websocket-extensions"), "{head}");
    assert!(wait_for(&heard, "open 2"));
    s.write_all(&client_frame(1, true, format!("pub:{text}").as_bytes())).unwrap();
    let (op, body) = read_frame(&mut s).unwrap();
    inflater.reset(false);
    assert_eq!((op, client_inflate(&mut inflater, &body)), (0x41, text.as_bytes().to_vec()));
    assert_eq!(read_frame(&mut plain), Some((1, text.as_bytes().to_vec())));
    // RSV1 where nothing was agreed fails the connection.
    plain.write_all(&compressed_frame(1, &client_deflate(&mut c, b"x"))).unwrap();
    let (op, payload) = read_frame(&mut plain).unwrap();
    assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, 1002));
    server.stop(true);
}

#[test]
fn compressed_messages_are_held_to_the_limit_once_inflated_and_must_inflate() {
    let (server, _) = start(WsOptions { max_payload: 64 * 1024, deflate: Some(SHARED), ..WsOptions::default() });
    let addr = server.local_addr().unwrap();
    let mut c = flate2::Compress::new_with_window_bits(flate2::Compression::best(), false, 15);
    let bomb = client_deflate(&mut c, &vec![0u8; 16 << 20]);
    assert!(bomb.len() < 64 * 1024, "{} bytes on the wire", bomb.len());
    for (frame, code) in [(compressed_frame(2, &bomb), 1009u16), (compressed_frame(2, &[0xFF, 0xFF, 0xFF, 0xFF]), 1007)]
    {
        let (mut s, head) = handshake(addr, "sec-websocket-extensions: permessage-deflate\r\n");
        assert!(head.contains("permessage-deflate"), "{head}");
        s.write_all(&frame).unwrap();
        let (op, payload) = read_frame(&mut s).unwrap();
        assert_eq!((op, u16::from_be_bytes([payload[0], payload[1]])), (8, code));
        assert_eq!(read_frame(&mut s), None);
    }
    server.stop(true);
}

#[test]
fn dedicated_contexts_carry_over_between_messages_both_ways() {
    let (server, _, mut s, head) = dedicated();
    assert!(head.contains("sec-websocket-extensions: permessage-deflate\r\n"), "no parameters: {head}");
    // The client keeps its context: its second message refers back to its first.
    let mut c = flate2::Compress::new_with_window_bits(flate2::Compression::default(), false, 15);
    let mut d = flate2::Decompress::new(false);
    let text = "context takeover carries the window over from one message to the next. ".repeat(8);
    let mut sizes = Vec::new();
    for _ in 0..3 {
        s.write_all(&compressed_frame(1, &client_deflate(&mut c, text.as_bytes()))).unwrap();
        let (op, body) = read_frame(&mut s).unwrap();
        assert_eq!(op, 0x41);
        sizes.push(body.len());
        assert_eq!(client_inflate(&mut d, &body), text.as_bytes(), "inflated with the client's kept context");
    }
    assert!(sizes[1] < sizes[0], "the server's second message refers back to its first: {sizes:?}");
    server.stop(true);
}

#[test]
fn while_the_server_closes_a_kept_context_still_sees_every_compressed_message() {
    let (server, heard, mut s, _) = dedicated();
    assert!(wait_for(&heard, "open 1"));
    s.write_all(&client_frame(1, true, b"close-me")).unwrap();
    let (op, _) = read_frame(&mut s).unwrap();
    assert_eq!(op, 8, "the server closes");
    // Not wanted any more, but the client's context goes on through them: a message in one frame, then one in
    // two fragments that refers back to it.
    let mut c = flate2::Compress::new_with_window_bits(flate2::Compression::default(), false, 15);
    let text = "a message the second one refers back to, a message the second one refers back to";
    s.write_all(&compressed_frame(1, &client_deflate(&mut c, text.as_bytes()))).unwrap();
    let second = client_deflate(&mut c, text.as_bytes());
    let (a, b) = second.split_at(second.len() / 2);
    let mut first = client_frame(1, false, a);
    first[0] |= 0x40;
    s.write_all(&first).unwrap();
    s.write_all(&client_frame(0, true, b)).unwrap();
    s.write_all(&client_frame(8, true, &4000u16.to_be_bytes())).unwrap();
    assert_eq!(read_frame(&mut s), None);
    assert!(wait_for(&heard, "close 1 4000"), "the client's close code, not 1007: {:?}", heard.lock().unwrap());
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
