//! Client certificates (mutual TLS), as Node's `requestCert` and `rejectUnauthorized` mean them: required, a
//! client without a certificate the CA signed fails its handshake; optional, every client gets in and its
//! requests say whether it was authorized and, if not, why (checked once per connection, after the handshake).

use std::sync::Arc;

use rustls::client::danger::HandshakeSignatureValid;
use rustls::crypto::{verify_tls12_signature, verify_tls13_signature, CryptoProvider, WebPkiSupportedAlgorithms};
use rustls::pki_types::{CertificateDer, UnixTime};
use rustls::server::danger::{ClientCertVerified, ClientCertVerifier};
use rustls::server::WebPkiClientVerifier;
use rustls::{DigitallySignedStruct, DistinguishedName, RootCertStore, ServerConnection, SignatureScheme};

use super::keys;
use crate::values::error::Error;
use crate::values::tls_options::ClientAuth;

/// How a server's handshakes treat client certificates, and how a connection's is judged afterwards.
#[derive(Debug)]
pub(super) struct Clients {
    /// Whether certificates are asked for at all.
    asked: bool,
    /// With optional certificates and a CA: the check each connection's certificate gets after its handshake.
    /// `None` with required ones (a client that got in was authorized) or without a CA (none is).
    audit: Option<Arc<dyn ClientCertVerifier>>,
    required: bool,
}

/// What became of a connection's client certificate.
#[derive(Debug, Default)]
pub(crate) struct Verdict<'a> {
    /// The client's own certificate (DER), if it sent one.
    pub(crate) cert: Option<&'a [u8]>,
    pub(crate) authorized: bool,
    /// Why it was not authorized, with certificates asked for.
    pub(crate) error: Option<String>,
}

impl Clients {
    /// The verifier a configuration's handshakes use, and how connections are judged. Cost: at start-up and
    /// reload only.
    pub(super) fn new(
        auth: Option<&ClientAuth>,
        provider: &Arc<CryptoProvider>,
    ) -> Result<(Arc<dyn ClientCertVerifier>, Self), Error> {
        let Some(auth) = auth else {
            return Ok((WebPkiClientVerifier::no_client_auth(), Self { asked: false, audit: None, required: false }));
        };
        let roots = match &auth.ca {
            Some(pem) => Some(Arc::new(roots(pem)?)),
            None if auth.required => {
                return Err(Error::config(
                    "tls.ca: requestCert with rejectUnauthorized needs the certificate authority client \
                     certificates are checked against",
                ))
            }
            None => None,
        };
        let checked = |roots: &Arc<RootCertStore>| {
            WebPkiClientVerifier::builder_with_provider(roots.clone(), provider.clone())
                .build()
                .map_err(|e| Error::config(format!("tls.ca: {e}")))
        };
        if auth.required {
            let roots = roots.expect("checked above");
            return Ok((checked(&roots)?, Self { asked: true, audit: None, required: true }));
        }
        let hints = roots.as_ref().map(|r| r.subjects()).unwrap_or_default();
        let any = AcceptAny { hints, algorithms: provider.signature_verification_algorithms };
        let audit = roots.as_ref().map(checked).transpose()?;
        Ok((Arc::new(any), Self { asked: true, audit, required: false }))
    }

    /// Whether client certificates are asked for.
    pub(super) fn asks(&self) -> bool {
        self.asked
    }

    /// The verdict on `conn`'s client certificate. Cost: one chain check per connection, with optional
    /// certificates and a CA only.
    pub(crate) fn judge<'a>(&self, conn: &'a ServerConnection) -> Verdict<'a> {
        if !self.asked {
            return Verdict::default();
        }
        let Some((leaf, intermediates)) = conn.peer_certificates().and_then(|c| c.split_first()) else {
            return Verdict { cert: None, authorized: false, error: Some("no client certificate".to_owned()) };
        };
        let cert = Some(leaf.as_ref());
        if self.required {
            return Verdict { cert, authorized: true, error: None };
        }
        let Some(audit) = &self.audit else {
            return Verdict { cert, authorized: false, error: Some("no tls.ca to check it against".to_owned()) };
        };
        match audit.verify_client_cert(leaf, intermediates, UnixTime::now()) {
            Ok(_) => Verdict { cert, authorized: true, error: None },
            Err(e) => Verdict { cert, authorized: false, error: Some(e.to_string()) },
        }
    }
}

fn roots(pem: &[u8]) -> Result<RootCertStore, Error> {
    let mut roots = RootCertStore::empty();
    for cert in keys::certificates(pem, "tls.ca")? {
        roots.add(cert).map_err(|e| Error::config(format!("tls.ca: not a certificate authority ({e})")))?;
    }
    Ok(roots)
}

/// Optional client certificates: any is let in (the client still proves it holds the certificate's key), and
/// judged after the handshake.
#[derive(Debug)]
struct AcceptAny {
    hints: Vec<DistinguishedName>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ClientCertVerifier for AcceptAny {
    fn client_auth_mandatory(&self) -> bool {
        false
    }

    fn root_hint_subjects(&self) -> &[DistinguishedName] {
        &self.hints
    }

    fn verify_client_cert(
        &self,
        _: &CertificateDer<'_>,
        _: &[CertificateDer<'_>],
        _: UnixTime,
    ) -> Result<ClientCertVerified, rustls::Error> {
        Ok(ClientCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}
