//! What `listen({ pubsub })` asks of the relay, checked before anything starts.

use std::time::Duration;

use crate::values::error::Error;

/// How a server's pub/sub reaches other processes through Redis (or Valkey).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RelayOptions {
    /// The server, `redis://[user[:password]@]host[:port][/db]` or `rediss://` for TLS; or several nodes of one
    /// Redis Cluster (a seed list: the first that answers tells where the others are).
    pub urls: Vec<String>,
    /// Names this app's channels, so apps can share one Redis: a topic's channel is `prefix#topic`. The prefix
    /// holds no `#`, so the first `#` of a channel ends it and no topic can name another prefix's channel.
    pub prefix: String,
    /// Bytes of publishes kept while Redis cannot take them (disconnected, or slower than the publishers);
    /// beyond it publishes are dropped, and counted.
    pub buffer: usize,
    /// How long connecting (and each command) may take before it counts as failed.
    pub timeout: Duration,
    /// Whether `listen()` fails when Redis cannot be reached at start; otherwise the server starts, reports
    /// the failure in its counters, and keeps trying.
    pub required: bool,
    /// Certificates for `rediss://` beyond the system's authorities.
    pub tls: RelayTls,
}

/// Certificates of a `rediss://` link, PEM: an authority of your own, and a client certificate for servers that
/// ask for one (`tls-auth-clients`).
#[derive(Clone, Default, PartialEq, Eq)]
pub struct RelayTls {
    /// Authorities that may sign the server's certificate, instead of the system's.
    pub ca: Option<Vec<u8>>,
    /// This client's certificate chain, with `key`.
    pub cert: Option<Vec<u8>>,
    /// This client's private key, with `cert`.
    pub key: Option<Vec<u8>>,
}

impl std::fmt::Debug for RelayTls {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Never a key in a log.
        f.debug_struct("RelayTls")
            .field("ca", &self.ca.is_some())
            .field("cert", &self.cert.is_some())
            .field("key", &self.key.is_some())
            .finish()
    }
}

impl RelayTls {
    fn is_empty(&self) -> bool {
        self.ca.is_none() && self.cert.is_none() && self.key.is_none()
    }
}

impl RelayOptions {
    /// Options for `url` with the defaults: prefix `gust`, an 8 MiB buffer, 5 s timeout, required at start.
    pub fn new(url: impl Into<String>) -> Self {
        Self {
            urls: vec![url.into()],
            prefix: "gust".into(),
            buffer: 8 << 20,
            timeout: Duration::from_secs(5),
            required: true,
            tls: RelayTls::default(),
        }
    }

    /// The first URL, for messages (a seed list is named by its first node).
    pub(crate) fn name(&self) -> String {
        let first = self.urls.first().map_or("", String::as_str);
        let more = if self.urls.len() > 1 { format!(" (and {} more)", self.urls.len() - 1) } else { String::new() };
        format!("{}{more}", redact(first))
    }

    /// A client for `url` (one of the seeds, or a cluster node's address in one's place), speaking RESP3 (for
    /// subscriptions and commands on one connection) with this relay's certificates.
    pub(crate) fn client(&self, info: redis::ConnectionInfo) -> redis::RedisResult<redis::Client> {
        let settings = info.redis_settings().clone().set_protocol(redis::ProtocolVersion::RESP3);
        let info = info.set_redis_settings(settings);
        if self.tls.is_empty() {
            return redis::Client::open(info);
        }
        let client_tls = match (&self.tls.cert, &self.tls.key) {
            (Some(cert), Some(key)) => {
                Some(redis::ClientTlsConfig { client_cert: cert.clone(), client_key: key.clone() })
            }
            _ => None,
        };
        redis::Client::build_with_tls(info, redis::TlsCertificates { client_tls, root_cert: self.tls.ca.clone() })
    }

    /// The channel `topic` is published on.
    pub(crate) fn channel(&self, topic: &str) -> Vec<u8> {
        let mut channel = Vec::with_capacity(self.prefix.len() + 1 + topic.len());
        channel.extend_from_slice(self.prefix.as_bytes());
        channel.push(b'#');
        channel.extend_from_slice(topic.as_bytes());
        channel
    }

