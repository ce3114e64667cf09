//! Compression over real sockets: turbo variants, files coded as they stream, and request bodies decoded within
//! their limits.
mod support;

use std::io::{Read, Write};
use std::sync::Arc;

use bytes::Bytes;
use gust_core::{Compression, Config, FixedResponse, RouteTable, Target};
use gust_core::{StaticDir, StaticOptions};
use support::{config, connect, dechunk, roundtrip, start, start_with};

fn json() -> String {
    let items: Vec<String> =
        (0..400).map(|i| format!("{{\"id\":{i},\"name\":\"item {i}\",\"tags\":[\"a\",\"b\"]}}")).collect();
    format!("[{}]", items.join(","))
}

fn decode(coding: &str, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    match coding {
        "gzip" => {
            flate2::read::GzDecoder::new(body).read_to_end(&mut out).unwrap();
        }
        "br" => {
            brotli::Decompressor::new(body, 4096).read_to_end(&mut out).unwrap();
        }
        "zstd" => out = zstd::stream::decode_all(body).unwrap(),
        other => panic!("{other}"),
    }
    out
}

fn compressing() -> Config {
    config(|c| c.compression = Some(Compression::default()))
}

/// Sends `raw` (which asks for `connection: close`) and reads everything until the server closes.
fn until_close(addr: std::net::SocketAddr, raw: &[u8]) -> Vec<u8> {
    let mut s = connect(addr);
    s.write_all(raw).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    out
}

#[test]
fn turbo_responses_are_compressed_once_per_coding_and_chosen_per_request() {
    let body = json();
    let mut b = RouteTable::builder();
    let fixed =
        FixedResponse::new(200, [("content-type", "application/json"), ("etag", "\"v1\"")], Bytes::from(body.clone()))
            .unwrap();
    b.add("GET", "/data", Target::Fixed(Arc::new(fixed))).unwrap();
    let tiny = FixedResponse::new(200, [("content-type", "text/plain")], Bytes::from_static(b"small")).unwrap();
    b.add("GET", "/tiny", Target::Fixed(Arc::new(tiny))).unwrap();
    let server = start_with(compressing(), b.build());
    let addr = server.addr();
    for (accept, coding) in [
        ("gzip", "gzip"),
        ("br", "br"),
        ("zstd", "zstd"),
        ("gzip, deflate, br, zstd", "zstd"),
        ("br;q=1, zstd;q=0.5", "br"),
    ] {
        let res =
            roundtrip(addr, format!("GET /data HTTP/1.1\r\nhost: x\r\naccept-encoding: {accept}\r\n\r\n").as_bytes())
                .unwrap();
        assert_eq!(res.header("content-encoding"), Some(coding), "{accept}");
        assert_eq!(res.header("vary"), Some("accept-encoding"));
        assert_eq!(res.header("etag"), Some("W/\"v1\""), "a coded variant's tag is weak");
        assert!(res.body.len() < body.len() / 5);
        assert_eq!(decode(coding, &res.body), body.as_bytes(), "{accept}");
    }
    for accept in [None, Some("identity"), Some("gzip;q=0, br;q=0, zstd;q=0"), Some("deflate")] {
        let line = accept.map_or(String::new(), |a| format!("accept-encoding: {a}\r\n"));
        let res = roundtrip(addr, format!("GET /data HTTP/1.1\r\nhost: x\r\n{line}\r\n").as_bytes()).unwrap();
        assert_eq!(res.header("content-encoding"), None, "{accept:?}");
        assert_eq!(res.header("vary"), Some("accept-encoding"), "every variant varies");
        assert_eq!(res.header("etag"), Some("\"v1\""));
        assert_eq!(res.body, body.as_bytes());
    }
    let head = roundtrip(addr, b"HEAD /data HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\n\r\n").unwrap();
    assert_eq!(head.header("content-encoding"), None, "HEAD is never coded");
    let tiny = roundtrip(addr, b"GET /tiny HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\n\r\n").unwrap();
    assert_eq!((tiny.header("content-encoding"), tiny.text().as_str()), (None, "small"), "under the threshold");
}

