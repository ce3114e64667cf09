//! permessage-deflate's negotiation (RFC 7692 §5, §7.1): the client's offers in `Sec-WebSocket-Extensions`, the
//! first one the route can honour accepted, and the response's parameters.
//!
//! The server always answers `server_no_context_takeover` unless it keeps a compressor per socket, and
//! `client_no_context_takeover` unless it keeps a decompressor per socket: either may be added to any accepted
//! offer (§7.1.1), and together they leave a socket no compression state at all.

use http::header::SEC_WEBSOCKET_EXTENSIONS;
use http::{HeaderMap, HeaderValue};

use crate::values::ws_options::{Compressor, DeflateOptions};

/// How an agreed socket compresses and inflates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Agreement {
    /// How the server's messages are compressed.
    pub compress: Outbound,
    /// The client keeps its context between messages: the socket inflates with a decompressor of its own.
    pub client_takeover: bool,
    /// The route's threshold: shorter messages go plain unless a send asks for compression.
    pub threshold: usize,
}

/// How the server's messages to one socket are compressed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outbound {
    /// Sent plain: the route does not compress, or the client asked for an 8-bit window, which zlib cannot
    /// keep to (a window of 256 bytes; it would use 512).
    Plain,
    /// With the sending thread's compressor for this window size, reset for every message.
    Shared(u8),
    /// With the socket's own compressor of this window size.
    Dedicated(u8),
}

/// The offer accepted, if any: the agreement and the response header that says so.
pub fn negotiate(headers: &HeaderMap, options: &DeflateOptions) -> Option<(Agreement, HeaderValue)> {
    let mut joined = String::new();
    for value in headers.get_all(SEC_WEBSOCKET_EXTENSIONS) {
        // A header that is not text cannot hold a valid offer; the others may still.
        let Ok(text) = value.to_str() else { continue };
        if !joined.is_empty() {
            joined.push(',');
        }
        joined.push_str(text);
    }
    split_outside_quotes(&joined, ',').into_iter().find_map(|offer| accept(offer, options))
}

/// The parameters of one offer, or `None` when it is not permessage-deflate or breaks §7.1: an unknown, repeated
/// or malformed parameter declines that offer (the next one may still be taken).
#[derive(Debug, Default, PartialEq, Eq)]
struct Offer {
    server_no_context_takeover: bool,
    client_no_context_takeover: bool,
    server_max_window_bits: Option<u8>,
    /// Offered, with its value if it had one.
    client_max_window_bits: Option<Option<u8>>,
}

fn parse(offer: &str) -> Option<Offer> {
    let mut parts = split_outside_quotes(offer, ';').into_iter();
    if !parts.next()?.trim().eq_ignore_ascii_case("permessage-deflate") {
        return None;
    }
    let mut out = Offer::default();
    for param in parts {
        let (name, value) = match param.split_once('=') {
            Some((name, value)) => (name.trim(), Some(unquote(value.trim())?)),
            None => (param.trim(), None),
        };
        let name = name.to_ascii_lowercase();
        let value = value.as_deref();
        match (name.as_str(), value) {
            ("server_no_context_takeover", None) if !out.server_no_context_takeover => {
                out.server_no_context_takeover = true;
            }
            ("client_no_context_takeover", None) if !out.client_no_context_takeover => {
                out.client_no_context_takeover = true;
            }
            ("server_max_window_bits", Some(v)) if out.server_max_window_bits.is_none() => {
                out.server_max_window_bits = Some(window_bits(v)?);
            }
            ("client_max_window_bits", v) if out.client_max_window_bits.is_none() => {
                let bits = match v {
                    None => None,
                    Some(v) => Some(window_bits(v)?),
                };
                out.client_max_window_bits = Some(bits);
            }
            _ => return None,
        }
    }
    Some(out)
}

/// Accepts `offer` if the route can: the agreement and the response's parameters.
fn accept(offer: &str, options: &DeflateOptions) -> Option<(Agreement, HeaderValue)> {
    let offer = parse(offer)?;
    let mut response = String::from("permessage-deflate");
    let bits = offer.server_max_window_bits.unwrap_or(15);
    let compress = match options.compress {
        Compressor::Disabled => Outbound::Plain,
        _ if bits < 9 => Outbound::Plain,
        Compressor::Dedicated if !offer.server_no_context_takeover => Outbound::Dedicated(bits),
        Compressor::Shared | Compressor::Dedicated => Outbound::Shared(bits),
    };
    if !matches!(compress, Outbound::Dedicated(_)) {
        response.push_str("; server_no_context_takeover");
    }
    let client_takeover = options.dedicated_decompressor && !offer.client_no_context_takeover;
    if !client_takeover {
        response.push_str("; client_no_context_takeover");
    }
    if let Some(bits) = offer.server_max_window_bits {
        // Accepting the offer means keeping to its window (§7.1.2.1), which the response repeats.
        response.push_str(&format!("; server_max_window_bits={bits}"));
    }
    let header = HeaderValue::from_str(&response).ok()?;
    Some((Agreement { compress, client_takeover, threshold: options.threshold }, header))
}

/// 8 to 15, in decimal without leading zeros (§7.1.2.1).
fn window_bits(value: &str) -> Option<u8> {
    match value.as_bytes() {
        [d @ b'8'..=b'9'] => Some(d - b'0'),
        [b'1', d @ b'0'..=b'5'] => Some(10 + d - b'0'),
        _ => None,
    }
}

/// A token, or a quoted string unescaped (whose content must be a token too, §7.1).
fn unquote(value: &str) -> Option<String> {
    let inner = match value.strip_prefix('"') {
        Some(rest) => {
            let mut out = String::new();
            let mut chars = rest.strip_suffix('"')?.chars();
            while let Some(c) = chars.next() {
                out.push(if c == '\\' { chars.next()? } else { c });
            }
            out
        }
        None => value.to_owned(),
    };
    (!inner.is_empty() && inner.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)))
        .then_some(inner)
}

