//! The request record: one per dynamic request, appended to the batch buffer the JavaScript side reads lazily.
//!
//! A record is a header of [`HEADER_WORDS`] little-endian `u32`s followed by variable sections:
//!
//! | word | meaning |
//! |-----|---------|
//! | 0 | tag: kind [`Kind::Request`], [`VERSION`](super::VERSION), flags ([`HTTP_10`], [`BODY_STREAM`], [`TLS`], [`HTTP_2`]) |
//! | 1 | record length in bytes, header included (to skip a record whole) |
//! | 2 | request id (echoed back with the answer) |
//! | 3 | handler index |
//! | 4 | method code ([`crate::values::method::METHODS`] index, or 255 with the name in the method section) |
//! | 5 | method section length (0 unless the code is 255) |
//! | 6 | url section length: the raw path and query as received |
//! | 7 | path section length: the decoded path routing used, or 0 when it equals the raw path |
//! | 8 | number of params `n`; their byte lengths follow the header as `n` more words |
//! | 9 | headers section length: `name:value\n` per header, lower-case names, values as received (latin1) |
//! | 10 | body length: the whole body, or with [`BODY_STREAM`] the bytes that had already arrived |
//! | 11 | the client's port |
//! | 12 | peer section length: the client's IP address as text (`127.0.0.1`, `::1`) |
//!
//! Then the `n` param lengths, and the sections in this order: method, url, path, params (UTF-8, already
//! percent-decoded, back to back), headers, peer, body; then zero to three bytes of padding.
//!
//! With [`TLS`], the [TLS section](super::tls) follows the body, then the padding, and the record's last word is
//! the section's length: a record without the flag is laid out as before, and a reader that does not look for
//! the section skips it with the record.
//!
//! Every record starts at a multiple of 4 bytes (its length is padded to one), so the reader can see the whole
//! batch as one `Uint32Array` and read every word with a plain indexed load: no `readUInt32LE` call per field.

use http::{HeaderMap, Method};

use super::{tag, Kind};
use crate::values::method::{method_code, OTHER_METHOD};

/// Where each field of a request record's fixed header is, as a word index from the record's first word (the
/// table above). The encoder writes by these names and `packages/gust/src/native/layout.ts` (generated from
/// [`super::layout`]) reads by them.
pub mod word {
    /// The tag: kind, version, flags.
    pub const TAG: usize = 0;
    /// The record's length in bytes.
    pub const LENGTH: usize = 1;
    /// The request id.
    pub const ID: usize = 2;
    /// The handler index.
    pub const HANDLER: usize = 3;
    /// The method code.
    pub const METHOD: usize = 4;
    /// The method section's length.
    pub const METHOD_LEN: usize = 5;
    /// The url section's length.
    pub const URL_LEN: usize = 6;
    /// The decoded path section's length (0: the raw path).
    pub const PATH_LEN: usize = 7;
    /// The number of params.
    pub const PARAM_COUNT: usize = 8;
    /// The headers section's length.
    pub const HEADERS_LEN: usize = 9;
    /// The body's length (what came with the record).
    pub const BODY_LEN: usize = 10;
    /// The client's port.
    pub const PEER_PORT: usize = 11;
    /// The peer section's length.
    pub const PEER_LEN: usize = 12;
}

/// Words in a request record's fixed header.
pub const HEADER_WORDS: usize = 13;
/// Bytes in a request record's fixed header.
pub const HEADER_LEN: usize = HEADER_WORDS * 4;
/// Flag: the request came as HTTP/1.0.
pub const HTTP_10: u16 = 1;
/// Flag: the body section holds only the body's first bytes (maybe none); the rest comes in
/// [`Kind::Body`](super::Kind::Body) events, one per [`Kind::Read`](super::Kind::Read) the handler side sends.
pub const BODY_STREAM: u16 = 2;
/// Flag: the request came over TLS (its connection's handshake was done by the engine).
pub const TLS: u16 = 4;
/// Flag: the request came as HTTP/2 (a stream of an HTTP/2 connection).
pub const HTTP_2: u16 = 8;

