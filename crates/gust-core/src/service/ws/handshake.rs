//! The opening handshake (RFC 6455 §4.2): which requests may become WebSocket connections, and the 101 that
//! accepts one.

use http::header::{
    CONNECTION, SEC_WEBSOCKET_ACCEPT, SEC_WEBSOCKET_EXTENSIONS, SEC_WEBSOCKET_KEY, SEC_WEBSOCKET_PROTOCOL,
    SEC_WEBSOCKET_VERSION, UPGRADE,
};
use http::{HeaderMap, HeaderValue, Method, Response, StatusCode, Version};
use sha1::{Digest, Sha1};

use super::extension::{self, Agreement};
use crate::responses::body::Body;
use crate::values::ws_options::DeflateOptions;

/// The GUID of §1.3, appended to the client's key before hashing.
const GUID: &[u8] = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11";

/// A valid opening handshake: the `Sec-WebSocket-Accept` value it earns, the subprotocols the client offered, in
/// its order of preference, and the permessage-deflate offer accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Handshake {
    /// `Sec-WebSocket-Accept` for the response; none for a socket over HTTP/2 (RFC 8441), which has no key.
    pub accept: Option<String>,
    /// `Sec-WebSocket-Protocol` tokens offered.
    pub protocols: Vec<String>,
    /// permessage-deflate as agreed, with the `Sec-WebSocket-Extensions` value that says so.
    pub deflate: Option<(Agreement, HeaderValue)>,
}

/// Why a request to a WebSocket route cannot be upgraded, and the answer that says so.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not an upgrade request at all (a plain GET): 426 Upgrade Required, naming the protocol.
    NotUpgrade,
    /// A version other than 13: 426 with `Sec-WebSocket-Version: 13` (§4.2.2).
    Version,
    /// An upgrade request that breaks §4.2.1 (method, HTTP version, `Connection`, key): 400.
    Malformed(&'static str),
}

impl Refusal {
    /// The answer for a client (stable texts).
    pub fn response(self) -> Response<Body> {
        let (status, text) = match self {
            Refusal::NotUpgrade => (StatusCode::UPGRADE_REQUIRED, "Upgrade Required: this is a WebSocket endpoint"),
            Refusal::Version => (StatusCode::UPGRADE_REQUIRED, "Upgrade Required: WebSocket version 13 only"),
            Refusal::Malformed(why) => (StatusCode::BAD_REQUEST, why),
        };
        let mut res = crate::responses::response::text(status, text);
        let h = res.headers_mut();
        h.insert(SEC_WEBSOCKET_VERSION, HeaderValue::from_static("13"));
        if status == StatusCode::UPGRADE_REQUIRED {
            h.insert(UPGRADE, HeaderValue::from_static("websocket"));
            h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
        }
        res
    }
}

/// Checks an upgrade request (§4.2.1): GET over HTTP/1.1, `Upgrade: websocket`, `Connection: Upgrade` among its
/// tokens, `Sec-WebSocket-Version: 13`, and a key that is 16 bytes in base64; and takes the first
/// permessage-deflate offer the route's `deflate` can honour.
pub fn check(
    method: &Method,
    version: Version,
    headers: &HeaderMap,
    deflate: Option<&DeflateOptions>,
) -> Result<Handshake, Refusal> {
    let has_token = |name, token: &str| {
        headers
            .get_all(name)
            .iter()
            .any(|v| v.to_str().is_ok_and(|v| v.split(',').any(|t| t.trim().eq_ignore_ascii_case(token))))
    };
    if !has_token(UPGRADE, "websocket") {
        return Err(Refusal::NotUpgrade);
    }
    if method != Method::GET {
        return Err(Refusal::Malformed("Bad Request: a WebSocket handshake must be a GET"));
    }
    if version != Version::HTTP_11 {
        return Err(Refusal::Malformed("Bad Request: a WebSocket handshake needs HTTP/1.1"));
    }
    if !has_token(CONNECTION, "upgrade") {
        return Err(Refusal::Malformed("Bad Request: a WebSocket handshake needs Connection: Upgrade"));
    }
    let versions: Vec<_> = headers.get_all(SEC_WEBSOCKET_VERSION).iter().collect();
    if versions.len() != 1 || versions[0].as_bytes() != b"13" {
        return Err(Refusal::Version);
    }
    let keys: Vec<_> = headers.get_all(SEC_WEBSOCKET_KEY).iter().collect();
    let key = match keys.as_slice() {
        [key] if is_key(key.as_bytes()) => key.as_bytes(),
        _ => return Err(Refusal::Malformed("Bad Request: Sec-WebSocket-Key must be 16 bytes in base64")),
    };
    Ok(offers(headers, deflate, Some(accept_key(key))))
}

