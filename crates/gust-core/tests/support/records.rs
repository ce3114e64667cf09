//! Reading what the engine hands the handler side: request records, body events and the other event records of
//! a batch, decoded as the TypeScript package decodes them.

use gust_core::wire;

/// One decoded request of a batch.
#[derive(Debug, Clone)]
pub struct Decoded {
    pub id: u32,
    pub handler: u32,
    pub method: String,
    pub url: String,
    pub path: String,
    pub params: Vec<String>,
    pub headers: String,
    pub peer: String,
    pub body: Vec<u8>,
    /// The body streams: `body` is only its start.
    pub streamed: bool,
    /// The request came over TLS.
    pub secure: bool,
    /// The request came as HTTP/2.
    pub http2: bool,
    /// The record's TLS section as text: `v3 alpn=h2 sni=localhost asked authorized err= cert=N` (see
    /// [`tls_text`]), empty without TLS.
    pub tls: String,
}

/// A record's TLS section (`wire::tls`) as text.
pub fn tls_text(s: &[u8]) -> String {
    let alpn_len = usize::from(s[2]);
    let alpn = String::from_utf8_lossy(&s[3..3 + alpn_len]);
    let at = 3 + alpn_len;
    let sni_len = usize::from(s[at]);
    let sni = String::from_utf8_lossy(&s[at + 1..at + 1 + sni_len]);
    let at = at + 1 + sni_len;
    let err_len = usize::from(u16::from_le_bytes([s[at], s[at + 1]]));
    let err = String::from_utf8_lossy(&s[at + 2..at + 2 + err_len]);
    let cert = s.len() - (at + 2 + err_len);
    let flag = |bit: u8, name: &str| if s[1] & bit != 0 { format!(" {name}") } else { String::new() };
    format!(
        "v{} alpn={alpn} sni={sni}{}{} err={err} cert={cert}",
        s[0],
        flag(gust_core::wire::tls::CLIENT_CERT_ASKED, "asked"),
        flag(gust_core::wire::tls::AUTHORIZED, "authorized")
    )
}

/// One body event: `(id, flags, bytes)`.
pub type BodyEvent = (u32, u16, Vec<u8>);

/// The body events of a batch, in order.
pub fn body_events(bytes: &[u8]) -> Vec<BodyEvent> {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if word(at) & 0xff == wire::Kind::Body as usize {
            let len = word(at + 12);
            out.push((word(at + 8) as u32, (word(at) >> 16) as u16, bytes[at + 16..at + 16 + len].to_vec()));
        }
        at += word(at + 4);
    }
    out
}

pub fn decode(bytes: &[u8]) -> Vec<Decoded> {
    decode_all(bytes).0
}

/// The requests of a batch, and its event records as `(kind, flags, id)`.
pub fn decode_all(bytes: &[u8]) -> (Vec<Decoded>, Vec<(u8, u16, u32)>) {
    let word = |at: usize| u32::from_le_bytes(bytes[at..at + 4].try_into().unwrap()) as usize;
    let mut out = Vec::new();
    let mut events = Vec::new();
    let mut at = 0;
    while at < bytes.len() {
        if word(at) & 0xff != 1 {
            assert_eq!(word(at) >> 8 & 0xff, usize::from(wire::VERSION));
            events.push((word(at) as u8, (word(at) >> 16) as u16, word(at + 8) as u32));
            at += word(at + 4);
            continue;
        }
        let [tag, record_len, id, handler, code, method_len, url_len, path_len, nparams, headers_len, body_len, port, peer_len] =
            std::array::from_fn(|i| word(at + i * 4));
        assert_eq!(tag & 0xffff, 1 | usize::from(wire::VERSION) << 8, "a request record of this version");
        assert_eq!(record_len % 4, 0, "records are padded to whole words");
        let end = at + record_len;
        at += gust_core::wire::request::HEADER_LEN;
        let lengths: Vec<usize> = (0..nparams).map(|i| word(at + i * 4)).collect();
        at += 4 * nparams;
        let method = if code == 255 {
            String::from_utf8(bytes[at..at + method_len].to_vec()).unwrap()
        } else {
            gust_core::method::METHODS[code].to_owned()
        };
        at += method_len;
        let url = String::from_utf8(bytes[at..at + url_len].to_vec()).unwrap();
        at += url_len;
        let path = String::from_utf8(bytes[at..at + path_len].to_vec()).unwrap();
        at += path_len;
        let mut params = Vec::new();
        for len in lengths {
            params.push(String::from_utf8(bytes[at..at + len].to_vec()).unwrap());
            at += len;
        }
        let headers = String::from_utf8_lossy(&bytes[at..at + headers_len]).into_owned();
        at += headers_len;
        let peer = format!("{}:{port}", String::from_utf8_lossy(&bytes[at..at + peer_len]));
        at += peer_len;
        let body = bytes[at..at + body_len].to_vec();
        at += body_len;
        let secure = (tag >> 16) & usize::from(gust_core::wire::request::TLS) != 0;
        let mut tls = String::new();
        if secure {
            // The TLS section follows the body; the record's last word is its length.
            let len = word(end - 4);
            tls = tls_text(&bytes[at..at + len]);
            at += len + 4;
        }
        assert!(end - at < 4, "the record length covers the record and at most 3 bytes of padding");
        at = end;
        let streamed = (tag >> 16) & usize::from(gust_core::wire::request::BODY_STREAM) != 0;
        let http2 = (tag >> 16) & usize::from(gust_core::wire::request::HTTP_2) != 0;
        out.push(Decoded {
            id: id as u32,
            handler: handler as u32,
            method,
            url,
            path,
            params,
            headers,
            peer,
            body,
            streamed,
            secure,
            http2,
            tls,
        });
    }
    (out, events)
}
