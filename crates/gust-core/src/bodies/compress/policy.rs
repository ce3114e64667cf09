//! When a response is compressed, and how: Deno's rules (`http_next.rs`), with zstd, a settable threshold and
//! type list, and a client's explicit refusal of `identity` honoured.
//!
//! Never compressed: 206, 304 (its validators are adjusted instead), HEAD, `Cache-Control: no-transform`, a
//! response that already has `Content-Encoding` or `Content-Range`, a type not on the list, a body under the
//! threshold (unless the client refuses `identity`). Every response of a compressible type gets
//! `Vary: Accept-Encoding`, compressed or not, so a cache never hands one client's coding to another.

use bytes::Bytes;
use http::header::{CACHE_CONTROL, CONTENT_ENCODING, CONTENT_RANGE, CONTENT_TYPE, ETAG, VARY};
use http::{HeaderMap, HeaderValue, StatusCode};

use super::encoder;
use super::Encoding;
use crate::values::error::Error;
use crate::values::mime;

/// How a server compresses its responses. Start from [`Compression::default`].
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct Compression {
    /// The codings offered, in the server's order of preference (it breaks ties between equal q-values).
    /// Default: zstd, brotli, gzip (zstd is the fastest at a given ratio).
    pub encodings: Vec<Encoding>,
    /// Bodies smaller than this are sent as they are. Default 1024 bytes.
    pub threshold: usize,
    /// Media types compressed (`text/html`, or `text/*` for a whole type), matched on the type without
    /// parameters, case-insensitively. `None`: text, JSON, XML, JavaScript, SVG, WASM and the other
    /// compressible types the engine knows (`values/mime.rs`).
    pub types: Option<Vec<String>>,
    /// gzip level for dynamic bodies, 0–9. Default 2 (zlib-rs at 1 switches to a quick strategy whose output
    /// was a third larger on JSON; 2 codes about as small as zlib at 1, nginx's default).
    pub gzip_level: i32,
    /// brotli level for dynamic bodies, 0–11. Default 4.
    pub brotli_level: i32,
    /// zstd level for dynamic bodies, 1–22. Default 3.
    pub zstd_level: i32,
}

impl Default for Compression {
    fn default() -> Self {
        Self {
            encodings: vec![Encoding::Zstd, Encoding::Br, Encoding::Gzip],
            threshold: 1024,
            types: None,
            gzip_level: 2,
            brotli_level: 4,
            zstd_level: 3,
        }
    }
}

