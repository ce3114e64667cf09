//! Who the client is, as a rate limit keys it: the peer's address, or, when the peer is a trusted proxy, the
//! address it forwarded (`Forwarded` for= nodes, else `X-Forwarded-For`), walking the chain from the nearest hop
//! and skipping every trusted proxy, the rule `c.req.ip` follows in the package (`src/proxy.ts`), so that a limit
//! and a handler agree on who asked. Cost: nothing more than one address parse unless some proxy is trusted.

use std::net::IpAddr;

use http::HeaderMap;

/// Address ranges whose peers may say who the client is.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedProxies {
    /// (network as IPv6, IPv4 mapped; prefix length out of 128).
    ranges: Vec<(u128, u8)>,
}

impl TrustedProxies {
    /// Parses `a.b.c.d`, `x::y`, `a.b.c.d/n` and `x::/n`; the error names the entry.
    pub fn parse<'a>(specs: impl IntoIterator<Item = &'a str>) -> Result<Self, String> {
        let mut ranges = Vec::new();
        for spec in specs {
            let (addr, bits) = match spec.split_once('/') {
                Some((a, b)) => (a, Some(b)),
                None => (spec, None),
            };
            let ip: IpAddr = addr.parse().map_err(|_| format!("{spec:?} is not an IP address or CIDR range"))?;
            let (max, offset) = if ip.is_ipv4() { (32u8, 96u8) } else { (128, 0) };
            let prefix = match bits {
                None => max,
                Some(b) if !b.is_empty() && b.bytes().all(|c| c.is_ascii_digit()) => {
                    b.parse::<u8>().ok().filter(|&p| p <= max).ok_or_else(|| format!("{spec:?} has no valid prefix"))?
                }
                Some(_) => return Err(format!("{spec:?} has no valid prefix")),
            };
            let bits = prefix + offset;
            ranges.push((as_v6(ip) & mask(bits), bits));
        }
        Ok(Self { ranges })
    }

    /// Every peer: the farthest forwarded address is the client.
    pub fn everyone() -> Self {
        Self { ranges: vec![(0, 0)] }
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.ranges.is_empty()
    }

    fn trusts(&self, ip: &str) -> bool {
        let Some(ip) = parse_ip(ip) else { return false };
        let v6 = as_v6(ip);
        self.ranges.iter().any(|&(net, bits)| v6 & mask(bits) == net)
    }

    /// The client's address as text: the peer's, or what trusted proxies forwarded.
    pub(crate) fn client<'a>(&self, peer: &'a str, headers: &'a HeaderMap) -> std::borrow::Cow<'a, str> {
        if self.is_empty() || !self.trusts(peer) {
            return peer.into();
        }
        let chain = forwarded_for(headers);
        let mut ip: std::borrow::Cow<'a, str> = peer.into();
        for hop in chain.into_iter().rev() {
            if !self.trusts(&ip) {
                break;
            }
            ip = hop.into();
        }
        ip
    }
}

/// An address as `src/ip.ts` takes one: plain, or IPv6 in brackets or with a zone.
pub(crate) fn parse_ip(text: &str) -> Option<IpAddr> {
    let text = text.strip_prefix('[').and_then(|t| t.strip_suffix(']')).unwrap_or(text);
    let text = text.split('%').next().unwrap_or(text);
    text.parse().ok()
}

fn as_v6(ip: IpAddr) -> u128 {
    match ip {
        IpAddr::V4(v4) => u128::from(v4.to_ipv6_mapped()),
        IpAddr::V6(v6) => u128::from(v6),
    }
}

fn mask(bits: u8) -> u128 {
    if bits == 0 {
        0
    } else {
        u128::MAX << (128 - u32::from(bits))
    }
}