    /// The topic of `channel`, if it is one of this prefix's (and UTF-8, as every topic is).
    pub(crate) fn topic<'a>(&self, channel: &'a [u8]) -> Option<&'a str> {
        let rest = channel.strip_prefix(self.prefix.as_bytes())?.strip_prefix(b"#")?;
        std::str::from_utf8(rest).ok()
    }

    /// Checks every field; the error names the mistake.
    pub fn validate(&self) -> Result<(), Error> {
        if self.urls.is_empty() {
            return Err(Error::config("pubsub.redis must name at least one Redis URL"));
        }
        let schemes: Vec<Option<&str>> = self.urls.iter().map(|url| url.split_once("://").map(|(s, _)| s)).collect();
        if let Some(i) = schemes.iter().position(|s| !matches!(s, Some("redis" | "rediss"))) {
            let url = redact(&self.urls[i]);
            return Err(Error::config(format!("pubsub.redis must be a redis:// or rediss:// URL, got {url:?}")));
        }
        if schemes.windows(2).any(|w| w[0] != w[1]) {
            return Err(Error::config("pubsub.redis: the nodes of a seed list are all redis:// or all rediss://"));
        }
        if !self.tls.is_empty() && schemes[0] != Some("rediss") {
            return Err(Error::config("pubsub.tls needs rediss:// URLs (it has no use without TLS)"));
        }
        if let Some(ca) = &self.tls.ca {
            if !ca.windows(27).any(|w| w == b"-----BEGIN CERTIFICATE-----") {
                return Err(Error::config("pubsub.tls.ca must hold PEM certificates (-----BEGIN CERTIFICATE-----)"));
            }
        }
        if self.tls.cert.is_some() != self.tls.key.is_some() {
            return Err(Error::config("pubsub.tls.cert and pubsub.tls.key go together: give both or neither"));
        }
        for url in &self.urls {
            let info = redis::IntoConnectionInfo::into_connection_info(url.as_str()).map_err(|e| {
                Error::config(format!("pubsub.redis is not a valid Redis URL ({:?}): {e}", redact(url)))
            })?;
            if let Err(e) = self.client(info) {
                return Err(Error::config(format!("pubsub.tls: the certificates cannot be used: {e}")));
            }
        }
        if self.prefix.is_empty() || self.prefix.contains('#') {
            return Err(Error::config(format!(
                "pubsub.prefix must be a non-empty string without '#' (it ends at the first '#'), got {:?}",
                self.prefix
            )));
        }
        if self.timeout.is_zero() {
            return Err(Error::config("pubsub.timeout must be more than 0"));
        }
        Ok(())
    }
}

/// The URL without its password, for messages.
pub(crate) fn redact(url: &str) -> String {
    let Some((scheme, rest)) = url.split_once("://") else { return url.to_owned() };
    match rest.rsplit_once('@') {
        Some((credentials, host)) => {
            let user = credentials.split_once(':').map_or(credentials, |(user, _)| user);
            format!("{scheme}://{user}{}@{host}", if credentials.contains(':') { ":***" } else { "" })
        }
        None => url.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_must_be_redis_or_rediss_and_messages_hide_the_password() {
        assert!(RelayOptions::new("redis://127.0.0.1:6379").validate().is_ok());
        assert!(RelayOptions::new("rediss://user:pw@example.com:6380/2").validate().is_ok());
        let err = RelayOptions::new("http://user:secret@host").validate().unwrap_err().to_string();
        assert!(err.contains("redis:// or rediss://") && !err.contains("secret"), "{err}");
        assert_eq!(redact("redis://:secret@h:1"), "redis://:***@h:1");
        assert_eq!(redact("redis://u:secret@h"), "redis://u:***@h");
        assert_eq!(redact("redis://h:1/0"), "redis://h:1/0");
        let mut bad = RelayOptions::new("redis://h");
        bad.prefix = "a#b".into();
        assert!(bad.validate().unwrap_err().to_string().contains("without '#'"));
    }

    #[test]
    fn a_topic_cannot_name_another_prefixs_channel() {
        let a = RelayOptions { prefix: "app".into(), ..RelayOptions::new("redis://h") };
        let b = RelayOptions { prefix: "app#x".into(), ..RelayOptions::new("redis://h") };
        assert_eq!(a.channel("room"), b"app#room");
        assert_eq!(a.topic(b"app#room"), Some("room"));
        assert_eq!(a.topic(b"app#x#room"), Some("x#room"), "a topic may hold '#': it is all after the first");
        assert!(b.validate().is_err(), "so no prefix may");
        assert_eq!(a.topic(b"apple#room"), None);
        assert_eq!(a.topic(b"app"), None);
    }
}