/// Checks a WebSocket bootstrapped over HTTP/2 (RFC 8441 §4–5): an extended CONNECT whose `:protocol` is
/// `websocket` (hyper checked that it is a CONNECT with `:scheme`, `:path` and `:protocol`, on a connection that
/// advertised `SETTINGS_ENABLE_CONNECT_PROTOCOL`), and `Sec-WebSocket-Version: 13`. No key, no
/// `Upgrade`/`Connection` (HTTP/2 has no connection-specific fields); subprotocols and permessage-deflate as over
/// HTTP/1.1.
pub fn check_extended_connect(headers: &HeaderMap, deflate: Option<&DeflateOptions>) -> Result<Handshake, Refusal> {
    let versions: Vec<_> = headers.get_all(SEC_WEBSOCKET_VERSION).iter().collect();
    if versions.len() != 1 || versions[0].as_bytes() != b"13" {
        return Err(Refusal::Version);
    }
    Ok(offers(headers, deflate, None))
}

/// What a valid handshake offered: its subprotocols, and the first permessage-deflate offer `deflate` honours.
fn offers(headers: &HeaderMap, deflate: Option<&DeflateOptions>, accept: Option<String>) -> Handshake {
    let protocols = headers
        .get_all(SEC_WEBSOCKET_PROTOCOL)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .map(|t| t.trim().to_owned())
        .filter(|t| !t.is_empty())
        .collect();
    let deflate = deflate.and_then(|options| extension::negotiate(headers, options));
    Handshake { accept, protocols, deflate }
}

/// The answer that completes a handshake, with the chosen subprotocol if any (it must be one the client
/// offered): 101 over HTTP/1.1; over HTTP/2, a 200 to the extended CONNECT, after which its stream carries the
/// socket's frames (RFC 8441 §5).
pub fn accept(handshake: &Handshake, protocol: Option<&str>) -> Response<Body> {
    let mut res = Response::new(Body::default());
    let h = res.headers_mut();
    match &handshake.accept {
        Some(accept) => {
            h.insert(UPGRADE, HeaderValue::from_static("websocket"));
            h.insert(CONNECTION, HeaderValue::from_static("Upgrade"));
            if let Ok(v) = HeaderValue::from_str(accept) {
                h.insert(SEC_WEBSOCKET_ACCEPT, v);
            }
            *res.status_mut() = StatusCode::SWITCHING_PROTOCOLS;
        }
        None => *res.status_mut() = StatusCode::OK,
    }
    let h = res.headers_mut();
    if let Some(v) = protocol.and_then(|p| HeaderValue::from_str(p).ok()) {
        h.insert(SEC_WEBSOCKET_PROTOCOL, v);
    }
    if let Some((_, extensions)) = &handshake.deflate {
        h.insert(SEC_WEBSOCKET_EXTENSIONS, extensions.clone());
    }
    res
}

/// `Sec-WebSocket-Accept` for a key: base64 of the SHA-1 of the key and the GUID (§4.2.2).
pub fn accept_key(key: &[u8]) -> String {
    let mut sha = Sha1::new();
    sha.update(key);
    sha.update(GUID);
    base64(&sha.finalize())
}

const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/// Whether `key` is the canonical base64 of 16 bytes: 22 symbols, the last with its low four bits clear, `==`.
fn is_key(key: &[u8]) -> bool {
    key.len() == 24
        && key.ends_with(b"==")
        && key[..22].iter().all(|b| ALPHABET.contains(b))
        && ALPHABET.iter().position(|b| *b == key[21]).is_some_and(|v| v & 0x0F == 0)
}

