//! Content codings and `Accept-Encoding` negotiation (RFC 9110 §12.5.3): q-values decide, the server's order
//! breaks ties, and `identity` may be refused (`identity;q=0`, or `*;q=0` without an `identity` entry).

use http::header::ACCEPT_ENCODING;
use http::HeaderMap;

/// A content coding Gust can produce (and, opted in, decode from request bodies).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Encoding {
    /// Brotli (RFC 7932).
    Br,
    /// Zstandard (RFC 8878).
    Zstd,
    /// gzip (RFC 1952).
    Gzip,
}

impl Encoding {
    /// Every coding, smallest output first: the order precompressed files are preferred in.
    pub const ALL: [Encoding; 3] = [Encoding::Br, Encoding::Zstd, Encoding::Gzip];

    /// The coding's token in `Content-Encoding` and `Accept-Encoding`.
    pub fn token(self) -> &'static str {
        match self {
            Encoding::Br => "br",
            Encoding::Zstd => "zstd",
            Encoding::Gzip => "gzip",
        }
    }

    /// The suffix of a precompressed sibling file.
    pub fn suffix(self) -> &'static str {
        match self {
            Encoding::Br => ".br",
            Encoding::Zstd => ".zst",
            Encoding::Gzip => ".gz",
        }
    }

    /// The coding a token names (`x-gzip` is gzip, RFC 9110 §8.4.1.3); case-insensitive.
    pub fn parse(token: &str) -> Option<Self> {
        let token = token.trim();
        if token.eq_ignore_ascii_case("br") {
            Some(Encoding::Br)
        } else if token.eq_ignore_ascii_case("zstd") {
            Some(Encoding::Zstd)
        } else if token.eq_ignore_ascii_case("gzip") || token.eq_ignore_ascii_case("x-gzip") {
            Some(Encoding::Gzip)
        } else {
            None
        }
    }

    pub(crate) fn index(self) -> usize {
        match self {
            Encoding::Br => 0,
            Encoding::Zstd => 1,
            Encoding::Gzip => 2,
        }
    }
}

/// What a request's `Accept-Encoding` says: a weight per known coding, for `*` and for `identity`.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct Accepted {
    known: [Option<f32>; 3],
    star: Option<f32>,
    identity: Option<f32>,
    /// The header was present.
    present: bool,
}

impl Accepted {
    /// Parses every `Accept-Encoding` line. Cost: one pass over the text, no allocation; an item with a
    /// malformed weight is ignored, as if absent.
    pub(crate) fn from_headers(headers: &HeaderMap) -> Self {
        let mut out = Accepted::default();
        for value in headers.get_all(ACCEPT_ENCODING) {
            out.present = true;
            let Ok(value) = value.to_str() else { continue };
            for item in value.split(',') {
                let mut parts = item.split(';');
                let coding = parts.next().unwrap_or("").trim();
                if coding.is_empty() {
                    continue;
                }
                let weight = parts
                    .find_map(|p| {
                        let p = p.trim();
                        p.strip_prefix("q=").or_else(|| p.strip_prefix("Q="))
                    })
                    .map_or(Some(1.0), |w| w.trim().parse::<f32>().ok().filter(|w| (0.0..=1.0).contains(w)));
                let Some(weight) = weight else { continue };
                if coding == "*" {
                    out.star = Some(weight);
                } else if coding.eq_ignore_ascii_case("identity") {
                    out.identity = Some(weight);
                } else if let Some(e) = Encoding::parse(coding) {
                    out.known[e.index()] = Some(weight);
                }
            }
        }
        out
    }

    /// The weight of `coding`: its own entry, else `*`'s, else 0 (an absent header accepts nothing encoded).
    fn weight(&self, coding: Encoding) -> f32 {
        self.known[coding.index()].or(self.star).unwrap_or(0.0)
    }

    /// Whether the client refuses an unencoded body: `identity;q=0`, or `*;q=0` with no `identity` entry.
    pub(crate) fn refuses_identity(&self) -> bool {
        match self.identity {
            Some(w) => w == 0.0,
            None => self.star == Some(0.0),
        }
    }

    /// The best of `offered` (in the server's order of preference, which breaks ties) the client accepts.
    pub(crate) fn best(&self, offered: &[Encoding]) -> Option<Encoding> {
        if !self.present {
            return None;
        }
        let mut best: Option<(f32, Encoding)> = None;
        for &coding in offered {
            let w = self.weight(coding);
            if w > 0.0 && best.is_none_or(|(bw, _)| w > bw) {
                best = Some((w, coding));
            }
        }
        best.map(|(_, c)| c)
    }

    /// Every coding of `offered` the client accepts, best first (ties in `offered`'s order).
    pub(crate) fn ranked(&self, offered: &[Encoding]) -> Vec<Encoding> {
        if !self.present {
            return Vec::new();
        }
        let mut out: Vec<(f32, usize, Encoding)> = offered
            .iter()
            .enumerate()
            .filter_map(|(i, &c)| Some((self.weight(c), i, c)).filter(|(w, _, _)| *w > 0.0))
            .collect();
        out.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
        out.into_iter().map(|(_, _, c)| c).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn accepted(value: &str) -> Accepted {
        let mut headers = HeaderMap::new();
        headers.insert(ACCEPT_ENCODING, value.parse().unwrap());
        Accepted::from_headers(&headers)
    }

    const PREFER: [Encoding; 3] = [Encoding::Zstd, Encoding::Br, Encoding::Gzip];

    #[test]
    fn q_values_decide_and_the_server_order_breaks_ties() {
        assert_eq!(accepted("gzip, deflate, br, zstd").best(&PREFER), Some(Encoding::Zstd));
        assert_eq!(accepted("gzip, deflate, br").best(&PREFER), Some(Encoding::Br));
        assert_eq!(accepted("gzip;q=1, br;q=0.5").best(&PREFER), Some(Encoding::Gzip));
        assert_eq!(accepted("br;q=0, gzip;q=0.1").best(&PREFER), Some(Encoding::Gzip));
        assert_eq!(accepted("*").best(&PREFER), Some(Encoding::Zstd));
        assert_eq!(accepted("*;q=0.5, gzip;q=0.9").best(&PREFER), Some(Encoding::Gzip));
        assert_eq!(accepted("X-GZIP").best(&PREFER), Some(Encoding::Gzip));
        assert_eq!(accepted("GZip ; Q=0.8").best(&PREFER), Some(Encoding::Gzip));
        assert_eq!(accepted("deflate, identity").best(&PREFER), None);
        assert_eq!(accepted("").best(&PREFER), None);
        assert_eq!(accepted("gzip;q=2, br;q=x").best(&PREFER), None, "malformed weights are ignored");
        assert_eq!(accepted("gzip").best(&[Encoding::Br]), None, "only what the server offers");
        assert_eq!(Accepted::from_headers(&HeaderMap::new()).best(&PREFER), None);
        assert_eq!(
            accepted("gzip;q=0.5, br, zstd;q=0.7").ranked(&Encoding::ALL),
            vec![Encoding::Br, Encoding::Zstd, Encoding::Gzip]
        );
    }

    #[test]
    fn identity_is_refused_only_explicitly() {
        assert!(accepted("gzip, identity;q=0").refuses_identity());
        assert!(accepted("*;q=0").refuses_identity());
        assert!(!accepted("*;q=0, identity").refuses_identity());
        assert!(!accepted("gzip").refuses_identity());
        assert!(!accepted("identity;q=0.1").refuses_identity());
        assert!(!Accepted::from_headers(&HeaderMap::new()).refuses_identity());
    }
}
