//! A server's TLS settings as the developer gave them: plain bytes, parsed and checked by the transport when the
//! server starts (`transport/tls.rs`), so a bad certificate or key is an error from `Server::start`, never a
//! server that starts and fails every handshake.

use std::fmt;

/// The certificate chain and private key a server presents, PEM-encoded.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct TlsOptions {
    /// The certificate chain: the server's own certificate first, then its intermediates.
    pub cert: Vec<u8>,
    /// The private key of the first certificate: PKCS#8, PKCS#1 (RSA) or SEC1 (EC), not encrypted.
    pub key: Vec<u8>,
}

impl TlsOptions {
    /// A certificate chain and its key, both PEM.
    pub fn new(cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        Self { cert: cert.into(), key: key.into() }
    }
}

/// The key is never printed.
impl fmt::Debug for TlsOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TlsOptions").field("cert", &format_args!("{} bytes", self.cert.len())).finish_non_exhaustive()
    }
}