fn base64(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let n = (u32::from(chunk[0]) << 16)
            | (u32::from(*chunk.get(1).unwrap_or(&0)) << 8)
            | u32::from(*chunk.get(2).unwrap_or(&0));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ALPHABET[(n >> (18 - 6 * i) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (n, v) in pairs {
            h.append(http::header::HeaderName::from_bytes(n.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    const GOOD: [(&str, &str); 4] = [
        ("upgrade", "websocket"),
        ("connection", "keep-alive, Upgrade"),
        ("sec-websocket-version", "13"),
        ("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="),
    ];

    #[test]
    fn the_rfc_example_key_earns_its_accept_value() {
        assert_eq!(accept_key(b"dGhlIHNhbXBsZSBub25jZQ=="), "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
    }

    #[test]
    fn a_valid_handshake_is_accepted_with_its_offered_protocols() {
        let mut pairs = GOOD.to_vec();
        pairs.push(("sec-websocket-protocol", "chat, superchat"));
        let hs = check(&Method::GET, Version::HTTP_11, &headers(&pairs), None).unwrap();
        assert_eq!(hs.accept.as_deref(), Some("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="));
        assert_eq!(hs.protocols, vec!["chat", "superchat"]);
        let res = accept(&hs, Some("chat"));
        assert_eq!(res.status(), 101);
        assert_eq!(res.headers()[SEC_WEBSOCKET_ACCEPT], "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
        assert_eq!(res.headers()[SEC_WEBSOCKET_PROTOCOL], "chat");
    }

    #[test]
    fn a_handshake_over_http2_needs_only_version_13_and_is_answered_200() {
        let offer = headers(&[("sec-websocket-version", "13"), ("sec-websocket-protocol", "chat")]);
        let hs = check_extended_connect(&offer, None).unwrap();
        assert_eq!((hs.accept.as_deref(), hs.protocols.as_slice()), (None, ["chat".to_owned()].as_slice()));
        let res = accept(&hs, Some("chat"));
        assert_eq!(res.status(), 200);
        assert_eq!(res.headers()[SEC_WEBSOCKET_PROTOCOL], "chat");
        for name in [UPGRADE, CONNECTION, SEC_WEBSOCKET_ACCEPT] {
            assert!(!res.headers().contains_key(&name), "{name}: no such field over HTTP/2");
        }
        let old = headers(&[("sec-websocket-version", "8")]);
        assert_eq!(check_extended_connect(&old, None).unwrap_err(), Refusal::Version);
        assert_eq!(check_extended_connect(&HeaderMap::new(), None).unwrap_err(), Refusal::Version);
    }

    #[test]
    fn bad_handshakes_are_refused_with_400_or_426() {
        let without = |name: &str| headers(&GOOD.iter().copied().filter(|(n, _)| *n != name).collect::<Vec<_>>());
        let with = |name: &str, value: &str| {
            let mut pairs: Vec<_> = GOOD.iter().copied().filter(|(n, _)| *n != name).collect();
            pairs.push((name, value));
            headers(&pairs)
        };
        let status = |r: Result<Handshake, Refusal>| r.unwrap_err().response().status().as_u16();
        assert_eq!(check(&Method::GET, Version::HTTP_11, &without("upgrade"), None).unwrap_err(), Refusal::NotUpgrade);
        assert_eq!(status(check(&Method::POST, Version::HTTP_11, &headers(&GOOD), None)), 400);
        assert_eq!(status(check(&Method::GET, Version::HTTP_10, &headers(&GOOD), None)), 400);
        assert_eq!(status(check(&Method::GET, Version::HTTP_11, &without("connection"), None)), 400);
        assert_eq!(status(check(&Method::GET, Version::HTTP_11, &with("sec-websocket-version", "8"), None)), 426);
        let refused =
            check(&Method::GET, Version::HTTP_11, &with("sec-websocket-version", "8"), None).unwrap_err().response();
        assert_eq!(refused.headers()[SEC_WEBSOCKET_VERSION], "13");
        for key in ["", "short==", "dGhlIHNhbXBsZSBub25jZQ", "dGhlIHNhbXBsZSBub25jZR==", "dGhlIHNhbXBsZSBub25j!Q=="] {
            assert_eq!(
                status(check(&Method::GET, Version::HTTP_11, &with("sec-websocket-key", key), None)),
                400,
                "{key:?}"
            );
        }
        let mut two = GOOD.to_vec();
        two.push(("sec-websocket-key", "dGhlIHNhbXBsZSBub25jZQ=="));
        assert_eq!(status(check(&Method::GET, Version::HTTP_11, &headers(&two), None)), 400, "two keys");
    }
}
