//! Which certificate a handshake gets: the one for the host the client names (SNI), exactly or by a wildcard
//! (`*.example.com` is for one label below `example.com`), else the default (the first), as Node's
//! `addContext` and Bun's `tls` array choose.

use std::sync::Arc;

use rustls::server::{ClientHello, ResolvesServerCert};
use rustls::sign::CertifiedKey;

use crate::values::error::Error;

/// The server's certificates by name. Cost per handshake: a comparison per named certificate (a handful).
#[derive(Debug)]
pub(super) struct ByName {
    default: Arc<CertifiedKey>,
    named: Vec<(Pattern, Arc<CertifiedKey>)>,
}

impl ByName {
    pub(super) fn new(default: Arc<CertifiedKey>) -> Self {
        Self { default, named: Vec::new() }
    }

    /// Adds the certificate for `name` (a host, or `*.` and a domain).
    pub(super) fn add(&mut self, name: &str, key: Arc<CertifiedKey>, field: &str) -> Result<(), Error> {
        self.named.push((Pattern::parse(name, field)?, key));
        Ok(())
    }

    fn lookup(&self, host: &str) -> &Arc<CertifiedKey> {
        let host = host.trim_end_matches('.');
        let exact = self.named.iter().find(|(p, _)| matches!(p, Pattern::Exact(n) if n.eq_ignore_ascii_case(host)));
        let wild = || {
            let (_, parent) = host.split_once('.')?;
            self.named.iter().find(|(p, _)| matches!(p, Pattern::Below(d) if d.eq_ignore_ascii_case(parent)))
        };
        exact.or_else(wild).map_or(&self.default, |(_, key)| key)
    }
}

impl ResolvesServerCert for ByName {
    fn resolve(&self, hello: ClientHello<'_>) -> Option<Arc<CertifiedKey>> {
        Some(hello.server_name().map_or(&self.default, |host| self.lookup(host)).clone())
    }
}

/// A name a certificate is chosen for.
#[derive(Debug)]
enum Pattern {
    Exact(String),
    /// `*.example.com`: one label below `example.com`.
    Below(String),
}

impl Pattern {
    fn parse(name: &str, field: &str) -> Result<Self, Error> {
        let name = name.trim_end_matches('.');
        let (below, host) = match name.strip_prefix("*.") {
            Some(domain) => (true, domain),
            None => (false, name),
        };
        let valid = !host.is_empty()
            && host.split('.').all(|label| {
                !label.is_empty() && label.len() <= 63 && label.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
            });
        if !valid {
            return Err(Error::config(format!(
                "{field}: \"{name}\" is not a host name (expected e.g. example.com or *.example.com)"
            )));
        }
        Ok(if below { Pattern::Below(host.to_owned()) } else { Pattern::Exact(host.to_owned()) })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(tag: u8) -> Arc<CertifiedKey> {
        struct NoKey;
        impl std::fmt::Debug for NoKey {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("NoKey")
            }
        }
        impl rustls::sign::SigningKey for NoKey {
            fn choose_scheme(&self, _: &[rustls::SignatureScheme]) -> Option<Box<dyn rustls::sign::Signer>> {
                None
            }
            fn algorithm(&self) -> rustls::SignatureAlgorithm {
                rustls::SignatureAlgorithm::ECDSA
            }
        }
        Arc::new(CertifiedKey::new(vec![vec![tag].into()], Arc::new(NoKey)))
    }

    #[test]
    fn the_named_certificate_is_chosen_exactly_or_by_wildcard_else_the_default() {
        let mut names = ByName::new(key(0));
        names.add("example.com", key(1), "tls[1].serverName").unwrap();
        names.add("*.example.com", key(2), "tls[2].serverName").unwrap();
        names.add("API.other.test", key(3), "tls[3].serverName").unwrap();
        let chosen = |host: &str| names.lookup(host).cert[0].as_ref()[0];
        assert_eq!(chosen("example.com"), 1);
        assert_eq!(chosen("Example.COM."), 1, "names compare without case or a final dot");
        assert_eq!(chosen("www.example.com"), 2);
        assert_eq!(chosen("a.b.example.com"), 0, "a wildcard covers one label");
        assert_eq!(chosen("api.other.test"), 3);
        assert_eq!(chosen("unknown.test"), 0);
    }

    #[test]
    fn a_name_that_is_no_host_is_refused_by_name() {
        for bad in ["", "*.", "a..b", "exa mple.com", "*.*.example.com", "a/b"] {
            let err = ByName::new(key(0)).add(bad, key(1), "tls[1].serverName").unwrap_err().to_string();
            assert!(err.contains("tls[1].serverName") && err.contains("is not a host name"), "{bad}: {err}");
        }
    }
}