/// The content type of a bodiless answer (a file's 304), for deciding how it would have been coded.
#[derive(Debug, Clone, Copy)]
pub(crate) struct TypeHint(pub(crate) &'static str);

impl Compression {
    /// Rejects settings that cannot work, naming them.
    pub fn validate(&self) -> Result<(), Error> {
        if self.encodings.is_empty() {
            return Err(Error::config("compression.encodings must name at least one encoding"));
        }
        for (i, e) in self.encodings.iter().enumerate() {
            if self.encodings[..i].contains(e) {
                return Err(Error::config(format!("compression.encodings names {} twice", e.token())));
            }
        }
        for (name, encoding) in [("gzip", Encoding::Gzip), ("brotli", Encoding::Br), ("zstd", Encoding::Zstd)] {
            let (level, range) = (self.level(encoding), Self::levels(encoding));
            if !range.contains(&level) {
                return Err(Error::config(format!(
                    "compression level for {name} must be from {} to {}, got {level}",
                    range.start(),
                    range.end()
                )));
            }
        }
        for t in self.types.iter().flatten() {
            if !Self::is_type_pattern(t) {
                return Err(Error::config(format!(
                    "compression.types: {t:?} is not a media type (expected type/subtype or type/*)"
                )));
            }
        }
        Ok(())
    }

    /// Whether `t` may be listed in [`Compression::types`]: a media type (`application/json`) or a whole type
    /// (`text/*`), each part an HTTP token. The package asks this of each entry (the one place the rule is).
    pub fn is_type_pattern(t: &str) -> bool {
        t.split_once('/').is_some_and(|(ty, sub)| {
            let token =
                |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b"!#$&-^_.+".contains(&b));
            token(ty) && (sub == "*" || token(sub))
        })
    }

    /// Whether a body of this `Content-Type` is worth compressing.
    pub(crate) fn compressible(&self, content_type: &str) -> bool {
        let Some(types) = &self.types else { return mime::compressible(content_type) };
        let essence = content_type.split(';').next().unwrap_or("").trim();
        types.iter().any(|t| match t.strip_suffix("/*") {
            Some(ty) => essence.split_once('/').is_some_and(|(e, _)| e.eq_ignore_ascii_case(ty)),
            None => essence.eq_ignore_ascii_case(t),
        })
    }

    /// The levels `encoding` takes: gzip 0–9, brotli 0–11, zstd 1–22.
    pub fn levels(encoding: Encoding) -> std::ops::RangeInclusive<i32> {
        match encoding {
            Encoding::Gzip => 0..=9,
            Encoding::Br => 0..=11,
            Encoding::Zstd => 1..=22,
        }
    }

    pub(crate) fn level(&self, encoding: Encoding) -> i32 {
        match encoding {
            Encoding::Gzip => self.gzip_level,
            Encoding::Br => self.brotli_level,
            Encoding::Zstd => self.zstd_level,
        }
    }

    /// Whether a response with these headers and status could ever be compressed: its type is compressible and
    /// nothing forbids it. Such a response gets `Vary: Accept-Encoding`.
    pub(crate) fn eligible(&self, status: StatusCode, headers: &HeaderMap, hint: Option<TypeHint>) -> bool {
        if status == StatusCode::PARTIAL_CONTENT || status == StatusCode::NO_CONTENT || status.is_informational() {
            return false;
        }
        // One pass over the answer's few headers, comparing names (an enum compare for these): the four map
        // lookups it replaces hashed a name each, about 600 instructions for an answer with one header.
        let mut content_type = None;
        let mut typed = false;
        for (name, value) in headers {
            if name == CONTENT_ENCODING || name == CONTENT_RANGE || name == CACHE_CONTROL && no_transform(value) {
                return false;
            }
            if name == CONTENT_TYPE && !typed {
                // The first one, as a lookup would find it.
                typed = true;
                content_type = value.to_str().ok();
            }
        }
        content_type.or(hint.map(|h| h.0)).is_some_and(|t| self.compressible(t))
    }

    /// The coded variants of a fixed body, compressed once at the strongest levels that stay quick for its
    /// size; `None` when it is not eligible. A coding that does not shrink the body is left out.
    pub(crate) fn fixed_variants(
        &self,
        status: StatusCode,
        headers: &HeaderMap,
        body: &Bytes,
    ) -> Option<[Option<(Bytes, Encoding)>; 3]> {
        if !self.eligible(status, headers, None) {
            return None;
        }
        let mut variants = [None, None, None];
        if body.len() < self.threshold || body.is_empty() {
            return Some(variants);
        }
        // Maximum levels cost about 1 MB/s (brotli 11, zstd 19), paid on the JavaScript thread whenever routes
        // are installed: kept for bodies up to 256 KiB, so a table of typical turbo values installs in milliseconds.
        let big = body.len() > 256 << 10;
        for &e in &self.encodings {
            let level = match (e, big) {
                (Encoding::Gzip, _) => 9,
                (Encoding::Br, false) => 11,
                (Encoding::Br, true) => 6,
                (Encoding::Zstd, false) => 19,
                (Encoding::Zstd, true) => 9,
            };
            if let Ok(coded) = encoder::compress(e, level, body) {
                if coded.len() < body.len() {
                    variants[e.index()] = Some((coded, e));
                }
            }
        }
        Some(variants)
    }
}

/// Whether a `Cache-Control` value says `no-transform` (RFC 9111 §5.2.2.6): no intermediary, and no coding here,
/// may alter the body.
fn no_transform(value: &HeaderValue) -> bool {
    value.to_str().is_ok_and(|v| v.split(',').any(|d| d.trim().eq_ignore_ascii_case("no-transform")))
}

/// Adds `Vary: Accept-Encoding` unless `Vary` already names it (or `*`). Looked for by a pass over the headers,
/// as in `eligible`, not by a hashed lookup.
pub(crate) fn add_vary(headers: &mut HeaderMap) {
    let named = headers.iter().any(|(name, v)| {
        name == VARY
            && v.to_str().is_ok_and(|v| {
                v.split(',').any(|f| f.trim() == "*" || f.trim().eq_ignore_ascii_case("accept-encoding"))
            })
    });
    if !named {
        headers.append(VARY, HeaderValue::from_static("accept-encoding"));
    }
}

