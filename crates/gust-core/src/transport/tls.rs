//! TLS (rustls, with ring's cryptography): the acceptor a server builds once from its certificate and key, and
//! the handshake each connection does before HTTP. A bad certificate or key is a configuration error from
//! `Server::start`, naming which and why; a client whose handshake fails or stalls (past the header timeout) is
//! dropped, costing the server nothing more.
//!
//! TLS 1.2 and 1.3 are offered (1.2 is the minimum). ALPN offers `h2` then `http/1.1` (only `http/1.1` with
//! `http2` off). The
//! certificate can be replaced while the server runs ([`reload`]): new handshakes get the new one, and open
//! connections go on with theirs.

use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::crypto::ring::default_provider;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use rustls::ServerConfig;
use tokio_rustls::TlsAcceptor;

use crate::values::error::Error;
use crate::values::tls_options::TlsOptions;

/// The server's TLS configuration, swapped whole when its certificate is reloaded: each handshake takes the one
/// current when it starts (one atomic load and a reference count), so a reload never touches a connection
/// already open or a handshake under way.
pub(crate) type Certificates = Arc<ArcSwap<ServerConfig>>;

/// The configuration for `options`, to start a server with.
pub(crate) fn certificates(options: &TlsOptions, http2: bool) -> Result<Certificates, Error> {
    Ok(Arc::new(ArcSwap::new(server_config(options, http2)?)))
}

/// Replaces the configuration new handshakes use, once `options` have been checked; on an error the old one
/// stays.
pub(crate) fn reload(current: &Certificates, options: &TlsOptions, http2: bool) -> Result<(), Error> {
    current.store(server_config(options, http2)?);
    Ok(())
}

/// The acceptor for the next handshake.
pub(crate) fn acceptor(current: &Certificates) -> TlsAcceptor {
    TlsAcceptor::from(current.load_full())
}

/// The chain and key parsed, checked against each other, and a rustls server configuration built. Cost: at
/// start-up and reload only.
fn server_config(options: &TlsOptions, http2: bool) -> Result<Arc<ServerConfig>, Error> {
    let certs = chain(&options.cert)?;
    let key = private_key(&options.key)?;
    let mut config = ServerConfig::builder_with_provider(Arc::new(default_provider()))
        .with_protocol_versions(&[&rustls::version::TLS13, &rustls::version::TLS12])
        .map_err(|e| Error::config(format!("tls: {e}")))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| Error::config(format!("tls: the key does not fit the certificate ({e})")))?;
    // The server's preference first: h2 when the client offers it too.
    config.alpn_protocols = if http2 { vec![b"h2".to_vec(), b"http/1.1".to_vec()] } else { vec![b"http/1.1".to_vec()] };
    Ok(Arc::new(config))
}

fn chain(pem: &[u8]) -> Result<Vec<CertificateDer<'static>>, Error> {
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
        certificates(&TlsOptions::new(cert, key), true).err().map(|e| e.to_string()).unwrap_or_default()
    }

    #[test]
    fn a_certificate_and_its_key_make_a_configuration_a_bad_reload_keeps() {
        let current = certificates(&TlsOptions::new(fixture("cert.pem"), fixture("key.pem")), true).unwrap();
        let before = current.load_full();
        assert!(reload(&current, &TlsOptions::new(fixture("cert.pem"), fixture("other-key.pem")), true).is_err());
        assert!(Arc::ptr_eq(&before, &current.load_full()), "a failed reload leaves the configuration as it was");
        reload(&current, &TlsOptions::new(fixture("other-cert.pem"), fixture("other-key.pem")), true).unwrap();
        assert!(!Arc::ptr_eq(&before, &current.load_full()));
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
