//! What a request must satisfy before it is routed, where hyper is more lenient than RFC 9110/9112: the `Host`
//! field and the request-target forms. Cost per request: one header lookup and a scan of the host's bytes.

use http::header::HOST;
use http::{Method, Request, Version};

/// Why a request is refused before routing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Refusal {
    /// 400: no `Host` in HTTP/1.1 (nor `:authority` in HTTP/2), more than one, one that is not `host[:port]`
    /// (RFC 9112 §3.2), or one that differs from HTTP/2's `:authority`.
    BadHost,
    /// 400: `*` with a method other than OPTIONS, or raw bytes a target may not hold.
    BadTarget,
    /// 501: CONNECT, which no route can ask for, except an extended CONNECT for a WebSocket over HTTP/2.
    Connect,
}

/// The target form of a request that passed the rules.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Target {
    /// `OPTIONS *`: about the server as a whole.
    Asterisk,
    /// A path (origin form, or absolute form, whose path is used).
    Path,
}

pub(super) fn check<B>(req: &Request<B>) -> Result<Target, Refusal> {
    if req.method() == Method::CONNECT && !websocket_connect(req) {
        return Err(Refusal::Connect);
    }
    let mut hosts = req.headers().get_all(HOST).iter();
    let authority = req.uri().authority().filter(|_| req.version() == Version::HTTP_2);
    let host_ok = match (hosts.next(), hosts.next()) {
        // HTTP/2 carries the host in `:authority` (RFC 9113 §8.3.1); HTTP/1.0 may leave it out.
        (None, _) => authority.is_some() || req.version() < Version::HTTP_11,
        // With both, they must name the same host.
        (Some(host), None) => {
            valid_host(host.as_bytes()) && authority.is_none_or(|a| a.as_str().as_bytes() == host.as_bytes())
        }
        (Some(_), Some(_)) => false,
    };
    if !host_ok {
        return Err(Refusal::BadHost);
    }
    // hyper lets raw bytes >= 0x80 (unencoded UTF-8, say) through; RFC 3986 allows none, nor DEL.
    if req.uri().path_and_query().is_some_and(|pq| pq.as_str().bytes().any(|b| !(0x21..0x7f).contains(&b))) {
        return Err(Refusal::BadTarget);
    }
    if req.uri().path() == "*" && req.uri().scheme().is_none() {
        return if req.method() == Method::OPTIONS { Ok(Target::Asterisk) } else { Err(Refusal::BadTarget) };
    }
    Ok(Target::Path)
}

/// Whether a request is an extended CONNECT for a WebSocket (RFC 8441): HTTP/2, `:protocol` `websocket`. hyper
/// passes `:protocol` on only where the connection advertised `SETTINGS_ENABLE_CONNECT_PROTOCOL`, and only with
/// `:scheme` and `:path`. Routed as a WebSocket route's GET would be.
pub(super) fn websocket_connect<B>(req: &Request<B>) -> bool {
    req.method() == Method::CONNECT
        && req.version() == Version::HTTP_2
        && req.extensions().get::<hyper::ext::Protocol>().is_some_and(|p| p.as_str().eq_ignore_ascii_case("websocket"))
}

/// `uri-host [ ":" port ]` (RFC 3986), refusing userinfo, paths, comma lists and empty values. A reg-name may
/// hold sub-delims, but a comma there is far likelier two hosts joined by a proxy than a real name.
fn valid_host(value: &[u8]) -> bool {
    let (host, port) = match value.first() {
        None => return false,
        Some(b'[') => match value.iter().position(|&b| b == b']') {
            Some(end) => (&value[..=end], &value[end + 1..]),
            None => return false,
        },
        Some(_) => match value.iter().rposition(|&b| b == b':') {
            Some(colon) => (&value[..colon], &value[colon..]),
            None => (value, &[][..]),
        },
    };
    let port_ok = match port.split_first() {
        None => true,
        Some((b':', digits)) => digits.len() <= 5 && digits.iter().all(u8::is_ascii_digit),
        Some(_) => false,
    };
    let host_ok = match host.split_first() {
        Some((b'[', rest)) => {
            let inner = &rest[..rest.len() - 1];
            !inner.is_empty() && inner.iter().all(|&b| b.is_ascii_hexdigit() || b == b':' || b == b'.')
        }
        Some(_) => host.iter().all(|&b| b.is_ascii_alphanumeric() || b"-._~!$&'()*+;=%".contains(&b)),
        None => false,
    };
    host_ok && port_ok
}

#[cfg(test)]
mod tests {
    use super::*;

    fn req(method: &str, target: &str, version: Version, hosts: &[&[u8]]) -> Request<()> {
        let mut b = Request::builder().method(method).uri(target).version(version);
        for h in hosts {
            b = b.header(HOST, http::HeaderValue::from_bytes(h).unwrap());
        }
        b.body(()).unwrap()
    }

    #[test]
    fn host_should_be_one_valid_authority() {
        let ok = |hosts: &[&[u8]]| check(&req("GET", "/", Version::HTTP_11, hosts));
        for good in [&b"example.com"[..], b"example.com:8080", b"127.0.0.1:80", b"[::1]:3000", b"[::1]", b"a-b.c_d~"] {
            assert_eq!(ok(&[good]), Ok(Target::Path), "{:?}", String::from_utf8_lossy(good));
        }
        for bad in [&b""[..], b"user@example.com", b"example.com/path", b"a.com,b.com", b"a.com:80x", b"[::1", b"a b"] {
            assert_eq!(ok(&[bad]), Err(Refusal::BadHost), "{:?}", String::from_utf8_lossy(bad));
        }
        assert_eq!(ok(&[]), Err(Refusal::BadHost), "HTTP/1.1 requires Host");
        assert_eq!(ok(&[b"a", b"a"]), Err(Refusal::BadHost), "two identical Host fields");
        assert_eq!(ok(&[b"a", b"b"]), Err(Refusal::BadHost));
        assert_eq!(check(&req("GET", "/", Version::HTTP_10, &[])), Ok(Target::Path), "HTTP/1.0 may omit it");
    }

    #[test]
    fn asterisk_is_for_options_only_and_connect_is_not_served() {
        assert_eq!(check(&req("OPTIONS", "*", Version::HTTP_11, &[b"x"])), Ok(Target::Asterisk));
        assert_eq!(check(&req("GET", "*", Version::HTTP_11, &[b"x"])), Err(Refusal::BadTarget));
        assert_eq!(check(&req("CONNECT", "x:443", Version::HTTP_11, &[b"x:443"])), Err(Refusal::Connect));
        // RFC 8441: an extended CONNECT for a WebSocket over HTTP/2 is routed; any other protocol, or none, is not.
        let extended = |protocol: Option<&'static str>, version| {
            let mut r = req("CONNECT", "http://x/ws", version, &[]);
            if let Some(p) = protocol {
                r.extensions_mut().insert(hyper::ext::Protocol::from_static(p));
            }
            check(&r)
        };
        assert_eq!(extended(Some("websocket"), Version::HTTP_2), Ok(Target::Path));
        assert_eq!(extended(Some("connect-udp"), Version::HTTP_2), Err(Refusal::Connect));
        assert_eq!(extended(None, Version::HTTP_2), Err(Refusal::Connect));
        assert_eq!(extended(Some("websocket"), Version::HTTP_11), Err(Refusal::Connect));
    }
}
