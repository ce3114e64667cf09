//! The door for `Sec-WebSocket-Extensions` offers: permessage-deflate's negotiation.

use http::header::SEC_WEBSOCKET_EXTENSIONS;
use http::{HeaderMap, HeaderValue};

use super::selector;
use crate::service::ws::extension::{negotiate, Outbound};
use crate::values::ws_options::{Compressor, DeflateOptions};

/// A `Sec-WebSocket-Extensions` header (lines split at newlines) against a route's options.
///
/// The selector's bits: 0, a dedicated compressor (else shared); 1, a dedicated decompressor.
pub fn ws_extension(data: &[u8]) {
    let (sel, text) = selector(data);
    let options = DeflateOptions {
        compress: if sel & 1 != 0 { Compressor::Dedicated } else { Compressor::Shared },
        dedicated_decompressor: sel & 2 != 0,
        threshold: 1024,
    };
    let mut headers = HeaderMap::new();
    for line in text.split(|&b| b == b'\n') {
        if let Ok(value) = HeaderValue::from_bytes(line) {
            headers.append(SEC_WEBSOCKET_EXTENSIONS, value);
        }
    }
    let Some((agreement, answer)) = negotiate(&headers, &options) else { return };
    let answer = answer.to_str().expect("an answer is ASCII");
    let mut params = answer.split(';').map(str::trim);
    assert_eq!(params.next(), Some("permessage-deflate"));
    let mut stated = (false, false);
    for param in params {
        let (name, value) = param.split_once('=').map_or((param, None), |(n, v)| (n, Some(v)));
        match (name, value) {
            ("server_no_context_takeover", None) => stated.0 = true,
            ("client_no_context_takeover", None) => stated.1 = true,
            ("server_max_window_bits" | "client_max_window_bits", Some(bits)) => {
                let bits: u8 = bits.parse().expect("a window is a number");
                assert!((8..=15).contains(&bits), "window {bits}");
            }
            _ => panic!("an unknown parameter in the answer: {param}"),
        }
    }
    match agreement.compress {
        Outbound::Dedicated(bits) => {
            assert!(!stated.0, "a kept context is answered server_no_context_takeover");
            assert!((9..=15).contains(&bits), "window {bits}");
        }
        Outbound::Shared(bits) => {
            assert!(stated.0, "a reset context is not announced");
            assert!((9..=15).contains(&bits), "window {bits}");
        }
        Outbound::Plain => {}
    }
    assert_eq!(agreement.client_takeover, !stated.1, "the client's context is kept only when not refused");
    assert!(!agreement.client_takeover || options.dedicated_decompressor, "a context kept without a decompressor");
}
