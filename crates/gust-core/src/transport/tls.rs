//! TLS (rustls, with ring's cryptography): the acceptor a server builds once from its certificate and key, and
//! the handshake each connection does before HTTP. A bad certificate or key is a configuration error from
//! `Server::start`, naming which and why; a client whose handshake fails or stalls (past the header timeout) is
//! dropped, costing the server nothing more.
//!
//! TLS 1.2 and 1.3 are offered (1.2 is the minimum). ALPN offers `http/1.1`; HTTP/2 will add `h2` here.

use std::sync::Arc;

use rustls::crypto::ring::default_provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::values::error::Error;
use crate::values::tls_options::TlsOptions;

/// The acceptor for `options`: the chain and key parsed, checked against each other, and a rustls server
/// configuration built once. Cost: at start-up only.
pub(crate) fn acceptor(options: &TlsOptions) -> Result<TlsAcceptor, Error> {
    let certs = certificates(&options.cert)?;
    let key = private_key(&options.key)?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| Error::config(format!("tls: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| Error::config(format!("tls: the key does not fit the certificate ({e})")))?;
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    Ok(TlsAcceptor::from(Arc::new(config)))
}

fn certificates(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
    let certs = CertificateDer::pem_slice_iter(pem)
        .collect::<Result<Vec<_>, _>>()
        .map_err(|e| Error::config(format!("tls.cert: malformed PEM ({e})")))?;
    if certs.is_empty() {
        return Err(Error::config("tls.cert: no certificate found (expected PEM: -----BEGIN CERTIFICATE-----)"));
    }
    Ok(certs)
}

fn private_key(pem: &[u8]) -> Result<PrivateKeyDer<'static>, Error> {
    if contains(pem, b"-----BEGIN ENCRYPTED PRIVATE KEY-----") || contains(pem, b"Proc-Type: 4,ENCRYPTED") {
        return Err(Error::config(
            "tls.key: the private key is encrypted, and only unencrypted keys are read (PKCS#8, PKCS#1 or SEC1): \
             decrypt it first, e.g. `openssl pkey -in key.pem -out key.plain.pem`",
        ));
    }
    PrivateKeyDer::from_pem_slice(pem).map_err(|e| match e {
        rustls::pki_types::pem::Error::NoItemsFound => Error::config(
            "tls.key: no private key found (expected PEM: -----BEGIN PRIVATE KEY-----, RSA PRIVATE KEY or EC PRIVATE KEY)",
        ),
        e => Error::config(format!("tls.key: malformed PEM ({e})")),
    })
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn error(cert: &[u8], key: &[u8]) -> String {
        acceptor(&TlsOptions::new(cert, key)).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn a_certificate_and_its_key_make_an_acceptor() {
        assert!(acceptor(&TlsOptions::new(fixture("cert.pem"), fixture("key.pem"))).is_ok());
    }

    #[test]
    fn each_bad_input_is_named() {
        let (cert, key) = (fixture("cert.pem"), fixture("key.pem"));
        assert!(error(b"not a certificate", &key).contains("tls.cert: no certificate found"));
        assert!(error(b"-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n", &key).contains("tls.cert"));
        assert!(error(&cert, b"").contains("tls.key: no private key found"));
        assert!(error(&cert, &fixture("encrypted-key.pem")).contains("tls.key: the private key is encrypted"));
        assert!(error(&cert, &fixture("other-key.pem")).contains("tls: the key does not fit the certificate"));
        assert!(error(&key, &cert).contains("tls.cert: no certificate found"), "swapped: {}", error(&key, &cert));
    }
}
