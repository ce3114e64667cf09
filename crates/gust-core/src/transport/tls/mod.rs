//! TLS (rustls, with ring's cryptography): the configuration a server builds once from its options, and what
//! each connection's handshake settled. A bad certificate, key, passphrase or CA is a configuration error from
//! `Server::start`, naming which and why; a client whose handshake fails or stalls (past the header timeout) is
//! dropped, costing the server nothing more.
//!
//! TLS 1.2 and 1.3 are offered (1.3 only with `min_version`). ALPN offers `h2` then `http/1.1` (only `http/1.1`
//! with `http2` off), or the list the options give. Certificates are chosen by the host the client names
//! ([`sni`]); client certificates are asked for when the options say so ([`client_auth`]); keys may be encrypted
//! PKCS#8 ([`keys`]). The whole configuration can be replaced while the server runs ([`reload`]): new handshakes
//! get the new one, and open connections go on with theirs.

mod client_auth;
mod keys;
mod sni;

use std::sync::Arc;

use arc_swap::ArcSwap;
use rustls::crypto::ring::default_provider;
use rustls::crypto::CryptoProvider;
use rustls::sign::CertifiedKey;
use rustls::{ProtocolVersion, ServerConfig, ServerConnection};
use tokio_rustls::TlsAcceptor;

use self::client_auth::Clients;
use crate::values::error::Error;
use crate::values::tls_options::{Identity, TlsOptions, TlsVersion};
use crate::wire::tls::{encode_tls, TlsFields, AUTHORIZED, CLIENT_CERT_ASKED};

/// A server's TLS configuration: what handshakes use, and how a connection's client certificate is judged.
#[derive(Debug)]
pub(crate) struct Tls {
    config: Arc<ServerConfig>,
    clients: Clients,
}

/// The configuration, swapped whole when it is reloaded: each handshake takes the one current when it starts
/// (one atomic load and a reference count), so a reload never touches a connection already open or a handshake
/// under way.
pub(crate) type Certificates = Arc<ArcSwap<Tls>>;

/// The configuration for `options`, to start a server with.
pub(crate) fn certificates(options: &TlsOptions, http2: bool) -> Result<Certificates, Error> {
    Ok(Arc::new(ArcSwap::new(configure(options, http2)?)))
}

/// Replaces the configuration new handshakes use, once `options` have been checked; on an error the old one
/// stays.
pub(crate) fn reload(current: Option<&Certificates>, options: &TlsOptions, http2: bool) -> Result<(), Error> {
    let Some(current) = current else {
        return Err(Error::config("tls: this server was started without TLS; restart it with a certificate"));
    };
    current.store(configure(options, http2)?);
    Ok(())
}

/// The configuration for the next handshake, and its acceptor.
pub(crate) fn acceptor(current: &Certificates) -> (TlsAcceptor, Arc<Tls>) {
    let tls = current.load_full();
    (TlsAcceptor::from(tls.config.clone()), tls)
}

/// What `conn`'s handshake settled, as the TLS section of each of its requests' records. Cost: once per
/// connection (a chain check more with optional client certificates and a CA).
pub(crate) fn describe(tls: &Tls, conn: &ServerConnection) -> Arc<[u8]> {
    let verdict = tls.clients.judge(conn);
    let version = match conn.protocol_version() {
        Some(ProtocolVersion::TLSv1_3) => 3,
        Some(ProtocolVersion::TLSv1_2) => 2,
        _ => 0,
    };
    let asked = if tls.clients.asks() { CLIENT_CERT_ASKED } else { 0 };
    encode_tls(&TlsFields {
        version,
        flags: asked | if verdict.authorized { AUTHORIZED } else { 0 },
        alpn: conn.alpn_protocol().unwrap_or_default(),
        server_name: conn.server_name().unwrap_or_default(),
        error: verdict.error.as_deref().unwrap_or_default(),
        cert: verdict.cert.unwrap_or_default(),
    })
    .into()
}

