//! WebSocket tests' server and client: a route whose handler side (a thread, as JavaScript would be) accepts the
//! upgrade, logs what it hears, echoes and publishes; and a raw client that writes masked frames and reads the
//! server's.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use bytes::Bytes;
use gust_core::wire::{self, answer::Text};
use gust_core::ws::frame::OpCode;
use gust_core::ws::{Payload, WsOptions};
use gust_core::{AnswerBatch, RequestBatch, RouteTable, Server, Target};

use super::http::read_head;
use super::server::Forward;

pub const WS: u32 = 7;

/// What the handler side heard: `open <socket>`, `msg <socket> <text>`, `close <socket> <code> <reason>`.
pub type Heard = Arc<Mutex<Vec<String>>>;

/// One answer: an upgrade (flag 8) with `headers`, or a plain `status`.
pub fn answer(id: u32, upgrade: bool, status: u32, headers: &[(&str, &str)]) -> AnswerBatch {
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

pub fn start(options: WsOptions) -> (Arc<Server>, Heard) {
    let (server, heard, _) = start_pausable(options);
    (server, heard)
}

/// A server whose handler side takes no batch while the flag is set (JavaScript busy elsewhere).
pub fn start_pausable(options: WsOptions) -> (Arc<Server>, Heard, Arc<std::sync::atomic::AtomicBool>) {
    start_configured(options, |_| {})
}

/// [`start_pausable`], with the server's configuration changed by `tweak`.
pub fn start_configured(
    options: WsOptions,
    tweak: impl FnOnce(&mut gust_core::Config),
) -> (Arc<Server>, Heard, Arc<std::sync::atomic::AtomicBool>) {
    let mut b = RouteTable::builder();
    b.add("GET", "/ws", Target::Dynamic(WS)).unwrap();
    b.websocket(WS, options);
    let mut config = super::config(tweak);
    config.addrs = vec!["127.0.0.1:0".parse().unwrap()];
    let (tx, rx) = mpsc::channel::<RequestBatch>();
    let server = Arc::new(super::engine::start_server(config, b.build(), Arc::new(Forward(Mutex::new(tx)))).unwrap());
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
                        } else if record.contains("x-plain") {
                            // A handler that answers a handshake without upgrading, with a 200.
                            answer(id, false, 200, &[])
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

pub const KEY: &str = "dGhlIHNhbXBsZSBub25jZQ==";

pub fn handshake(addr: SocketAddr, extra: &str) -> (TcpStream, String) {
    let mut s = TcpStream::connect(addr).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    write!(
        s,
        "GET /ws HTTP/1.1\r\nhost: x\r\nupgrade: websocket\r\nconnection: Upgrade\r\nsec-websocket-version: 13\r\nsec-websocket-key: {KEY}\r\n{extra}\r\n"
    )
    .unwrap();
    let head = read_head(&mut s);
    (s, String::from_utf8(head).unwrap().to_ascii_lowercase())
}

pub fn client_frame(opcode: u8, fin: bool, payload: &[u8]) -> Vec<u8> {
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
pub fn read_frame(s: &mut TcpStream) -> Option<(u8, Vec<u8>)> {
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

pub fn wait_for(heard: &Heard, what: &str) -> bool {
    for _ in 0..200 {
        if heard.lock().unwrap().iter().any(|l| l.contains(what)) {
            return true;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    false
}