/// A strong `ETag` made weak (`W/`): a coded body is not byte-identical to the identity one, so its tag must not
/// pass a strong comparison (`If-Range`, which would splice identity bytes into a coded body).
pub(crate) fn weaken_etag(headers: &mut HeaderMap) {
    if let Some(tag) = headers.get(ETAG) {
        if tag.as_bytes().first() == Some(&b'"') {
            let mut weak = Vec::with_capacity(tag.len() + 2);
            weak.extend_from_slice(b"W/");
            weak.extend_from_slice(tag.as_bytes());
            if let Ok(weak) = HeaderValue::from_bytes(&weak) {
                headers.insert(ETAG, weak);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn settings_are_validated_with_their_name() {
        assert!(Compression::default().validate().is_ok());
        let bad = |c: Compression| c.validate().unwrap_err().to_string();
        assert!(bad(Compression { encodings: vec![], ..Default::default() }).contains("encodings"));
        assert!(bad(Compression { encodings: vec![Encoding::Gzip, Encoding::Gzip], ..Default::default() })
            .contains("gzip twice"));
        assert!(bad(Compression { gzip_level: 10, ..Default::default() }).contains("gzip"));
        assert!(bad(Compression { brotli_level: -1, ..Default::default() }).contains("brotli"));
        assert!(bad(Compression { zstd_level: 0, ..Default::default() }).contains("zstd"));
        assert!(bad(Compression { types: Some(vec!["json".into()]), ..Default::default() }).contains("json"));
    }

    #[test]
    fn types_match_by_essence_or_whole_type() {
        let c = Compression { types: Some(vec!["text/*".into(), "application/json".into()]), ..Default::default() };
        assert!(c.compressible("text/html; charset=utf-8"));
        assert!(c.compressible("Application/JSON"));
        assert!(!c.compressible("application/javascript"));
        assert!(!c.compressible("textual/x"));
        let d = Compression::default();
        assert!(d.compressible("application/javascript") && !d.compressible("image/png"));
    }

    #[test]
    fn headers_decide_eligibility_and_tags_turn_weak() {
        let c = Compression::default();
        let mut h = HeaderMap::new();
        h.insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
        assert!(c.eligible(StatusCode::OK, &h, None));
        assert!(!c.eligible(StatusCode::PARTIAL_CONTENT, &h, None));
        let mut no = h.clone();
        no.insert(CACHE_CONTROL, HeaderValue::from_static("public, No-Transform"));
        assert!(!c.eligible(StatusCode::OK, &no, None));
        let mut later = h.clone();
        later.append(CACHE_CONTROL, HeaderValue::from_static("public"));
        later.append(CACHE_CONTROL, HeaderValue::from_static("max-age=5, no-transform"));
        assert!(!c.eligible(StatusCode::OK, &later, None), "any Cache-Control value counts");
        let mut two = HeaderMap::new();
        two.append(CONTENT_TYPE, HeaderValue::from_static("image/png"));
        two.append(CONTENT_TYPE, HeaderValue::from_static("text/html"));
        assert!(!c.eligible(StatusCode::OK, &two, None), "the first Content-Type decides");
        let mut coded = h.clone();
        coded.insert(CONTENT_ENCODING, HeaderValue::from_static("identity"));
        assert!(!c.eligible(StatusCode::OK, &coded, None));
        assert!(!c.eligible(StatusCode::OK, &HeaderMap::new(), None), "unknown type");
        assert!(c.eligible(StatusCode::NOT_MODIFIED, &HeaderMap::new(), Some(TypeHint("text/css"))));

        h.insert(ETAG, HeaderValue::from_static("\"abc\""));
        weaken_etag(&mut h);
        assert_eq!(h[ETAG], "W/\"abc\"");
        weaken_etag(&mut h);
        assert_eq!(h[ETAG], "W/\"abc\"", "already weak");

        add_vary(&mut h);
        add_vary(&mut h);
        assert_eq!(h.get_all(VARY).iter().count(), 1);
        let mut star = HeaderMap::new();
        star.insert(VARY, HeaderValue::from_static("*"));
        add_vary(&mut star);
        assert_eq!(star.get_all(VARY).iter().count(), 1);
    }
}