/// The options parsed, checked and built into a rustls configuration. Cost: at start-up and reload only.
fn configure(options: &TlsOptions, http2: bool) -> Result<Arc<Tls>, Error> {
    let provider = Arc::new(default_provider());
    let versions: &[&rustls::SupportedProtocolVersion] = match options.min_version {
        TlsVersion::Tls12 => &[&rustls::version::TLS13, &rustls::version::TLS12],
        TlsVersion::Tls13 => &[&rustls::version::TLS13],
    };
    let (verifier, clients) = Clients::new(options.client_auth.as_ref(), &provider)?;
    let resolver = identities(&options.identities, &provider)?;
    let mut config = ServerConfig::builder_with_provider(provider)
        .with_protocol_versions(versions)
        .map_err(|e| Error::config(format!("tls: {e}")))?
        .with_client_cert_verifier(verifier)
        .with_cert_resolver(Arc::new(resolver));
    config.alpn_protocols = alpn(options.alpn.as_deref(), http2)?;
    Ok(Arc::new(Tls { config: Arc::new(config), clients }))
}

/// The server's certificates by the name each is for; the first is the default and needs none.
fn identities(identities: &[Identity], provider: &CryptoProvider) -> Result<sni::ByName, Error> {
    // One certificate is `tls`, several are `tls[i]`, as the developer wrote them.
    let field = |i: usize| if identities.len() == 1 { "tls".to_owned() } else { format!("tls[{i}]") };
    let Some((first, others)) = identities.split_first() else {
        return Err(Error::config("tls: no certificate given"));
    };
    let default = certified(first, &field(0), provider)?;
    let mut names = sni::ByName::new(default.clone());
    for (i, identity) in others.iter().enumerate() {
        let at = field(i + 1);
        let Some(name) = &identity.server_name else {
            return Err(Error::config(format!(
                "{at}.serverName: every certificate after the first needs the host it is for (the first is the default)"
            )));
        };
        names.add(name, certified(identity, &at, provider)?, &format!("{at}.serverName"))?;
    }
    // The default's own name counts too: an exact name beats another certificate's wildcard.
    if let Some(name) = &first.server_name {
        names.add(name, default, &format!("{}.serverName", field(0)))?;
    }
    Ok(names)
}

/// A chain and its key, checked against each other.
fn certified(identity: &Identity, at: &str, provider: &CryptoProvider) -> Result<Arc<CertifiedKey>, Error> {
    let chain = keys::certificates(&identity.cert, &format!("{at}.cert"))?;
    let key = keys::private_key(
        &identity.key,
        identity.passphrase.as_deref(),
        &format!("{at}.key"),
        &format!("{at}.passphrase"),
    )?;
    CertifiedKey::from_der(chain, key, provider)
        .map(Arc::new)
        .map_err(|e| Error::config(format!("{at}.key: the key does not fit the certificate ({e})")))
}

