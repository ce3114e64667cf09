//! The flat encoding of a request batch: one buffer, read lazily on the JavaScript side.
//!
//! Each request is a 32-byte header of eight little-endian `u32`s followed by variable sections:
//!
//! | u32 | meaning |
//! |-----|---------|
//! | 0 | request id (echoed back with the response) |
//! | 1 | handler index |
//! | 2 | method code ([`crate::method::METHODS`] index, or 255 with the name in the method section) |
//! | 3 | method section length (0 unless the code is 255) |
//! | 4 | url section length: the raw path and query as received |
//! | 5 | number of params; each is a `u32` length then UTF-8 bytes, already percent-decoded |
//! | 6 | headers section length: `name:value\n` per header, lower-case names, values as received (latin1) |
//! | 7 | body length |
//!
//! Sections follow in that order: method, url, params, headers, body. JavaScript mirrors this in
//! `packages/gust/src/native/wire.ts`.

use http::{HeaderMap, Method};

use crate::method::{method_code, OTHER_METHOD};

/// Bytes in a request's fixed header.
pub const HEADER_LEN: usize = 32;

/// Appends one request to `buf`. Cost: one pass over the headers and one copy of the body; grows `buf` at most
/// once per section.
#[allow(clippy::too_many_arguments)]
pub(crate) fn encode_request(
    buf: &mut Vec<u8>,
    id: u32,
    handler: u32,
    method: &Method,
    url: &str,
    params: &[String],
    headers: &HeaderMap,
    body: &[u8],
) {
    let code = method_code(method);
    let method_name: &[u8] = if code == OTHER_METHOD { method.as_str().as_bytes() } else { b"" };
    let headers_len: usize = headers.iter().map(|(n, v)| n.as_str().len() + v.len() + 2).sum();
    let params_len: usize = params.iter().map(|p| 4 + p.len()).sum();
    buf.reserve(HEADER_LEN + method_name.len() + url.len() + params_len + headers_len + body.len());
    for word in [
        id,
        handler,
        u32::from(code),
        method_name.len() as u32,
        url.len() as u32,
        params.len() as u32,
        headers_len as u32,
        body.len() as u32,
    ] {
        buf.extend_from_slice(&word.to_le_bytes());
    }
    buf.extend_from_slice(method_name);
    buf.extend_from_slice(url.as_bytes());
    for param in params {
        buf.extend_from_slice(&(param.len() as u32).to_le_bytes());
        buf.extend_from_slice(param.as_bytes());
    }
    for (name, value) in headers {
        buf.extend_from_slice(name.as_str().as_bytes());
        buf.push(b':');
        buf.extend_from_slice(value.as_bytes());
        buf.push(b'\n');
    }
    buf.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn word(buf: &[u8], i: usize) -> u32 {
        u32::from_le_bytes(buf[i * 4..i * 4 + 4].try_into().unwrap())
    }

    #[test]
    fn a_request_should_encode_to_the_documented_layout() {
        let mut headers = HeaderMap::new();
        headers.append("x-a", "1".parse().unwrap());
        headers.append("x-a", "2".parse().unwrap());
        let mut buf = Vec::new();
        let method = Method::from_bytes(b"PURGE").unwrap();
        encode_request(&mut buf, 7, 3, &method, "/p/x?q=1", &["x".into()], &headers, b"\x00\xff");
        assert_eq!([word(&buf, 0), word(&buf, 1), word(&buf, 2), word(&buf, 3)], [7, 3, 255, 5]);
        assert_eq!([word(&buf, 4), word(&buf, 5), word(&buf, 6), word(&buf, 7)], [8, 1, 12, 2]);
        assert_eq!(&buf[HEADER_LEN..], b"PURGE/p/x?q=1\x01\x00\x00\x00xx-a:1\nx-a:2\n\x00\xff");
    }
}
