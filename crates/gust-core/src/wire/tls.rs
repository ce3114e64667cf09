//! The TLS section of a request record: what its connection's handshake settled, encoded once per connection
//! and copied into each of its requests' records (see [`request`](super::request) for where it goes).
//!
//! | bytes | meaning |
//! |-------|---------|
//! | 1 | TLS version: 2 for 1.2, 3 for 1.3 |
//! | 1 | flags: [`CLIENT_CERT_ASKED`], [`AUTHORIZED`] |
//! | 1 + a | ALPN protocol: its length, then its bytes (empty when none was agreed) |
//! | 1 + s | the host the client named (SNI): its length, then its bytes (empty when none) |
//! | 2 + e | why the client was not authorized, UTF-8: its length (little-endian), then its bytes |
//! | the rest | the client's certificate, DER (empty when it sent none) |

/// Flag: client certificates were asked for.
pub const CLIENT_CERT_ASKED: u8 = 1;
/// Flag: the client's certificate chains to the server's CA.
pub const AUTHORIZED: u8 = 2;

/// What a connection's handshake settled, borrowed from it.
#[derive(Debug, Default)]
pub(crate) struct TlsFields<'a> {
    /// 2 for TLS 1.2, 3 for 1.3.
    pub(crate) version: u8,
    pub(crate) flags: u8,
    pub(crate) alpn: &'a [u8],
    pub(crate) server_name: &'a str,
    pub(crate) error: &'a str,
    pub(crate) cert: &'a [u8],
}

/// The section for `f`. Cost: once per connection.
pub(crate) fn encode_tls(f: &TlsFields<'_>) -> Vec<u8> {
    // ALPN protocols and host names are at most 255 bytes by their protocols; an error text is cut to fit.
    let alpn = &f.alpn[..f.alpn.len().min(255)];
    let name = &f.server_name.as_bytes()[..f.server_name.len().min(255)];
    let error = &f.error.as_bytes()[..f.error.len().min(u16::MAX as usize)];
    let mut out = Vec::with_capacity(7 + alpn.len() + name.len() + error.len() + f.cert.len());
    out.extend_from_slice(&[f.version, f.flags, alpn.len() as u8]);
    out.extend_from_slice(alpn);
    out.push(name.len() as u8);
    out.extend_from_slice(name);
    out.extend_from_slice(&(error.len() as u16).to_le_bytes());
    out.extend_from_slice(error);
    out.extend_from_slice(f.cert);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_section_follows_its_documented_layout() {
        let section = encode_tls(&TlsFields {
            version: 3,
            flags: CLIENT_CERT_ASKED,
            alpn: b"h2",
            server_name: "a.test",
            error: "bad",
            cert: &[0x30, 0x82],
        });
        assert_eq!(section, b"\x03\x01\x02h2\x06a.test\x03\x00bad\x30\x82");
    }
}