#[test]
fn files_are_compressed_as_they_stream_and_never_for_ranges() {
    let dir = std::env::temp_dir().join(format!("gust-compress-files-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big: String = (0..40_000).map(|i| format!("row {i}: the quick brown fox\n")).collect();
    std::fs::write(dir.join("big.txt"), &big).unwrap();
    std::fs::write(dir.join("small.css"), "body { color: red; }\n".repeat(200)).unwrap();
    std::fs::write(dir.join("photo.png"), vec![7u8; 50_000]).unwrap();
    let mut b = RouteTable::builder();
    b.add("GET", "/s/*", Target::Static(Arc::new(StaticDir::new(&dir, StaticOptions::default()).unwrap()))).unwrap();
    let server = start_with(compressing(), b.build());
    let addr = server.addr();
    for coding in ["gzip", "br", "zstd"] {
        let raw = until_close(
            addr,
            format!("GET /s/big.txt HTTP/1.1\r\nhost: x\r\naccept-encoding: {coding}\r\nconnection: close\r\n\r\n")
                .as_bytes(),
        );
        let (head, body) = dechunk(&raw);
        assert!(head.contains(&format!("content-encoding: {coding}")), "{head}");
        assert!(!head.contains("content-length"), "{head}");
        assert!(head.contains("etag: w/\""), "{head}");
        assert_eq!(decode(coding, &body.expect("a complete chunked body")), big.as_bytes(), "{coding}");
        let small = roundtrip(
            addr,
            format!("GET /s/small.css HTTP/1.1\r\nhost: x\r\naccept-encoding: {coding}\r\n\r\n").as_bytes(),
        )
        .unwrap();
        assert_eq!(small.header("content-encoding"), Some(coding));
        assert_eq!(decode(coding, &small.body), "body { color: red; }\n".repeat(200).as_bytes());
        // Revalidating the coded variant: 304 with the weak tag it was sent with.
        let tag = small.header("etag").unwrap().to_owned();
        let again = roundtrip(
            addr,
            format!(
                "GET /s/small.css HTTP/1.1\r\nhost: x\r\naccept-encoding: {coding}\r\nif-none-match: {tag}\r\n\r\n"
            )
            .as_bytes(),
        )
        .unwrap();
        assert_eq!((again.status, again.header("etag")), (304, Some(tag.as_str())));
        assert_eq!(again.header("vary"), Some("accept-encoding"));
    }
    // A small file's coded variant is kept, and made again when the file changes.
    let get_small =
        || roundtrip(addr, b"GET /s/small.css HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\n\r\n").unwrap();
    let (first, again) = (get_small(), get_small());
    assert_eq!(first.body, again.body);
    std::thread::sleep(std::time::Duration::from_millis(20));
    std::fs::write(dir.join("small.css"), "p { margin: 0; }\n".repeat(300)).unwrap();
    let changed = get_small();
    assert_eq!(decode("gzip", &changed.body), "p { margin: 0; }\n".repeat(300).as_bytes());
    assert_ne!(changed.header("etag"), first.header("etag"));
    let head = roundtrip(addr, b"HEAD /s/big.txt HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\n\r\n").unwrap();
    assert_eq!(head.header("vary"), Some("accept-encoding"), "HEAD varies as GET does");
    assert_eq!(head.header("content-encoding"), None);
    let range =
        roundtrip(addr, b"GET /s/big.txt HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\nrange: bytes=0-9\r\n\r\n")
            .unwrap();
    assert_eq!((range.status, range.header("content-encoding"), range.text().as_str()), (206, None, "row 0: the"));
    let png = roundtrip(addr, b"GET /s/photo.png HTTP/1.1\r\nhost: x\r\naccept-encoding: gzip\r\n\r\n").unwrap();
    assert_eq!((png.header("content-encoding"), png.header("vary"), png.body.len()), (None, None, 50_000));
    std::fs::remove_dir_all(dir).unwrap();
}

fn coded(coding: &str, data: &[u8]) -> Vec<u8> {
    match coding {
        "gzip" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(9));
            e.write_all(data).unwrap();
            e.finish().unwrap()
        }
        "br" => {
            let mut out = Vec::new();
            brotli::CompressorWriter::new(&mut out, 4096, 9, 22).write_all(data).unwrap();
            out
        }
        _ => zstd::bulk::compress(data, 19).unwrap(),
    }
}

#[test]
fn request_bodies_are_decoded_within_the_limit_and_bombs_refused() {
    let server = start(config(|c| {
        c.decode_request_bodies = true;
        c.max_body_size = 1 << 20;
    }));
    let addr = server.addr();
    let post = |coding: &str, body: &[u8]| {
        let mut raw =
            format!("POST /upload HTTP/1.1\r\nhost: x\r\ncontent-encoding: {coding}\r\ncontent-length: {}\r\nconnection: close\r\n\r\n", body.len())
                .into_bytes();
        raw.extend_from_slice(body);
        until_close(addr, &raw)
    };
    let text: Vec<u8> = (0..300_000u32).map(|i| b"abcdefgh"[(i % 8) as usize]).collect();
    for coding in ["gzip", "br", "zstd", "x-gzip"] {
        let body = coded(if coding == "x-gzip" { "gzip" } else { coding }, &text);
        let raw = post(coding, &body);
        let text_out = String::from_utf8_lossy(&raw);
        assert!(text_out.starts_with("HTTP/1.1 200"), "{coding}: {text_out}");
        assert!(text_out.ends_with("got 300000"), "{coding}: the handler reads the decoded body: {text_out}");
        // 16 MiB of zeros codes to a few KiB; decoded, it passes the 1 MiB limit.
        let bomb = coded(if coding == "x-gzip" { "gzip" } else { coding }, &vec![0u8; 16 << 20]);
        let raw = String::from_utf8_lossy(&post(coding, &bomb)).into_owned();
        assert!(raw.starts_with("HTTP/1.1 413") || raw.ends_with("too large"), "{coding}: {raw}");
    }
    let raw = String::from_utf8_lossy(&post("deflate", b"xx")).into_owned();
    assert!(raw.starts_with("HTTP/1.1 415"), "{raw}");
    assert!(raw.to_ascii_lowercase().contains("accept-encoding: gzip, br, zstd"), "{raw}");
    let raw = String::from_utf8_lossy(&post("gzip", b"not gzip at all")).into_owned();
    assert!(raw.starts_with("HTTP/1.1 400") || raw.ends_with("broken"), "{raw}");
    let raw = String::from_utf8_lossy(&post("gzip, gzip", b"x")).into_owned();
    assert!(raw.starts_with("HTTP/1.1 415"), "stacked codings: {raw}");
}

#[test]
fn without_the_option_request_bodies_pass_as_sent() {
    let server = start(Config::default());
    let body = coded("gzip", b"hello hello hello");
    let mut raw = format!(
        "POST /upload HTTP/1.1\r\nhost: x\r\ncontent-encoding: gzip\r\ncontent-length: {}\r\nconnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(&body);
    let out = String::from_utf8_lossy(&until_close(server.addr(), &raw)).into_owned();
    assert!(out.ends_with(&format!("got {}", body.len())), "{out}");
}