/// The ALPN list: the options' (each a protocol Gust speaks, `h2` only with HTTP/2 on), or `h2` then `http/1.1`.
fn alpn(given: Option<&[String]>, http2: bool) -> Result<Vec<Vec<u8>>, Error> {
    let Some(given) = given else {
        // The server's preference first: h2 when the client offers it too.
        return Ok(if http2 { vec![b"h2".to_vec(), b"http/1.1".to_vec()] } else { vec![b"http/1.1".to_vec()] });
    };
    if given.is_empty() {
        return Err(Error::config("tls.alpn: give at least one protocol (h2, http/1.1)"));
    }
    for protocol in given {
        match protocol.as_str() {
            "http/1.1" => {}
            "h2" if http2 => {}
            "h2" => return Err(Error::config("tls.alpn: h2 is offered but http2 is off")),
            other => {
                return Err(Error::config(format!(
                    "tls.alpn: \"{other}\" is not a protocol this server speaks (h2, http/1.1)"
                )))
            }
        }
    }
    Ok(given.iter().map(|p| p.as_bytes().to_vec()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::values::tls_options::ClientAuth;

    fn fixture(name: &str) -> Vec<u8> {
        std::fs::read(format!("{}/tests/fixtures/tls/{name}", env!("CARGO_MANIFEST_DIR"))).unwrap()
    }

    fn error(options: &TlsOptions) -> String {
        certificates(options, true).err().map(|e| e.to_string()).unwrap_or_default()
    }

    fn pair(cert: &[u8], key: &[u8]) -> TlsOptions {
        TlsOptions::new(cert, key)
    }

    #[test]
    fn a_certificate_and_its_key_make_a_configuration_a_bad_reload_keeps() {
        let current = certificates(&pair(&fixture("cert.pem"), &fixture("key.pem")), true).unwrap();
        let before = current.load_full();
        assert!(reload(Some(&current), &pair(&fixture("cert.pem"), &fixture("other-key.pem")), true).is_err());
        assert!(Arc::ptr_eq(&before, &current.load_full()), "a failed reload leaves the configuration as it was");
        reload(Some(&current), &pair(&fixture("other-cert.pem"), &fixture("other-key.pem")), true).unwrap();
        assert!(!Arc::ptr_eq(&before, &current.load_full()));
    }

    #[test]
    fn each_bad_input_is_named() {
        let (cert, key) = (fixture("cert.pem"), fixture("key.pem"));
        assert!(error(&pair(b"not a certificate", &key)).contains("tls.cert: no certificate found"));
        assert!(
            error(&pair(b"-----BEGIN CERTIFICATE-----\n%%%\n-----END CERTIFICATE-----\n", &key)).contains("tls.cert")
        );
        assert!(error(&pair(&cert, b"")).contains("tls.key: no private key found"));
        assert!(error(&pair(&cert, &fixture("encrypted-key.pem"))).contains("tls.key: the private key is encrypted"));
        assert!(
            error(&pair(&cert, &fixture("other-key.pem"))).contains("tls.key: the key does not fit the certificate")
        );
        assert!(error(&pair(&key, &cert)).contains("tls.cert: no certificate found"));
        let mut two = TlsOptions::with_identities(vec![
            Identity::new(cert.clone(), key.clone()),
            Identity::new(cert.clone(), key.clone()),
        ]);
        assert!(error(&two).contains("tls[1].serverName: every certificate after the first needs the host"));
        two.identities[1].server_name = Some("other.test".into());
        two.identities[1].key = fixture("other-key.pem");
        assert!(error(&two).contains("tls[1].key: the key does not fit"));
        let mut options = pair(&cert, &key);
        options.alpn = Some(vec!["h3".into()]);
        assert!(error(&options).contains("tls.alpn: \"h3\" is not a protocol this server speaks"));
        options.alpn = Some(vec!["h2".into()]);
        assert!(certificates(&options, false).err().unwrap().to_string().contains("h2 is offered but http2 is off"));
        options.alpn = None;
        options.client_auth = Some(ClientAuth::new(None, true));
        assert!(error(&options).contains("tls.ca: requestCert with rejectUnauthorized needs"));
        options.client_auth = Some(ClientAuth::new(Some(b"nope".to_vec()), true));
        assert!(error(&options).contains("tls.ca: no certificate found"));
    }

    #[test]
    fn an_encrypted_key_with_its_passphrase_several_names_and_client_certificates_configure() {
        let mut first = Identity::new(fixture("cert.pem"), fixture("encrypted-key.pem"));
        first.passphrase = Some("secret".into());
        let mut other = Identity::new(fixture("other-cert.pem"), fixture("other-key.pem"));
        other.server_name = Some("other.test".into());
        let mut options = TlsOptions::with_identities(vec![first, other]);
        options.client_auth = Some(ClientAuth::new(Some(fixture("client-ca.pem")), false));
        options.min_version = TlsVersion::Tls13;
        options.alpn = Some(vec!["http/1.1".into()]);
        let tls = certificates(&options, true).unwrap().load_full();
        assert_eq!(tls.config.alpn_protocols, vec![b"http/1.1".to_vec()]);
        options.identities[0].passphrase = Some("wrong".into());
        assert!(error(&options).contains("tls[0].passphrase: wrong passphrase"));
    }
}