/// The forwarded chain, client first: `Forwarded`'s `for=` nodes when that field is present, else
/// `X-Forwarded-For`'s entries; several field lines read as one comma-joined list.
fn forwarded_for(headers: &HeaderMap) -> Vec<String> {
    let joined = |name: &str| {
        let values: Vec<&str> = headers.get_all(name).iter().filter_map(|v| v.to_str().ok()).collect();
        (!values.is_empty()).then(|| values.join(","))
    };
    if let Some(forwarded) = joined("forwarded") {
        let mut out = Vec::new();
        for element in forwarded.split(',') {
            for pair in element.split(';') {
                if let Some((key, value)) = pair.split_once('=') {
                    if key.trim().eq_ignore_ascii_case("for") {
                        out.push(node(value));
                    }
                }
            }
        }
        return out;
    }
    joined("x-forwarded-for")
        .map(|list| list.split(',').map(str::trim).filter(|s| !s.is_empty()).map(node).collect())
        .unwrap_or_default()
}

/// A `for=` node without quotes, brackets or port (`"[2001:db8::1]:4711"`, `192.0.2.60:80`).
fn node(value: &str) -> String {
    let v = value.trim();
    let v = v.strip_prefix('"').unwrap_or(v);
    let v = v.strip_suffix('"').unwrap_or(v);
    if let Some(inner) = v.strip_prefix('[') {
        return inner.split(']').next().unwrap_or(inner).to_owned();
    }
    if parse_ip(v).is_none() && v.matches(':').count() == 1 {
        return v.split(':').next().unwrap_or(v).to_owned();
    }
    v.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> HeaderMap {
        let mut h = HeaderMap::new();
        for (k, v) in pairs {
            h.append(http::HeaderName::from_bytes(k.as_bytes()).unwrap(), v.parse().unwrap());
        }
        h
    }

    #[test]
    fn ranges_should_parse_and_match_as_trust_proxy_does() {
        let t = TrustedProxies::parse(["127.0.0.0/8", "::1", "10.1.0.0/16", "fc00::/7"]).unwrap();
        for yes in ["127.0.0.1", "127.9.9.9", "::1", "10.1.200.3", "fd12::1", "[::1]"] {
            assert!(t.trusts(yes), "{yes}");
        }
        for no in ["128.0.0.1", "::2", "10.2.0.1", "2001:db8::1", "unknown", ""] {
            assert!(!t.trusts(no), "{no}");
        }
        for bad in ["10.0.0.0/33", "::/129", "1.2.3", "10.0.0.0/", "10.0.0.0/8x", "host"] {
            assert!(TrustedProxies::parse([bad]).is_err(), "{bad}");
        }
    }

    #[test]
    fn the_client_should_be_the_first_untrusted_hop_from_the_nearest() {
        let t = TrustedProxies::parse(["127.0.0.1", "10.0.0.0/8"]).unwrap();
        let xff = headers(&[("x-forwarded-for", "203.0.113.9, 198.51.100.7, 10.0.0.2")]);
        assert_eq!(t.client("127.0.0.1", &xff), "198.51.100.7", "10.0.0.2 is trusted, 198.51.100.7 is not");
        assert_eq!(t.client("192.0.2.1", &xff), "192.0.2.1", "an untrusted peer's header is ignored");
        assert_eq!(TrustedProxies::default().client("127.0.0.1", &xff), "127.0.0.1");
        assert_eq!(TrustedProxies::everyone().client("192.0.2.1", &xff), "203.0.113.9", "all trusted: the farthest");
        let fwd = headers(&[
            ("forwarded", "for=\"[2001:db8::1]:4711\";proto=https, for=10.0.0.3"),
            ("x-forwarded-for", "9.9.9.9"),
        ]);
        assert_eq!(t.client("127.0.0.1", &fwd), "2001:db8::1", "Forwarded wins over X-Forwarded-For");
        let two_lines = headers(&[("x-forwarded-for", "203.0.113.9"), ("x-forwarded-for", "10.0.0.2")]);
        assert_eq!(t.client("127.0.0.1", &two_lines), "203.0.113.9");
        let port = headers(&[("x-forwarded-for", "203.0.113.9:5555")]);
        assert_eq!(t.client("127.0.0.1", &port), "203.0.113.9");
    }
}