/// Splits on `sep` where it is not inside a quoted string.
fn split_outside_quotes(text: &str, sep: char) -> Vec<&str> {
    let mut parts = Vec::new();
    let (mut start, mut quoted, mut escaped) = (0, false, false);
    for (i, c) in text.char_indices() {
        match c {
            _ if escaped => escaped = false,
            '\\' if quoted => escaped = true,
            '"' => quoted = !quoted,
            c if c == sep && !quoted => {
                parts.push(&text[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    parts.push(&text[start..]);
    parts
}

#[cfg(test)]
mod tests {
    use super::*;

    fn offer(values: &[&str], options: DeflateOptions) -> Option<(Agreement, String)> {
        let mut headers = HeaderMap::new();
        for v in values {
            headers.append(SEC_WEBSOCKET_EXTENSIONS, v.parse().unwrap());
        }
        negotiate(&headers, &options).map(|(a, h)| (a, h.to_str().unwrap().to_owned()))
    }

    const SHARED: DeflateOptions =
        DeflateOptions { compress: Compressor::Shared, dedicated_decompressor: false, threshold: 0 };
    const DEDICATED: DeflateOptions =
        DeflateOptions { compress: Compressor::Dedicated, dedicated_decompressor: true, threshold: 0 };

    #[test]
    fn a_browser_offer_is_agreed_without_context_takeover_by_default() {
        let (agreed, header) = offer(&["permessage-deflate; client_max_window_bits"], SHARED).unwrap();
        assert_eq!(agreed, Agreement { compress: Outbound::Shared(15), client_takeover: false, threshold: 0 });
        assert_eq!(header, "permessage-deflate; server_no_context_takeover; client_no_context_takeover");
        assert_eq!(offer(&["x-webkit-deflate-frame"], SHARED), None, "another extension");
        assert_eq!(offer(&[], SHARED), None);
    }

    #[test]
    fn dedicated_contexts_are_kept_unless_the_client_asks_otherwise() {
        let (agreed, header) = offer(&["permessage-deflate"], DEDICATED).unwrap();
        assert_eq!(agreed, Agreement { compress: Outbound::Dedicated(15), client_takeover: true, threshold: 0 });
        assert_eq!(header, "permessage-deflate");
        let (agreed, header) =
            offer(&["permessage-deflate; server_no_context_takeover; client_no_context_takeover"], DEDICATED).unwrap();
        assert_eq!(agreed, Agreement { compress: Outbound::Shared(15), client_takeover: false, threshold: 0 });
        assert_eq!(header, "permessage-deflate; server_no_context_takeover; client_no_context_takeover");
    }

    #[test]
    fn window_sizes_are_kept_to_and_an_8_bit_window_is_agreed_but_never_compressed_to() {
        let (agreed, header) = offer(&["permessage-deflate; server_max_window_bits=10"], SHARED).unwrap();
        assert_eq!(agreed.compress, Outbound::Shared(10));
        assert!(header.ends_with("; server_max_window_bits=10"), "{header}");
        let (agreed, _) = offer(&["permessage-deflate; server_max_window_bits=\"1\\3\""], SHARED).unwrap();
        assert_eq!(agreed.compress, Outbound::Shared(13), "a quoted value, unescaped");
        let (agreed, header) = offer(&["permessage-deflate; server_max_window_bits=\"8\""], DEDICATED).unwrap();
        assert_eq!(agreed.compress, Outbound::Plain);
        assert!(header.ends_with("; server_max_window_bits=8"), "{header}");
        let (agreed, _) = offer(&["permessage-deflate; client_max_window_bits=9"], DEDICATED).unwrap();
        assert!(agreed.client_takeover, "any window decodes with a 15-bit one");
    }

    #[test]
    fn a_bad_offer_is_declined_and_the_next_one_taken() {
        for bad in [
            "permessage-deflate; server_max_window_bits",
            "permessage-deflate; server_max_window_bits=16",
            "permessage-deflate; server_max_window_bits=7",
            "permessage-deflate; server_max_window_bits=010",
            "permessage-deflate; client_max_window_bits=\"\"",
            "permessage-deflate; server_no_context_takeover=1",
            "permessage-deflate; server_no_context_takeover; server_no_context_takeover",
            "permessage-deflate; client_max_window_bits; client_max_window_bits=10",
            "permessage-deflate; mystery",
        ] {
            assert_eq!(offer(&[bad], SHARED), None, "{bad}");
            let (agreed, header) = offer(&[&format!("{bad}, permessage-deflate; server_max_window_bits=12")], SHARED)
                .unwrap_or_else(|| panic!("the second offer after {bad}"));
            assert_eq!((agreed.compress, header.contains("=12")), (Outbound::Shared(12), true), "{bad}");
        }
        let (_, header) =
            offer(&["foo; a=\"x,y\"", "PerMessage-Deflate ;  Server_Max_Window_Bits = 11"], SHARED).unwrap();
        assert!(header.ends_with("server_max_window_bits=11"), "a comma in quotes, names in any case: {header}");
    }

    #[test]
    fn a_route_that_does_not_compress_still_agrees_so_its_clients_may() {
        let options = DeflateOptions { compress: Compressor::Disabled, ..SHARED };
        let (agreed, header) = offer(&["permessage-deflate"], options).unwrap();
        assert_eq!(agreed.compress, Outbound::Plain);
        assert_eq!(header, "permessage-deflate; server_no_context_takeover; client_no_context_takeover");
    }
}