/// Everything one request record carries, borrowed from the request being handed over.
#[derive(Debug)]
pub(crate) struct RequestFields<'a> {
    pub(crate) id: u32,
    pub(crate) handler: u32,
    pub(crate) method: &'a Method,
    pub(crate) http_10: bool,
    /// The connection's TLS section ([`super::tls`]), when it is TLS.
    pub(crate) tls: Option<&'a [u8]>,
    /// The request is an HTTP/2 stream.
    pub(crate) http_2: bool,
    pub(crate) url: &'a str,
    /// The decoded routing path, or `""` when it equals the raw path.
    pub(crate) path: &'a str,
    pub(crate) params: &'a [String],
    pub(crate) headers: &'a HeaderMap,
    pub(crate) peer_ip: &'a str,
    pub(crate) peer_port: u16,
    pub(crate) body: &'a [u8],
    /// `body` is only the start: the rest streams.
    pub(crate) body_stream: bool,
}

/// Appends one request to `buf`. Cost: one pass over the headers and one copy of each section; grows `buf` at
/// most once.
pub(crate) fn encode_request(buf: &mut Vec<u8>, r: &RequestFields<'_>) {
    let code = method_code(r.method);
    let method_name: &[u8] = if code == OTHER_METHOD { r.method.as_str().as_bytes() } else { b"" };
    let headers_len: usize = r.headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 2).sum();
    let params_len: usize = r.params.iter().map(|p| 4 + p.len()).sum();
    let unpadded = HEADER_LEN
        + method_name.len()
        + r.url.len()
        + r.path.len()
        + params_len
        + headers_len
        + r.peer_ip.len()
        + r.body.len()
        + r.tls.map_or(0, <[u8]>::len);
    let len = unpadded.next_multiple_of(4) + if r.tls.is_some() { 4 } else { 0 };
    buf.reserve(len);
    let mut head = [0u32; HEADER_WORDS];
    head[word::TAG] = tag(
        Kind::Request,
        if r.http_10 { HTTP_10 } else { 0 }
            | if r.body_stream { BODY_STREAM } else { 0 }
            | if r.tls.is_some() { TLS } else { 0 }
            | if r.http_2 { HTTP_2 } else { 0 },
    );
    head[word::LENGTH] = len as u32;
    head[word::ID] = r.id;
    head[word::HANDLER] = r.handler;
    head[word::METHOD] = u32::from(code);
    head[word::METHOD_LEN] = method_name.len() as u32;
    head[word::URL_LEN] = r.url.len() as u32;
    head[word::PATH_LEN] = r.path.len() as u32;
    head[word::PARAM_COUNT] = r.params.len() as u32;
    head[word::HEADERS_LEN] = headers_len as u32;
    head[word::BODY_LEN] = r.body.len() as u32;
    head[word::PEER_PORT] = u32::from(r.peer_port);
    head[word::PEER_LEN] = r.peer_ip.len() as u32;
    for word in head {
        buf.extend_from_slice(&word.to_le_bytes());
    }
    for param in r.params {
        buf.extend_from_slice(&(param.len() as u32).to_le_bytes());
    }
    buf.extend_from_slice(method_name);
    buf.extend_from_slice(r.url.as_bytes());
    buf.extend_from_slice(r.path.as_bytes());
    for param in r.params {
        buf.extend_from_slice(param.as_bytes());
    }
    for (name, value) in r.headers {
        buf.extend_from_slice(name.as_str().as_bytes());
        buf.push(b':');
        buf.extend_from_slice(value.as_bytes());
        buf.push(b'\n');
    }
    buf.extend_from_slice(r.peer_ip.as_bytes());
    buf.extend_from_slice(r.body);
    match r.tls {
        None => buf.resize(buf.len() + len - unpadded, 0),
        Some(tls) => {
            buf.extend_from_slice(tls);
            buf.resize(buf.len() + len - unpadded - 4, 0);
            buf.extend_from_slice(&(tls.len() as u32).to_le_bytes());
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    fn word(buf: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap())
    }

    /// The requests of `golden/requests.bin`; `requests.json` states what each must decode to.
    pub(crate) fn golden_batch() -> Vec<u8> {
        let mut headers = HeaderMap::new();
        headers.append("host", "example.com".parse().unwrap());
        headers.append("x-a", "1".parse().unwrap());
        headers.append("x-a", "2".parse().unwrap());
        headers.append("x-latin1", http::HeaderValue::from_bytes(b"caf\xe9").unwrap());
        let mut buf = Vec::new();
        encode_request(
            &mut buf,
            &RequestFields {
                id: 7,
                handler: 3,
                method: &Method::from_bytes(b"PURGE").unwrap(),
                http_10: false,
                tls: None,
                http_2: false,
                url: "/p/caf%C3%A9/a%2Fb?q=1&r=%20",
                path: "/p/café/a%2Fb",
                params: &["café".into(), "a/b".into()],
                headers: &headers,
                peer_ip: "::1",
                peer_port: 54321,
                body: b"\x00\xff{}",
                body_stream: false,
            },
        );
        encode_request(
            &mut buf,
            &RequestFields {
                id: 8,
                handler: 0,
                method: &Method::GET,
                http_10: true,
                tls: None,
                http_2: false,
                url: "/",
                path: "",
                params: &[],
                headers: &HeaderMap::new(),
                peer_ip: "127.0.0.1",
                peer_port: 80,
                body: b"",
                body_stream: false,
            },
        );
        // Over TLS, with a body whose end is not aligned: the section, padding, then its length.
        let tls = crate::wire::tls::encode_tls(&crate::wire::tls::TlsFields {
            version: 3,
            flags: crate::wire::tls::CLIENT_CERT_ASKED,
            alpn: b"h2",
            server_name: "example.com",
            error: "no client certificate",
            cert: &[0x30, 0x03, 0x02, 0x01, 0x07],
        });
        encode_request(
            &mut buf,
            &RequestFields {
                id: 9,
                handler: 1,
                method: &Method::POST,
                http_10: false,
                tls: Some(&tls),
                http_2: true,
                url: "/t",
                path: "/t",
                params: &[],
                headers: &HeaderMap::new(),
                peer_ip: "10.0.0.1",
                peer_port: 443,
                body: b"abc",
                body_stream: false,
            },
        );
        buf
    }

    #[test]
    fn a_request_should_encode_to_the_documented_layout() {
        let buf = golden_batch();
        assert_eq!(super::super::untag(word(&buf, 0)), (Kind::Request as u8, super::super::VERSION, 0));
        let len = word(&buf, 1) as usize;
        assert_eq!([word(&buf, 2), word(&buf, 3), word(&buf, 4), word(&buf, 5)], [7, 3, 255, 5]);
        assert_eq!([word(&buf, 11), word(&buf, 12)], [54321, 3]);
        assert_eq!([word(&buf, 13), word(&buf, 14)], [5, 3], "the param lengths follow the header");
        let sections = &buf[HEADER_LEN + 8..len];
        let expected: &[u8] = b"PURGE/p/caf%C3%A9/a%2Fb?q=1&r=%20/p/caf\xc3\xa9/a%2Fbcaf\xc3\xa9a/bhost:example.com\nx-a:1\nx-a:2\nx-latin1:caf\xe9\n::1\x00\xff{}\x00\x00\x00";
        assert_eq!(sections, expected, "sections, then padding to a multiple of 4");
        assert_eq!(len % 4, 0);
        let second = &buf[len..];
        assert_eq!(super::super::untag(word(second, 0)), (Kind::Request as u8, super::super::VERSION, HTTP_10));
        let third = &second[word(second, 1) as usize..];
        assert_eq!(super::super::untag(word(third, 0)), (Kind::Request as u8, super::super::VERSION, TLS | HTTP_2));
        let third_len = word(third, 1) as usize;
        assert_eq!(third_len, third.len(), "the last record ends the batch");
        let tls_len = word(third, third_len / 4 - 1) as usize;
        let body_at = HEADER_LEN + "/t/t10.0.0.1".len();
        assert_eq!(&third[body_at..body_at + 3], b"abc");
        let section = &third[body_at + 3..body_at + 3 + tls_len];
        assert_eq!(
            &section[..5],
            &[3, crate::wire::tls::CLIENT_CERT_ASKED, 2, b'h', b'2'],
            "the section follows the body"
        );
        assert_eq!(&section[tls_len - 5..], &[0x30, 0x03, 0x02, 0x01, 0x07], "the certificate ends it");
        assert_eq!(third_len, (body_at + 3 + tls_len).next_multiple_of(4) + 4, "padding, then the length word");
    }

    #[test]
    fn the_golden_request_batch_should_match_the_shared_fixture() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/wire/golden/requests.bin");
        if std::env::var_os("GUST_BLESS").is_some() {
            std::fs::write(path, golden_batch()).unwrap();
        }
        let fixture = std::fs::read(path).expect("golden/requests.bin (GUST_BLESS=1 cargo test writes it)");
        assert_eq!(fixture, golden_batch(), "the request format changed: update wire.ts and the fixture together");
    }
}
