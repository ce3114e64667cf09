//! A server's TLS settings as the developer gave them: plain bytes and names, parsed and checked by the transport
//! when the server starts (`transport/tls`), so a bad certificate, key, passphrase or CA is an error from
//! `Server::start`, never a server that starts and fails every handshake.

use std::fmt;

/// What a TLS server presents and asks for.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct TlsOptions {
    /// The certificates the server can present, at least one. The first is the default: a client that names
    /// no host (SNI), or one no other certificate is for, gets it. The others are chosen by the name the client
    /// asks for (their [`Identity::server_name`], or the names in the certificate when it has none).
    pub identities: Vec<Identity>,
    /// Client certificates (mutual TLS); `None`: none are asked for.
    pub client_auth: Option<ClientAuth>,
    /// The oldest TLS version offered. Default 1.2.
    pub min_version: TlsVersion,
    /// ALPN protocols offered, most preferred first: each `h2` or `http/1.1`. `None`: `h2` (with HTTP/2 on) then
    /// `http/1.1`.
    pub alpn: Option<Vec<String>>,
}

impl TlsOptions {
    /// One certificate chain and its key, both PEM; TLS 1.2 and 1.3, no client certificates.
    pub fn new(cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        Self::with_identities(vec![Identity::new(cert, key)])
    }

    /// Several certificates, the first the default.
    pub fn with_identities(identities: Vec<Identity>) -> Self {
        Self { identities, client_auth: None, min_version: TlsVersion::Tls12, alpn: None }
    }
}

/// A certificate chain and its private key.
#[derive(Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Identity {
    /// The host this certificate is for, as clients name it (SNI): `example.com` or `*.example.com`. `None`: the
    /// DNS names in the certificate.
    pub server_name: Option<String>,
    /// The certificate chain, PEM: the server's own certificate first, then its intermediates.
    pub cert: Vec<u8>,
    /// Its private key, PEM: PKCS#8, PKCS#1 (RSA) or SEC1 (EC); an encrypted PKCS#8 key with `passphrase`.
    pub key: Vec<u8>,
    /// The passphrase of an encrypted PKCS#8 key.
    pub passphrase: Option<String>,
}

impl Identity {
    /// A chain and an unencrypted key, both PEM.
    pub fn new(cert: impl Into<Vec<u8>>, key: impl Into<Vec<u8>>) -> Self {
        Self { server_name: None, cert: cert.into(), key: key.into(), passphrase: None }
    }
}

/// The key and passphrase are never printed.
impl fmt::Debug for Identity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Identity")
            .field("server_name", &self.server_name)
            .field("cert", &format_args!("{} bytes", self.cert.len()))
            .finish_non_exhaustive()
    }
}

/// Client certificates: which authorities sign them, and what becomes of a client without a valid one.
#[derive(Clone, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub struct ClientAuth {
    /// The certificate authorities client certificates must chain to, PEM (one or more). `None`: none is
    /// trusted, so no client is authorized (only with `required: false`).
    pub ca: Option<Vec<u8>>,
    /// A client without a certificate the CA signed fails its handshake (Node's `rejectUnauthorized`). Off:
    /// every client gets in, and the request tells whether it was authorized and why not.
    pub required: bool,
}

impl ClientAuth {
    /// Client certificates asked for, checked against `ca`, and required or not.
    pub fn new(ca: Option<Vec<u8>>, required: bool) -> Self {
        Self { ca, required }
    }
}

/// A TLS protocol version.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
#[non_exhaustive]
pub enum TlsVersion {
    /// TLS 1.2.
    Tls12,
    /// TLS 1.3.
    Tls13,
}
