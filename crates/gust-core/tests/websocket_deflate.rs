//! permessage-deflate (RFC 7692) over real sockets: the agreement, messages compressed both ways (shared and
//! dedicated contexts), fragments, publishes to clients that agreed and did not, and the limits an inflated
//! message is held to.
mod support;

use std::io::Write;
use std::net::TcpStream;
use std::sync::Arc;

use gust_core::ws::{Compressor, DeflateOptions, WsOptions};
use gust_core::Server;
use support::ws::{client_frame, handshake, read_frame, start, wait_for, Heard};

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
